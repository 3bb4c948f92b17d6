// Register blocks on a host with 16 vector registers of 8 f32 lanes (AVX2): the
// accumulators take at most 12 of them (`within_registers`).
// - A 28-wide row is one block across (4 vectors, the last half used): it keeps its 28
//   columns and takes 3 rows (4 rows of 14 columns would be a vector and a part each),
//   where there are too few output channels to block across (8: one vector).
// - With 16 output channels, a 28-wide row (shorter than 4 vectors, ending in a part of
//   one) is blocked across the channels instead: 2 vectors of channels by 5 points of
//   the row (10 accumulators leave 6 registers for the weight's vectors and the row's
//   broadcasts, `window_block`), the row in blocks of 5 and a block of 3.
// - A 1x1 conv on a 7 x 7 map runs over its 49 points as one dim (conv-to-mul-sum):
//   a matmul whose blocks are 6 output channels (the 4 left over one block) by 2
//   vectors (16 points) of the 49.
// - A 3 x 3 conv there covers its row of 7 points as evenly as blocks of at most 5 do:
//   4 points (and 3) of 2 vectors.
// - So does a stride-2 3 x 3 conv on a 14 x 14 output: its point p reads 2p to 2p + 2,
//   and the windows of neighbouring points overlap (5, 5 and 4 points of 2 vectors).
// - A stride-2 7 x 7 conv on rows of 112 points (ResNet's stem) would have 8 points of
//   one vector: it takes 6 points of 2 vectors instead (the 4 left over a block of 4).
// - ResNet-50's last 3 x 3 conv (512 channels on a 7 x 7 map), with a 512 KiB L2: the
//   reduction is tiled by 256 channels (`reduction_tile`) and the output channels by 16
//   (`channel_tile`): 256 x 9 taps x 16 channels of f32 is 288 KiB, the most blocks of 16
//   channels (a power of two of them) within half the L2, reused by every output row.
// RUN: env IRTENSOR_VECTOR_BYTES=32 IRTENSOR_L2_BYTES=524288 irtensor-opt %s -p hl-to-kernel | filecheck %s

// CHECK-LABEL: func.func @row_of_28(
// CHECK:         kernel.kernel @r_2_1_8_8_28_28_3_3({{.*}} schedule <order [0, 1, 4, 2, 3, 6, 7, 5], {{.*}}vector 28, unroll 3,
func.func @row_of_28(%x: tensor<2x8x28x28xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<2x8x28x28xf32> {
  %r = hl.conv2d %x, %w padding [1, 1, 1, 1] : tensor<2x8x28x28xf32>, tensor<8x8x3x3xf32> -> tensor<2x8x28x28xf32>
  func.return %r : tensor<2x8x28x28xf32>
}

// CHECK-LABEL: func.func @row_of_28_across_channels(
// CHECK:         kernel.kernel @r_2_1_16_8_28_28_3_3({{.*}} schedule <order [0, 1, 4, 5, 3, 6, 7, 2], {{.*}}vector 16, unroll 5,
func.func @row_of_28_across_channels(%x: tensor<2x8x28x28xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<2x16x28x28xf32> {
  %r = hl.conv2d %x, %w padding [1, 1, 1, 1] : tensor<2x8x28x28xf32>, tensor<16x8x3x3xf32> -> tensor<2x16x28x28xf32>
  func.return %r : tensor<2x16x28x28xf32>
}

// CHECK-LABEL: func.func @conv1x1_on_7x7(
// CHECK:         kernel.kernel @r_2_1_40_8_49({{.*}} schedule <{{.*}}vector 16, unroll 6,
func.func @conv1x1_on_7x7(%x: tensor<2x8x7x7xf32>, %w: tensor<40x8x1x1xf32>) -> tensor<2x40x7x7xf32> {
  %r = hl.conv2d %x, %w : tensor<2x8x7x7xf32>, tensor<40x8x1x1xf32> -> tensor<2x40x7x7xf32>
  func.return %r : tensor<2x40x7x7xf32>
}

// CHECK-LABEL: func.func @conv3x3_on_7x7(
// CHECK:         kernel.kernel @r_2_1_40_8_7_7_3_3({{.*}} schedule <order [0, 1, 4, 5, 3, 6, 7, 2], tiles [0, 0, 0, 0, 0, 0, 0, 0], vector 16, unroll 4,
func.func @conv3x3_on_7x7(%x: tensor<2x8x7x7xf32>, %w: tensor<40x8x3x3xf32>) -> tensor<2x40x7x7xf32> {
  %r = hl.conv2d %x, %w padding [1, 1, 1, 1] : tensor<2x8x7x7xf32>, tensor<40x8x3x3xf32> -> tensor<2x40x7x7xf32>
  func.return %r : tensor<2x40x7x7xf32>
}

// CHECK-LABEL: func.func @resnet_conv3x3_on_7x7(
// CHECK:         kernel.kernel @r_8_1_512_512_7_7_3_3({{.*}} schedule <order [0, 1, 4, 5, 3, 6, 7, 2], tiles [0, 0, 16, 256, 0, 0, 0, 0], vector 16, unroll 4,
func.func @resnet_conv3x3_on_7x7(%x: tensor<8x512x7x7xf32>, %w: tensor<512x512x3x3xf32>) -> tensor<8x512x7x7xf32> {
  %r = hl.conv2d %x, %w padding [1, 1, 1, 1] : tensor<8x512x7x7xf32>, tensor<512x512x3x3xf32> -> tensor<8x512x7x7xf32>
  func.return %r : tensor<8x512x7x7xf32>
}

// CHECK-LABEL: func.func @conv3x3_stride2_on_14x14(
// CHECK:         kernel.kernel @r_2_1_32_8_14_14_3_3({{.*}} schedule <order [0, 1, 4, 5, 3, 6, 7, 2], {{.*}}vector 16, unroll 5,
func.func @conv3x3_stride2_on_14x14(%x: tensor<2x8x28x28xf32>, %w: tensor<32x8x3x3xf32>) -> tensor<2x32x14x14xf32> {
  %r = hl.conv2d %x, %w strides [2, 2] padding [1, 1, 1, 1] : tensor<2x8x28x28xf32>, tensor<32x8x3x3xf32> -> tensor<2x32x14x14xf32>
  func.return %r : tensor<2x32x14x14xf32>
}

// CHECK-LABEL: func.func @stem_conv7x7_stride2(
// CHECK:         kernel.kernel @r_1_1_64_3_112_112_7_7({{.*}} schedule <order [4, 0, 1, 5, 3, 6, 7, 2], {{.*}}vector 16, unroll 6,
func.func @stem_conv7x7_stride2(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32> {
  %r = hl.conv2d %x, %w strides [2, 2] padding [3, 3, 3, 3] : tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32> -> tensor<1x64x112x112xf32>
  func.return %r : tensor<1x64x112x112xf32>
}
