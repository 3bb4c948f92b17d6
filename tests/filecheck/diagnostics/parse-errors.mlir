// Parse errors: `FILE:LINE:COL: error: MESSAGE`, then the source line and a
// caret line under the offending token.
// RUN: not irtensor-opt %s --split-input-file 2>&1 | filecheck %s

func.func @unknown_op(%a: tensor<4xf32>) {
// CHECK: {{.*}}parse-errors.mlir:[[# @LINE + 3]]:18: error: Operation hl.nosuch is not registered
// CHECK-NEXT: %0 = hl.nosuch %a : tensor<4xf32>
// CHECK-NEXT: ^
  %0 = hl.nosuch %a : tensor<4xf32>
  func.return
}

// -----

func.func @missing_colon(%a: tensor<4xf32>) {
// CHECK: {{.*}}parse-errors.mlir:[[# @LINE + 3]]:18: error: Expected ':'
// CHECK-NEXT: %0 = hl.exp %a tensor<4xf32>
// CHECK-NEXT: ^
  %0 = hl.exp %a tensor<4xf32>
  func.return
}

// -----

// xDSL reports a value that is used but never defined at the end of the input.
func.func @undefined_value(%a: tensor<4xf32>) {
  %0 = hl.exp %b : tensor<4xf32>
  func.return
}
// CHECK: {{.*}}parse-errors.mlir:[[# @LINE + 2]]:1: error: values used but not defined: [%b]

// -----

func.func @unknown_type(%a: tensor<4xf32>) {
// CHECK: {{.*}}parse-errors.mlir:[[# @LINE + 3]]:29: error: Expected shape type.
// CHECK-NEXT: %0 = hl.exp %a : tensor<4xfloat>
// CHECK-NEXT: ^
  %0 = hl.exp %a : tensor<4xfloat>
  func.return
}

// -----

func.func @wrong_keyword(%a: tensor<4xf32>) {
// CHECK: {{.*}}parse-errors.mlir:[[# @LINE + 3]]:18: error: Expected 'axes'
// CHECK-NEXT: %0 = hl.sum %a axis [0] : tensor<4xf32> -> tensor<f32>
// CHECK-NEXT: ^
  %0 = hl.sum %a axis [0] : tensor<4xf32> -> tensor<f32>
  func.return
}

// -----

func.func @unknown_reduce_kind(%a: tensor<4xf32>) {
// CHECK: {{.*}}parse-errors.mlir:[[# @LINE + 3]]:18: error: Expected `sum`, or `max`.
// CHECK-NEXT: %0 = ll.reduce mean %a axes [0] : tensor<4xf32> -> tensor<1xf32>
// CHECK-NEXT: ^
  %0 = ll.reduce mean %a axes [0] : tensor<4xf32> -> tensor<1xf32>
  func.return
}

// -----

func.func @pad_without_high(%a: tensor<4xf32>) {
// CHECK: {{.*}}parse-errors.mlir:[[# @LINE + 3]]:26: error: Expected 'high'
// CHECK-NEXT: %0 = ll.pad %a low [1] : tensor<4xf32> -> tensor<5xf32>
// CHECK-NEXT: ^
  %0 = ll.pad %a low [1] : tensor<4xf32> -> tensor<5xf32>
  func.return
}

// -----

func.func @const_without_value() {
// CHECK: {{.*}}parse-errors.mlir:[[# @LINE + 3]]:17: error: integer or float literal expected (a scalar: number, true, false, inf or nan)
// CHECK-NEXT: %0 = ll.const : tensor<4xf32>
// CHECK-NEXT: ^
  %0 = ll.const : tensor<4xf32>
  func.return
}

// -----

// The input ends inside the function's body: the error points at its end.
func.func @unclosed(%a: tensor<4xf32>) {
  %0 = hl.exp %a : tensor<4xf32>
// CHECK: {{.*}}parse-errors.mlir:[[# @LINE + 1]]:1: error: in block definition
