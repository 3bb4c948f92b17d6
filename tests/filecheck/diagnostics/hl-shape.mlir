// Verifier errors of the hl reductions and movement ops.
// RUN: not irtensor-opt %s --split-input-file 2>&1 | filecheck %s

func.func @axis_out_of_range(%x: tensor<2x3xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.sum' op axes [2]: axis 2 is out of range for rank 2
  %0 = hl.sum %x axes [2] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @negative_axis(%x: tensor<2x3xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.max' op axes [-1]: axis -1 is out of range for rank 2
  %0 = hl.max %x axes [-1] : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @repeated_axis(%x: tensor<2x3xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.min' op axes [1, 1] repeat an axis
  %0 = hl.min %x axes [1, 1] : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @keepdim_result(%x: tensor<2x3xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.sum' op result type is tensor<2xf32>, expected tensor<2x1xf32>
  %0 = hl.sum %x axes [1] keepdim : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @no_keepdim_result(%x: tensor<2x3xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.mean' op result type is tensor<1x3xf32>, expected tensor<3xf32>
  %0 = hl.mean %x axes [0] : tensor<2x3xf32> -> tensor<1x3xf32>
  func.return
}

// -----

func.func @reduction_result_element(%x: tensor<2x3xi32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.sum' op result type is tensor<3xi64>, expected tensor<3xi32>
  %0 = hl.sum %x axes [0] : tensor<2x3xi32> -> tensor<3xi64>
  func.return
}

// -----

func.func @mean_on_ints(%x: tensor<2x3xi32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.mean' op operand 'input' has element type i32, expected a floating-point element type (f16, bf16, f32, f64)
  %0 = hl.mean %x axes [0] : tensor<2x3xi32> -> tensor<3xi32>
  func.return
}

// -----

func.func @sum_on_bool(%x: tensor<4xi1>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.sum' op operand 'input' has element type i1, expected a numeric element type (f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64)
  %0 = hl.sum %x axes [0] : tensor<4xi1> -> tensor<i1>
  func.return
}

// -----

func.func @var_on_ints(%x: tensor<4xi64>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.var' op operand 'input' has element type i64, expected a floating-point element type (f16, bf16, f32, f64)
  %0 = hl.var %x axes [0] correction 0 : tensor<4xi64> -> tensor<i64>
  func.return
}

// -----

func.func @var_keepdim_result(%x: tensor<2x3xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.var' op result type is tensor<3xf32>, expected tensor<1x3xf32>
  %0 = hl.var %x axes [0] keepdim correction 0 : tensor<2x3xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @reshape_element_count(%x: tensor<2x6xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.reshape' op cannot reshape (2, 6) (12 elements) to (5, 2) (10 elements)
  %0 = hl.reshape %x : tensor<2x6xf32> -> tensor<5x2xf32>
  func.return
}

// -----

func.func @reshape_element_type(%x: tensor<2x6xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.reshape' op result type is tensor<12xf16>, expected tensor<12xf32>
  %0 = hl.reshape %x : tensor<2x6xf32> -> tensor<12xf16>
  func.return
}

// -----

func.func @permute_repeats(%x: tensor<2x3xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.permute' op [0, 0] is not a permutation of the 2 axes
  %0 = hl.permute %x [0, 0] : tensor<2x3xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @permute_too_short(%x: tensor<2x3x4xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.permute' op [1, 0] is not a permutation of the 3 axes
  %0 = hl.permute %x [1, 0] : tensor<2x3x4xf32> -> tensor<3x2xf32>
  func.return
}

// -----

func.func @permute_result(%x: tensor<2x3xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.permute' op result type is tensor<2x3xf32>, expected tensor<3x2xf32>
  %0 = hl.permute %x [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @broadcast_to_incompatible(%x: tensor<3xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.broadcast_to' op cannot broadcast (3,) to (2, 4)
  %0 = hl.broadcast_to %x : tensor<3xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @broadcast_to_lower_rank(%x: tensor<2x3xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.broadcast_to' op cannot broadcast (2, 3) to the lower rank (3,)
  %0 = hl.broadcast_to %x : tensor<2x3xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @pad_negative(%x: tensor<4xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.pad' op padding [-1], [0] must not be negative
  %0 = hl.pad %x low [-1] high [0] : tensor<4xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @pad_pairs(%x: tensor<4x4xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.pad' op pad needs one (low, high) pair per axis of (4, 4)
  %0 = hl.pad %x low [1] high [1] : tensor<4x4xf32> -> tensor<6x4xf32>
  func.return
}

// -----

func.func @pad_fraction_int(%x: tensor<4xi32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.pad' op pad value 1.5 is not a value of the element type i32: it is not a whole number
  %0 = hl.pad %x low [1] high [0] value 1.5 : tensor<4xi32> -> tensor<5xi32>
  func.return
}

// -----

func.func @pad_bool_seven(%x: tensor<4xi1>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.pad' op pad value 7.0 is not a value of the element type i1: it is neither 0 nor 1 (nor -inf or inf)
  %0 = hl.pad %x low [1] high [0] value 7.0 : tensor<4xi1> -> tensor<5xi1>
  func.return
}

// -----

func.func @pad_int_range(%x: tensor<4xi32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.pad' op pad value 3000000000.0 is not a value of the element type i32: it is outside [-2147483648, 2147483647]
  %0 = hl.pad %x low [1] high [0] value 3000000000.0 : tensor<4xi32> -> tensor<5xi32>
  func.return
}

// -----

func.func @pad_half_overflow(%x: tensor<4xf16>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.pad' op pad value 70000.0 is not a value of the element type f16: it overflows to inf
  %0 = hl.pad %x low [1] high [0] value 70000.0 : tensor<4xf16> -> tensor<5xf16>
  func.return
}

// -----

func.func @pad_result(%x: tensor<4xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.pad' op result type is tensor<6xf32>, expected tensor<7xf32>
  %0 = hl.pad %x low [1] high [2] value -inf : tensor<4xf32> -> tensor<6xf32>
  func.return
}

// -----

func.func @slice_out_of_range(%x: tensor<8xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.slice' op slice [2:9] does not fit in an axis of size 8
  %0 = hl.slice %x starts [2] limits [9] steps [1] : tensor<8xf32> -> tensor<7xf32>
  func.return
}

// -----

func.func @slice_start_after_limit(%x: tensor<8xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.slice' op slice [5:3] does not fit in an axis of size 8
  %0 = hl.slice %x starts [5] limits [3] steps [1] : tensor<8xf32> -> tensor<0xf32>
  func.return
}

// -----

func.func @slice_step_zero(%x: tensor<8xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.slice' op steps [0] must be at least 1
  %0 = hl.slice %x starts [0] limits [8] steps [0] : tensor<8xf32> -> tensor<8xf32>
  func.return
}

// -----

func.func @slice_result(%x: tensor<8xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.slice' op result type is tensor<2xf32>, expected tensor<3xf32>
  %0 = hl.slice %x starts [1] limits [7] steps [2] : tensor<8xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @flip_axis_out_of_range(%x: tensor<2x3xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.flip' op axes [2]: axis 2 is out of range for rank 2
  %0 = hl.flip %x axes [2] : tensor<2x3xf32>
  func.return
}

// -----

func.func @flip_repeated_axis(%x: tensor<2x3xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.flip' op axes [0, 0] repeat an axis
  %0 = hl.flip %x axes [0, 0] : tensor<2x3xf32>
  func.return
}

// -----

func.func @concat_mismatch(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.concat' op input 1 has shape (2, 4); expected (2, 3) except along axis 0
  %0 = hl.concat %a, %b axis 0 : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<4x3xf32>
  func.return
}

// -----

func.func @concat_rank_mismatch(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.concat' op input 1 has shape (3,); expected (2, 3) except along axis 0
  %0 = hl.concat %a, %b axis 0 : tensor<2x3xf32>, tensor<3xf32> -> tensor<5x3xf32>
  func.return
}

// -----

func.func @concat_elements(%a: tensor<2xf32>, %b: tensor<2xf64>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.concat' op operand 'inputs#1' has element type f64, expected f32 (the element type of 'inputs#0')
  %0 = hl.concat %a, %b axis 0 : tensor<2xf32>, tensor<2xf64> -> tensor<4xf32>
  func.return
}

// -----

func.func @concat_axis(%a: tensor<2xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.concat' op axis 1 is out of range for rank 1
  %0 = hl.concat %a, %a axis 1 : tensor<2xf32>, tensor<2xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @concat_result(%a: tensor<2x3xf32>) {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.concat' op result type is tensor<4x3xf32>, expected tensor<2x6xf32>
  %0 = hl.concat %a, %a axis 1 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  func.return
}

// -----

func.func @concat_nothing() {
// CHECK: {{.*}}hl-shape.mlir:[[# @LINE + 1]]:3: error: 'hl.concat' op needs at least one input
  %0 = hl.concat axis 0 : -> tensor<0xf32>
  func.return
}
