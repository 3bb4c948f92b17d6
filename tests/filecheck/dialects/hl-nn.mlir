// Round trip of the hl linear-algebra and neural-network ops; conv2d's and the
// pools' optional strides/padding/dilations/groups and the norms' eps are
// printed only when they differ from the default.
// RUN: irtensor-opt %s | filecheck %s
// RUN: irtensor-opt %s | irtensor-opt | filecheck %s
// RUN: irtensor-opt %s --generic | irtensor-opt | filecheck %s
// RUN: irtensor-opt %s --generic | filecheck %s --check-prefix=GENERIC

func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %v: tensor<3xf32>,
                  %ba: tensor<5x2x3xi32>, %bb: tensor<3x4xi32>) {
  %mm = hl.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  %mv = hl.matmul %a, %v : tensor<2x3xf32>, tensor<3xf32> -> tensor<2xf32>
  %dot = hl.matmul %v, %v : tensor<3xf32>, tensor<3xf32> -> tensor<f32>
  %bmm = hl.matmul %ba, %bb : tensor<5x2x3xi32>, tensor<3x4xi32> -> tensor<5x2x4xi32>
  func.return
}

// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    %mm = hl.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %mv = hl.matmul %a, %v : tensor<2x3xf32>, tensor<3xf32> -> tensor<2xf32>
// CHECK-NEXT:    %dot = hl.matmul %v, %v : tensor<3xf32>, tensor<3xf32> -> tensor<f32>
// CHECK-NEXT:    %bmm = hl.matmul %ba, %bb : tensor<5x2x3xi32>, tensor<3x4xi32> -> tensor<5x2x4xi32>
// CHECK-NEXT:    func.return

func.func @conv(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %wg: tensor<6x2x3x3xf32>) {
  %plain = hl.conv2d %x, %w : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x6x6xf32>
  %s = hl.conv2d %x, %w strides [2, 2] : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x3x3xf32>
  %p = hl.conv2d %x, %w padding [1, 1, 1, 1] : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x8x8xf32>
  %d = hl.conv2d %x, %w dilations [2, 2] : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x4x4xf32>
  %g = hl.conv2d %x, %wg groups 2 : tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x6x6xf32>
  %all = hl.conv2d %x, %wg strides [2, 1] padding [1, 0, 2, 0] dilations [1, 2] groups 2 : tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x5x4xf32>
  %defaults = hl.conv2d %x, %w strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] groups 1 : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x6x6xf32>
  func.return
}

// CHECK-LABEL: func.func @conv(
// CHECK-NEXT:    %plain = hl.conv2d %x, %w : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x6x6xf32>
// CHECK-NEXT:    %s = hl.conv2d %x, %w strides [2, 2] : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x3x3xf32>
// CHECK-NEXT:    %p = hl.conv2d %x, %w padding [1, 1, 1, 1] : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x8x8xf32>
// CHECK-NEXT:    %d = hl.conv2d %x, %w dilations [2, 2] : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x4x4xf32>
// CHECK-NEXT:    %g = hl.conv2d %x, %wg groups 2 : tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x6x6xf32>
// CHECK-NEXT:    %all = hl.conv2d %x, %wg strides [2, 1] padding [1, 0, 2, 0] dilations [1, 2] groups 2 : tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x5x4xf32>
// CHECK-NEXT:    %defaults = hl.conv2d %x, %w : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x6x6xf32>
// CHECK-NEXT:    func.return

// GENERIC:      "hl.conv2d"(%x, %w) <{strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64}> : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>

func.func @pool(%x: tensor<1x2x6x6xf32>, %y: tensor<5x5xf16>) {
  %max = hl.max_pool2d %x kernel [2, 2] strides [1, 1] : tensor<1x2x6x6xf32> -> tensor<1x2x5x5xf32>
  %maxs = hl.max_pool2d %x kernel [2, 2] strides [2, 2] : tensor<1x2x6x6xf32> -> tensor<1x2x3x3xf32>
  %avg = hl.avg_pool2d %y kernel [3, 3] strides [2, 2] padding [1, 1, 1, 1] : tensor<5x5xf16> -> tensor<3x3xf16>
  %avgp = hl.avg_pool2d %y kernel [2, 3] strides [1, 1] padding [0, 1, 0, 0] : tensor<5x5xf16> -> tensor<4x4xf16>
  func.return
}

// CHECK-LABEL: func.func @pool(
// CHECK-NEXT:    %max = hl.max_pool2d %x kernel [2, 2] strides [1, 1] : tensor<1x2x6x6xf32> -> tensor<1x2x5x5xf32>
// CHECK-NEXT:    %maxs = hl.max_pool2d %x kernel [2, 2] strides [2, 2] : tensor<1x2x6x6xf32> -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %avg = hl.avg_pool2d %y kernel [3, 3] strides [2, 2] padding [1, 1, 1, 1] : tensor<5x5xf16> -> tensor<3x3xf16>
// CHECK-NEXT:    %avgp = hl.avg_pool2d %y kernel [2, 3] strides [1, 1] padding [0, 1, 0, 0] : tensor<5x5xf16> -> tensor<4x4xf16>
// CHECK-NEXT:    func.return

func.func @norms(%x: tensor<2x8x4x4xf32>, %h: tensor<2x3xbf16>) {
  %softmax = hl.softmax %h axis 1 : tensor<2x3xbf16>
  %logsoftmax = hl.log_softmax %x axis 0 : tensor<2x8x4x4xf32>
  %ln = hl.layer_norm %x axes [2, 3] : tensor<2x8x4x4xf32>
  %lne = hl.layer_norm %h axes [1] eps 1.0e-06 : tensor<2x3xbf16>
  %bn = hl.batch_norm %x : tensor<2x8x4x4xf32>
  %bne = hl.batch_norm %x eps 0.001 : tensor<2x8x4x4xf32>
  %gn = hl.group_norm %x groups 4 : tensor<2x8x4x4xf32>
  %gne = hl.group_norm %x groups 2 eps 0.1 : tensor<2x8x4x4xf32>
  %bnd = hl.batch_norm %x eps 1.0e-05 : tensor<2x8x4x4xf32>
  func.return
}

// CHECK-LABEL: func.func @norms(
// CHECK-NEXT:    %softmax = hl.softmax %h axis 1 : tensor<2x3xbf16>
// CHECK-NEXT:    %logsoftmax = hl.log_softmax %x axis 0 : tensor<2x8x4x4xf32>
// CHECK-NEXT:    %ln = hl.layer_norm %x axes [2, 3] : tensor<2x8x4x4xf32>
// CHECK-NEXT:    %lne = hl.layer_norm %h axes [1] eps 1.000000e-06 : tensor<2x3xbf16>
// CHECK-NEXT:    %bn = hl.batch_norm %x : tensor<2x8x4x4xf32>
// CHECK-NEXT:    %bne = hl.batch_norm %x eps 1.000000e-03 : tensor<2x8x4x4xf32>
// CHECK-NEXT:    %gn = hl.group_norm %x groups 4 : tensor<2x8x4x4xf32>
// CHECK-NEXT:    %gne = hl.group_norm %x groups 2 eps 1.000000e-01 : tensor<2x8x4x4xf32>
// CHECK-NEXT:    %bnd = hl.batch_norm %x : tensor<2x8x4x4xf32>
// CHECK-NEXT:    func.return

// GENERIC:      "hl.layer_norm"(%x) <{axes = array<i64: 2, 3>, eps = 1.000000e-05 : f64}> : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
