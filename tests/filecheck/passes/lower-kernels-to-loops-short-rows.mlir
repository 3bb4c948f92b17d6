// lower-kernels-to-loops copies B in panels where its rows are not a whole number of
// 64-byte cache lines apart, even when they are closer than 1 KiB: 49 f32 columns (a 1x1
// conv on a 7 x 7 map) are 196 bytes a row, and the lines would split a block's run of
// 16 columns down K; the block reads the copy. 64 columns (256 bytes a row, four whole
// lines) are read as they are.
// RUN: irtensor-opt %s -p lower-kernels-to-loops | filecheck %s

func.func @rows_a_part_of_a_line_apart(%a: tensor<12x32xf32>, %b: tensor<32x49xf32>) -> tensor<12x49xf32> {
  %0 = kernel.kernel @r_12_32_49(%a, %b) space [12, 32, 49] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> schedule <order [0, 1, 2], tiles [0, 0, 0], vector 16, unroll 6, parallel [0]> : (tensor<12x32xf32>, tensor<32x49xf32>) -> tensor<12x49xf32> {
  ^bb0(%x: f32, %y: f32):
    %p = arith.mulf %x, %y : f32
    kernel.yield %p : f32
  }
  func.return %0 : tensor<12x49xf32>
}

func.func @rows_whole_lines_apart(%a: tensor<12x32xf32>, %b: tensor<32x64xf32>) -> tensor<12x64xf32> {
  %0 = kernel.kernel @r_12_32_64(%a, %b) space [12, 32, 64] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> schedule <order [0, 1, 2], tiles [0, 0, 0], vector 16, unroll 6, parallel [0]> : (tensor<12x32xf32>, tensor<32x64xf32>) -> tensor<12x64xf32> {
  ^bb0(%x: f32, %y: f32):
    %p = arith.mulf %x, %y : f32
    kernel.yield %p : f32
  }
  func.return %0 : tensor<12x64xf32>
}

// CHECK-LABEL: func.func @r_12_32_49_0(
// CHECK:         %pack1 = memref.alloc() : memref<4x32x16xf32>
// CHECK:         memref.store %{{.*}}, %pack1[%{{.*}}, %i1, %{{.*}}] : memref<4x32x16xf32>
// CHECK:         vector.load %pack1[%{{.*}}, %i1_1, %{{.*}}] : memref<4x32x16xf32>, vector<16xf32>
// CHECK-NOT:     vector.load %in1
// CHECK:         memref.dealloc %pack1 : memref<4x32x16xf32>

// CHECK-LABEL: func.func @r_12_32_64_1(
// CHECK-NOT:     memref.alloc
// CHECK:         vector.load %in1[%i1, %i2] : memref<32x64xf32>, vector<16xf32>
// CHECK:         func.return
