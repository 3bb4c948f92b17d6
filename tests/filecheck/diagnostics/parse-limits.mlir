// Text that xDSL reads but cannot build into IR, and text nested deeper than
// the parser's recursion allows: one located error each, never a traceback.
// RUN: not irtensor-opt %s --split-input-file 2>&1 | filecheck %s

// An integer that an i64 property cannot hold.
func.func @permute_out_of_range(%x: tensor<2x3xf32>) {
// CHECK-NOT:  Traceback
// CHECK:      {{.*}}parse-limits.mlir:[[# @LINE + 3]]:3: error: this op cannot be built: a number is out of the range of its type
// CHECK-NEXT: %0 = hl.permute %x [0, 99999999999999999999] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT: ^^^^
  %0 = hl.permute %x [0, 99999999999999999999] : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}

// -----

func.func @stride_out_of_range(%x: tensor<8xf32>) {
// CHECK:      {{.*}}parse-limits.mlir:[[# @LINE + 1]]:3: error: this op cannot be built: a number is out of the range of its type
  %0 = hl.slice %x starts [0] limits [8] steps [18446744073709551616] : tensor<8xf32> -> tensor<1xf32>
  func.return
}

// -----

// Nesting: 3000 modules, and a type 5000 deep. The error points where the
// parser ran out of stack, in a window of the (long) line.
// RUN: %python -c "print('builtin.module {' * 3000 + '}' * 3000)" > %t.modules.mlir
// RUN: not irtensor-opt %t.modules.mlir 2>&1 | filecheck %s --check-prefix=MODULES
// MODULES-NOT: Traceback
// MODULES:     {{.*}}modules.mlir:1:{{[0-9]+}}: error: the input nests too deeply to parse (Python's recursion limit is {{[0-9]+}})
// MODULES-NEXT: {{^.{120}$}}
// MODULES-NEXT: {{^ *\^$}}
// MODULES-NOT: {{.}}
// RUN: %python -c "print('func.func @f(%%x: ' + 'tensor<' * 5000 + 'f32' + '>' * 5000 + ') { func.return }')" > %t.types.mlir
// RUN: not irtensor-opt %t.types.mlir 2>&1 | filecheck %s --check-prefix=TYPES
// TYPES-NOT:   Traceback
// TYPES:       {{.*}}types.mlir:1:{{[0-9]+}}: error: the input nests too deeply to parse
