// lower-kernels-to-loops on a matmul whose B rows lie 1 KiB apart (256 f32 columns),
// blocked 6 rows x 16 columns with column tiles of 64: the block copies each tile of B
// into %pack1 in panels of its 16 columns, `[column // 16, k, column % 16]`, as BLAS
// packs B. A block's run down K is then one contiguous stretch of 16 x 32 floats, not
// one cache line per k 1 KiB apart (lines that fall into a quarter of L1's sets).
// RUN: irtensor-opt %s -p lower-kernels-to-loops | filecheck %s

func.func @matmul(%a: tensor<12x32xf32>, %b: tensor<32x256xf32>) -> tensor<12x256xf32> {
  %0 = kernel.kernel @r_12_32_256(%a, %b) space [12, 32, 256] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> schedule <order [0, 1, 2], tiles [0, 0, 64], vector 16, unroll 6, parallel [0]> : (tensor<12x32xf32>, tensor<32x256xf32>) -> tensor<12x256xf32> {
  ^bb0(%x: f32, %y: f32):
    %p = arith.mulf %x, %y : f32
    kernel.yield %p : f32
  }
  func.return %0 : tensor<12x256xf32>
}

// CHECK-LABEL: func.func @r_12_32_256_0(
// CHECK:         %pack1 = memref.alloc() : memref<4x32x16xf32>
// CHECK-NEXT:    scf.for %t2 = %c0 to %c256 step %c64 {
// CHECK-NEXT:      scf.for %i1 = %c0 to %c32 step %c1 {
// CHECK:             scf.for %i2 = %t2 to %{{.*}} step %c1 {
// CHECK-NEXT:          %[[B:.*]] = memref.load %in1[%i1, %i2] : memref<32x256xf32>
// CHECK-NEXT:          %[[AT:.*]] = arith.subi %i2, %t2 : index
// CHECK-NEXT:          %[[PANEL:.*]] = arith.floordivsi %[[AT]], %c16 : index
// CHECK-NEXT:          %[[FIRST:.*]] = arith.muli %[[PANEL]], %c16 : index
// CHECK-NEXT:          %[[LANE:.*]] = arith.subi %[[AT]], %[[FIRST]] : index
// CHECK-NEXT:          memref.store %[[B]], %pack1[%[[PANEL]], %i1, %[[LANE]]] : memref<4x32x16xf32>
// CHECK:           scf.for %i0 = %start to %{{.*}} step %c6 {
// CHECK:             scf.for %i2_1 = %t2 to %{{.*}} step %c16 {
// CHECK:               scf.for %i1_1 = %c0 to %c32 step %c1 iter_args(%acc = %{{.*}}, %acc_1 = %{{.*}}, %acc_2 = %{{.*}}, %acc_3 = %{{.*}}, %acc_4 = %{{.*}}, %acc_5 = %{{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK:                 %[[RUN_AT:.*]] = arith.subi %i2_1, %t2 : index
// CHECK-NEXT:            %[[RUN_PANEL:.*]] = arith.floordivsi %[[RUN_AT]], %c16 : index
// CHECK:                 vector.load %pack1[%[[RUN_PANEL]], %i1_1, %{{.*}}] : memref<4x32x16xf32>, vector<16xf32>
// CHECK:         memref.dealloc %pack1 : memref<4x32x16xf32>
