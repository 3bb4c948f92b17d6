// Verifier errors of the hl linear-algebra and neural-network ops.
// RUN: not irtensor-opt %s --split-input-file 2>&1 | filecheck %s

func.func @matmul_contracted(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.matmul' op contracted sizes differ: lhs (2, 3) has 3, rhs (4, 5) has 4
  %0 = hl.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  func.return
}

// -----

func.func @matmul_rank0(%a: tensor<f32>, %b: tensor<3xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.matmul' op matmul operands must have rank at least 1
  %0 = hl.matmul %a, %b : tensor<f32>, tensor<3xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<5x3x4xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.matmul' op batch dimensions (2,) of lhs (2, 2, 3) and (5,) of rhs (5, 3, 4) do not broadcast
  %0 = hl.matmul %a, %b : tensor<2x2x3xf32>, tensor<5x3x4xf32> -> tensor<5x2x4xf32>
  func.return
}

// -----

func.func @matmul_elements(%a: tensor<2x3xf32>, %b: tensor<3x4xi32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.matmul' op operand 'rhs' has element type i32, expected f32 (the element type of 'lhs')
  %0 = hl.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xi32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @matmul_on_bool(%a: tensor<2x3xi1>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.matmul' op operand 'lhs' has element type i1, expected a numeric element type (f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64)
  %0 = hl.matmul %a, %a : tensor<2x3xi1>, tensor<2x3xi1> -> tensor<2x3xi1>
  func.return
}

// -----

func.func @matmul_result(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.matmul' op result type is tensor<4x2xf32>, expected tensor<2x4xf32>
  %0 = hl.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<4x2xf32>
  func.return
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.conv2d' op weight (6, 4, 3, 3) expects 4 input channels, input (1, 3, 8, 8) has 3
  %0 = hl.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.conv2d' op groups=3 must divide input channels 4 and output channels 6
  %0 = hl.conv2d %x, %w groups 3 : tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32> -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @conv_window_too_big(%x: tensor<1x4x2x2xf32>, %w: tensor<6x4x3x3xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.conv2d' op window of span 3 does not fit in a padded axis of size 2
  %0 = hl.conv2d %x, %w : tensor<1x4x2x2xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x0x0xf32>
  func.return
}

// -----

func.func @conv_dilated_window(%x: tensor<1x4x4x4xf32>, %w: tensor<6x4x3x3xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.conv2d' op window of span 5 does not fit in a padded axis of size 4
  %0 = hl.conv2d %x, %w dilations [2, 2] : tensor<1x4x4x4xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x0x0xf32>
  func.return
}

// -----

func.func @conv_rank(%x: tensor<4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.conv2d' op conv2d takes 4-D input and weight, got (4, 8, 8) and (6, 4, 3, 3)
  %0 = hl.conv2d %x, %w : tensor<4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<6x6x6xf32>
  func.return
}

// -----

func.func @conv_stride_zero(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.conv2d' op strides [0, 1] must be two values >= 1
  %0 = hl.conv2d %x, %w strides [0, 1] : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @conv_padding(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.conv2d' op padding [1, 1] must be four values >= 0 (t, l, b, r)
  %0 = hl.conv2d %x, %w padding [1, 1] : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x8x8xf32>
  func.return
}

// -----

func.func @conv_on_ints(%x: tensor<1x4x8x8xi32>, %w: tensor<6x4x3x3xi32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.conv2d' op operand 'input' has element type i32, expected a floating-point element type (f16, bf16, f32, f64)
  %0 = hl.conv2d %x, %w : tensor<1x4x8x8xi32>, tensor<6x4x3x3xi32> -> tensor<1x6x6x6xi32>
  func.return
}

// -----

func.func @conv_result(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.conv2d' op result type is tensor<1x6x6x6xf32>, expected tensor<1x6x3x3xf32>
  %0 = hl.conv2d %x, %w strides [2, 2] : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x6x6xf32>
  func.return
}

// -----

func.func @pool_window_too_big(%x: tensor<1x2x3x3xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.max_pool2d' op window of span 4 does not fit in a padded axis of size 3
  %0 = hl.max_pool2d %x kernel [4, 4] strides [1, 1] : tensor<1x2x3x3xf32> -> tensor<1x2x1x1xf32>
  func.return
}

// -----

func.func @pool_kernel(%x: tensor<1x2x6x6xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.avg_pool2d' op kernel [2] must be two sizes >= 1
  %0 = hl.avg_pool2d %x kernel [2] strides [1, 1] : tensor<1x2x6x6xf32> -> tensor<1x2x5x5xf32>
  func.return
}

// -----

func.func @pool_rank(%x: tensor<6xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.max_pool2d' op pooling needs rank >= 2, got (6,)
  %0 = hl.max_pool2d %x kernel [2, 2] strides [1, 1] : tensor<6xf32> -> tensor<5xf32>
  func.return
}

// -----

func.func @pool_strides(%x: tensor<6x6xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.avg_pool2d' op strides [0, 0] must be two values >= 1
  %0 = hl.avg_pool2d %x kernel [2, 2] strides [0, 0] : tensor<6x6xf32> -> tensor<5x5xf32>
  func.return
}

// -----

func.func @pool_on_ints(%x: tensor<6x6xi32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.max_pool2d' op operand 'input' has element type i32, expected a floating-point element type (f16, bf16, f32, f64)
  %0 = hl.max_pool2d %x kernel [2, 2] strides [1, 1] : tensor<6x6xi32> -> tensor<5x5xi32>
  func.return
}

// -----

func.func @pool_result(%x: tensor<6x6xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.avg_pool2d' op result type is tensor<5x5xf32>, expected tensor<3x3xf32>
  %0 = hl.avg_pool2d %x kernel [2, 2] strides [2, 2] : tensor<6x6xf32> -> tensor<5x5xf32>
  func.return
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.softmax' op axis 2 is out of range for rank 2
  %0 = hl.softmax %x axis 2 : tensor<2x3xf32>
  func.return
}

// -----

func.func @log_softmax_on_ints(%x: tensor<2x3xi32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.log_softmax' op operand 'input' has element type i32, expected a floating-point element type (f16, bf16, f32, f64)
  %0 = hl.log_softmax %x axis 1 : tensor<2x3xi32>
  func.return
}

// -----

func.func @layer_norm_axes(%x: tensor<2x3xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.layer_norm' op axes [1, 2]: axis 2 is out of range for rank 2
  %0 = hl.layer_norm %x axes [1, 2] : tensor<2x3xf32>
  func.return
}

// -----

func.func @layer_norm_repeated_axes(%x: tensor<2x3xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.layer_norm' op axes [1, 1] repeat an axis
  %0 = hl.layer_norm %x axes [1, 1] : tensor<2x3xf32>
  func.return
}

// -----

func.func @batch_norm_rank(%x: tensor<8xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.batch_norm' op operand 'input' has shape (8,), expected rank >= 2 (N, C, ...)
  %0 = hl.batch_norm %x : tensor<8xf32>
  func.return
}

// -----

func.func @batch_norm_on_ints(%x: tensor<8x3xi64>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.batch_norm' op operand 'input' has element type i64, expected a floating-point element type (f16, bf16, f32, f64)
  %0 = hl.batch_norm %x : tensor<8x3xi64>
  func.return
}

// -----

func.func @group_norm_groups(%x: tensor<2x6x4x4xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.group_norm' op groups=4 must divide the 6 channels of axis 1
  %0 = hl.group_norm %x groups 4 : tensor<2x6x4x4xf32>
  func.return
}

// -----

func.func @group_norm_zero_groups(%x: tensor<2x6x4x4xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.group_norm' op groups=0 must divide the 6 channels of axis 1
  %0 = hl.group_norm %x groups 0 : tensor<2x6x4x4xf32>
  func.return
}

// -----

func.func @group_norm_rank(%x: tensor<6xf32>) {
// CHECK: {{.*}}hl-nn.mlir:[[# @LINE + 1]]:3: error: 'hl.group_norm' op operand 'input' has shape (6,), expected rank >= 2
  %0 = hl.group_norm %x groups 2 : tensor<6xf32>
  func.return
}
