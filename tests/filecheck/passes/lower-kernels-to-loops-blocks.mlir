// lower-kernels-to-loops with tiles and a register block: an i-k-j matmul
// (order [0, 1, 2], the reduction d1 between the rows d0 and the columns d2)
// with `unroll 2, vector 4` keeps a 2 x 4 block of accumulators, one
// vector<4xf32> per row, in iter_args of the reduction loop. Tiles follow MLIR's
// convention: the tile loops of d1 (by 4) and d2 (by 16) come first; the rows d0
// (the outermost dimension) run [start, stop) in blocks of 2, then one by one;
// the columns run over their tile in blocks of 4. The reduction is tiled: each
// block sums its tile from zeros (a level of the blocked sum) and adds that to
// the partial sums of the tiles before it, which the output holds (zeros in the
// first tile). Each step loads B's run of 4 columns once, as one vector, and
// broadcasts each row's element of A.
// RUN: irtensor-opt %s -p lower-kernels-to-loops | filecheck %s

// CHECK-LABEL: func.func @r_8_6_32_0(
// CHECK-SAME:      %start: index, %stop: index) attributes {irtensor.kernel} {
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    scf.for %t1 = %c0 to %c6 step %c4 {
// CHECK-NEXT:      scf.for %t2 = %c0 to %c32 step %c16 {
// CHECK-NEXT:        %[[LAST_ROW:.*]] = arith.subi %stop, %c1 : index
// CHECK-NEXT:        scf.for %i0 = %start to %[[LAST_ROW]] step %c2 {
// CHECK-NEXT:          %[[ROW1:.*]] = arith.addi %i0, %c1 : index
// CHECK-NEXT:          %[[END:.*]] = arith.addi %t2, %c16 : index
// CHECK-NEXT:          %[[TILE_END:.*]] = arith.minsi %[[END]], %c32 : index
// CHECK-NEXT:          %[[LAST_COL:.*]] = arith.subi %[[TILE_END]], %c3 : index
// CHECK-NEXT:          scf.for %i2 = %t2 to %[[LAST_COL]] step %c4 {
// CHECK-NEXT:            %[[ZEROS:.*]] = vector.broadcast %[[ZERO]] : f32 to vector<4xf32>
// CHECK-NEXT:            %[[FIRST:.*]] = arith.cmpi eq, %t1, %c0 : index
// CHECK-NEXT:            %[[PARTIAL:.*]] = vector.load %out[%i0, %i2] : memref<8x32xf32>, vector<4xf32>
// CHECK-NEXT:            %[[INIT:.*]] = arith.select %[[FIRST]], %[[ZEROS]], %[[PARTIAL]] : vector<4xf32>
// CHECK-NEXT:            %[[PARTIAL1:.*]] = vector.load %out[%[[ROW1]], %i2] : memref<8x32xf32>, vector<4xf32>
// CHECK-NEXT:            %[[INIT1:.*]] = arith.select %[[FIRST]], %[[ZEROS]], %[[PARTIAL1]] : vector<4xf32>
// CHECK:                 %[[KEND:.*]] = arith.minsi %{{.*}}, %c6 : index
// CHECK-NEXT:            %[[SUM0:.*]], %[[SUM1:.*]] = scf.for %i1 = %t1 to %[[KEND]] step %c1 iter_args(%acc = %[[ZEROS]], %acc_1 = %[[ZEROS]]) -> (vector<4xf32>, vector<4xf32>) {
// CHECK-NEXT:              %[[A:.*]] = memref.load %in0[%i0, %i1] : memref<8x6xf32>
// CHECK-NEXT:              %[[B:.*]] = vector.load %in1[%i1, %i2] : memref<6x32xf32>, vector<4xf32>
// CHECK-NEXT:              %[[AS:.*]] = vector.broadcast %[[A]] : f32 to vector<4xf32>
// CHECK-NEXT:              %[[P:.*]] = arith.mulf %[[AS]], %[[B]] fastmath<contract> : vector<4xf32>
// CHECK-NEXT:              %[[ROW0:.*]] = arith.addf %acc, %[[P]] fastmath<contract> : vector<4xf32>
// The second row reads its own element of A and reuses the run of B.
// CHECK-NEXT:              %[[A1:.*]] = memref.load %in0[%[[ROW1]], %i1] : memref<8x6xf32>
// CHECK-NEXT:              %[[AS1:.*]] = vector.broadcast %[[A1]] : f32 to vector<4xf32>
// CHECK-NEXT:              %[[P1:.*]] = arith.mulf %[[AS1]], %[[B]] fastmath<contract> : vector<4xf32>
// CHECK-NEXT:              %[[ROW1SUM:.*]] = arith.addf %acc_1, %[[P1]] fastmath<contract> : vector<4xf32>
// CHECK-NEXT:              scf.yield %[[ROW0]], %[[ROW1SUM]] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:            }
// CHECK-NEXT:            %[[OUT0:.*]] = arith.addf %[[INIT]], %[[SUM0]] fastmath<contract> : vector<4xf32>
// CHECK-NEXT:            %[[OUT1:.*]] = arith.addf %[[INIT1]], %[[SUM1]] fastmath<contract> : vector<4xf32>
// CHECK-NEXT:            vector.store %[[OUT0]], %out[%i0, %i2] : memref<8x32xf32>, vector<4xf32>
// CHECK-NEXT:            vector.store %[[OUT1]], %out[%[[ROW1]], %i2] : memref<8x32xf32>, vector<4xf32>
// CHECK-NEXT:          }
// The rows left over (an odd stop - start): blocks of one row.
// CHECK:             %[[LEFT:.*]] = arith.subi %stop, %start : index
// CHECK-NEXT:        %[[WHOLE:.*]] = arith.floordivsi %[[LEFT]], %c2 : index
// CHECK-NEXT:        %[[COVERED:.*]] = arith.muli %[[WHOLE]], %c2 : index
// CHECK-NEXT:        %[[REST:.*]] = arith.addi %start, %[[COVERED]] : index
// CHECK-NEXT:        scf.for %i0_1 = %[[REST]] to %stop step %c1 {
// CHECK:               scf.for %i1_1 = %t1 to %{{.*}} step %c1 iter_args({{.*}}) -> (vector<4xf32>) {
func.func @matmul(%a: tensor<8x6xf32>, %b: tensor<6x32xf32>) -> tensor<8x32xf32> {
  %0 = kernel.kernel @r_8_6_32(%a, %b) space [8, 6, 32] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> schedule <order [0, 1, 2], tiles [0, 4, 16], vector 4, unroll 2, parallel [0]> : (tensor<8x6xf32>, tensor<6x32xf32>) -> tensor<8x32xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    kernel.yield %m : f32
  }
  func.return %0 : tensor<8x32xf32>
}

