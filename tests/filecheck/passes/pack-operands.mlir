// pack-operands copies a contraction's operand that its columns (the dimension that
// walks the write with stride 1) read with a stride into a transposed buffer, so the
// register block loads vectors of it. `x @ w.T` (nn.Linear's weight, Gemm's transB)
// reads w[j, k]: the copy holds w as [k, j], and the matmul reads it at (d1, d2).
// An operand already contiguous in the columns, one reused too little, the epilogue's
// and a masked read stay as they are.
// RUN: irtensor-opt %s -p pack-operands | filecheck %s
// RUN: irtensor-opt %s -p 'pack-operands{min-reuse=0}' | filecheck %s --check-prefix=OFF
// RUN: irtensor-opt %s -p 'pack-operands,reorder-loops' | filecheck %s --check-prefix=SCHED

// CHECK-LABEL: func.func @linear(
// CHECK:         %[[P:.*]] = kernel.kernel @pack_784_256(%w) space [784, 256]
// CHECK-SAME:      reads [#kernel.access<(d0, d1) -> (d1, d0)>]
// CHECK-SAME:      writes affine_map<(d0, d1) -> (d0, d1)>
// CHECK-SAME:      : (tensor<256x784xf32>) -> tensor<784x256xf32>
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32):
// CHECK-NEXT:      kernel.yield %[[V]] : f32
// CHECK:         kernel.kernel @r_64_784_256(%x, %[[P]], %b)
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>, #kernel.access<(d0, d1, d2) -> (d2)>]
// CHECK-SAME:      : (tensor<64x784xf32>, tensor<784x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
// OFF-LABEL:   func.func @linear(
// OFF-NOT:       pack_
// OFF:           kernel.kernel @r_64_784_256(%x, %w, %b)
// The copy makes the matmul register-blocked (unroll 6 rows of a 32-wide vector).
// SCHED-LABEL: func.func @linear(
// SCHED:         kernel.kernel @r_64_784_256({{.*}}) {{.*}} schedule <order [0, 1, 2], {{.*}}unroll 6
func.func @linear(%x: tensor<64x784xf32>, %w: tensor<256x784xf32>, %b: tensor<256xf32>) -> tensor<64x256xf32> {
  %y = kernel.kernel @r_64_784_256(%x, %w, %b) space [64, 784, 256] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d2, d1)>, #kernel.access<(d0, d1, d2) -> (d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> epilogue_inputs 1 : (tensor<64x784xf32>, tensor<256x784xf32>, tensor<256xf32>) -> tensor<64x256xf32> {
  ^bb0(%a: f32, %c: f32):
    %m = arith.mulf %a, %c : f32
    kernel.yield %m : f32
  } epilogue {
  ^bb0(%acc: f32, %bias: f32):
    %s = arith.addf %acc, %bias : f32
    kernel.yield %s : f32
  }
  func.return %y : tensor<64x256xf32>
}

// Batched q @ k.T (attention's scores): k[b, j, d] becomes [b, d, j].
// CHECK-LABEL: func.func @scores(
// CHECK:         %[[K:.*]] = kernel.kernel @pack_4_32_16(%k) space [4, 32, 16]
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2) -> (d0, d2, d1)>]
// CHECK-SAME:      : (tensor<4x16x32xf32>) -> tensor<4x32x16xf32>
// CHECK:         kernel.kernel @r_4_16_32_16(%q, %[[K]])
// CHECK-SAME:      reads [#kernel.access<(d0, d1, d2, d3) -> (d0, d1, d2)>, #kernel.access<(d0, d1, d2, d3) -> (d0, d2, d3)>]
func.func @scores(%q: tensor<4x16x32xf32>, %k: tensor<4x16x32xf32>) -> tensor<4x16x16xf32> {
  %s = kernel.kernel @r_4_16_32_16(%q, %k) space [4, 16, 32, 16] reduce [2] sum reads [#kernel.access<(d0, d1, d2, d3) -> (d0, d1, d2)>, #kernel.access<(d0, d1, d2, d3) -> (d0, d3, d2)>] writes affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)> : (tensor<4x16x32xf32>, tensor<4x16x32xf32>) -> tensor<4x16x16xf32> {
  ^bb0(%a: f32, %c: f32):
    %m = arith.mulf %a, %c : f32
    kernel.yield %m : f32
  }
  func.return %s : tensor<4x16x16xf32>
}

// Row-major B already walks the columns with stride 1: nothing to do.
// CHECK-LABEL: func.func @row_major(
// CHECK-NOT:     pack_
// CHECK:         kernel.kernel @r_64_784_256(%x, %w)
func.func @row_major(%x: tensor<64x784xf32>, %w: tensor<784x256xf32>) -> tensor<64x256xf32> {
  %y = kernel.kernel @r_64_784_256(%x, %w) space [64, 784, 256] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> : (tensor<64x784xf32>, tensor<784x256xf32>) -> tensor<64x256xf32> {
  ^bb0(%a: f32, %c: f32):
    %m = arith.mulf %a, %c : f32
    kernel.yield %m : f32
  }
  func.return %y : tensor<64x256xf32>
}

// One row (a matrix-vector product) reuses w only once: a copy would double its
// traffic, so it stays.
// CHECK-LABEL: func.func @matvec(
// CHECK-NOT:     pack_
// CHECK:         kernel.kernel @r_1_784_256(%x, %w)
func.func @matvec(%x: tensor<1x784xf32>, %w: tensor<256x784xf32>) -> tensor<1x256xf32> {
  %y = kernel.kernel @r_1_784_256(%x, %w) space [1, 784, 256] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d2, d1)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> : (tensor<1x784xf32>, tensor<256x784xf32>) -> tensor<1x256xf32> {
  ^bb0(%a: f32, %c: f32):
    %m = arith.mulf %a, %c : f32
    kernel.yield %m : f32
  }
  func.return %y : tensor<1x256xf32>
}

// A masked (padded) read is not a plain projection: left alone.
// CHECK-LABEL: func.func @masked(
// CHECK-NOT:     pack_
// CHECK:         kernel.kernel @r_64_784_256(%x, %w)
func.func @masked(%x: tensor<64x784xf32>, %w: tensor<256x784xf32>) -> tensor<64x256xf32> {
  %y = kernel.kernel @r_64_784_256(%x, %w) space [64, 784, 256] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d2, d1), valid (d0, d1, d2) : (d2 - 1 >= 0), pad 0.0>] writes affine_map<(d0, d1, d2) -> (d0, d2)> : (tensor<64x784xf32>, tensor<256x784xf32>) -> tensor<64x256xf32> {
  ^bb0(%a: f32, %c: f32):
    %m = arith.mulf %a, %c : f32
    kernel.yield %m : f32
  }
  func.return %y : tensor<64x256xf32>
}
