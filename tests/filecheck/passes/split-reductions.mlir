// split-reductions cuts a long reduction in two kernels: a partial one, where the
// reduction is split into chunks (a new parallel dimension, for threads) and vector
// lanes (a new parallel, contiguous dimension, for the vector units), and a final one
// that reduces the chunks and lanes of each output element and applies the epilogue.
// New dimensions come after the kernel's own; a split dim d of size S reads as
// `p * (S / P) + d` (chunks) and `d * L + l` (lanes).
// RUN: irtensor-opt %s -p split-reductions | filecheck %s
// RUN: irtensor-opt %s -p 'split-reductions{chunks=0 lanes=16}' | filecheck %s --check-prefix=OPT
// RUN: irtensor-opt %s -p 'split-reductions,reorder-loops' | filecheck %s --check-prefix=SCHED

// The sum of a whole 1024x1024 tensor: one output element. Rows are cut into 64
// chunks of 16, columns into 16 steps of 64 lanes; the final kernel adds 64x64 values.
func.func @sum_all(%x: tensor<1024x1024xf32>) -> tensor<f32> {
  %r = kernel.kernel @r_1024_1024(%x) space [1024, 1024] reduce [0, 1] sum reads [#kernel.access<(d0, d1) -> (d0, d1)>] writes affine_map<(d0, d1) -> ()> : (tensor<1024x1024xf32>) -> tensor<f32> {
  ^bb0(%a: f32):
    kernel.yield %a : f32
  }
  func.return %r : tensor<f32>
}
// CHECK-LABEL: func.func @sum_all(
// CHECK:         %[[P:.*]] = kernel.kernel @r_16_16_64_64(%x) space [16, 16, 64, 64] reduce [0, 1] sum
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2, d3) -> ((d0 + (d2 * 16)), ((d1 * 64) + d3))>]
// CHECK-SAME:      writes affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-SAME:      -> tensor<64x64xf32>
// CHECK:         %[[F:.*]] = kernel.kernel @r_1_1_64_64(%[[P]]) space [1, 1, 64, 64] reduce [0, 1, 2, 3] sum
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2, d3) -> (d2, d3)>]
// CHECK-SAME:      writes affine_map<(d0, d1, d2, d3) -> ()>
// CHECK:         func.return %[[F]]
// OPT-LABEL:   func.func @sum_all(
// OPT:           kernel.kernel @r_1024_64_16(%x) space [1024, 64, 16] reduce [0, 1] sum
// OPT-SAME:        -> tensor<16xf32>
// SCHED-LABEL: func.func @sum_all(
// SCHED:         kernel.kernel @r_16_16_64_64
// SCHED-SAME:      schedule <order [2, 0, 1, 3], tiles [0, 0, 0, 0], vector 16, unroll 1, parallel [2]>

// A row max with an epilogue (x - max needs a second kernel anyway; here the
// epilogue adds a per-row bias): 256 rows are enough for the threads, so only
// lanes are split; the epilogue and its input move to the final kernel.
func.func @row_max_bias(%x: tensor<256x8192xf32>, %b: tensor<256xf32>) -> tensor<256xf32> {
  %r = kernel.kernel @r_256_8192(%x, %b) space [256, 8192] reduce [1] max reads [#kernel.access<(d0, d1) -> (d0, d1)>, #kernel.access<(d0, d1) -> (d0)>] writes affine_map<(d0, d1) -> (d0)> epilogue_inputs 1 : (tensor<256x8192xf32>, tensor<256xf32>) -> tensor<256xf32> {
  ^bb0(%a: f32):
    kernel.yield %a : f32
  } epilogue {
  ^bb1(%m: f32, %c: f32):
    %s = arith.addf %m, %c : f32
    kernel.yield %s : f32
  }
  func.return %r : tensor<256xf32>
}
// CHECK-LABEL: func.func @row_max_bias(
// CHECK:         %[[P:.*]] = kernel.kernel @r_256_128_64(%x) space [256, 128, 64] reduce [1] max
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2) -> (d0, ((d1 * 64) + d2))>]
// CHECK-SAME:      writes affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-SAME:      -> tensor<256x64xf32>
// CHECK:         kernel.kernel @r_256_1_64(%[[P]], %b) space [256, 1, 64] reduce [1, 2] max
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2) -> (d0, d2)>, #kernel.access<(d0, d1, d2) -> (d0)>]
// CHECK-SAME:      epilogue_inputs 1
// CHECK:         } epilogue {
// CHECK:           arith.addf

// Left alone: a short reduction (a 64x64x64 matmul reduces 64 points per output),
// and a column sum, whose threads and vectors already run over the columns.
func.func @left_alone(%a: tensor<64x64xf32>, %w: tensor<64x64xf32>, %x: tensor<8192x256xf32>) -> (tensor<64x64xf32>, tensor<256xf32>) {
  %m = kernel.kernel @r_64_64_64(%a, %w) space [64, 64, 64] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> {
  ^bb0(%p: f32, %q: f32):
    %t = arith.mulf %p, %q : f32
    kernel.yield %t : f32
  }
  %c = kernel.kernel @r_8192_256(%x) space [8192, 256] reduce [0] sum reads [#kernel.access<(d0, d1) -> (d0, d1)>] writes affine_map<(d0, d1) -> (d1)> : (tensor<8192x256xf32>) -> tensor<256xf32> {
  ^bb0(%e: f32):
    kernel.yield %e : f32
  }
  func.return %m, %c : tensor<64x64xf32>, tensor<256xf32>
}
// CHECK-LABEL: func.func @left_alone(
// CHECK:         kernel.kernel @r_64_64_64(
// CHECK:         kernel.kernel @r_8192_256(
// CHECK-NOT:     kernel.kernel
// CHECK:         func.return

// A sum that reads nothing (Tensor.ones(n).sum()) is split as if it walked its
// reduction row-major: 64 lanes and 100 chunks, the final kernel adds 100 x 64 values.
func.func @sum_of_ones() -> tensor<f32> {
  %r = kernel.kernel @r_20000000() space [20000000] reduce [0] sum reads [] writes affine_map<(d0) -> ()> : () -> tensor<f32> {
    %c = arith.constant 1.000000e+00 : f32
    kernel.yield %c : f32
  }
  func.return %r : tensor<f32>
}
// CHECK-LABEL: func.func @sum_of_ones(
// CHECK:         %[[P:.*]] = kernel.kernel @r_3125_100_64() space [3125, 100, 64] reduce [0] sum reads []
// CHECK-SAME:      writes affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK:         %[[F:.*]] = kernel.kernel @r_1_100_64(%[[P]]) space [1, 100, 64] reduce [0, 1, 2] sum
// CHECK:         func.return %[[F]]
