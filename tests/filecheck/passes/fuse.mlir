// fuse turns ll programs into kernels. Each function below is written in hl and
// lowered by hl-to-ll first; the checks count the kernels and show how views
// became reads (no copy kernels) and how epilogues absorbed their consumers.
// RUN: irtensor-opt %s -p decompose-hlops,conv-to-mul-sum,fold-constants,cse,dce,fuse | filecheck %s

// A 10-op elementwise chain is one kernel over the output's shape.
// CHECK-LABEL: func.func @chain10
// CHECK-COUNT-1: kernel.kernel @E_8_16(%x, %y) space [8, 16] reads [#kernel.access<(d0, d1) -> (d0, d1)>, #kernel.access<(d0, d1) -> (d1)>] writes affine_map<(d0, d1) -> (d0, d1)>
// CHECK-NOT:     kernel.kernel
// CHECK:         func.return
func.func @chain10(%x: tensor<8x16xf32>, %y: tensor<16xf32>) -> tensor<8x16xf32> {
  %0 = hl.add %x, %y : tensor<8x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %1 = hl.mul %0, %x : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %2 = hl.exp %1 : tensor<8x16xf32>
  %3 = hl.sub %2, %y : tensor<8x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %4 = hl.relu %3 : tensor<8x16xf32>
  %5 = hl.sqrt %4 : tensor<8x16xf32>
  %6 = hl.maximum %5, %x : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %7 = hl.neg %6 : tensor<8x16xf32>
  %8 = hl.sin %7 : tensor<8x16xf32>
  %9 = hl.mul %8, %x : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  func.return %9 : tensor<8x16xf32>
}

