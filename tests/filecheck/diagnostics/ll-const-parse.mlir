// ll.const's own parse errors must be one `FILE:LINE:COL: error: MESSAGE`
// line (then the source line and a caret line), pointing at the const.
//
// RUN: not irtensor-opt %s --split-input-file 2>&1 | filecheck %s

func.func @float_for_int() {
// CHECK: {{.*}}ll-const-parse.mlir:[[# @LINE + 1]]:17: error: 2.5 is not a value of i32
  %0 = ll.const 2.5 : tensor<4xi32>
  func.return
}

// -----

func.func @unsupported_type() {
// CHECK: {{.*}}ll-const-parse.mlir:[[# @LINE + 3]]:23: error: ll.const needs a tensor of a supported element type, got tensor<4xui128>
// CHECK-NEXT: {{^}}  %0 = ll.const 2.5 : tensor<4xui128>
// CHECK-NEXT: {{^}}                      ^^^^^^^^^^^^^^^
  %0 = ll.const 2.5 : tensor<4xui128>
  func.return
}
