// A kernel of at most 1024 iteration points (reductions included) is marked
// irtensor.small: its run is shorter than LLVM's optimisation of it, so the JIT
// makes its machine code (at O2) from the IR as lowered, with no IR passes.
// convert-to-llvm keeps the mark on the llvm.func. 32 x 32 points are small;
// 32 x 33, and a 16 x 16 x 8 matmul's 2048 points, are not.
// RUN: irtensor-opt %s -p hl-to-kernel,lower-kernels-to-loops | filecheck %s
// RUN: irtensor-opt %s -p hl-to-kernel,lower-kernels-to-loops,convert-to-llvm | filecheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @E_32_32_0(
// CHECK-SAME:    attributes {irtensor.kernel, irtensor.small} {
// CHECK-LABEL: func.func @E_32_33_1(
// CHECK-SAME:    attributes {irtensor.kernel} {
// CHECK-LABEL: func.func @r_16_8_16_2(
// CHECK-SAME:    attributes {irtensor.kernel} {
// LLVM:        llvm.func @E_32_32_0(
// LLVM-SAME:     irtensor.kernel, irtensor.small
// LLVM:        llvm.func @E_32_33_1(
// LLVM-NOT:      irtensor.small
// LLVM-SAME:     {
func.func @main(%x: tensor<32x32xf32>, %y: tensor<32x33xf32>, %a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> (tensor<32x32xf32>, tensor<32x33xf32>, tensor<16x16xf32>) {
  %small = hl.exp %x : tensor<32x32xf32>
  %large = hl.exp %y : tensor<32x33xf32>
  %dot = hl.matmul %a, %b : tensor<16x8xf32>, tensor<8x16xf32> -> tensor<16x16xf32>
  func.return %small, %large, %dot : tensor<32x32xf32>, tensor<32x33xf32>, tensor<16x16xf32>
}
