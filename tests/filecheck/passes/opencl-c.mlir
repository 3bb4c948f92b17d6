// The OpenCL C that device opencl builds (`--emit opencl` prints the ocl.kernel ops):
// an elementwise kernel, a long reduction with few outputs as a work-group reduction,
// and a matmul with a block of outputs per work item and its tiles as the work-group size.
// RUN: irtensor-opt %s -p lower-to-opencl --emit opencl | filecheck %s

// CHECK-LABEL: /* range [8, 4] */
// CHECK-NEXT:  __kernel void E_4_8_0(__global const float* in0, __global const float* in1, __global float* out) {
// CHECK-NEXT:    long i1 = (long)get_global_id(0);
// CHECK-NEXT:    long i0 = (long)get_global_id(1);
// CHECK-NEXT:    long [[ROW:.*]] = i0 * 8;
// CHECK-NEXT:    long [[AT:.*]] = [[ROW]] + i1;
// CHECK-NEXT:    float [[X:.*]] = in0[[[AT]]];
// CHECK-NEXT:    float [[B:.*]] = in1[i1];
// CHECK-NEXT:    float [[S:.*]] = [[X]] + [[B]];
// CHECK-NEXT:    out[[[AT]]] = [[S]];
// CHECK-NEXT:  }
func.func @add_bias(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = kernel.kernel @E_4_8(%x, %b) space [4, 8] reads [#kernel.access<(d0, d1) -> (d0, d1)>, #kernel.access<(d0, d1) -> (d1)>] writes affine_map<(d0, d1) -> (d0, d1)> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.addf %1, %2 : f32
    kernel.yield %3 : f32
  }
  func.return %0 : tensor<4x8xf32>
}

// sqrt(sum of 5000) for 3 rows: a work-group of 128 per row, each work item adds every
// 128th element, then a tree in local memory, then work item 0 runs the epilogue.
// CHECK-LABEL: /* range [128, 3], local [128, 1] */
// CHECK-NEXT:  __kernel __attribute__((reqd_work_group_size(128, 1, 1))) void r_3_5000_1(__global const float* in0, __global float* out) {
// CHECK-NEXT:    long lid = (long)get_local_id(0);
// CHECK-NEXT:    long i0 = (long)get_group_id(1);
// CHECK-NEXT:    float acc = 0.0f;
// CHECK-NEXT:    for (long i1 = lid; i1 < 5000; i1 += 128) {
// CHECK:           acc = {{.*}};
// CHECK-NEXT:    }
// CHECK-NEXT:    __local float partial[128];
// CHECK-NEXT:    partial[lid] = acc;
// CHECK-NEXT:    barrier(CLK_LOCAL_MEM_FENCE);
// CHECK-NEXT:    bool [[FIRST:.*]] = (ulong)lid < (ulong)64;
// CHECK-NEXT:    if ([[FIRST]]) {
// CHECK-NEXT:      long [[OTHER:.*]] = lid + 64;
// CHECK-NEXT:      float [[MINE:.*]] = partial[lid];
// CHECK-NEXT:      float [[THEIRS:.*]] = partial[[[OTHER]]];
// CHECK-NEXT:      float [[BOTH:.*]] = [[MINE]] + [[THEIRS]];
// CHECK-NEXT:      partial[lid] = [[BOTH]];
// CHECK-NEXT:    }
// CHECK-COUNT-6: barrier(CLK_LOCAL_MEM_FENCE);
// CHECK:         barrier(CLK_LOCAL_MEM_FENCE);
// CHECK-NEXT:    bool [[LEADER:.*]] = lid == 0;
// CHECK-NEXT:    if ([[LEADER]]) {
// CHECK-NEXT:      float [[TOTAL:.*]] = partial[0];
// CHECK-NEXT:      float [[ROOT:.*]] = sqrt([[TOTAL]]);
// CHECK-NEXT:      out[i0] = [[ROOT]];
// CHECK-NEXT:    }
// CHECK-NEXT:  }
func.func @row_norms(%x: tensor<3x5000xf32>) -> tensor<3xf32> {
  %0 = kernel.kernel @r_3_5000(%x) space [3, 5000] reduce [1] sum reads [#kernel.access<(d0, d1) -> (d0, d1)>] writes affine_map<(d0, d1) -> (d0)> : (tensor<3x5000xf32>) -> tensor<3xf32> {
  ^bb0(%1: f32):
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%2: f32):
    %3 = math.sqrt %2 : f32
    kernel.yield %3 : f32
  }
  func.return %0 : tensor<3xf32>
}

// A 32x4 @ 4x24 matmul: each work item computes an 8x8 block of the output (64
// accumulators; each loaded element of a row of A or a column of B serves 8 of them), so
// the range is [24/8, 32/8]; the schedule's 16-row tile is 2 work items of 8 rows.
// CHECK-LABEL: /* range [3, 4], local [1, 2] */
// CHECK-NEXT:  __kernel __attribute__((reqd_work_group_size(1, 2, 1))) void r_32_4_24_2(__global const float* in0, __global const float* in1, __global float* out) {
// CHECK-NEXT:    long [[COL:.*]] = (long)get_global_id(0);
// CHECK-NEXT:    long i2 = [[COL]] * 8;
// CHECK-NEXT:    long [[ROW:.*]] = (long)get_global_id(1);
// CHECK-NEXT:    long i0 = [[ROW]] * 8;
// CHECK-COUNT-64: float acc{{.*}} = 0.0f;
// CHECK-NEXT:    for (long i1 = 0; i1 < 4; i1++) {
// CHECK:           float [[A:.*]] = in0[[[AT:.*]]];
// CHECK:           float [[B:.*]] = in1[[[BT:.*]]];
// CHECK-NEXT:      float [[P:.*]] = [[A]] * [[B]];
// CHECK-NEXT:      float [[N:.*]] = acc + [[P]];
// CHECK:           acc_63 = {{.*}};
// CHECK-NEXT:    }
// CHECK:         out[{{.*}}] = acc_63;
// CHECK-NEXT:  }
func.func @matmul(%a: tensor<32x4xf32>, %b: tensor<4x24xf32>) -> tensor<32x24xf32> {
  %0 = kernel.kernel @r_32_4_24(%a, %b) space [32, 4, 24] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> schedule <order [0, 2, 1], tiles [16, 0, 8], vector 1, unroll 1, parallel [0]> : (tensor<32x4xf32>, tensor<4x24xf32>) -> tensor<32x24xf32> {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  }
  func.return %0 : tensor<32x24xf32>
}

// NAN and INFINITY are float constants in OpenCL C: a double's are cast, or fmax(double,
// float) is ambiguous and the kernel does not build (a concat of f64 with an empty part,
// whose pad value is -inf, found by `irtensor fuzz --device opencl`).
// CHECK-LABEL: __kernel void E_1_f64_specials_{{[0-9]+}}(
// CHECK:         fmax({{.*}}, (-(double)INFINITY))
// CHECK:         ((double)NAN)
func.func @f64_specials(%x: tensor<1xf64>) -> tensor<1xf64> {
  %0 = kernel.kernel @E_1_f64_specials(%x) space [1] reads [#kernel.access<(d0) -> (d0)>] writes affine_map<(d0) -> (d0)> : (tensor<1xf64>) -> tensor<1xf64> {
  ^bb0(%1: f64):
    %inf = arith.constant 0xFFF0000000000000 : f64
    %nan = arith.constant 0x7FF8000000000000 : f64
    %2 = arith.maximumf %1, %inf : f64
    %3 = arith.addf %2, %nan : f64
    kernel.yield %3 : f64
  }
  func.return %0 : tensor<1xf64>
}
