// --run with every element type, rank-0 results and zero-size inputs.
// RUN: irtensor-opt %s --run | filecheck %s

// CHECK:      // result #0: tensor<3xbf16>
// CHECK-NEXT: [{{.*}}]
// CHECK-NEXT: // result #1: tensor<2xf16>
// CHECK-NEXT: [{{.*}}]
// The sum over a zero-size axis is 0.
// CHECK-NEXT: // result #2: tensor<2xf32>
// CHECK-NEXT: [0., 0.]
// CHECK-NEXT: // result #3: tensor<2xi64>
// CHECK-NEXT: [-7, -7]
// CHECK-NEXT: // result #4: tensor<f32>
// CHECK-NEXT: 2.5
// CHECK-NEXT: // result #5: tensor<i1>
// CHECK-NEXT: True
// CHECK-NEXT: // result #6: tensor<0x2xf64>
// CHECK-NEXT: []
// CHECK-NOT:  {{.}}

func.func @main(%x: tensor<3xbf16>, %h: tensor<2xf16>, %e: tensor<0x2xf32>, %d: tensor<0x2xf64>)
    -> (tensor<3xbf16>, tensor<2xf16>, tensor<2xf32>, tensor<2xi64>, tensor<f32>, tensor<i1>, tensor<0x2xf64>) {
  %r = hl.sum %e axes [0] : tensor<0x2xf32> -> tensor<2xf32>
  %i = ll.const -7 : tensor<2xi64>
  %s = ll.const 2.5 : tensor<f32>
  %t = ll.const true : tensor<i1>
  %dd = hl.neg %d : tensor<0x2xf64>
  func.return %x, %h, %r, %i, %s, %t, %dd : tensor<3xbf16>, tensor<2xf16>, tensor<2xf32>, tensor<2xi64>, tensor<f32>, tensor<i1>, tensor<0x2xf64>
}
