// reorder-loops gives every kernel a schedule chosen from its accesses' strides:
// the innermost loop walks the write or the main read with stride 1 (and is
// vectorized: 64 bytes = 16 f32), loops whose step would touch new cache lines
// of the big buffers go outside, matmul- and conv-like kernels that do not fit
// in cache are tiled, and the outermost parallel loops are split across threads.
// A schedule already on a kernel (written by hand) is kept.
// RUN: irtensor-opt %s -p reorder-loops | filecheck %s
// RUN: irtensor-opt %s -p 'reorder-loops{vector-width=8 no-tiles=true threads=1 keep-existing=false}' | filecheck %s --check-prefix=OPT
// RUN: irtensor-opt %s -p decompose-hlops,conv-to-mul-sum,fold-constants,cse,dce,fuse,reorder-loops | filecheck %s --check-prefix=PIPE

// Elementwise x + bias: row-major order, the last loop vectorized, rows split
// across threads; never tiled.
func.func @elementwise(%x: tensor<256x1024xf32>, %b: tensor<1024xf32>) -> tensor<256x1024xf32> {
  %r = kernel.kernel @E_256_1024(%x, %b) space [256, 1024] reads [#kernel.access<(d0, d1) -> (d0, d1)>, #kernel.access<(d0, d1) -> (d1)>] writes affine_map<(d0, d1) -> (d0, d1)> : (tensor<256x1024xf32>, tensor<1024xf32>) -> tensor<256x1024xf32> {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %a, %c : f32
    kernel.yield %s : f32
  }
  func.return %r : tensor<256x1024xf32>
}
// CHECK-LABEL: func.func @elementwise(
// CHECK:         kernel.kernel @E_256_1024
// CHECK-SAME:      schedule <order [0, 1], tiles [0, 0], vector 16, unroll 1, parallel [0]>
// OPT-LABEL:   func.func @elementwise(
// OPT:           schedule <order [0, 1], tiles [0, 0], vector 8, unroll 1, parallel []>

// Row sum (over the last axis): the reduction loop is innermost and walks the
// rows contiguously; the row loop is parallel.
func.func @row_sum(%x: tensor<256x1024xf32>) -> tensor<256x1xf32> {
  %r = kernel.kernel @r_256_1024(%x) space [256, 1024] reduce [1] sum reads [#kernel.access<(d0, d1) -> (d0, d1)>] writes affine_map<(d0, d1) -> (d0, 0)> : (tensor<256x1024xf32>) -> tensor<256x1xf32> {
  ^bb0(%a: f32):
    kernel.yield %a : f32
  }
  func.return %r : tensor<256x1xf32>
}
// CHECK-LABEL: func.func @row_sum(
// CHECK:         schedule <order [0, 1], tiles [0, 0], vector 16, unroll 1, parallel [0]>

// Column sum (over the first axis): the column loop walks both the input and
// the output contiguously, so it is innermost and the reduction loop goes
// outside it; the columns (not the reduction) are split across threads.
func.func @column_sum(%x: tensor<1024x256xf32>) -> tensor<1x256xf32> {
  %r = kernel.kernel @r_1024_256(%x) space [1024, 256] reduce [0] sum reads [#kernel.access<(d0, d1) -> (d0, d1)>] writes affine_map<(d0, d1) -> (0, d1)> : (tensor<1024x256xf32>) -> tensor<1x256xf32> {
  ^bb0(%a: f32):
    kernel.yield %a : f32
  }
  func.return %r : tensor<1x256xf32>
}
// CHECK-LABEL: func.func @column_sum(
// CHECK:         schedule <order [0, 1], tiles [0, 0], vector 16, unroll 1, parallel [1]>

