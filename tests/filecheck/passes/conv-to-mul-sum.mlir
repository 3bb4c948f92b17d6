// conv-to-mul-sum: conv2d and the pools become ll.pad + sliding windows built
// from movement ops only (views: no im2col copy) + ll.mul + ll.reduce.
// A pool of at most 9 taps is by default an elementwise max (sum) of one strided view
// per tap (TAPS); `pool-views=false` keeps the reduction over its windows, as the
// CHECK lines show for every pool here.
// RUN: irtensor-opt %s --split-input-file -p 'conv-to-mul-sum{pool-views=false}' | filecheck %s
// RUN: irtensor-opt %s --split-input-file -p 'conv-to-mul-sum{pool-views=false}' | filecheck %s --check-prefix=VIEWS
// RUN: irtensor-opt %s --split-input-file -p 'conv-to-mul-sum{pool-views=false}' \
// RUN:   | irtensor-opt --split-input-file | filecheck %s
// RUN: irtensor-opt %s --split-input-file -p conv-to-mul-sum | filecheck %s --check-prefix=TAPS

// Before the last chunk: nothing but views, the product, the reduction and a constant.
// VIEWS-NOT: hl.
// VIEWS-NOT: ll.{{(add|neg|exp2|log2|sqrt|reciprocal|sin|cast|max |cmplt|cmpeq|where|flip)}}
// VIEWS:     // -----

