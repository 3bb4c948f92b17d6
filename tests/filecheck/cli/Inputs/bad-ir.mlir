// Two ops that do not verify: irtensor-opt reports the first and stops.
func.func @main(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = hl.exp %x : tensor<4xi32>
  %1 = hl.sqrt %x : tensor<4xi32>
  func.return %0 : tensor<4xi32>
}