// A transposed read: the write is contiguous along d1, the read along d0; the
// write weighs twice (a store reads its line and writes it back), so d1 is
// innermost; both loops are tiled by 32, so that the lines of the read a tile
// touches stay in L1 while its columns are written.
func.func @transpose(%x: tensor<1024x512xf32>) -> tensor<512x1024xf32> {
  %r = kernel.kernel @E_512_1024(%x) space [512, 1024] reads [#kernel.access<(d0, d1) -> (d1, d0)>] writes affine_map<(d0, d1) -> (d0, d1)> : (tensor<1024x512xf32>) -> tensor<512x1024xf32> {
  ^bb0(%a: f32):
    kernel.yield %a : f32
  }
  func.return %r : tensor<512x1024xf32>
}
// CHECK-LABEL: func.func @transpose(
// CHECK:         schedule <order [0, 1], tiles [32, 32], vector 16, unroll 1, parallel [0]>

// The same transpose written with the loops the other way round: the pass
// still puts the write's contiguous loop (here d0) innermost, tiled the same.
func.func @transpose_swapped(%x: tensor<1024x512xf32>) -> tensor<512x1024xf32> {
  %r = kernel.kernel @E_1024_512(%x) space [1024, 512] reads [#kernel.access<(d0, d1) -> (d0, d1)>] writes affine_map<(d0, d1) -> (d1, d0)> : (tensor<1024x512xf32>) -> tensor<512x1024xf32> {
  ^bb0(%a: f32):
    kernel.yield %a : f32
  }
  func.return %r : tensor<512x1024xf32>
}
// CHECK-LABEL: func.func @transpose_swapped(
// CHECK:         schedule <order [1, 0], tiles [32, 32], vector 16, unroll 1, parallel [1]>

// Matmul 1024^3, space (M, K, N): the i-k-j order (N innermost walks B and C
// contiguously, A is reused), a register block of 6 rows of M by 32 columns of N
// (unroll 6, vector 32), K tiled by 512 and N by 256 (a 512 KiB tile of B stays
// in L2 while every row passes over it), the rows split across threads. With
// vector-width=8 and no tiles: a 6 x 16 block.
func.func @matmul(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %r = kernel.kernel @r_1024_1024_1024(%a, %b) space [1024, 1024, 1024] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    kernel.yield %m : f32
  }
  func.return %r : tensor<1024x1024xf32>
}
// CHECK-LABEL: func.func @matmul(
// CHECK:         schedule <order [0, 1, 2], tiles [0, 512, 256], vector 32, unroll 6, parallel [0]>
// OPT-LABEL:   func.func @matmul(
// OPT:           schedule <order [0, 1, 2], tiles [0, 0, 0], vector 16, unroll 6, parallel []>

// A small matmul fits in cache: not tiled; its 48 columns are one block.
func.func @small_matmul(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %r = kernel.kernel @r_64_32_48(%a, %b) space [64, 32, 48] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    kernel.yield %m : f32
  }
  func.return %r : tensor<64x48xf32>
}
// CHECK-LABEL: func.func @small_matmul(
// CHECK:         schedule <order [0, 1, 2], tiles [0, 0, 0], vector 48, unroll 6, parallel [0]>

