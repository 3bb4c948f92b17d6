// Round trip of every op of the ll dialect, in its custom syntax.
// RUN: irtensor-opt %s | filecheck %s
// RUN: irtensor-opt %s | irtensor-opt | filecheck %s
// RUN: irtensor-opt %s --generic | irtensor-opt | filecheck %s
// RUN: irtensor-opt %s --generic | filecheck %s --check-prefix=GENERIC

func.func @const() {
  %f = ll.const 2.5 : tensor<4x4xf32>
  %one = ll.const 1.0 : tensor<f32>
  %small = ll.const 1.25e-3 : tensor<2xf64>
  %ninf = ll.const -inf : tensor<3xf32>
  %pinf = ll.const inf : tensor<f16>
  %nan = ll.const nan : tensor<2xbf16>
  %nzero = ll.const -0.0 : tensor<f64>
  %t = ll.const true : tensor<2x2xi1>
  %fl = ll.const false : tensor<i1>
  %i = ll.const -7 : tensor<3xi32>
  %l = ll.const 9000000000 : tensor<i64>
  %z = ll.const 0 : tensor<0x3xi64>
  %fi = ll.const 3 : tensor<f32>
  func.return
}

// An integer literal for a float type prints as a float.
// CHECK-LABEL: func.func @const() {
// CHECK-NEXT:    %f = ll.const 2.5 : tensor<4x4xf32>
// CHECK-NEXT:    %one = ll.const 1.0 : tensor<f32>
// CHECK-NEXT:    %small = ll.const 0.00125 : tensor<2xf64>
// CHECK-NEXT:    %ninf = ll.const -inf : tensor<3xf32>
// CHECK-NEXT:    %pinf = ll.const inf : tensor<f16>
// CHECK-NEXT:    %nan = ll.const nan : tensor<2xbf16>
// CHECK-NEXT:    %nzero = ll.const -0.0 : tensor<f64>
// CHECK-NEXT:    %t = ll.const true : tensor<2x2xi1>
// CHECK-NEXT:    %fl = ll.const false : tensor<i1>
// CHECK-NEXT:    %i = ll.const -7 : tensor<3xi32>
// CHECK-NEXT:    %l = ll.const 9000000000 : tensor<i64>
// CHECK-NEXT:    %z = ll.const 0 : tensor<0x3xi64>
// CHECK-NEXT:    %fi = ll.const 3.0 : tensor<f32>
// CHECK-NEXT:    func.return

// GENERIC:      %f = "ll.const"() <{value = 2.500000e+00 : f32}> : () -> tensor<4x4xf32>
// GENERIC:      %ninf = "ll.const"() <{value = 0xff800000 : f32}> : () -> tensor<3xf32>
// GENERIC:      %t = "ll.const"() <{value = true}> : () -> tensor<2x2xi1>
// GENERIC:      %i = "ll.const"() <{value = -7 : i32}> : () -> tensor<3xi32>

func.func @unary(%x: tensor<2x3xf32>, %i: tensor<4xi32>, %b: tensor<4xi1>) {
  %neg = ll.neg %x : tensor<2x3xf32>
  %ineg = ll.neg %i : tensor<4xi32>
  %exp2 = ll.exp2 %x : tensor<2x3xf32>
  %log2 = ll.log2 %x : tensor<2x3xf32>
  %sqrt = ll.sqrt %x : tensor<2x3xf32>
  %rcp = ll.reciprocal %x : tensor<2x3xf32>
  %sin = ll.sin %x : tensor<2x3xf32>
  %cast = ll.cast %x : tensor<2x3xf32> -> tensor<2x3xi64>
  %castb = ll.cast %b : tensor<4xi1> -> tensor<4xf16>
  func.return
}

// CHECK-LABEL: func.func @unary(
// CHECK-NEXT:    %neg = ll.neg %x : tensor<2x3xf32>
// CHECK-NEXT:    %ineg = ll.neg %i : tensor<4xi32>
// CHECK-NEXT:    %exp2 = ll.exp2 %x : tensor<2x3xf32>
// CHECK-NEXT:    %log2 = ll.log2 %x : tensor<2x3xf32>
// CHECK-NEXT:    %sqrt = ll.sqrt %x : tensor<2x3xf32>
// CHECK-NEXT:    %rcp = ll.reciprocal %x : tensor<2x3xf32>
// CHECK-NEXT:    %sin = ll.sin %x : tensor<2x3xf32>
// CHECK-NEXT:    %cast = ll.cast %x : tensor<2x3xf32> -> tensor<2x3xi64>
// CHECK-NEXT:    %castb = ll.cast %b : tensor<4xi1> -> tensor<4xf16>
// CHECK-NEXT:    func.return

func.func @binary(%x: tensor<2x3xf32>, %i: tensor<4xi32>, %b: tensor<4xi1>, %s: tensor<f64>) {
  %add = ll.add %x, %x : tensor<2x3xf32>
  %mul = ll.mul %i, %i : tensor<4xi32>
  %max = ll.max %b, %b : tensor<4xi1>
  %maxs = ll.max %s, %s : tensor<f64>
  %div = ll.div %x, %x : tensor<2x3xf32>
  %idiv = ll.idiv %i, %i : tensor<4xi32>
  %mod = ll.mod %i, %i : tensor<4xi32>
  %lt = ll.cmplt %x, %x : tensor<2x3xf32> -> tensor<2x3xi1>
  %eq = ll.cmpeq %i, %i : tensor<4xi32> -> tensor<4xi1>
  %where = ll.where %b, %i, %i : tensor<4xi1>, tensor<4xi32>
  func.return
}

