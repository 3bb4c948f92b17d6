// Register blocks on a host with 16 vector registers of 8 f32 lanes (AVX2): the
// accumulators take at most 12 of them (`within_registers`).
// - A 28-wide row is one block across (4 vectors, the last half used): it keeps its 28
//   columns and takes 3 rows (4 rows of 14 columns would be a vector and a part each).
// - A 1x1 conv on a 7 x 7 map runs over its 49 points as one dim (conv-to-mul-sum):
//   a matmul whose blocks are 5 output channels by 2 vectors (16 points) of the 49.
// - A 3 x 3 conv there keeps its row of 7 points (its taps share the row's broadcasts),
//   with 1 vector.
// RUN: env IRTENSOR_VECTOR_BYTES=32 irtensor-opt %s -p hl-to-kernel | filecheck %s

// CHECK-LABEL: func.func @row_of_28(
// CHECK:         kernel.kernel @r_2_1_16_8_28_28_3_3({{.*}} schedule <order [0, 1, 4, 2, 3, 6, 7, 5], {{.*}}vector 28, unroll 3,
func.func @row_of_28(%x: tensor<2x8x28x28xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<2x16x28x28xf32> {
  %r = hl.conv2d %x, %w padding [1, 1, 1, 1] : tensor<2x8x28x28xf32>, tensor<16x8x3x3xf32> -> tensor<2x16x28x28xf32>
  func.return %r : tensor<2x16x28x28xf32>
}

// CHECK-LABEL: func.func @conv1x1_on_7x7(
// CHECK:         kernel.kernel @r_2_1_40_8_49({{.*}} schedule <{{.*}}vector 16, unroll 5,
func.func @conv1x1_on_7x7(%x: tensor<2x8x7x7xf32>, %w: tensor<40x8x1x1xf32>) -> tensor<2x40x7x7xf32> {
  %r = hl.conv2d %x, %w : tensor<2x8x7x7xf32>, tensor<40x8x1x1xf32> -> tensor<2x40x7x7xf32>
  func.return %r : tensor<2x40x7x7xf32>
}

// CHECK-LABEL: func.func @conv3x3_on_7x7(
// CHECK:         kernel.kernel @r_2_1_40_8_7_7_3_3({{.*}} schedule <{{.*}}vector 8, unroll 7,
func.func @conv3x3_on_7x7(%x: tensor<2x8x7x7xf32>, %w: tensor<40x8x3x3xf32>) -> tensor<2x40x7x7xf32> {
  %r = hl.conv2d %x, %w padding [1, 1, 1, 1] : tensor<2x8x7x7xf32>, tensor<40x8x3x3xf32> -> tensor<2x40x7x7xf32>
  func.return %r : tensor<2x40x7x7xf32>
}
