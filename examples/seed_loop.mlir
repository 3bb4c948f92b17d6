// The seed's loop `x = zeros(1); for i in range(5): x += i`, written out in ll:
// five additions of constants that fold-constants will reduce to one constant.
func.func @main() -> tensor<1xf32> {
  %x = ll.const 0.0 : tensor<1xf32>
  %c0 = ll.const 0.0 : tensor<1xf32>
  %c1 = ll.const 1.0 : tensor<1xf32>
  %c2 = ll.const 2.0 : tensor<1xf32>
  %c3 = ll.const 3.0 : tensor<1xf32>
  %c4 = ll.const 4.0 : tensor<1xf32>
  %x0 = ll.add %x, %c0 : tensor<1xf32>
  %x1 = ll.add %x0, %c1 : tensor<1xf32>
  %x2 = ll.add %x1, %c2 : tensor<1xf32>
  %x3 = ll.add %x2, %c3 : tensor<1xf32>
  %x4 = ll.add %x3, %c4 : tensor<1xf32>
  func.return %x4 : tensor<1xf32>
}