// CHECK-LABEL: func.func @binary(
// CHECK-NEXT:    %add = ll.add %x, %x : tensor<2x3xf32>
// CHECK-NEXT:    %mul = ll.mul %i, %i : tensor<4xi32>
// CHECK-NEXT:    %max = ll.max %b, %b : tensor<4xi1>
// CHECK-NEXT:    %maxs = ll.max %s, %s : tensor<f64>
// CHECK-NEXT:    %div = ll.div %x, %x : tensor<2x3xf32>
// CHECK-NEXT:    %idiv = ll.idiv %i, %i : tensor<4xi32>
// CHECK-NEXT:    %mod = ll.mod %i, %i : tensor<4xi32>
// CHECK-NEXT:    %lt = ll.cmplt %x, %x : tensor<2x3xf32> -> tensor<2x3xi1>
// CHECK-NEXT:    %eq = ll.cmpeq %i, %i : tensor<4xi32> -> tensor<4xi1>
// CHECK-NEXT:    %where = ll.where %b, %i, %i : tensor<4xi1>, tensor<4xi32>
// CHECK-NEXT:    func.return

// GENERIC:      %add = "ll.add"(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// GENERIC:      %where = "ll.where"(%b, %i, %i) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>

func.func @reduce(%x: tensor<4x5xf32>, %b: tensor<3xi1>, %e: tensor<0x3xf32>) {
  %sum = ll.reduce sum %x axes [1] : tensor<4x5xf32> -> tensor<4x1xf32>
  %max = ll.reduce max %x axes [0, 1] : tensor<4x5xf32> -> tensor<1x1xf32>
  %any = ll.reduce max %b axes [0] : tensor<3xi1> -> tensor<1xi1>
  %empty = ll.reduce sum %e axes [0] : tensor<0x3xf32> -> tensor<1x3xf32>
  func.return
}

// CHECK-LABEL: func.func @reduce(
// CHECK-NEXT:    %sum = ll.reduce sum %x axes [1] : tensor<4x5xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %max = ll.reduce max %x axes [0, 1] : tensor<4x5xf32> -> tensor<1x1xf32>
// CHECK-NEXT:    %any = ll.reduce max %b axes [0] : tensor<3xi1> -> tensor<1xi1>
// CHECK-NEXT:    %empty = ll.reduce sum %e axes [0] : tensor<0x3xf32> -> tensor<1x3xf32>
// CHECK-NEXT:    func.return

// GENERIC:      %sum = "ll.reduce"(%x) <{kind = #ll<reduce_kind sum>, axes = array<i64: 1>}> : (tensor<4x5xf32>) -> tensor<4x1xf32>

func.func @movement(%x: tensor<2x6xf32>, %r: tensor<1x4xf32>, %s: tensor<f32>, %e: tensor<0x3xi32>) {
  %reshape = ll.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
  %scalar = ll.reshape %s : tensor<f32> -> tensor<1xf32>
  %permute = ll.permute %x [1, 0] : tensor<2x6xf32> -> tensor<6x2xf32>
  %expand = ll.expand %r : tensor<1x4xf32> -> tensor<3x4xf32>
  %pad = ll.pad %x low [1, 0] high [0, 2] : tensor<2x6xf32> -> tensor<3x8xf32>
  %padinf = ll.pad %x low [0, 1] high [0, 1] value -inf : tensor<2x6xf32> -> tensor<2x8xf32>
  %padnz = ll.pad %x low [0, 0] high [0, 0] value -0.0 : tensor<2x6xf32> -> tensor<2x6xf32>
  %pade = ll.pad %e low [1, 0] high [1, 0] value 3.0 : tensor<0x3xi32> -> tensor<2x3xi32>
  %shrink = ll.shrink %x starts [0, 1] limits [2, 3] : tensor<2x6xf32> -> tensor<2x2xf32>
  %shrink0 = ll.shrink %x starts [1, 2] limits [1, 2] : tensor<2x6xf32> -> tensor<0x0xf32>
  %flip = ll.flip %x axes [1] : tensor<2x6xf32>
  %stride = ll.stride %x [2, 4] : tensor<2x6xf32> -> tensor<1x2xf32>
  func.return
}

// CHECK-LABEL: func.func @movement(
// CHECK-NEXT:    %reshape = ll.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %scalar = ll.reshape %s : tensor<f32> -> tensor<1xf32>
// CHECK-NEXT:    %permute = ll.permute %x [1, 0] : tensor<2x6xf32> -> tensor<6x2xf32>
// CHECK-NEXT:    %expand = ll.expand %r : tensor<1x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %pad = ll.pad %x low [1, 0] high [0, 2] : tensor<2x6xf32> -> tensor<3x8xf32>
// CHECK-NEXT:    %padinf = ll.pad %x low [0, 1] high [0, 1] value -inf : tensor<2x6xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %padnz = ll.pad %x low [0, 0] high [0, 0] value -0.0 : tensor<2x6xf32> -> tensor<2x6xf32>
// CHECK-NEXT:    %pade = ll.pad %e low [1, 0] high [1, 0] value 3.0 : tensor<0x3xi32> -> tensor<2x3xi32>
// CHECK-NEXT:    %shrink = ll.shrink %x starts [0, 1] limits [2, 3] : tensor<2x6xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    %shrink0 = ll.shrink %x starts [1, 2] limits [1, 2] : tensor<2x6xf32> -> tensor<0x0xf32>
// CHECK-NEXT:    %flip = ll.flip %x axes [1] : tensor<2x6xf32>
// CHECK-NEXT:    %stride = ll.stride %x [2, 4] : tensor<2x6xf32> -> tensor<1x2xf32>
// CHECK-NEXT:    func.return

// GENERIC:      %padinf = "ll.pad"(%x) <{low = array<i64: 0, 1>, high = array<i64: 0, 1>, value = 0xfff0000000000000 : f64}> : (tensor<2x6xf32>) -> tensor<2x8xf32>
