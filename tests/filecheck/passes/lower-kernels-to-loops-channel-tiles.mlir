// lower-kernels-to-loops on a 3 x 3 conv blocked across its output channels, with its
// channels tiled by 16 (reorder-loops' `channel_tile`: the weight of one tile over the
// whole reduction within half the L2). The packed weight's rows lie 3 x 176 x 4 bytes
// apart (over 2 KiB), so the block copies the tile's weight into %pack1, in panels of
// the block's 8 columns (`[channel // 8, ci, kh, kw, channel % 8]`): each block's run
// down the reduction is one contiguous stretch. The copy is filled once per tile, inside the tile loop %t2 and before the batch loop %i0 and the
// output rows: every row of the batch reuses it. The channel loop (32 channels of 9 taps
// each) is blocked in levels of 14 channels (126 values) per accumulator: the fresh
// accumulators start at the level %i3b1, not at each channel.
// RUN: irtensor-opt %s -p lower-kernels-to-loops | filecheck %s

func.func @conv(%x: tensor<2x32x4x4xf32>, %w: tensor<32x3x3x176xf32>) -> tensor<2x176x4x4xf32> {
  %r = kernel.kernel @r_2_1_176_32_4_4_3_3(%x, %w) space [2, 1, 176, 32, 4, 4, 3, 3] reduce [3, 6, 7] sum reads [#kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d3, ((d4 + d6) + -1), ((d5 + d7) + -1)), valid (d0, d1, d2, d3, d4, d5, d6, d7) : (((d4 + d6) + -1) >= 0, (((d4 * -1) + (d6 * -1)) + 4) >= 0, ((d5 + d7) + -1) >= 0, (((d5 * -1) + (d7 * -1)) + 4) >= 0), pad 0.0>, #kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d6, d7, d2)>] writes affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d2, d4, d5)> schedule <order [0, 1, 4, 5, 3, 6, 7, 2], tiles [0, 0, 16, 0, 0, 0, 0, 0], vector 8, unroll 4, parallel [0]> : (tensor<2x32x4x4xf32>, tensor<32x3x3x176xf32>) -> tensor<2x176x4x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %p = arith.mulf %a, %b : f32
    kernel.yield %p : f32
  }
  func.return %r : tensor<2x176x4x4xf32>
}

// CHECK-LABEL: func.func @r_2_1_176_32_4_4_3_3_0(
// CHECK:         %pack1 = memref.alloc() : memref<2x32x3x3x8xf32>
// CHECK-NEXT:    scf.for %t2 = %c0 to %c176 step %c16 {
// CHECK-NEXT:      scf.for %i3 = %c0 to %c32 step %c1 {
// CHECK-NEXT:        scf.for %i6 = %c0 to %c3 step %c1 {
// CHECK-NEXT:          scf.for %i7 = %c0 to %c3 step %c1 {
// CHECK:                 scf.for %i2 = %t2 to %{{.*}} step %c1 {
// CHECK-NEXT:              %[[W:.*]] = memref.load %in1[%i3, %i6, %i7, %i2] : memref<32x3x3x176xf32>
// CHECK-NEXT:              %[[AT:.*]] = arith.subi %i2, %t2 : index
// CHECK-NEXT:              %[[PANEL:.*]] = arith.floordivsi %[[AT]], %c8 : index
// CHECK-NEXT:              %[[FIRST:.*]] = arith.muli %[[PANEL]], %c8 : index
// CHECK-NEXT:              %[[LANE:.*]] = arith.subi %[[AT]], %[[FIRST]] : index
// CHECK-NEXT:              memref.store %[[W]], %pack1[%[[PANEL]], %i3, %i6, %i7, %[[LANE]]] : memref<2x32x3x3x8xf32>
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.for %i0 = %start to %stop step %c1 {
// CHECK:             scf.for %i2_1 = %t2 to %{{.*}} step %c8 {
// CHECK-NEXT:          %[[ZEROS:.*]] = vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK-NEXT:          %[[TOTAL:.*]], %{{.*}}, %{{.*}}, %{{.*}} = scf.for %i3b1 = %c0 to %c32 step %c14 iter_args(%acc = %[[ZEROS]], {{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-NEXT:            %[[END:.*]] = arith.addi %i3b1, %c14 : index
// CHECK-NEXT:            %[[CUT:.*]] = arith.minsi %[[END]], %c32 : index
// CHECK-NEXT:            %[[LEVEL:[0-9]+]], %{{.*}}, %{{.*}}, %{{.*}} = scf.for %i3_1 = %i3b1 to %[[CUT]] step %c1 iter_args(%acc_4 = %[[ZEROS]], {{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-NEXT:              scf.for %i6_1 = %c0 to %c3 step %c1 iter_args(%acc_8 = %acc_4, {{.*}})
// CHECK-NEXT:                scf.for %i7_1 = %c0 to %c3 step %c1 iter_args(%acc_12 = %acc_8, {{.*}})
// CHECK:                       vector.load %pack1[%{{.*}}, %i3_1, %i6_1, %i7_1, %{{.*}}] : memref<2x32x3x3x8xf32>, vector<8xf32>
// CHECK:                   %{{.*}} = arith.addf %acc, %[[LEVEL]] fastmath<contract> : vector<8xf32>
// CHECK:               vector.store %[[TOTAL]], %lanes[%c0]
// CHECK:             memref.dealloc %pack1 : memref<2x32x3x3x8xf32>
