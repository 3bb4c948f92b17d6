// lower-kernels-to-loops reads and writes a buffer whose axes hold the row-major
// digits of one dim (a 1x1 conv over its 12 points p: x at (n, c, p floordiv 3,
// p mod 3)) through a `memref.collapse_shape` view that makes those axes one, indexed
// by p: no division is left in the loops, and a run along p is contiguous (the
// register block's vector loads). The function keeps the buffers' own types.
// RUN: irtensor-opt %s -p lower-kernels-to-loops | filecheck %s

// CHECK-LABEL: func.func @r_2_1_16_8_12_0(%in0: memref<2x8x4x3xf32>, %in1: memref<16x8x1x1xf32>, %out: memref<2x16x4x3xf32>, %start: index, %stop: index)
// CHECK-DAG:     %{{.*}} = memref.collapse_shape %in0 {{\[}}[0 : i64], [1 : i64], [2 : i64, 3 : i64]] : memref<2x8x4x3xf32> into memref<2x8x12xf32>
// CHECK-DAG:     %{{.*}} = memref.collapse_shape %out {{\[}}[0 : i64], [1 : i64], [2 : i64, 3 : i64]] : memref<2x16x4x3xf32> into memref<2x16x12xf32>
// CHECK-NOT:     floordiv
// CHECK-NOT:     arith.divsi
// CHECK-NOT:     arith.remsi
// CHECK:         func.return
func.func @main(%x: tensor<2x8x4x3xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<2x16x4x3xf32> {
  %0 = kernel.kernel @r_2_1_16_8_12(%x, %w) space [2, 1, 16, 8, 12] reduce [3] sum reads [#kernel.access<(d0, d1, d2, d3, d4) -> (d0, d3, (d4 floordiv 3), (d4 mod 3))>, #kernel.access<(d0, d1, d2, d3, d4) -> (d2, d3, 0, 0)>] writes affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, (d4 floordiv 3), (d4 mod 3))> : (tensor<2x8x4x3xf32>, tensor<16x8x1x1xf32>) -> tensor<2x16x4x3xf32> {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  }
  func.return %0 : tensor<2x16x4x3xf32>
}
