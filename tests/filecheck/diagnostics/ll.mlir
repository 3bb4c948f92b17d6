// Verifier and type-constraint errors of the ll ops. ll operands never
// broadcast: a binary op with two operand types is already a parse error (its
// operands and result share one type variable).
// RUN: not irtensor-opt %s --split-input-file 2>&1 | filecheck %s

func.func @binary_operand_types(%a: tensor<4xf32>, %b: tensor<4xf64>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 3]]:19: error: operand is used with type tensor<4xf32>, but has been previously used or defined with type tensor<4xf64>
// CHECK-NEXT: %0 = ll.add %a, %b : tensor<4xf32>
// CHECK-NEXT: ^^
  %0 = ll.add %a, %b : tensor<4xf32>
  func.return
}

// -----

func.func @binary_operand_shapes(%a: tensor<4xf32>, %b: tensor<1xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 3]]:19: error: operand is used with type tensor<4xf32>, but has been previously used or defined with type tensor<1xf32>
// CHECK-NEXT: %0 = ll.mul %a, %b : tensor<4xf32>
// CHECK-NEXT: ^^
  %0 = ll.mul %a, %b : tensor<4xf32>
  func.return
}

// -----

func.func @compare_operand_types(%a: tensor<4xi32>, %b: tensor<4xi64>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 3]]:21: error: operand is used with type tensor<4xi32>, but has been previously used or defined with type tensor<4xi64>
// CHECK-NEXT: %0 = ll.cmplt %a, %b : tensor<4xi32> -> tensor<4xi1>
// CHECK-NEXT: ^^
  %0 = ll.cmplt %a, %b : tensor<4xi32> -> tensor<4xi1>
  func.return
}

// -----

func.func @add_on_bool(%a: tensor<4xi1>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.add' op operand 'lhs' has element type i1, expected a numeric element type (f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64)
  %0 = ll.add %a, %a : tensor<4xi1>
  func.return
}

// -----

func.func @div_on_ints(%a: tensor<4xi32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.div' op operand 'lhs' has element type i32, expected a floating-point element type (f16, bf16, f32, f64)
  %0 = ll.div %a, %a : tensor<4xi32>
  func.return
}

// -----

func.func @idiv_on_floats(%a: tensor<4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.idiv' op operand 'lhs' has element type f32, expected an integer element type (i8, i16, i32, i64, ui8, ui16, ui32, ui64)
  %0 = ll.idiv %a, %a : tensor<4xf32>
  func.return
}

// -----

func.func @mod_on_floats(%a: tensor<4xf16>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.mod' op operand 'lhs' has element type f16, expected an integer element type (i8, i16, i32, i64, ui8, ui16, ui32, ui64)
  %0 = ll.mod %a, %a : tensor<4xf16>
  func.return
}

// -----

func.func @exp2_on_ints(%a: tensor<4xi32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.exp2' op operand 'input' has element type i32, expected a floating-point element type (f16, bf16, f32, f64)
  %0 = ll.exp2 %a : tensor<4xi32>
  func.return
}

// -----

func.func @neg_on_bool(%a: tensor<4xi1>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.neg' op operand 'input' has element type i1, expected a numeric element type (f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64)
  %0 = ll.neg %a : tensor<4xi1>
  func.return
}

// -----

