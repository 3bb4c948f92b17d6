// A copy that gathers each element of a written row from another row of its
// operand (a weight's channels-last pack) is marked irtensor.no_unroll: LLVM's
// unroller grew such a pack's 1.6 KB of IR to 140 KB for nothing.
// convert-to-llvm keeps the mark on the llvm.func, and the JIT turns the
// unroller off for its module. A padded copy, a copy that steps by 2 along its
// rows, and a transposition that computes keep LLVM's unroller.
// RUN: irtensor-opt %s -p lower-kernels-to-loops | filecheck %s
// RUN: irtensor-opt %s -p lower-kernels-to-loops,convert-to-llvm | filecheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @pack_4_3_3_8_0(%in0: memref<8x4x3x3xf32>, %out: memref<4x3x3x8xf32>, %start: index, %stop: index) attributes {irtensor.kernel, irtensor.no_unroll, irtensor.small} {
// CHECK-LABEL: func.func @pad_1_4_5_5_1(
// CHECK-SAME:    attributes {irtensor.kernel, irtensor.small} {
// CHECK-LABEL: func.func @dense_1_4_9_2(
// CHECK-SAME:    attributes {irtensor.kernel, irtensor.small} {
// CHECK-LABEL: func.func @E_8_36_3(
// CHECK-SAME:    attributes {irtensor.kernel, irtensor.small} {
// LLVM:        llvm.func @pack_4_3_3_8_0(
// LLVM-SAME:     irtensor.kernel, irtensor.no_unroll
// LLVM:        llvm.func @pad_1_4_5_5_1(
// LLVM-NOT:      irtensor.no_unroll
// LLVM-SAME:     {
func.func @copies(%w: tensor<8x4x3x3xf32>, %x: tensor<1x4x3x3xf32>, %y: tensor<1x4x6x6xf32>, %z: tensor<36x8xf32>) -> (tensor<4x3x3x8xf32>, tensor<1x4x5x5xf32>, tensor<1x4x9xf32>, tensor<8x36xf32>) {
  %pack = kernel.kernel @pack_4_3_3_8(%w) space [4, 3, 3, 8] reads [#kernel.access<(d0, d1, d2, d3) -> (d3, d0, d1, d2)>] writes affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)> : (tensor<8x4x3x3xf32>) -> tensor<4x3x3x8xf32> {
  ^bb0(%0: f32):
    kernel.yield %0 : f32
  }
  %pad = kernel.kernel @pad_1_4_5_5(%x) space [1, 4, 5, 5] reads [#kernel.access<(d0, d1, d2, d3) -> (d0, d1, (d2 + -1), (d3 + -1)), valid (d0, d1, d2, d3) : ((d2 + -1) >= 0, ((d2 * -1) + 3) >= 0, (d3 + -1) >= 0, ((d3 * -1) + 3) >= 0), pad 0.0>] writes affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)> : (tensor<1x4x3x3xf32>) -> tensor<1x4x5x5xf32> {
  ^bb0(%0: f32):
    kernel.yield %0 : f32
  }
  %dense = kernel.kernel @dense_1_4_9(%y) space [1, 4, 9] reads [#kernel.access<(d0, d1, d2) -> (d0, d1, ((d2 floordiv 3) * 2), ((d2 mod 3) * 2))>] writes affine_map<(d0, d1, d2) -> (d0, d1, d2)> : (tensor<1x4x6x6xf32>) -> tensor<1x4x9xf32> {
  ^bb0(%0: f32):
    kernel.yield %0 : f32
  }
  %scaled = kernel.kernel @E_8_36(%z) space [8, 36] reads [#kernel.access<(d0, d1) -> (d1, d0)>] writes affine_map<(d0, d1) -> (d0, d1)> : (tensor<36x8xf32>) -> tensor<8x36xf32> {
  ^bb0(%0: f32):
    %1 = arith.addf %0, %0 : f32
    kernel.yield %1 : f32
  }
  func.return %pack, %pad, %dense, %scaled : tensor<4x3x3x8xf32>, tensor<1x4x5x5xf32>, tensor<1x4x9xf32>, tensor<8x36xf32>
}
