// Verifier errors of kernel.kernel.
// RUN: not irtensor-opt %s --split-input-file 2>&1 | filecheck %s

func.func @pad_not_of_type(%x: tensor<2xi32>) -> tensor<3xi32> {
// CHECK: {{.*}}kernel.mlir:[[# @LINE + 1]]:3: error: 'kernel.kernel' op read #0 pads with 2.5, not a value of its element type i32: it is not a whole number
  %0 = kernel.kernel @E_3(%x) space [3] reads [#kernel.access<(d0) -> ((d0 + -1)), valid (d0) : ((d0 + -1) >= 0), pad 2.5>] writes affine_map<(d0) -> (d0)> : (tensor<2xi32>) -> tensor<3xi32> {
  ^bb0(%1: i32):
    kernel.yield %1 : i32
  }
  func.return %0 : tensor<3xi32>
}

// -----

func.func @bool_pad_three(%x: tensor<2xi1>) -> tensor<3xi1> {
// CHECK: {{.*}}kernel.mlir:[[# @LINE + 1]]:3: error: 'kernel.kernel' op read #0 pads with 3.0, not a value of its element type i1: it is neither 0 nor 1 (nor -inf or inf)
  %0 = kernel.kernel @E_3(%x) space [3] reads [#kernel.access<(d0) -> ((d0 + -1)), valid (d0) : ((d0 + -1) >= 0), pad 3.0>] writes affine_map<(d0) -> (d0)> : (tensor<2xi1>) -> tensor<3xi1> {
  ^bb0(%1: i1):
    kernel.yield %1 : i1
  }
  func.return %0 : tensor<3xi1>
}
