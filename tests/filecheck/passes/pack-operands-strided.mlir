// pack-operands copies an operand that the columns read with a step of more than one
// element, outside any window, into a dense buffer of the points it reads: a stride-2
// 1x1 conv reads x at (n, c, 2 * (p floordiv 4), 2 * (p mod 4)); the copy holds those
// points as [n, c, p], and the conv reads it at (d0, d3, d4), a stride-1 1x1 conv's
// read, so reorder-loops blocks it along p (vector 16, 6 rows of channels) rather than
// across its channels. A window's strided read (a stride-2 3x3 conv), an operand reused
// too little, min-reuse=0 and dense-strided=false leave the read as it is. A grouped
// conv's weight, read along its channel column through a merged index, is copied too.
// RUN: irtensor-opt %s -p pack-operands | filecheck %s
// RUN: irtensor-opt %s -p 'pack-operands{min-reuse=0}' | filecheck %s --check-prefix=OFF
// RUN: irtensor-opt %s -p 'pack-operands{dense-strided=false}' | filecheck %s --check-prefix=KEEP
// RUN: irtensor-opt %s -p 'pack-operands,reorder-loops' | filecheck %s --check-prefix=SCHED

// CHECK-LABEL: func.func @strided_pointwise(
// CHECK:         %[[D:.*]] = kernel.kernel @dense_2_8_16(%x) space [2, 8, 16]
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2) -> (d0, d1, ((d2 floordiv 4) * 2), ((d2 mod 4) * 2))>]
// CHECK-SAME:      writes affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-SAME:      : (tensor<2x8x8x8xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32):
// CHECK-NEXT:      kernel.yield %[[V]] : f32
// CHECK:         kernel.kernel @r_2_1_32_8_16(%[[D]], %w)
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>, #kernel.access<(d0, d1, d2, d3, d4) -> (d2, d3, 0, 0)>]
// CHECK-SAME:      : (tensor<2x8x16xf32>, tensor<32x8x1x1xf32>) -> tensor<2x32x4x4xf32>
// OFF-LABEL:   func.func @strided_pointwise(
// OFF-NOT:       dense_
// OFF:           kernel.kernel @r_2_1_32_8_16(%x, %w)
// Without the copy the conv keeps its strided read and is blocked across its channels,
// reading its weight through a channels-last pack.
// KEEP-LABEL:  func.func @strided_pointwise(
// KEEP-NOT:      dense_
// KEEP:          %[[P:.*]] = kernel.kernel @pack_8_1_1_32(%w)
// KEEP:          kernel.kernel @r_2_1_32_8_16(%x, %[[P]])
// SCHED-LABEL: func.func @strided_pointwise(
// SCHED:         kernel.kernel @r_2_1_32_8_16({{.*}}) {{.*}} schedule <order [0, 1, 2, 3, 4], {{.*}}vector 16, unroll 6
func.func @strided_pointwise(%x: tensor<2x8x8x8xf32>, %w: tensor<32x8x1x1xf32>) -> tensor<2x32x4x4xf32> {
  %y = kernel.kernel @r_2_1_32_8_16(%x, %w) space [2, 1, 32, 8, 16] reduce [3] sum reads [#kernel.access<(d0, d1, d2, d3, d4) -> (d0, d3, ((d4 floordiv 4) * 2), ((d4 mod 4) * 2))>, #kernel.access<(d0, d1, d2, d3, d4) -> (d2, d3, 0, 0)>] writes affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, (d4 floordiv 4), (d4 mod 4))> : (tensor<2x8x8x8xf32>, tensor<32x8x1x1xf32>) -> tensor<2x32x4x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    kernel.yield %m : f32
  }
  func.return %y : tensor<2x32x4x4xf32>
}

// The same conv with 4 output channels reuses each point 4 times, under min-reuse (8).
// CHECK-LABEL: func.func @little_reuse(
// CHECK-NOT:     dense_
// CHECK:         kernel.kernel @r_2_1_4_8_16(%x, %w)
func.func @little_reuse(%x: tensor<2x8x8x8xf32>, %w: tensor<4x8x1x1xf32>) -> tensor<2x4x4x4xf32> {
  %y = kernel.kernel @r_2_1_4_8_16(%x, %w) space [2, 1, 4, 8, 16] reduce [3] sum reads [#kernel.access<(d0, d1, d2, d3, d4) -> (d0, d3, ((d4 floordiv 4) * 2), ((d4 mod 4) * 2))>, #kernel.access<(d0, d1, d2, d3, d4) -> (d2, d3, 0, 0)>] writes affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, (d4 floordiv 4), (d4 mod 4))> : (tensor<2x8x8x8xf32>, tensor<4x8x1x1xf32>) -> tensor<2x4x4x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    kernel.yield %m : f32
  }
  func.return %y : tensor<2x4x4x4xf32>
}

// A stride-2 3x3 conv's read steps by 2 along the row too, but through its window's
// taps (d5 * 2 + d7): it is not copied here.
// CHECK-LABEL: func.func @strided_window(
// CHECK-NOT:     dense_
// CHECK:         kernel.kernel @r_2_1_32_8_3_3_3_3(%x, {{.*}})
func.func @strided_window(%x: tensor<2x8x7x7xf32>, %w: tensor<32x8x3x3xf32>) -> tensor<2x32x3x3xf32> {
  %y = kernel.kernel @r_2_1_32_8_3_3_3_3(%x, %w) space [2, 1, 32, 8, 3, 3, 3, 3] reduce [3, 6, 7] sum reads [#kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d3, ((d4 * 2) + d6), ((d5 * 2) + d7))>, #kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d2, d3, d6, d7)>] writes affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d2, d4, d5)> : (tensor<2x8x7x7xf32>, tensor<32x8x3x3xf32>) -> tensor<2x32x3x3xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    kernel.yield %m : f32
  }
  func.return %y : tensor<2x32x3x3xf32>
}

