// lower-kernels-to-loops on a batched matmul whose 10 rows (inside the batch loop the
// threads split, so their count is known when the kernel is built) are blocked 6 at a
// time: the 4 left over are one block of 4 rows, whose loop runs once, not 4 blocks of
// one row (a row alone has too few accumulators to hide the FMAs' latency).
// RUN: irtensor-opt %s -p lower-kernels-to-loops | filecheck %s

func.func @rows_left_over(%a: tensor<2x10x8xf32>, %b: tensor<2x8x16xf32>) -> tensor<2x10x16xf32> {
  %0 = kernel.kernel @r_2_10_8_16(%a, %b) space [2, 10, 8, 16] reduce [2] sum reads [#kernel.access<(d0, d1, d2, d3) -> (d0, d1, d2)>, #kernel.access<(d0, d1, d2, d3) -> (d0, d2, d3)>] writes affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)> schedule <order [0, 1, 2, 3], tiles [0, 0, 0, 0], vector 16, unroll 6, parallel [0]> : (tensor<2x10x8xf32>, tensor<2x8x16xf32>) -> tensor<2x10x16xf32> {
  ^bb0(%x: f32, %y: f32):
    %p = arith.mulf %x, %y : f32
    kernel.yield %p : f32
  }
  func.return %0 : tensor<2x10x16xf32>
}

// CHECK-LABEL: func.func @r_2_10_8_16_0(
// CHECK:         scf.for %i0 = %start to %stop step %c1 {
// CHECK-NEXT:      scf.for %i1 = %c0 to %c5 step %c6 {
// CHECK:             scf.for %i2 = %c0 to %c8 step %c1 iter_args(%acc = %{{.*}}, %acc_1 = %{{.*}}, %acc_2 = %{{.*}}, %acc_3 = %{{.*}}, %acc_4 = %{{.*}}, %acc_5 = %{{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK:           %[[LEFT:.*]] = arith.subi %c10, %c0 : index
// CHECK-NEXT:      %[[WHOLE:.*]] = arith.floordivsi %[[LEFT]], %c6 : index
// CHECK-NEXT:      %[[COVERED:.*]] = arith.muli %[[WHOLE]], %c6 : index
// CHECK-NEXT:      %[[REST:.*]] = arith.addi %c0, %[[COVERED]] : index
// CHECK-NEXT:      scf.for %i1_1 = %[[REST]] to %c7 step %c4 {
// CHECK:             scf.for %i2_1 = %c0 to %c8 step %c1 iter_args(%acc_6 = %{{.*}}, %acc_7 = %{{.*}}, %acc_8 = %{{.*}}, %acc_9 = %{{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-NOT:     scf.for %{{.*}} step %c1 iter_args(%{{.*}}) -> (vector<16xf32>) {
// CHECK:         func.return