// sum(a * b): the product is computed inside the reduction kernel.
// CHECK-LABEL: func.func @sum_of_product
// CHECK-COUNT-1: kernel.kernel @r_4_32(%a, %b) space [4, 32] reduce [1] sum
// CHECK:           arith.mulf
// CHECK-NOT:     kernel.kernel
// CHECK:         func.return
func.func @sum_of_product(%a: tensor<4x32xf32>, %b: tensor<4x32xf32>) -> tensor<4xf32> {
  %0 = hl.mul %a, %b : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  %1 = hl.sum %0 axes [1] : tensor<4x32xf32> -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// matmul: expand + mul + sum, with no broadcast materialized: both operands are
// read in place, the contracted dimension d1 is the reduction.
// CHECK-LABEL: func.func @matmul
// CHECK:         kernel.kernel @r_16_8_32(%a, %b) space [16, 8, 32] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-NOT:     kernel.kernel
// CHECK:         func.return
func.func @matmul(%a: tensor<16x8xf32>, %b: tensor<8x32xf32>) -> tensor<16x32xf32> {
  %0 = hl.matmul %a, %b : tensor<16x8xf32>, tensor<8x32xf32> -> tensor<16x32xf32>
  func.return %0 : tensor<16x32xf32>
}

// matmul + bias + relu: one kernel; the bias add and the relu are its epilogue.
// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK:         kernel.kernel @r_16_8_32(%a, %b, %bias) space [16, 8, 32] reduce [1] sum {{.*}} epilogue_inputs 1
// CHECK:         } epilogue {
// CHECK:           arith.addf
// CHECK:           arith.maximumf
// CHECK-NOT:     kernel.kernel
// CHECK:         func.return
func.func @matmul_bias_relu(%a: tensor<16x8xf32>, %b: tensor<8x32xf32>, %bias: tensor<32xf32>) -> tensor<16x32xf32> {
  %0 = hl.matmul %a, %b : tensor<16x8xf32>, tensor<8x32xf32> -> tensor<16x32xf32>
  %1 = hl.add %0, %bias : tensor<16x32xf32>, tensor<32xf32> -> tensor<16x32xf32>
  %2 = hl.relu %1 : tensor<16x32xf32>
  func.return %2 : tensor<16x32xf32>
}

// conv2d (padding 1) + bias + relu: one kernel. The padding is a masked read of
// the input (pad 0.0); the sliding windows are index arithmetic, not copies.
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK:         kernel.kernel @r_{{[0-9_]+}}(%x, %w, %b) space {{.*}} sum {{.*}}valid{{.*}} epilogue_inputs 1
// CHECK:         } epilogue {
// CHECK-NOT:     kernel.kernel
// CHECK:         func.return
func.func @conv_bias_relu(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<2x4x8x8xf32> {
  %0 = hl.conv2d %x, %w padding [1, 1, 1, 1] : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  %1 = hl.add %0, %b : tensor<2x4x8x8xf32>, tensor<4x1x1xf32> -> tensor<2x4x8x8xf32>
  %2 = hl.relu %1 : tensor<2x4x8x8xf32>
  func.return %2 : tensor<2x4x8x8xf32>
}

// softmax is 3 kernels: the row max; the row sum of exp(x - max), which needs the
// max broadcast over the row, so it cannot be the max's epilogue; and the
// division, which needs the sum broadcast over the row. exp is recomputed in the
// last kernel rather than stored (it is cheaper than a trip through memory).
// CHECK-LABEL: func.func @softmax
// CHECK:         %[[MAX:.*]] = kernel.kernel @r_4_16(%x) space [4, 16] reduce [1] max
// CHECK:         %[[SUM:.*]] = kernel.kernel @r_4_16(%x, %[[MAX]]) space [4, 16] reduce [1] sum
// CHECK:         %[[OUT:.*]] = kernel.kernel @E_4_16(%x, %[[MAX]], %[[SUM]]) space [4, 16]
// CHECK-NOT:     kernel.kernel
// CHECK:         func.return %[[OUT]]
func.func @softmax(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = hl.softmax %x axis 1 : tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// layernorm is 2 kernels that read x: one reduction of the stacked pair
// (x - shift, (x - shift)**2) in f64, whose masked reads pick d or d**2 by the pair
// index, and the normalisation, which reads x and both statistics.
// CHECK-LABEL: func.func @layernorm
// CHECK:         %[[STATS:.*]] = kernel.kernel @r_2_4_16(%x, %x, %x, %x) space [2, 4, 16] reduce [2] sum
// CHECK-SAME:      valid (d0, d1, d2) : ((d0 * -1) >= 0)
// CHECK-SAME:      valid (d0, d1, d2) : ((d0 + -1) >= 0)
// CHECK-SAME:      -> tensor<2x4x1xf64>
// CHECK:           arith.extf {{.*}} : f32 to f64
// CHECK:         kernel.kernel @E_4_16(%x, %x, %[[STATS]], %[[STATS]]) space [4, 16]
// CHECK-NOT:     kernel.kernel
// CHECK:         func.return
func.func @layernorm(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = hl.layer_norm %x axes [1] : tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}

// A permute/reshape/pad/flip/stride chain feeding an add is one kernel: the
// chain is a single masked read of %x, with no copy kernel.
// CHECK-LABEL: func.func @view_chain
// CHECK:         kernel.kernel @E_3_5(%x, %y) space [3, 5] reads [#kernel.access<(d0, d1) -> ({{.*}}), valid (d0, d1) : ({{.*}}), pad 0.0>, #kernel.access<(d0, d1) -> (d0, d1)>]
// CHECK-NOT:     kernel.kernel
// CHECK:         func.return
func.func @view_chain(%x: tensor<4x6xf32>, %y: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = hl.permute %x [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  %1 = hl.reshape %0 : tensor<6x4xf32> -> tensor<3x8xf32>
  %2 = hl.pad %1 low [0, 1] high [0, 1] : tensor<3x8xf32> -> tensor<3x10xf32>
  %3 = hl.flip %2 axes [1] : tensor<3x10xf32>
  %4 = hl.slice %3 starts [0, 0] limits [3, 10] steps [1, 2] : tensor<3x10xf32> -> tensor<3x5xf32>
  %5 = hl.add %4, %y : tensor<3x5xf32>, tensor<3x5xf32> -> tensor<3x5xf32>
  func.return %5 : tensor<3x5xf32>
}

// A view returned as it is must be copied into its own buffer: the copy kernel.
// CHECK-LABEL: func.func @returned_view
// CHECK:         kernel.kernel @E_3_2(%x) space [3, 2] reads [#kernel.access<(d0, d1) -> (d1, d0)>]
// CHECK-NEXT:    ^{{.*}}(%[[V:.*]]: f32):
// CHECK-NEXT:      kernel.yield %[[V]] : f32
func.func @returned_view(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = hl.permute %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// Group-norm-like centring: x is reshaped to groups and back; the elementwise kernel reads
// x itself (the merged index taken apart again simplifies to the plain index), and the
// group mean at channel floordiv 2.
// CHECK-LABEL: func.func @group_center
// CHECK:         kernel.kernel @r_2_2_18(%x) space [2, 2, 18] reduce [2] sum
// CHECK:         kernel.kernel @E_2_4_3_3(%x, %{{.*}}) space [2, 4, 3, 3] reads [#kernel.access<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, #kernel.access<(d0, d1, d2, d3) -> (d0, (d1 floordiv 2), 0)>]
func.func @group_center(%x: tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32> {
  %g = hl.reshape %x : tensor<2x4x3x3xf32> -> tensor<2x2x18xf32>
  %m = hl.mean %g axes [2] keepdim : tensor<2x2x18xf32> -> tensor<2x2x1xf32>
  %c = hl.sub %g, %m : tensor<2x2x18xf32>, tensor<2x2x1xf32> -> tensor<2x2x18xf32>
  %r = hl.reshape %c : tensor<2x2x18xf32> -> tensor<2x4x3x3xf32>
  func.return %r : tensor<2x4x3x3xf32>
}

// A concatenation of computed ints or bools: the -inf pad of each computed part is
// its type's own lowest value in the select (not int64's minimum, not true).
// CHECK-LABEL: func.func @cat_computed_int
// CHECK:         arith.constant -2147483648 : i32
// CHECK-NEXT:    arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
func.func @cat_computed_int(%x: tensor<2xi32>) -> tensor<4xi32> {
  %0 = hl.add %x, %x : tensor<2xi32>, tensor<2xi32> -> tensor<2xi32>
  %1 = hl.concat %0, %x axis 0 : tensor<2xi32>, tensor<2xi32> -> tensor<4xi32>
  func.return %1 : tensor<4xi32>
}

// CHECK-LABEL: func.func @cat_computed_bool
// CHECK:         arith.cmpi sge
// CHECK-NEXT:    %[[FALSE:.*]] = arith.constant false
// CHECK-NEXT:    arith.select %{{.*}}, %{{.*}}, %[[FALSE]] : i1
func.func @cat_computed_bool(%x: tensor<2xi1>) -> tensor<4xi1> {
  %0 = hl.not %x : tensor<2xi1>
  %1 = hl.concat %0, %x axis 0 : tensor<2xi1>, tensor<2xi1> -> tensor<4xi1>
  func.return %1 : tensor<4xi1>
}

// The weight gradient behind a relu: `g * relu(h)` depends on (b, o) only, and the
// matmul's space [o, b, i] sees each of its values at 24 points. It becomes a
// kernel of its own over [o, b] (written in the order the reduction reads it), and
// the matmul's body is a single multiply.
// CHECK-LABEL: func.func @relu_grad_weight
// CHECK:         %[[MASKED:.*]] = kernel.kernel @E_32_16(%g, %h) space [32, 16] reads [#kernel.access<(d0, d1) -> (d1, d0)>, #kernel.access<(d0, d1) -> (d1, d0)>]
// CHECK:           arith.maximumf
// CHECK:           arith.mulf
// CHECK:         kernel.kernel @r_32_16_24(%[[MASKED]], %x) space [32, 16, 24] reduce [1] sum
// CHECK-NEXT:    ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      kernel.yield
func.func @relu_grad_weight(%g: tensor<16x32xf32>, %h: tensor<16x32xf32>, %x: tensor<16x24xf32>) -> tensor<32x24xf32> {
  %m = hl.relu %h : tensor<16x32xf32>
  %d = hl.mul %g, %m : tensor<16x32xf32>, tensor<16x32xf32> -> tensor<16x32xf32>
  %t = hl.permute %d [1, 0] : tensor<16x32xf32> -> tensor<32x16xf32>
  %0 = hl.matmul %t, %x : tensor<32x16xf32>, tensor<16x24xf32> -> tensor<32x24xf32>
  func.return %0 : tensor<32x24xf32>
}

// Seen at only 4 points each, the same product stays in the matmul's body: a
// kernel and a buffer round trip would cost more than computing it 4 times.
// CHECK-LABEL: func.func @relu_grad_narrow
// CHECK:         kernel.kernel @r_32_16_4(%g, %h, %x) space [32, 16, 4] reduce [1] sum
// CHECK:           arith.maximumf
// CHECK:           arith.mulf
// CHECK:           arith.mulf
// CHECK-NOT:     kernel.kernel
// CHECK:         func.return
func.func @relu_grad_narrow(%g: tensor<16x32xf32>, %h: tensor<16x32xf32>, %x: tensor<16x4xf32>) -> tensor<32x4xf32> {
  %m = hl.relu %h : tensor<16x32xf32>
  %d = hl.mul %g, %m : tensor<16x32xf32>, tensor<16x32xf32> -> tensor<16x32xf32>
  %t = hl.permute %d [1, 0] : tensor<16x32xf32> -> tensor<32x16xf32>
  %0 = hl.matmul %t, %x : tensor<32x16xf32>, tensor<16x4xf32> -> tensor<32x4xf32>
  func.return %0 : tensor<32x4xf32>
}

// A conv reads its input through overlapping windows: relu(x * s + t) padded is
// read at 16 x 3 x 3 = 144 points per value. It is computed once, over x's own
// space, and the conv reads that buffer padded (a masked read, as of x itself);
// fused, its ops and mask ran at every tap of every output channel.
// CHECK-LABEL: func.func @affine_relu_conv
// CHECK:         %[[ACT:.*]] = kernel.kernel @E_2_4_8_8(%x, %s, %t) space [2, 4, 8, 8]
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:           arith.maximumf
// CHECK:         kernel.kernel @r_{{[0-9_]+}}(%[[ACT]], %w) space {{.*}} sum {{.*}}valid{{.*}}pad 0.0
// CHECK-NEXT:    ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      kernel.yield
func.func @affine_relu_conv(%x: tensor<2x4x8x8xf32>, %s: tensor<4x1x1xf32>, %t: tensor<4x1x1xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<2x16x8x8xf32> {
  %0 = hl.mul %x, %s : tensor<2x4x8x8xf32>, tensor<4x1x1xf32> -> tensor<2x4x8x8xf32>
  %1 = hl.add %0, %t : tensor<2x4x8x8xf32>, tensor<4x1x1xf32> -> tensor<2x4x8x8xf32>
  %2 = hl.relu %1 : tensor<2x4x8x8xf32>
  %3 = hl.conv2d %2, %w padding [1, 1, 1, 1] : tensor<2x4x8x8xf32>, tensor<16x4x3x3xf32> -> tensor<2x16x8x8xf32>
  func.return %3 : tensor<2x16x8x8xf32>
}

// A depthwise conv (groups = channels) reads each value of relu(x * s + t) padded at
// its 9 taps only, no output channels sharing it: at least HOIST_MIN_WINDOW_REPEATS, so
// it is computed once too.
// CHECK-LABEL: func.func @affine_relu_depthwise
// CHECK:         %[[ACT:.*]] = kernel.kernel @E_2_4_8_8(%x, %s, %t) space [2, 4, 8, 8]
// CHECK:           arith.maximumf
// CHECK:         kernel.kernel @r_{{[0-9_]+}}(%[[ACT]], %w) space {{.*}} sum {{.*}}valid{{.*}}pad 0.0
// CHECK-NEXT:    ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      kernel.yield
func.func @affine_relu_depthwise(%x: tensor<2x4x8x8xf32>, %s: tensor<4x1x1xf32>, %t: tensor<4x1x1xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %0 = hl.mul %x, %s : tensor<2x4x8x8xf32>, tensor<4x1x1xf32> -> tensor<2x4x8x8xf32>
  %1 = hl.add %0, %t : tensor<2x4x8x8xf32>, tensor<4x1x1xf32> -> tensor<2x4x8x8xf32>
  %2 = hl.relu %1 : tensor<2x4x8x8xf32>
  %3 = hl.conv2d %2, %w padding [1, 1, 1, 1] groups 4 : tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<2x4x8x8xf32>
  func.return %3 : tensor<2x4x8x8xf32>
}

// Without padding the windows still overlap: the expression is computed over x's
// space [2, 4, 8, 8], not over the dims the conv reads it by (n, c, oh, ow, kh, kw:
// x copied once per tap).
// CHECK-LABEL: func.func @affine_relu_conv_unpadded
// CHECK:         %[[ACT:.*]] = kernel.kernel @E_2_4_8_8(%x, %s, %t) space [2, 4, 8, 8]
// CHECK:         kernel.kernel @r_{{[0-9_]+}}(%[[ACT]], %w) space {{.*}} sum
// CHECK-NEXT:    ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      kernel.yield
func.func @affine_relu_conv_unpadded(%x: tensor<2x4x8x8xf32>, %s: tensor<4x1x1xf32>, %t: tensor<4x1x1xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<2x16x6x6xf32> {
  %0 = hl.mul %x, %s : tensor<2x4x8x8xf32>, tensor<4x1x1xf32> -> tensor<2x4x8x8xf32>
  %1 = hl.add %0, %t : tensor<2x4x8x8xf32>, tensor<4x1x1xf32> -> tensor<2x4x8x8xf32>
  %2 = hl.relu %1 : tensor<2x4x8x8xf32>
  %3 = hl.conv2d %2, %w : tensor<2x4x8x8xf32>, tensor<16x4x3x3xf32> -> tensor<2x16x6x6xf32>
  func.return %3 : tensor<2x16x6x6xf32>
}

// A 3x3 stride-2 average pool of relu(x) padded reads each value at about 2 points:
// recomputing relu there is cheaper than a buffer, so it stays in the pool's kernel,
// an elementwise one: the pool is the sum of its nine taps' views (conv-to-mul-sum).
// CHECK-LABEL: func.func @relu_avg_pool
// CHECK:         kernel.kernel @E_2_4_4_4(%x, %x, %x, %x, %x, %x, %x, %x, %x) space [2, 4, 4, 4]
// CHECK:           arith.maximumf
// CHECK:           arith.addf
// CHECK-NOT:     kernel.kernel
// CHECK:         func.return
func.func @relu_avg_pool(%x: tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32> {
  %0 = hl.relu %x : tensor<2x4x8x8xf32>
  %1 = hl.avg_pool2d %0 kernel [3, 3] strides [2, 2] padding [1, 1, 1, 1] : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  func.return %1 : tensor<2x4x4x4xf32>
}

// A max pool of relu(x) feeding a 1x1 conv: the conv reads it as (C, H * W) points, and
// computed over those it would read its taps through the points' digits (floordiv and
// mod by 4); it is computed in its own space [1, 8, 4, 4], its taps plain strides.
// CHECK-LABEL: func.func @max_pool_pointwise
// CHECK:         %[[POOL:.*]] = kernel.kernel @E_1_8_4_4(%x, {{.*}}) space [1, 8, 4, 4] reads [#kernel.access<(d0, d1, d2, d3) -> (d0, d1, (d2 * 2), (d3 * 2))>
// CHECK-NOT:       floordiv
// CHECK:         kernel.kernel @r_1_1_16_8_16(%[[POOL]], %w)
func.func @max_pool_pointwise(%x: tensor<1x8x9x9xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32> {
  %0 = hl.relu %x : tensor<1x8x9x9xf32>
  %1 = hl.max_pool2d %0 kernel [3, 3] strides [2, 2] : tensor<1x8x9x9xf32> -> tensor<1x8x4x4xf32>
  %2 = hl.conv2d %1, %w : tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32> -> tensor<1x16x4x4xf32>
  func.return %2 : tensor<1x16x4x4xf32>
}

// A 1x1 conv runs over its 12 output points as one dim (conv-to-mul-sum), and its
// bias and relu stay its epilogue across the reshape back to (4, 3): the kernel writes
// each point p at its row-major digits (p floordiv 3, p mod 3).
// CHECK-LABEL: func.func @pointwise_bias_relu
// CHECK:         kernel.kernel @r_2_1_16_8_12(%x, %w, %b) space [2, 1, 16, 8, 12] reduce [3] sum reads [#kernel.access<(d0, d1, d2, d3, d4) -> (d0, d3, (d4 floordiv 3), (d4 mod 3))>, {{.*}} writes affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, (d4 floordiv 3), (d4 mod 3))> epilogue_inputs 1
// CHECK:         } epilogue {
// CHECK:           arith.addf
// CHECK:           arith.maximumf
// CHECK-NOT:     kernel.kernel
// CHECK:         func.return
func.func @pointwise_bias_relu(%x: tensor<2x8x4x3xf32>, %w: tensor<16x8x1x1xf32>, %b: tensor<16x1x1xf32>) -> tensor<2x16x4x3xf32> {
  %0 = hl.conv2d %x, %w : tensor<2x8x4x3xf32>, tensor<16x8x1x1xf32> -> tensor<2x16x4x3xf32>
  %1 = hl.add %0, %b : tensor<2x16x4x3xf32>, tensor<16x1x1xf32> -> tensor<2x16x4x3xf32>
  %2 = hl.relu %1 : tensor<2x16x4x3xf32>
  func.return %2 : tensor<2x16x4x3xf32>
}

// A pool of a concatenation: the pool's nine taps would each compute the concat,
// three masked reads a tap. The masks' bounds count in what recomputing costs, so
// the concat is computed once, in its own space, and the pool reads it padded.
// CHECK-LABEL: func.func @concat_pool
// CHECK:         %[[CAT:.*]] = kernel.kernel @E_1_12_6_6(%a, %b, %c) space [1, 12, 6, 6]
// CHECK:         kernel.kernel @E_1_12_6_6(%[[CAT]], %[[CAT]], %[[CAT]], %[[CAT]], %[[CAT]], %[[CAT]], %[[CAT]], %[[CAT]], %[[CAT]]) space [1, 12, 6, 6]
// CHECK-NOT:     kernel.kernel
// CHECK:         func.return
func.func @concat_pool(%a: tensor<1x4x6x6xf32>, %b: tensor<1x4x6x6xf32>, %c: tensor<1x4x6x6xf32>) -> tensor<1x12x6x6xf32> {
  %0 = hl.concat %a, %b, %c axis 1 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32> -> tensor<1x12x6x6xf32>
  %1 = hl.max_pool2d %0 kernel [3, 3] strides [1, 1] padding [1, 1, 1, 1] : tensor<1x12x6x6xf32> -> tensor<1x12x6x6xf32>
  func.return %1 : tensor<1x12x6x6xf32>
}

// A broadcast too costly to recompute in its two consumers: what it broadcasts is
// stored (4 values, not 64), and both consumers read it through the broadcast.
// CHECK-LABEL: func.func @shared_broadcast
// CHECK:         %[[ROW:.*]] = kernel.kernel @E_4_1(%x) space [4, 1]
// CHECK:         kernel.kernel @E_4_16(%[[ROW]], %y) space [4, 16] reads [#kernel.access<(d0, d1) -> (d0, 0)>
// CHECK-NOT:     kernel.kernel
// CHECK:         func.return
func.func @shared_broadcast(%x: tensor<4x1xf32>, %y: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = hl.exp %x : tensor<4x1xf32>
  %1 = hl.exp %0 : tensor<4x1xf32>
  %2 = hl.exp %1 : tensor<4x1xf32>
  %3 = hl.exp %2 : tensor<4x1xf32>
  %4 = hl.exp %3 : tensor<4x1xf32>
  %5 = hl.exp %4 : tensor<4x1xf32>
  %6 = hl.broadcast_to %5 : tensor<4x1xf32> -> tensor<4x16xf32>
  %7 = hl.mul %6, %y : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %8 = hl.add %7, %6 : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %8 : tensor<4x16xf32>
}

// A max pool read by two 1x1 convs, through the reshape to their (C, H * W) points:
// the shared reshape is a view, so the pool is stored in its own space [1, 8, 4, 4]
// (taps plain strides, no floordiv and mod by 4 at each point) and both convs read
// it through the reshape.
// CHECK-LABEL: func.func @max_pool_two_pointwise
// CHECK:         %[[POOL:.*]] = kernel.kernel @E_1_8_4_4(%x, {{.*}}) space [1, 8, 4, 4] reads [#kernel.access<(d0, d1, d2, d3) -> (d0, d1, (d2 * 2), (d3 * 2))>
// CHECK-NOT:       floordiv
// CHECK:         kernel.kernel @r_1_1_16_8_16(%[[POOL]], %w)
// CHECK:         kernel.kernel @r_1_1_4_8_16(%[[POOL]], %v)
// CHECK-NOT:     kernel.kernel
// CHECK:         func.return
func.func @max_pool_two_pointwise(%x: tensor<1x8x9x9xf32>, %w: tensor<16x8x1x1xf32>, %v: tensor<4x8x1x1xf32>) -> (tensor<1x16x4x4xf32>, tensor<1x4x4x4xf32>) {
  %0 = hl.relu %x : tensor<1x8x9x9xf32>
  %1 = hl.max_pool2d %0 kernel [3, 3] strides [2, 2] : tensor<1x8x9x9xf32> -> tensor<1x8x4x4xf32>
  %2 = hl.conv2d %1, %w : tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32> -> tensor<1x16x4x4xf32>
  %3 = hl.conv2d %1, %v : tensor<1x8x4x4xf32>, tensor<4x8x1x1xf32> -> tensor<1x4x4x4xf32>
  func.return %2, %3 : tensor<1x16x4x4xf32>, tensor<1x4x4x4xf32>
}