// conv2d N=8, 64->64, 56x56, 3x3, pad 1; space (N, CO, CI, OH, OW, KH, KW).
// OW innermost (it walks x and the output contiguously), the taps just outside
// it, OH outside CO (a row of x is reused by every output channel); a register
// block of 4 output channels (they divide 64) by all 56 columns, untiled.
func.func @conv(%x: tensor<8x64x56x56xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<8x64x56x56xf32> {
  %r = kernel.kernel @r_8_64_64_56_56_3_3(%x, %w) space [8, 64, 64, 56, 56, 3, 3] reduce [2, 5, 6] sum reads [#kernel.access<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d3 + d5 - 1, d4 + d6 - 1), valid (d0, d1, d2, d3, d4, d5, d6) : (d3 + d5 - 1 >= 0, -d3 - d5 + 56 >= 0, d4 + d6 - 1 >= 0, -d4 - d6 + 56 >= 0), pad 0.0>, #kernel.access<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d5, d6)>] writes affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d3, d4)> : (tensor<8x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<8x64x56x56xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    kernel.yield %m : f32
  }
  func.return %r : tensor<8x64x56x56xf32>
}
// CHECK-LABEL: func.func @conv(
// CHECK:         schedule <order [0, 3, 1, 2, 5, 6, 4], tiles [0, 0, 0, 0, 0, 0, 0], vector 56, unroll 4, parallel [0]>

// Rows of 3 summed: the reduction loop is too short to vectorize, so the row
// loop, which walks the write contiguously, is innermost and vectorized (its
// reads have stride 3).
func.func @short_rows(%x: tensor<16384x3xf32>) -> tensor<16384x1xf32> {
  %r = kernel.kernel @r_16384_3(%x) space [16384, 3] reduce [1] sum reads [#kernel.access<(d0, d1) -> (d0, d1)>] writes affine_map<(d0, d1) -> (d0, 0)> : (tensor<16384x3xf32>) -> tensor<16384x1xf32> {
  ^bb0(%a: f32):
    kernel.yield %a : f32
  }
  func.return %r : tensor<16384x1xf32>
}
// CHECK-LABEL: func.func @short_rows(
// CHECK:         schedule <order [1, 0], tiles [0, 0], vector 16, unroll 1, parallel [0]>

// No long loop walks the write or the read contiguously (the write's stride-1
// loop d1 has 2 iterations): the cheapest loop, the 3-long reduction, is
// innermost and fully unrolled.
func.func @short_loops(%x: tensor<4096x2x3xf32>) -> tensor<4096x2xf32> {
  %r = kernel.kernel @r_4096_2_3(%x) space [4096, 2, 3] reduce [2] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1, d2)>] writes affine_map<(d0, d1, d2) -> (d0, d1)> : (tensor<4096x2x3xf32>) -> tensor<4096x2xf32> {
  ^bb0(%a: f32):
    kernel.yield %a : f32
  }
  func.return %r : tensor<4096x2xf32>
}
// CHECK-LABEL: func.func @short_loops(
// CHECK:         schedule <order [0, 1, 2], tiles [0, 0, 0], vector 1, unroll 3, parallel []>

// A sum over a broadcast axis (d1 moves no access): an outer loop.
func.func @broadcast_sum(%x: tensor<4096xf32>) -> tensor<4096x1xf32> {
  %r = kernel.kernel @r_4096_8(%x) space [4096, 8] reduce [1] sum reads [#kernel.access<(d0, d1) -> (d0)>] writes affine_map<(d0, d1) -> (d0, 0)> : (tensor<4096xf32>) -> tensor<4096x1xf32> {
  ^bb0(%a: f32):
    kernel.yield %a : f32
  }
  func.return %r : tensor<4096x1xf32>
}
// CHECK-LABEL: func.func @broadcast_sum(
// CHECK:         schedule <order [1, 0], tiles [0, 0], vector 16, unroll 1, parallel [0]>

// Batch-norm-like statistics of x (32, 64, 56, 56): a sum over N, H, W per
// channel. The channel loop goes outermost (parallel, threads), then N, then
// H and W innermost: the reduction walks x in contiguous runs of 56*56 = 3136
// elements (12.5 KB), never across channels.
func.func @batch_norm_stats(%x: tensor<32x64x56x56xf32>) -> tensor<1x64x1x1xf32> {
  %r = kernel.kernel @r_32_64_56_56(%x) space [32, 64, 56, 56] reduce [0, 2, 3] sum reads [#kernel.access<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>] writes affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)> : (tensor<32x64x56x56xf32>) -> tensor<1x64x1x1xf32> {
  ^bb0(%a: f32):
    kernel.yield %a : f32
  }
  func.return %r : tensor<1x64x1x1xf32>
}
// CHECK-LABEL: func.func @batch_norm_stats(
// CHECK:         schedule <order [1, 0, 2, 3], tiles [0, 0, 0, 0], vector 16, unroll 1, parallel [1]>

