// A two-layer perceptron, relu(x @ w1 + b1) @ w2 + b2, written in the hl dialect.
func.func @main(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %b1: tensor<16xf32>,
                %w2: tensor<16x3xf32>, %b2: tensor<3xf32>) -> tensor<4x3xf32> {
  %h = hl.matmul %x, %w1 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %hb = hl.add %h, %b1 : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %a = hl.relu %hb : tensor<4x16xf32>
  %o = hl.matmul %a, %w2 : tensor<4x16xf32>, tensor<16x3xf32> -> tensor<4x3xf32>
  %ob = hl.add %o, %b2 : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
  %unused = hl.exp %ob : tensor<4x3xf32>
  func.return %ob : tensor<4x3xf32>
}
