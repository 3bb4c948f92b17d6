// A convolution block: conv2d (3x3, padding 1) + bias, relu, 2x2 max-pool, then
// global average pooling and a softmax over the channels.
func.func @main(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<2x4xf32> {
  %c = hl.conv2d %x, %w padding [1, 1, 1, 1] : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  %cb = hl.add %c, %b : tensor<2x4x8x8xf32>, tensor<4x1x1xf32> -> tensor<2x4x8x8xf32>
  %r = hl.relu %cb : tensor<2x4x8x8xf32>
  %p = hl.max_pool2d %r kernel [2, 2] strides [2, 2] : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  %g = hl.mean %p axes [2, 3] : tensor<2x4x4x4xf32> -> tensor<2x4xf32>
  %s = hl.softmax %g axis 1 : tensor<2x4xf32>
  func.return %s : tensor<2x4xf32>
}