// Group-norm-like statistics of the same x, 32 groups, as fuse writes them:
// space (N, group, 2*56*56), the read a reshape (floordiv/mod indices; the pass
// measures their strides). N, group outside, the 6272 elements of a group
// innermost: one contiguous walk.
func.func @group_norm_stats(%x: tensor<32x64x56x56xf32>) -> tensor<32x32x1xf32> {
  %r = kernel.kernel @r_32_32_6272(%x) space [32, 32, 6272] reduce [2] sum reads [#kernel.access<(d0, d1, d2) -> (d0, (((d1 * 6272) + d2) floordiv 3136), ((((d1 * 6272) + d2) floordiv 56) mod 56), (((d1 * 6272) + d2) mod 56))>] writes affine_map<(d0, d1, d2) -> (d0, d1, 0)> : (tensor<32x64x56x56xf32>) -> tensor<32x32x1xf32> {
  ^bb0(%a: f32):
    kernel.yield %a : f32
  }
  func.return %r : tensor<32x32x1xf32>
}
// CHECK-LABEL: func.func @group_norm_stats(
// CHECK:         schedule <order [0, 1, 2], tiles [0, 0, 0], vector 16, unroll 1, parallel [0]>

// A schedule written by hand is kept (unless keep-existing=false).
func.func @by_hand(%x: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %r = kernel.kernel @E_256_1024(%x) space [256, 1024] reads [#kernel.access<(d0, d1) -> (d0, d1)>] writes affine_map<(d0, d1) -> (d0, d1)> schedule <order [1, 0], tiles [0, 128], vector 4, unroll 2, parallel [1]> : (tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  ^bb0(%a: f32):
    kernel.yield %a : f32
  }
  func.return %r : tensor<256x1024xf32>
}
// CHECK-LABEL: func.func @by_hand(
// CHECK:         schedule <order [1, 0], tiles [0, 128], vector 4, unroll 2, parallel [1]>
// OPT-LABEL:   func.func @by_hand(
// OPT:           schedule <order [0, 1], tiles [0, 0], vector 8, unroll 1, parallel []>

// The whole pipeline from hl: batch-norm-like and group-norm-like normalisations
// of the same (32, 64, 56, 56) tensor. Both make two kernels: the statistics (one sum
// of the stacked pair d, d**2; decompose-hlops' `moments`) and the normalisation. In
// the first, the pair loop (d0) runs inside a row of x (batch norm: tiles of one image
// row) or a 2048-element tile of a group (group norm), so its second pass over that
// piece of x hits the cache: x comes from memory once per kernel. In every kernel the
// innermost loops walk x with stride 1.
func.func @batch_norm(%x: tensor<32x64x56x56xf32>) -> tensor<32x64x56x56xf32> {
  %r = hl.batch_norm %x : tensor<32x64x56x56xf32>
  func.return %r : tensor<32x64x56x56xf32>
}
// PIPE-LABEL: func.func @batch_norm(
// PIPE:         kernel.kernel @r_2_32_64_56_56({{.*}}) space [2, 32, 64, 56, 56] reduce [1, 3, 4] sum
// PIPE-SAME:      schedule <order [2, 1, 3, 0, 4], tiles [0, 1, 1, 0, 0], vector 16, unroll 1, parallel [2]>
// PIPE-NOT:     kernel.kernel @r_
// PIPE:         kernel.kernel @E_32_64_56_56({{.*}}) space [32, 64, 56, 56]
// PIPE-SAME:      schedule <order [0, 1, 2, 3], tiles [0, 0, 0, 0], vector 16, unroll 1, parallel [0]>

func.func @group_norm(%x: tensor<32x64x56x56xf32>) -> tensor<32x64x56x56xf32> {
  %r = hl.group_norm %x groups 32 : tensor<32x64x56x56xf32>
  func.return %r : tensor<32x64x56x56xf32>
}
// PIPE-LABEL: func.func @group_norm(
// PIPE:         kernel.kernel @r_2_32_32_6272({{.*}}) space [2, 32, 32, 6272] reduce [3] sum
// PIPE-SAME:      schedule <order [1, 2, 0, 3], tiles [1, 1, 1, 2048], vector 16, unroll 1, parallel [1]>
// PIPE-NOT:     kernel.kernel @r_
// PIPE:         kernel.kernel @E_32_64_56_56({{.*}}) space [32, 64, 56, 56]
// PIPE-SAME:      schedule <order [0, 1, 2, 3], tiles [0, 0, 0, 0], vector 16, unroll 1, parallel [0]>