// Strides [2, 2], padding [top 1, left 0, bottom 1, right 0], dilations [1, 2] and
// 2 groups. The windows (overlapping: kernel 3 > stride 2) repeat each padded
// axis as a view (reshape + expand + reshape), read it as (kernel, size +
// dilation) rows so that row k starts k * dilation later, keep each row's span
// and every stride-th element, and move (OH, OW) before (KH, KW).
func.func @conv(%x: tensor<1x4x9x9xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x5x3xf32> {
  %c = hl.conv2d %x, %w strides [2, 2] padding [1, 0, 1, 0] dilations [1, 2] groups 2 : tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x5x3xf32>
  func.return %c : tensor<1x6x5x3xf32>
}
// CHECK-LABEL: func.func @conv(
// CHECK-NOT:     hl.conv2d
// CHECK-NEXT:    %[[P:.*]] = ll.pad %x low [0, 0, 1, 0] high [0, 0, 1, 0] : tensor<1x4x9x9xf32> -> tensor<1x4x11x9xf32>
// CHECK-NEXT:    %[[R1:.*]] = ll.reshape %[[P]] : tensor<1x4x11x9xf32> -> tensor<1x4x1x11x1x9xf32>
// CHECK-NEXT:    %[[REP:.*]] = ll.expand %[[R1]] : tensor<1x4x1x11x1x9xf32> -> tensor<1x4x4x11x4x9xf32>
// CHECK-NEXT:    %[[FLAT:.*]] = ll.reshape %[[REP]] : tensor<1x4x4x11x4x9xf32> -> tensor<1x4x44x36xf32>
// CHECK-NEXT:    %[[CUT:.*]] = ll.shrink %[[FLAT]] starts [0, 0, 0, 0] limits [1, 4, 36, 33] : tensor<1x4x44x36xf32> -> tensor<1x4x36x33xf32>
// CHECK-NEXT:    %[[ROWS:.*]] = ll.reshape %[[CUT]] : tensor<1x4x36x33xf32> -> tensor<1x4x3x12x3x11xf32>
// CHECK-NEXT:    %[[SPAN:.*]] = ll.shrink %[[ROWS]] starts [0, 0, 0, 0, 0, 0] limits [1, 4, 3, 9, 3, 5] : tensor<1x4x3x12x3x11xf32> -> tensor<1x4x3x9x3x5xf32>
// CHECK-NEXT:    %[[STEP:.*]] = ll.stride %[[SPAN]] [1, 1, 1, 2, 1, 2] : tensor<1x4x3x9x3x5xf32> -> tensor<1x4x3x5x3x3xf32>
// CHECK-NEXT:    %[[WIN:.*]] = ll.permute %[[STEP]] [0, 1, 3, 5, 2, 4] : tensor<1x4x3x5x3x3xf32> -> tensor<1x4x5x3x3x3xf32>
// The windows as (N, G, 1, C/G, OH, OW, KH, KW), the weight as (1, G, O/G, C/G, 1, 1, KH, KW):
// CHECK-NEXT:    %[[XG:.*]] = ll.reshape %[[WIN]] : tensor<1x4x5x3x3x3xf32> -> tensor<1x2x1x2x5x3x3x3xf32>
// CHECK-NEXT:    %[[XE:.*]] = ll.expand %[[XG]] : tensor<1x2x1x2x5x3x3x3xf32> -> tensor<1x2x3x2x5x3x3x3xf32>
// CHECK-NEXT:    %[[WG:.*]] = ll.reshape %w : tensor<6x2x3x3xf32> -> tensor<1x2x3x2x1x1x3x3xf32>
// CHECK-NEXT:    %[[WE:.*]] = ll.expand %[[WG]] : tensor<1x2x3x2x1x1x3x3xf32> -> tensor<1x2x3x2x5x3x3x3xf32>
// CHECK-NEXT:    %[[PROD:.*]] = ll.mul %[[XE]], %[[WE]] : tensor<1x2x3x2x5x3x3x3xf32>
// CHECK-NEXT:    %[[SUM:.*]] = ll.reduce sum %[[PROD]] axes [3, 6, 7] : tensor<1x2x3x2x5x3x3x3xf32> -> tensor<1x2x3x1x5x3x1x1xf32>
// CHECK-NEXT:    %[[R:.*]] = ll.reshape %[[SUM]] : tensor<1x2x3x1x5x3x1x1xf32> -> tensor<1x6x5x3xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<1x6x5x3xf32>

// Max pooling pads with -inf (padding never wins). Windows that do not overlap
// (kernel <= stride) need no repeat: rows of `stride`, the first `kernel` kept.
func.func @max_pool(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
  %p = hl.max_pool2d %x kernel [2, 2] strides [2, 2] padding [1, 1, 0, 0] : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  func.return %p : tensor<2x3x4x4xf32>
}
// CHECK-LABEL: func.func @max_pool(
// CHECK-NEXT:    %[[P:.*]] = ll.pad %x low [0, 0, 1, 1] high [0, 0, 0, 0] value -inf : tensor<2x3x8x8xf32> -> tensor<2x3x9x9xf32>
// CHECK-NEXT:    %[[CUT:.*]] = ll.shrink %[[P]] starts [0, 0, 0, 0] limits [2, 3, 8, 8] : tensor<2x3x9x9xf32> -> tensor<2x3x8x8xf32>
// CHECK-NEXT:    %[[ROWS:.*]] = ll.reshape %[[CUT]] : tensor<2x3x8x8xf32> -> tensor<2x3x4x2x4x2xf32>
// CHECK-NEXT:    %[[WIN:.*]] = ll.permute %[[ROWS]] [0, 1, 2, 4, 3, 5] : tensor<2x3x4x2x4x2xf32> -> tensor<2x3x4x4x2x2xf32>
// CHECK-NEXT:    %[[M:.*]] = ll.reduce max %[[WIN]] axes [4, 5] : tensor<2x3x4x4x2x2xf32> -> tensor<2x3x4x4x1x1xf32>
// CHECK-NEXT:    %[[R:.*]] = ll.reshape %[[M]] : tensor<2x3x4x4x1x1xf32> -> tensor<2x3x4x4xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<2x3x4x4xf32>
// Tap (ky, kx) of every window is the view pad(x)[.., ky::2, kx::2]; the four are maxed.
// TAPS-LABEL: func.func @max_pool(
// TAPS-NEXT:    %[[P:.*]] = ll.pad %x low [0, 0, 1, 1] high [0, 0, 0, 0] value -inf
// TAPS-NEXT:    %[[S0:.*]] = ll.shrink %[[P]] starts [0, 0, 0, 0] limits [2, 3, 7, 7]
// TAPS-NEXT:    %[[T0:.*]] = ll.stride %[[S0]] [1, 1, 2, 2] : tensor<2x3x7x7xf32> -> tensor<2x3x4x4xf32>
// TAPS-NEXT:    %[[S1:.*]] = ll.shrink %[[P]] starts [0, 0, 0, 1] limits [2, 3, 7, 8]
// TAPS-NEXT:    %[[T1:.*]] = ll.stride %[[S1]] [1, 1, 2, 2]
// TAPS-NEXT:    %[[S2:.*]] = ll.shrink %[[P]] starts [0, 0, 1, 0] limits [2, 3, 8, 7]
// TAPS-NEXT:    %[[T2:.*]] = ll.stride %[[S2]] [1, 1, 2, 2]
// TAPS-NEXT:    %[[S3:.*]] = ll.shrink %[[P]] starts [0, 0, 1, 1] limits [2, 3, 8, 8]
// TAPS-NEXT:    %[[T3:.*]] = ll.stride %[[S3]] [1, 1, 2, 2]
// TAPS-NEXT:    %[[M0:.*]] = ll.max %[[T0]], %[[T1]] : tensor<2x3x4x4xf32>
// TAPS-NEXT:    %[[M1:.*]] = ll.max %[[M0]], %[[T2]] : tensor<2x3x4x4xf32>
// TAPS-NEXT:    %[[M2:.*]] = ll.max %[[M1]], %[[T3]] : tensor<2x3x4x4xf32>
// TAPS-NEXT:    func.return %[[M2]] : tensor<2x3x4x4xf32>

// Average pooling: a windowed sum over KH * KW (padding counted), divided as numpy.
func.func @avg_pool(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x6x6xf32> {
  %p = hl.avg_pool2d %x kernel [3, 3] strides [1, 1] : tensor<2x3x8x8xf32> -> tensor<2x3x6x6xf32>
  func.return %p : tensor<2x3x6x6xf32>
}
// CHECK-LABEL: func.func @avg_pool(
// CHECK-NOT:     ll.pad
// CHECK:         %[[WIN:.*]] = ll.permute %{{.*}} [0, 1, 3, 5, 2, 4] : tensor<2x3x3x6x3x6xf32> -> tensor<2x3x6x6x3x3xf32>
// CHECK-NEXT:    %[[S:.*]] = ll.reduce sum %[[WIN]] axes [4, 5] : tensor<2x3x6x6x3x3xf32> -> tensor<2x3x6x6x1x1xf32>
// CHECK-NEXT:    %[[SD:.*]] = ll.reshape %[[S]] : tensor<2x3x6x6x1x1xf32> -> tensor<2x3x6x6xf32>
// CHECK-NEXT:    %[[K:.*]] = ll.const 9.0 : tensor<2x3x6x6xf32>
// CHECK-NEXT:    %[[R:.*]] = ll.div %[[SD]], %[[K]] : tensor<2x3x6x6xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<2x3x6x6xf32>
// Stride 1: the taps are shifted views (no ll.stride), added in tap order.
// TAPS-LABEL: func.func @avg_pool(
// TAPS-NOT:     ll.stride
// TAPS:         ll.shrink %x starts [0, 0, 2, 2] limits [2, 3, 8, 8]
// TAPS-COUNT-8: ll.add
// TAPS-NEXT:    %[[K:.*]] = ll.const 9.0 : tensor<2x3x6x6xf32>
// TAPS-NEXT:    %[[R:.*]] = ll.div %{{.*}}, %[[K]] : tensor<2x3x6x6xf32>
// TAPS-NEXT:    func.return %[[R]] : tensor<2x3x6x6xf32>

// -----

// A 1x1 conv is a matmul over the output's points: its (OH, OW) = (3, 3) windows (here
// every other row and column) become one axis of 9, summed over C only, and the sum
// is reshaped back. A register block then runs along all 9 points, not along rows of 3.
func.func @pointwise(%x: tensor<2x8x6x5xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<2x16x3x3xf32> {
  %0 = hl.conv2d %x, %w strides [2, 2] : tensor<2x8x6x5xf32>, tensor<16x8x1x1xf32> -> tensor<2x16x3x3xf32>
  func.return %0 : tensor<2x16x3x3xf32>
}
// CHECK-LABEL: func.func @pointwise(
// CHECK:         %[[WIN:.*]] = ll.permute {{.*}} -> tensor<2x8x3x3x1x1xf32>
// CHECK-NEXT:    %[[X:.*]] = ll.reshape %[[WIN]] : tensor<2x8x3x3x1x1xf32> -> tensor<2x1x1x8x9xf32>
// CHECK-NEXT:    %[[XE:.*]] = ll.expand %[[X]] : tensor<2x1x1x8x9xf32> -> tensor<2x1x16x8x9xf32>
// CHECK-NEXT:    %[[W:.*]] = ll.reshape %w : tensor<16x8x1x1xf32> -> tensor<1x1x16x8x1xf32>
// CHECK-NEXT:    %[[WE:.*]] = ll.expand %[[W]] : tensor<1x1x16x8x1xf32> -> tensor<2x1x16x8x9xf32>
// CHECK-NEXT:    %[[P:.*]] = ll.mul %[[XE]], %[[WE]] : tensor<2x1x16x8x9xf32>
// CHECK-NEXT:    %[[S:.*]] = ll.reduce sum %[[P]] axes [3] : tensor<2x1x16x8x9xf32> -> tensor<2x1x16x1x9xf32>
// CHECK-NEXT:    %[[R:.*]] = ll.reshape %[[S]] : tensor<2x1x16x1x9xf32> -> tensor<2x16x3x3xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<2x16x3x3xf32>
// -----

// Other ops are decompose-hlops's: conv-to-mul-sum leaves them.
func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = hl.exp %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @other(
// CHECK-NEXT:    hl.exp %x