func.func @compare_result(%a: tensor<4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.cmpeq' op result type is tensor<4xf32>, expected tensor<4xi1>
  %0 = ll.cmpeq %a, %a : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @compare_result_shape(%a: tensor<4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.cmplt' op result type is tensor<1xi1>, expected tensor<4xi1>
  %0 = ll.cmplt %a, %a : tensor<4xf32> -> tensor<1xi1>
  func.return
}

// -----

func.func @where_cond_element(%c: tensor<4xf32>, %a: tensor<4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.where' op operand 'cond' has type tensor<4xf32>, expected tensor<4xi1>
  %0 = ll.where %c, %a, %a : tensor<4xf32>, tensor<4xf32>
  func.return
}

// -----

func.func @where_cond_shape(%c: tensor<1xi1>, %a: tensor<4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.where' op operand 'cond' has type tensor<1xi1>, expected tensor<4xi1>
  %0 = ll.where %c, %a, %a : tensor<1xi1>, tensor<4xf32>
  func.return
}

// -----

func.func @cast_shape(%a: tensor<4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.cast' op result type is tensor<2x2xi32>, expected tensor<4xi32>
  %0 = ll.cast %a : tensor<4xf32> -> tensor<2x2xi32>
  func.return
}

// -----

func.func @const_unsupported_element() {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.const' op result has element type i128, expected a supported element type
  %0 = "ll.const"() <{value = 1 : i128}> : () -> tensor<4xi128>
  func.return
}

// -----

func.func @const_value_type(%a: tensor<4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.const' op value has type i32, expected f32
  %0 = "ll.const"() <{value = 1 : i32}> : () -> tensor<4xf32>
  func.return
}

// -----

func.func @reduce_result_keeps_axes(%x: tensor<4x5xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.reduce' op result type is tensor<4xf32>, expected tensor<4x1xf32>
  %0 = ll.reduce sum %x axes [1] : tensor<4x5xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @reduce_axis(%x: tensor<4x5xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.reduce' op axes [0, 2]: axis 2 is out of range for rank 2
  %0 = ll.reduce max %x axes [0, 2] : tensor<4x5xf32> -> tensor<1x5xf32>
  func.return
}

// -----

func.func @reduce_sum_on_bool(%x: tensor<4xi1>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.reduce' op operand 'input' has element type i1, expected a numeric element type (f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64)
  %0 = ll.reduce sum %x axes [0] : tensor<4xi1> -> tensor<1xi1>
  func.return
}

// -----

func.func @reshape_count(%x: tensor<4x5xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.reshape' op cannot reshape (4, 5) (20 elements) to (21,) (21 elements)
  %0 = ll.reshape %x : tensor<4x5xf32> -> tensor<21xf32>
  func.return
}

// -----

func.func @permute(%x: tensor<4x5xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.permute' op [0, 2] is not a permutation of the 2 axes
  %0 = ll.permute %x [0, 2] : tensor<4x5xf32> -> tensor<4x5xf32>
  func.return
}

// -----

func.func @expand_changes_rank(%x: tensor<4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.expand' op expand keeps the rank: (4,) vs (3, 4)
  %0 = ll.expand %x : tensor<4xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @expand_non_unit(%x: tensor<2x4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.expand' op cannot broadcast (2, 4) to (3, 4)
  %0 = ll.expand %x : tensor<2x4xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @pad_negative(%x: tensor<4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.pad' op padding [0], [-2] must not be negative
  %0 = ll.pad %x low [0] high [-2] : tensor<4xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @pad_operand_type(%x: tensor<4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 3]]:15: error: operand is used with type tensor<5xf32>, but has been previously used or defined with type tensor<4xf32>
// CHECK-NEXT: %0 = ll.pad %x low [0] high [1] : tensor<5xf32> -> tensor<6xf32>
// CHECK-NEXT: ^^
  %0 = ll.pad %x low [0] high [1] : tensor<5xf32> -> tensor<6xf32>
  func.return
}

// -----

func.func @shrink_out_of_range(%x: tensor<4x4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.shrink' op shrink range [2, 5) does not fit in an axis of size 4
  %0 = ll.shrink %x starts [0, 2] limits [4, 5] : tensor<4x4xf32> -> tensor<4x3xf32>
  func.return
}

// -----

func.func @shrink_pairs(%x: tensor<4x4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.shrink' op shrink needs one (start, limit) pair per axis of (4, 4)
  %0 = ll.shrink %x starts [0] limits [4] : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return
}

// -----

func.func @shrink_result(%x: tensor<4x4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.shrink' op result type is tensor<2x3xf32>, expected tensor<2x2xf32>
  %0 = ll.shrink %x starts [0, 1] limits [2, 3] : tensor<4x4xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @flip_axis(%x: tensor<4x4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.flip' op axes [3]: axis 3 is out of range for rank 2
  %0 = ll.flip %x axes [3] : tensor<4x4xf32>
  func.return
}

// -----

func.func @stride_below_one(%x: tensor<4x4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.stride' op strides [1, 0] must be at least 1
  %0 = ll.stride %x [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return
}

// -----

func.func @stride_count(%x: tensor<4x4xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.stride' op stride needs one step per axis of (4, 4)
  %0 = ll.stride %x [2] : tensor<4x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @stride_result(%x: tensor<5x3xf32>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.stride' op result type is tensor<2x3xf32>, expected tensor<3x3xf32>
  %0 = ll.stride %x [2, 1] : tensor<5x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// ll.const checks its value against the element type while parsing.
func.func @const_float_for_int() {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:17: error: 2.5 is not a value of i32
  %0 = ll.const 2.5 : tensor<4xi32>
  func.return
}

// -----

func.func @const_float_for_bool() {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:17: error: -1.0 is not a value of i1 (true, false)
  %0 = ll.const -1.0 : tensor<2xi1>
  func.return
}

// -----

func.func @const_unsupported_type() {
// CHECK: error: ll.const needs a tensor of a supported element type, got tensor<4xui128>
  %0 = ll.const 2.5 : tensor<4xui128>
  func.return
}

// -----

func.func @const_not_a_tensor() {
// CHECK: error: ll.const needs a tensor of a supported element type, got f32
  %0 = ll.const 2.5 : f32
  func.return
}

// -----

func.func @pad_nan_int(%x: tensor<4xi64>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.pad' op pad value nan is not a value of the element type i64: it is not a whole number
  %0 = ll.pad %x low [0] high [1] value nan : tensor<4xi64> -> tensor<5xi64>
  func.return
}

// -----

func.func @pad_bool_half(%x: tensor<4xi1>) {
// CHECK: {{.*}}ll.mlir:[[# @LINE + 1]]:3: error: 'll.pad' op pad value 0.5 is not a value of the element type i1: it is not a whole number
  %0 = ll.pad %x low [0] high [1] value 0.5 : tensor<4xi1> -> tensor<5xi1>
  func.return
}
