// --timing prints a table on stderr: one row per pass run, then the total.
// RUN: irtensor-opt %s -p cse,dce,cse --timing 2>&1 >/dev/null | filecheck %s
// RUN: irtensor-opt %s -p cse,dce --timing 2>/dev/null | filecheck %s --check-prefix=STDOUT

// CHECK:      ===- pass timing -===
// CHECK-NEXT: wall ms   share  pass
// CHECK-NEXT: {{[0-9]+\.[0-9][0-9][0-9]}} {{[0-9]+\.[0-9]%}}  cse
// CHECK-NEXT: {{[0-9]+\.[0-9][0-9][0-9]}} {{[0-9]+\.[0-9]%}}  dce
// CHECK-NEXT: {{[0-9]+\.[0-9][0-9][0-9]}} {{[0-9]+\.[0-9]%}}  cse
// CHECK-NEXT: {{[0-9]+\.[0-9][0-9][0-9]}}  100.0%  total
// CHECK-NOT:  {{.}}

// STDOUT-NOT: pass timing
// STDOUT:     func.func @main

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = hl.exp %x : tensor<4xf32>
  func.return %a : tensor<4xf32>
}
