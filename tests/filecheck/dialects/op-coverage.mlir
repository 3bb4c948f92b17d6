// Every op of the hl and ll dialects has a round-trip CHECK of its custom
// syntax in this folder (an op added to HL or LL without one fails here).
// RUN: %python %S/Inputs/op_coverage.py %S | filecheck %s

// CHECK:      hl: {{[0-9]+}} ops, 0 without a round-trip check
// CHECK-NEXT: ll: {{[0-9]+}} ops, 0 without a round-trip check
// CHECK-NOT:  missing
