// Verifier errors of the hl elementwise ops: one chunk per rule, each error
// one line `FILE:LINE:COL: error: 'op' op MESSAGE` pointing at the op.
// RUN: not irtensor-opt %s --split-input-file 2>&1 | filecheck %s

func.func @float_only_on_ints(%a: tensor<4xi32>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.exp' op operand 'input' has element type i32, expected a floating-point element type (f16, bf16, f32, f64)
  %0 = hl.exp %a : tensor<4xi32>
  func.return
}

// -----

func.func @float_only_sqrt_on_bool(%a: tensor<4xi1>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.sqrt' op operand 'input' has element type i1, expected a floating-point element type (f16, bf16, f32, f64)
  %0 = hl.sqrt %a : tensor<4xi1>
  func.return
}

// -----

func.func @numeric_on_bool(%a: tensor<4xi1>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.neg' op operand 'input' has element type i1, expected a numeric element type (f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64)
  %0 = hl.neg %a : tensor<4xi1>
  func.return
}

// -----

func.func @not_on_floats(%a: tensor<4xf32>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.not' op operand 'input' has element type f32, expected the boolean element type i1
  %0 = hl.not %a : tensor<4xf32>
  func.return
}

// -----

func.func @unsupported_element(%a: tensor<4xi128>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.abs' op operand 'input' has element type i128, expected a numeric element type (f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64)
  %0 = hl.abs %a : tensor<4xi128>
  func.return
}

// -----

func.func @idiv_on_floats(%a: tensor<4xf32>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.idiv' op operand 'lhs' has element type f32, expected an integer element type (i8, i16, i32, i64, ui8, ui16, ui32, ui64)
  %0 = hl.idiv %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @mod_on_bool(%a: tensor<4xi1>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.mod' op operand 'lhs' has element type i1, expected an integer element type (i8, i16, i32, i64, ui8, ui16, ui32, ui64)
  %0 = hl.mod %a, %a : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  func.return
}

// -----

func.func @div_on_ints(%a: tensor<4xi64>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.div' op operand 'lhs' has element type i64, expected a floating-point element type (f16, bf16, f32, f64)
  %0 = hl.div %a, %a : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  func.return
}

// -----

func.func @and_on_floats(%a: tensor<4xf32>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.and' op operand 'lhs' has element type f32, expected the boolean element type i1
  %0 = hl.and %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @xor_on_ints(%a: tensor<4xi32>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.xor' op operand 'lhs' has element type i32, expected the boolean element type i1
  %0 = hl.xor %a, %a : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

func.func @mismatched_elements(%a: tensor<4xf32>, %b: tensor<4xf64>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.add' op operand 'rhs' has element type f64, expected f32 (the element type of 'lhs')
  %0 = hl.add %a, %b : tensor<4xf32>, tensor<4xf64> -> tensor<4xf32>
  func.return
}

// -----

func.func @mismatched_compare(%a: tensor<4xi32>, %b: tensor<4xi64>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.lt' op operand 'rhs' has element type i64, expected i32 (the element type of 'lhs')
  %0 = hl.lt %a, %b : tensor<4xi32>, tensor<4xi64> -> tensor<4xi1>
  func.return
}

// -----

func.func @no_broadcast(%a: tensor<2x4xf32>, %b: tensor<3xf32>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.sub' op shapes (2, 4), (3,) do not broadcast
  %0 = hl.sub %a, %b : tensor<2x4xf32>, tensor<3xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @wrong_result_shape(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.mul' op result type is tensor<3xf32>, expected tensor<2x3xf32>
  %0 = hl.mul %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @wrong_result_element(%a: tensor<3xf32>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.maximum' op result type is tensor<3xf16>, expected tensor<3xf32>
  %0 = hl.maximum %a, %a : tensor<3xf32>, tensor<3xf32> -> tensor<3xf16>
  func.return
}

// -----

func.func @compare_result_not_bool(%a: tensor<3xf32>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.eq' op result type is tensor<3xf32>, expected tensor<3xi1>
  %0 = hl.eq %a, %a : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @where_cond_not_bool(%c: tensor<4xf32>, %a: tensor<4xf32>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.where' op operand 'cond' has element type f32, expected the boolean element type i1
  %0 = hl.where %c, %a, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @where_mismatched(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xi32>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.where' op operand 'rhs' has element type i32, expected f32 (the element type of 'lhs')
  %0 = hl.where %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xi32> -> tensor<4xf32>
  func.return
}

// -----

func.func @where_no_broadcast(%c: tensor<5xi1>, %a: tensor<4xf32>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.where' op shapes (5,), (4,), (4,) do not broadcast
  %0 = hl.where %c, %a, %a : tensor<5xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @cast_changes_shape(%a: tensor<4xf32>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.cast' op result type is tensor<5xi32>, expected tensor<4xi32>
  %0 = hl.cast %a : tensor<4xf32> -> tensor<5xi32>
  func.return
}

// -----

func.func @cast_to_unsupported(%a: tensor<4xf32>) {
// CHECK: {{.*}}hl-elementwise.mlir:[[# @LINE + 1]]:3: error: 'hl.cast' op result has element type ui128, expected a supported element type
  %0 = hl.cast %a : tensor<4xf32> -> tensor<4xui128>
  func.return
}
