// pack-operands gives a channel-blocked conv (short output rows: a 7 x 7 map, or a
// stride along them) whose input windows run off the edges a copy of the input with the
// pad values in its border (`pad_...`), and the conv reads the copy without a mask: the
// block's broadcasts are plain loads. A mask that is not exactly the bounds of the
// read's indices, and a conv blocked along its rows (a 32-wide map), stay as they are.
// RUN: irtensor-opt %s -p pack-operands | filecheck %s
// RUN: irtensor-opt %s -p 'pack-operands{pad-windows=false}' | filecheck %s --check-prefix=OFF
// RUN: irtensor-opt %s -p 'pack-operands,reorder-loops' | filecheck %s --check-prefix=SCHED

// CHECK-LABEL: func.func @conv3x3_on_7x7(
// CHECK:         %[[W:.*]] = kernel.kernel @pack_16_3_3_32(%w)
// CHECK:         %[[P:.*]] = kernel.kernel @pad_2_16_9_9(%x) space [2, 16, 9, 9]
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2, d3) -> (d0, d1, (d2 + -1), (d3 + -1)), valid (d0, d1, d2, d3) : ((d2 + -1) >= 0, ((d2 * -1) + 7) >= 0, (d3 + -1) >= 0, ((d3 * -1) + 7) >= 0), pad 0.0>]
// CHECK-SAME:      writes affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-SAME:      : (tensor<2x16x7x7xf32>) -> tensor<2x16x9x9xf32>
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32):
// CHECK-NEXT:      kernel.yield %[[V]] : f32
// CHECK:         kernel.kernel @r_2_1_32_16_7_7_3_3(%[[P]], %[[W]])
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d3, (d4 + d6), (d5 + d7))>, #kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d6, d7, d2)>]
// CHECK-SAME:      : (tensor<2x16x9x9xf32>, tensor<16x3x3x32xf32>) -> tensor<2x32x7x7xf32>
// OFF-LABEL:   func.func @conv3x3_on_7x7(
// OFF-NOT:       pad_
// OFF:           kernel.kernel @r_2_1_32_16_7_7_3_3(%x, %{{.*}}) {{.*}} valid
// SCHED-LABEL: func.func @conv3x3_on_7x7(
// SCHED:         kernel.kernel @r_2_1_32_16_7_7_3_3({{.*}}) {{.*}} schedule <order [0, 1, 4, 5, 3, 6, 7, 2], {{.*}}unroll 7
func.func @conv3x3_on_7x7(%x: tensor<2x16x7x7xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<2x32x7x7xf32> {
  %y = kernel.kernel @r_2_1_32_16_7_7_3_3(%x, %w) space [2, 1, 32, 16, 7, 7, 3, 3] reduce [3, 6, 7] sum reads [#kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d3, ((d4 + d6) + -1), ((d5 + d7) + -1)), valid (d0, d1, d2, d3, d4, d5, d6, d7) : (((d4 + d6) + -1) >= 0, (((d4 * -1) + (d6 * -1)) + 7) >= 0, ((d5 + d7) + -1) >= 0, (((d5 * -1) + (d7 * -1)) + 7) >= 0), pad 0.0>, #kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d2, d3, d6, d7)>] writes affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d2, d4, d5)> : (tensor<2x16x7x7xf32>, tensor<32x16x3x3xf32>) -> tensor<2x32x7x7xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    kernel.yield %m : f32
  } epilogue {
  ^bb0(%s: f32):
    %zero = arith.constant 0.000000e+00 : f32
    %r = arith.maximumf %s, %zero : f32
    kernel.yield %r : f32
  }
  func.return %y : tensor<2x32x7x7xf32>
}

// A stride-2 7 x 7 conv (ResNet's stem) reads rows -3 to 15 of a 14-row input: the copy
// has 3 rows of zeros before and 2 after (19), and the conv reads it at 2 * d4 + d6.
// CHECK-LABEL: func.func @stem(
// CHECK:         %[[P:.*]] = kernel.kernel @pad_1_3_19_19(%x) space [1, 3, 19, 19]
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2, d3) -> (d0, d1, (d2 + -3), (d3 + -3)), valid (d0, d1, d2, d3) : ((d2 + -3) >= 0, ((d2 * -1) + 16) >= 0, (d3 + -3) >= 0, ((d3 * -1) + 16) >= 0), pad 0.0>]
// CHECK:         kernel.kernel @r_1_1_32_3_7_7_7_7(%[[P]], %{{[0-9]+}})
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (0, d3, ((d4 * 2) + d6), ((d5 * 2) + d7))>,
func.func @stem(%x: tensor<1x3x14x14xf32>, %w: tensor<32x3x7x7xf32>) -> tensor<1x32x7x7xf32> {
  %y = kernel.kernel @r_1_1_32_3_7_7_7_7(%x, %w) space [1, 1, 32, 3, 7, 7, 7, 7] reduce [3, 6, 7] sum reads [#kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (0, d3, (((d4 * 2) + d6) + -3), (((d5 * 2) + d7) + -3)), valid (d0, d1, d2, d3, d4, d5, d6, d7) : ((((d4 * 2) + d6) + -3) >= 0, (((d4 * -2) + (d6 * -1)) + 16) >= 0, (((d5 * 2) + d7) + -3) >= 0, (((d5 * -2) + (d7 * -1)) + 16) >= 0), pad 0.0>, #kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d2, d3, d6, d7)>] writes affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (0, d2, d4, d5)> : (tensor<1x3x14x14xf32>, tensor<32x3x7x7xf32>) -> tensor<1x32x7x7xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    kernel.yield %m : f32
  }
  func.return %y : tensor<1x32x7x7xf32>
}