// A padded conv in its register-block order (rows: output channels d2, columns:
// output width d5): the masked window is copied once per output row into a
// packed buffer, pads included, so the block's loads need no mask.
// CHECK-LABEL: func.func @r_1_1_4_2_3_5_3_3_1(
// CHECK:         %pack0 = memref.alloc() : memref<2x3x3x5xf32>
// CHECK:         scf.for %i0 = %start to %stop step %c1 {
// CHECK-NEXT:      scf.for %i1 = %c0 to %c1 step %c1 {
// CHECK-NEXT:        scf.for %i4 = %c0 to %c3 step %c1 {
// CHECK-NEXT:          scf.for %i3 = %c0 to %c2 step %c1 {
// CHECK-NEXT:            scf.for %i6 = %c0 to %c3 step %c1 {
// CHECK-NEXT:              scf.for %i7 = %c0 to %c3 step %c1 {
// CHECK-NEXT:                scf.for %i5 = %c0 to %c5 step %c1 {
// CHECK:                       arith.andi
// CHECK:                       %[[X:.*]] = memref.load %in0
// CHECK-NEXT:                  %[[PADDED:.*]] = arith.select %{{.*}}, %[[X]], %{{.*}} : f32
// CHECK-NEXT:                  memref.store %[[PADDED]], %pack0[%i3, %i6, %i7, %i5] : memref<2x3x3x5xf32>
// Four output channels by the five columns: each channel's row is a vector<4xf32>
// and a vector<1xf32> (a row is made of power-of-two vectors: LLVM splits those into
// registers, while a vector<5xf32> it would widen lane by lane), one vector load of
// the copy per piece and step, the weights broadcast.
// CHECK:               scf.for %i2 = %c0 to %c1 step %c4 {
// CHECK:                 scf.for %i5_1 = %c0 to %c1 step %c5 {
// CHECK:                   %[[TAIL:.*]] = arith.addi %i5_1, %c4
// CHECK:                   scf.for %i3_1 = %c0 to %c2 step %c1 iter_args({{.*}}) -> (vector<4xf32>, vector<1xf32>, vector<4xf32>, vector<1xf32>, vector<4xf32>, vector<1xf32>, vector<4xf32>, vector<1xf32>)
// CHECK-NOT:                 arith.select
// CHECK:                     vector.load %pack0[%i3_1, %i6_1, %i7_1, %i5_1] : memref<2x3x3x5xf32>, vector<4xf32>
// CHECK:                     vector.load %pack0[%i3_1, %i6_1, %i7_1, %[[TAIL]]] : memref<2x3x3x5xf32>, vector<1xf32>
// CHECK-NOT:                 vector.load
// CHECK:                     scf.yield
// CHECK:                 vector.store %{{.*}}, %out[%i0, %{{.*}}, %i4, %i5_1] : memref<1x4x3x5xf32>, vector<4xf32>
// CHECK-NEXT:            vector.store %{{.*}}, %out[%i0, %{{.*}}, %i4, %[[TAIL]]] : memref<1x4x3x5xf32>, vector<1xf32>
// CHECK-NEXT:            vector.store %{{.*}}, %out[%i0, %{{.*}}, %i4, %i5_1] : memref<1x4x3x5xf32>, vector<4xf32>
// CHECK-NEXT:            vector.store %{{.*}}, %out[%i0, %{{.*}}, %i4, %[[TAIL]]] : memref<1x4x3x5xf32>, vector<1xf32>
// CHECK-NEXT:            vector.store %{{.*}}, %out[%i0, %{{.*}}, %i4, %i5_1] : memref<1x4x3x5xf32>, vector<4xf32>
// CHECK-NEXT:            vector.store %{{.*}}, %out[%i0, %{{.*}}, %i4, %[[TAIL]]] : memref<1x4x3x5xf32>, vector<1xf32>
// CHECK-NEXT:            vector.store %{{.*}}, %out[%i0, %{{.*}}, %i4, %i5_1] : memref<1x4x3x5xf32>, vector<4xf32>
// CHECK-NEXT:            vector.store %{{.*}}, %out[%i0, %{{.*}}, %i4, %[[TAIL]]] : memref<1x4x3x5xf32>, vector<1xf32>
// CHECK:         memref.dealloc %pack0 : memref<2x3x3x5xf32>
// CHECK-NEXT:    func.return
func.func @conv(%x: tensor<1x2x3x5xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x3x5xf32> {
  %0 = kernel.kernel @r_1_1_4_2_3_5_3_3(%x, %w) space [1, 1, 4, 2, 3, 5, 3, 3] reduce [3, 6, 7] sum reads [#kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d3, d4 + d6 - 1, d5 + d7 - 1), valid (d0, d1, d2, d3, d4, d5, d6, d7) : (d4 + d6 - 1 >= 0, -d4 - d6 + 3 >= 0, d5 + d7 - 1 >= 0, -d5 - d7 + 5 >= 0), pad 0.0>, #kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d2, d3, d6, d7)>] writes affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d2, d4, d5)> schedule <order [0, 1, 4, 2, 3, 6, 7, 5], tiles [0, 0, 0, 0, 0, 0, 0, 0], vector 5, unroll 4, parallel [0]> : (tensor<1x2x3x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x5xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    kernel.yield %m : f32
  }
  func.return %0 : tensor<1x4x3x5xf32>
}

// matmul + bias + relu: the epilogue runs on each row's vector too (the bias's
// run loaded once for the four rows, the relu's zero the accumulators' zeros),
// all four epilogues first, then one vector store per row.
// CHECK-LABEL: func.func @r_4_6_8_2(
// CHECK:         %[[ZEROS:.*]] = vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK-NEXT:    %[[S0:.*]], %[[S1:.*]], %{{.*}}, %{{.*}} = scf.for %i1 = %c0 to %c6 step %c1 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK:         }
// CHECK-NEXT:    %[[BIAS:.*]] = vector.load %in2[%i2] : memref<8xf32>, vector<8xf32>
// CHECK-NEXT:    %[[BIASED:.*]] = arith.addf %[[S0]], %[[BIAS]] : vector<8xf32>
// CHECK-NEXT:    %[[RELU:.*]] = arith.maximumf %[[BIASED]], %[[ZEROS]] : vector<8xf32>
// CHECK-NEXT:    %[[BIASED1:.*]] = arith.addf %[[S1]], %[[BIAS]] : vector<8xf32>
// CHECK:         vector.store %[[RELU]], %out[%i0, %i2] : memref<4x8xf32>, vector<8xf32>
// CHECK-COUNT-3: vector.store
// CHECK-NOT:     memref.store
// CHECK:         func.return
func.func @dense_relu(%a: tensor<4x6xf32>, %b: tensor<6x8xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = kernel.kernel @r_4_6_8(%a, %b, %bias) space [4, 6, 8] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>, #kernel.access<(d0, d1, d2) -> (d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> epilogue_inputs 1 schedule <order [0, 1, 2], tiles [0, 0, 0], vector 8, unroll 4, parallel []> : (tensor<4x6xf32>, tensor<6x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    kernel.yield %m : f32
  } epilogue {
  ^bb0(%sum: f32, %c: f32):
    %s = arith.addf %sum, %c : f32
    %zero = arith.constant 0.000000e+00 : f32
    %r = arith.maximumf %s, %zero : f32
    kernel.yield %r : f32
  }
  func.return %0 : tensor<4x8xf32>
}

// B read transposed: its elements along the columns are a row apart, not a run,
// so the block stays scalar (a load, a multiply and an add per point).
// CHECK-LABEL: func.func @r_8_6_32_bt_3(
// CHECK:         scf.for %i1 = %c0 to %c6 step %c1 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-NOT:       vector.
// CHECK:           memref.load %in1[%i2, %i1] : memref<32x6xf32>
// CHECK-NOT:       vector.
// CHECK:         memref.store %{{.*}}, %out[%i0, %i2] : memref<8x32xf32>
func.func @matmul_bt(%a: tensor<8x6xf32>, %b: tensor<32x6xf32>) -> tensor<8x32xf32> {
  %0 = kernel.kernel @r_8_6_32_bt(%a, %b) space [8, 6, 32] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d2, d1)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> schedule <order [0, 1, 2], tiles [0, 0, 0], vector 4, unroll 2, parallel [0]> : (tensor<8x6xf32>, tensor<32x6xf32>) -> tensor<8x32xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    kernel.yield %m : f32
  }
  func.return %0 : tensor<8x32xf32>
}
