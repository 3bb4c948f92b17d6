// A conv whose output rows are short (4 columns here, 7 in ResNet's last stage) is
// register-blocked across its output channels: pack-operands copies the weight with
// the channels last ([ci, kh, kw, co]), reorder-loops orders the loops
// [oh, n, group, ow, ci, kh, kw, co] (the size-1 batch and group after the first loop,
// which threads split) with a block of 4 rows (ow) by 32 channels, and
// lower-kernels-to-loops keeps one vector<32xf32> of accumulators per row: each step
// loads 32 channels of the packed weight and broadcasts one input element per row.
// The output holds the channels 16 elements apart, so each finished row goes
// through a stack buffer (%lanes) and is stored lane by lane; the residual, read
// the same way, is gathered lane by lane. Both happen once per block, as a loop over
// the lanes in a flat view of the buffer (the row's first index plus the lane's step).
// RUN: irtensor-opt %s -p hl-to-kernel | filecheck %s
// RUN: irtensor-opt %s -p hl-to-kernel,lower-kernels-to-loops | filecheck %s --check-prefix=LOOPS

// CHECK-LABEL: func.func @conv_residual(
// CHECK:         %[[W:.*]] = kernel.kernel @pack_2_3_3_32(%w) space [2, 3, 3, 32]
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2, d3) -> (d3, d0, d1, d2)>]
// CHECK:         kernel.kernel @r_1_1_32_2_4_4_3_3(%x, %[[W]], %b, %res)
// CHECK-SAME:      #kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d6, d7, d2)>
// CHECK-SAME:      schedule <order [4, 0, 1, 5, 3, 6, 7, 2], tiles [0, 0, 0, 0, 0, 0, 0, 0], vector 32, unroll 4, parallel []>

// LOOPS-LABEL: func.func @r_1_1_32_2_4_4_3_3_1(
// The output and the residual are addressed lane by lane through flat views.
// LOOPS:         %[[OUT:.*]] = memref.collapse_shape %out {{.*}} into memref<512xf32>
// LOOPS:         %lanes = memref.alloca() : memref<32xf32>
// LOOPS:         %[[RES:.*]] = memref.collapse_shape %in3 {{.*}} into memref<512xf32>
// LOOPS:         scf.for %i3 = {{.*}} iter_args({{.*}}) -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// LOOPS:         vector.load %in1[%i3, %i6, %i7, %i2] : memref<2x3x3x32xf32>, vector<32xf32>
// LOOPS:         vector.broadcast {{.*}} : f32 to vector<32xf32>
// The bias is one vector load; the residual's 32 channels are gathered in a loop over
// the lanes: the first lane's flat index (channel %i2 of 16-element planes, row %i4 of
// 4) once, each lane 16 elements on.
// LOOPS:         vector.load %in2[%i2] : memref<32xf32>, vector<32xf32>
// LOOPS-NEXT:    %[[C:.*]] = arith.muli %i2, %c16 : index
// LOOPS-NEXT:    %[[H:.*]] = arith.muli %i4, %c4 : index
// LOOPS-NEXT:    %[[CH:.*]] = arith.addi %[[C]], %[[H]] : index
// LOOPS-NEXT:    %[[FIRST:.*]] = arith.addi %[[CH]], %i5 : index
// LOOPS-NEXT:    scf.for %[[LANE:.*]] = %c0 to %c32 step %c1 {
// LOOPS-NEXT:      %[[STEP:.*]] = arith.muli %[[LANE]], %c16 : index
// LOOPS-NEXT:      %[[AT:.*]] = arith.addi %[[FIRST]], %[[STEP]] : index
// LOOPS-NEXT:      %[[R:.*]] = memref.load %[[RES]][%[[AT]]] : memref<512xf32>
// LOOPS-NEXT:      memref.store %[[R]], %lanes[%[[LANE]]] : memref<32xf32>
// LOOPS-NEXT:    }
// LOOPS-NEXT:    vector.load %lanes[%c0] : memref<32xf32>, vector<32xf32>
// LOOPS:         arith.maximumf {{.*}} : vector<32xf32>
// The first row is stored at the same lanes of the output.
// LOOPS:         vector.store {{.*}}, %lanes[%c0] : memref<32xf32>, vector<32xf32>
// LOOPS-NEXT:    scf.for %[[LANE2:.*]] = %c0 to %c32 step %c1 {
// LOOPS-NEXT:      %[[V:.*]] = memref.load %lanes[%[[LANE2]]] : memref<32xf32>
// LOOPS-NEXT:      %[[STEP2:.*]] = arith.muli %[[LANE2]], %c16 : index
// LOOPS-NEXT:      %[[AT2:.*]] = arith.addi %[[FIRST]], %[[STEP2]] : index
// LOOPS-NEXT:      memref.store %[[V]], %[[OUT]][%[[AT2]]] : memref<512xf32>
// LOOPS-NEXT:    }
func.func @conv_residual(%x: tensor<1x2x4x4xf32>, %w: tensor<32x2x3x3xf32>, %b: tensor<32xf32>, %res: tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32> {
  %c = hl.conv2d %x, %w padding [1, 1, 1, 1] : tensor<1x2x4x4xf32>, tensor<32x2x3x3xf32> -> tensor<1x32x4x4xf32>
  %b4 = hl.reshape %b : tensor<32xf32> -> tensor<1x32x1x1xf32>
  %y = hl.add %c, %b4 : tensor<1x32x4x4xf32>, tensor<1x32x1x1xf32> -> tensor<1x32x4x4xf32>
  %z = hl.add %y, %res : tensor<1x32x4x4xf32>, tensor<1x32x4x4xf32> -> tensor<1x32x4x4xf32>
  %r = hl.relu %z : tensor<1x32x4x4xf32>
  func.return %r : tensor<1x32x4x4xf32>
}

// A stride-2 conv with wide rows is blocked across its channels too: its input is
// read two elements apart along the output row, so a row of the usual block would
// not be one vector load; across the channels it is a broadcast.
// CHECK-LABEL: func.func @stride2(
// CHECK:         kernel.kernel @pack_3_7_7_64(%w)
// CHECK:         kernel.kernel @r_1_1_64_3_32_32_7_7(
// CHECK-SAME:      schedule <order [4, 0, 1, 5, 3, 6, 7, 2], tiles [0, 0, 0, 0, 0, 0, 0, 0], vector 32, unroll 8, parallel [4]>
func.func @stride2(%x: tensor<1x3x64x64xf32>, %w: tensor<64x3x7x7xf32>) -> tensor<1x64x32x32xf32> {
  %c = hl.conv2d %x, %w strides [2, 2] padding [3, 3, 3, 3] : tensor<1x3x64x64xf32>, tensor<64x3x7x7xf32> -> tensor<1x64x32x32xf32>
  func.return %c : tensor<1x64x32x32xf32>
}

// Rows of 32 or more columns read contiguously keep the usual block (vectors along
// the output row): no pack, the columns d5 innermost.
// CHECK-LABEL: func.func @wide_rows(
// CHECK-NOT:     pack_
// CHECK:         schedule <order [{{.*}}, 5], tiles {{.*}}, vector 32
func.func @wide_rows(%x: tensor<1x8x32x32xf32>, %w: tensor<64x8x3x3xf32>) -> tensor<1x64x32x32xf32> {
  %c = hl.conv2d %x, %w padding [1, 1, 1, 1] : tensor<1x8x32x32xf32>, tensor<64x8x3x3xf32> -> tensor<1x64x32x32xf32>
  func.return %c : tensor<1x64x32x32xf32>
}
