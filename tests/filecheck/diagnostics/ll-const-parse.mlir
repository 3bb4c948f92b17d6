// ll.const's own parse errors must be one `FILE:LINE:COL: error: MESSAGE`
// line (then the source line and a caret line), pointing at the const.
//
// XFAIL: *
// Known bugs (src/irtensor/dialects/ll.py, ConstOp.parse):
// * `ll.const 2.5 : tensor<4xi32>` followed by another line prints
//   "FILE:L:17: error: ^^" and the message "2.5 is not a value of i32" two
//   lines further down: the error's span (`at` .. `parser.pos`) runs to the
//   next token, on the next line, and irtensor.ir._parse_message takes the
//   last line of xDSL's text as the message.
// * "ll.const needs a tensor type of a supported element" points at the
//   token after the type (the next line's op), not at the const.
// Remove the XFAIL once both errors are one line at the const.
//
// RUN: not irtensor-opt %s --split-input-file 2>&1 | filecheck %s

func.func @float_for_int() {
// CHECK: {{.*}}ll-const-parse.mlir:[[# @LINE + 1]]:17: error: 2.5 is not a value of i32
  %0 = ll.const 2.5 : tensor<4xi32>
  func.return
}

// -----

func.func @unsupported_type() {
// CHECK: {{.*}}ll-const-parse.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: ll.const needs a tensor type of a supported element, got tensor<4xui8>
  %0 = ll.const 2.5 : tensor<4xui8>
  func.return
}