// matmul + bias (the bias is the kernel's epilogue: the partial sums wait in the
// output between the tiles of K, the epilogue applies in the last) and conv2d
// from hl.
func.func @hl_matmul(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>, %bias: tensor<1024xf32>) -> tensor<1024x1024xf32> {
  %m = hl.matmul %a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  %r = hl.add %m, %bias : tensor<1024x1024xf32>, tensor<1024xf32> -> tensor<1024x1024xf32>
  func.return %r : tensor<1024x1024xf32>
}
// PIPE-LABEL: func.func @hl_matmul(
// PIPE:         kernel.kernel @r_1024_1024_1024(%a, %b, %bias)
// PIPE-SAME:      epilogue_inputs 1 schedule <order [0, 1, 2], tiles [0, 512, 256], vector 32, unroll 6, parallel [0]>

func.func @hl_conv(%x: tensor<8x64x56x56xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<8x64x56x56xf32> {
  %r = hl.conv2d %x, %w padding [1, 1, 1, 1] : tensor<8x64x56x56xf32>, tensor<64x64x3x3xf32> -> tensor<8x64x56x56xf32>
  func.return %r : tensor<8x64x56x56xf32>
}
// PIPE-LABEL: func.func @hl_conv(
// PIPE:         schedule <order [0, 1, 4, 2, 3, 6, 7, 5], tiles [0, 0, 0, 0, 0, 0, 0, 0], vector 56, unroll 4, parallel [0]>

// A batched matmul of batch 1: the size-1 batch loop comes second, after the rows the
// threads split, and the register block's rows are still the 256 rows of M (the last
// parallel loop longer than 1), 6 at a time.
func.func @hl_batch1_matmul(%a: tensor<1x256x512xf32>, %b: tensor<1x512x256xf32>) -> tensor<1x256x256xf32> {
  %m = hl.matmul %a, %b : tensor<1x256x512xf32>, tensor<1x512x256xf32> -> tensor<1x256x256xf32>
  func.return %m : tensor<1x256x256xf32>
}
// PIPE-LABEL: func.func @hl_batch1_matmul(
// PIPE:         kernel.kernel @r_1_256_512_256(
// PIPE-SAME:      schedule <order [1, 0, 2, 3], tiles [0, 0, 0, 0], vector 32, unroll 6, parallel [1]>

// A batch-1 conv on a 32 x 32 map with 128 channels: the cost model puts the output channels first (the
// threads split them) and the output rows oh last of the parallel loops, but the input's
// columns differ from row to row of oh and are the same for every channel: the register
// block's rows go on the channels (d2), oh first for the threads, the size-1 batch and
// group second. (On AVX2, a 28 x 28 map with its rows on oh loaded each row's own input
// vectors: 5 GFLOP/s, against 22 with its rows on the channels.)
func.func @hl_batch1_conv(%x: tensor<1x128x32x32xf32>, %w: tensor<128x128x3x3xf32>) -> tensor<1x128x32x32xf32> {
  %r = hl.conv2d %x, %w padding [1, 1, 1, 1] : tensor<1x128x32x32xf32>, tensor<128x128x3x3xf32> -> tensor<1x128x32x32xf32>
  func.return %r : tensor<1x128x32x32xf32>
}
// PIPE-LABEL: func.func @hl_batch1_conv(
// PIPE:         kernel.kernel @r_1_1_128_128_32_32_3_3(
// PIPE-SAME:      schedule <order [4, 0, 1, 2, 3, 6, 7, 5], {{.*}}parallel [4]>