// The mask here also drops the window's first column (d5 + d7 - 2 >= 0): it is not the
// bounds of the read, so a padded copy would read a value where the mask gives 0.
// CHECK-LABEL: func.func @mask_is_not_the_bounds(
// CHECK-NOT:     pad_
// CHECK:         kernel.kernel @r_2_1_32_16_7_7_3_3(%x, %{{.*}}) {{.*}} valid
func.func @mask_is_not_the_bounds(%x: tensor<2x16x7x7xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<2x32x7x7xf32> {
  %y = kernel.kernel @r_2_1_32_16_7_7_3_3(%x, %w) space [2, 1, 32, 16, 7, 7, 3, 3] reduce [3, 6, 7] sum reads [#kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d3, ((d4 + d6) + -1), ((d5 + d7) + -1)), valid (d0, d1, d2, d3, d4, d5, d6, d7) : (((d4 + d6) + -1) >= 0, (((d4 * -1) + (d6 * -1)) + 7) >= 0, ((d5 + d7) + -2) >= 0, (((d5 * -1) + (d7 * -1)) + 7) >= 0), pad 0.0>, #kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d2, d3, d6, d7)>] writes affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d2, d4, d5)> : (tensor<2x16x7x7xf32>, tensor<32x16x3x3xf32>) -> tensor<2x32x7x7xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    kernel.yield %m : f32
  }
  func.return %y : tensor<2x32x7x7xf32>
}

// A 32-wide map is blocked along its rows (vector loads, masked only at the row's
// ends): its input is read as it is.
// CHECK-LABEL: func.func @row_blocked(
// CHECK-NOT:     pad_
// CHECK:         kernel.kernel @r_1_1_8_4_32_32_3_3(%x, %w) {{.*}} valid
func.func @row_blocked(%x: tensor<1x4x32x32xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x32x32xf32> {
  %y = kernel.kernel @r_1_1_8_4_32_32_3_3(%x, %w) space [1, 1, 8, 4, 32, 32, 3, 3] reduce [3, 6, 7] sum reads [#kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (0, d3, ((d4 + d6) + -1), ((d5 + d7) + -1)), valid (d0, d1, d2, d3, d4, d5, d6, d7) : (((d4 + d6) + -1) >= 0, (((d4 * -1) + (d6 * -1)) + 32) >= 0, ((d5 + d7) + -1) >= 0, (((d5 * -1) + (d7 * -1)) + 32) >= 0), pad 0.0>, #kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d2, d3, d6, d7)>] writes affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (0, d2, d4, d5)> : (tensor<1x4x32x32xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x32x32xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    kernel.yield %m : f32
  }
  func.return %y : tensor<1x8x32x32xf32>
}

// A depthwise conv (one input channel per output channel: no channel block) on a 7 x 7
// map: its rows are shorter than two vectors, so every vector of the row block runs into
// the mask at a row's end; it reads a padded copy too. Its channel index is shuffled
// (ShuffleNet's channel shuffle: (c floordiv 4) + (c mod 4) * 4), which the mask does not
// bound: the copy keeps that axis whole and the conv keeps the index.
// CHECK-LABEL: func.func @depthwise_on_7x7(
// CHECK:         %[[P:.*]] = kernel.kernel @pad_1_16_9_9(%x) space [1, 16, 9, 9]
// CHECK:         kernel.kernel @r_1_16_1_1_7_7_3_3(%[[P]], %w)
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (0, ((d1 floordiv 4) + ((d1 mod 4) * 4)), (d4 + d6), (d5 + d7))>, #kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, 0, d6, d7)>]
// OFF-LABEL:   func.func @depthwise_on_7x7(
// OFF-NOT:       pad_
func.func @depthwise_on_7x7(%x: tensor<1x16x7x7xf32>, %w: tensor<16x1x3x3xf32>) -> tensor<1x16x7x7xf32> {
  %y = kernel.kernel @r_1_16_1_1_7_7_3_3(%x, %w) space [1, 16, 1, 1, 7, 7, 3, 3] reduce [3, 6, 7] sum reads [#kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (0, ((d1 floordiv 4) + ((d1 mod 4) * 4)), ((d4 + d6) + -1), ((d5 + d7) + -1)), valid (d0, d1, d2, d3, d4, d5, d6, d7) : (((d4 + d6) + -1) >= 0, (((d4 * -1) + (d6 * -1)) + 7) >= 0, ((d5 + d7) + -1) >= 0, (((d5 * -1) + (d7 * -1)) + 7) >= 0), pad 0.0>, #kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, 0, d6, d7)>] writes affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (0, d1, d4, d5)> : (tensor<1x16x7x7xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x7x7xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    kernel.yield %m : f32
  }
  func.return %y : tensor<1x16x7x7xf32>
}

// The same conv on 40-wide rows (two vectors or more) loads its row's vectors unmasked
// but at its ends: it keeps the mask.
// CHECK-LABEL: func.func @depthwise_on_wide_rows(
// CHECK-NOT:     pad_
// CHECK:         kernel.kernel @r_1_16_1_1_40_40_3_3(%x, %w)
func.func @depthwise_on_wide_rows(%x: tensor<1x16x40x40xf32>, %w: tensor<16x1x3x3xf32>) -> tensor<1x16x40x40xf32> {
  %y = kernel.kernel @r_1_16_1_1_40_40_3_3(%x, %w) space [1, 16, 1, 1, 40, 40, 3, 3] reduce [3, 6, 7] sum reads [#kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (0, d1, ((d4 + d6) + -1), ((d5 + d7) + -1)), valid (d0, d1, d2, d3, d4, d5, d6, d7) : (((d4 + d6) + -1) >= 0, (((d4 * -1) + (d6 * -1)) + 40) >= 0, ((d5 + d7) + -1) >= 0, (((d5 * -1) + (d7 * -1)) + 40) >= 0), pad 0.0>, #kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, 0, d6, d7)>] writes affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (0, d1, d4, d5)> : (tensor<1x16x40x40xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x40x40xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    kernel.yield %m : f32
  }
  func.return %y : tensor<1x16x40x40xf32>
}