// A masked read (a stride-3 1x1 conv on 11-wide rows, padded to 12 by its windows) is
// copied with its mask and pad value; the conv reads the copy unmasked.
// CHECK-LABEL: func.func @masked(
// CHECK:         %[[D:.*]] = kernel.kernel @dense_8_12(%x) space [8, 12]
// CHECK-SAME:      reads [#kernel.access<(d0, d1) -> (0, d0, ((d1 floordiv 4) * 3), ((d1 mod 4) * 3)), valid (d0, d1) : ((((d1 mod 4) * -3) + 10) >= 0), pad 0.0>]
// CHECK:         kernel.kernel @r_1_1_32_8_12(%[[D]], %w)
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2, d3, d4) -> (d3, d4)>, #kernel.access<(d0, d1, d2, d3, d4) -> (d2, d3, 0, 0)>]
func.func @masked(%x: tensor<1x8x9x11xf32>, %w: tensor<32x8x1x1xf32>) -> tensor<1x32x3x4xf32> {
  %y = kernel.kernel @r_1_1_32_8_12(%x, %w) space [1, 1, 32, 8, 12] reduce [3] sum reads [#kernel.access<(d0, d1, d2, d3, d4) -> (0, d3, ((d4 floordiv 4) * 3), ((d4 mod 4) * 3)), valid (d0, d1, d2, d3, d4) : ((((d4 mod 4) * -3) + 10) >= 0), pad 0.0>, #kernel.access<(d0, d1, d2, d3, d4) -> (d2, d3, 0, 0)>] writes affine_map<(d0, d1, d2, d3, d4) -> (0, d2, (d4 floordiv 4), (d4 mod 4))> : (tensor<1x8x9x11xf32>, tensor<32x8x1x1xf32>) -> tensor<1x32x3x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    kernel.yield %m : f32
  }
  func.return %y : tensor<1x32x3x4xf32>
}

// An index that mixes the column j with the parallel row i, (i + j) * 2, reads each
// element at many points: its copy (8 x 16 x 16) would be more than twice the operand
// (16 x 48), so the read stays as it is.
// CHECK-LABEL: func.func @growth(
// CHECK-NOT:     dense_
// CHECK:         kernel.kernel @r_8_8_16_16(%x, %w)
func.func @growth(%x: tensor<16x48xf32>, %w: tensor<8x16xf32>) -> tensor<8x8x16xf32> {
  %y = kernel.kernel @r_8_8_16_16(%x, %w) space [8, 8, 16, 16] reduce [2] sum reads [#kernel.access<(d0, d1, d2, d3) -> (d2, ((d0 + d3) * 2))>, #kernel.access<(d0, d1, d2, d3) -> (d1, d2)>] writes affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)> : (tensor<16x48xf32>, tensor<8x16xf32>) -> tensor<8x8x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    kernel.yield %m : f32
  }
  func.return %y : tensor<8x8x16xf32>
}

// A grouped conv (2 groups of 32 output channels) on a 7 x 7 map is blocked across its
// channels, and reads its weight at (g * 32 + o, c, kh, kw): not a permutation, so no
// pack_ copy, but a dense copy over (g, c, kh, kw, o), the channels innermost, that its
// channel vectors load.
// CHECK-LABEL: func.func @grouped(
// CHECK:         %[[W:.*]] = kernel.kernel @dense_2_4_3_3_32(%w) space [2, 4, 3, 3, 32]
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2, d3, d4) -> (((d0 * 32) + d4), d1, d2, d3)>]
// CHECK:         kernel.kernel @r_1_2_32_4_7_7_3_3(%{{.*}}, %[[W]])
// CHECK-SAME:      #kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d3, d6, d7, d2)>
// KEEP-LABEL:  func.func @grouped(
// KEEP-NOT:      dense_
// KEEP:          kernel.kernel @r_1_2_32_4_7_7_3_3(%{{.*}}, %w)
func.func @grouped(%x: tensor<1x8x7x7xf32>, %w: tensor<64x4x3x3xf32>) -> tensor<1x2x32x1x7x7x1x1xf32> {
  %y = kernel.kernel @r_1_2_32_4_7_7_3_3(%x, %w) space [1, 2, 32, 4, 7, 7, 3, 3] reduce [3, 6, 7] sum reads [#kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (0, ((d1 * 4) + d3), ((d4 + d6) + -1), ((d5 + d7) + -1)), valid (d0, d1, d2, d3, d4, d5, d6, d7) : (((d4 + d6) + -1) >= 0, (((d4 * -1) + (d6 * -1)) + 7) >= 0, ((d5 + d7) + -1) >= 0, (((d5 * -1) + (d7 * -1)) + 7) >= 0), pad 0.0>, #kernel.access<(d0, d1, d2, d3, d4, d5, d6, d7) -> (((d1 * 32) + d2), d3, d6, d7)>] writes affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (0, d1, d2, 0, d4, d5, 0, 0)> : (tensor<1x8x7x7xf32>, tensor<64x4x3x3xf32>) -> tensor<1x2x32x1x7x7x1x1xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    kernel.yield %m : f32
  }
  func.return %y : tensor<1x2x32x1x7x7x1x1xf32>
}
