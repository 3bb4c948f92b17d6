// Round trip of every elementwise op of the hl dialect: unary, cast, binary,
// compare and where, in their custom syntax.
// RUN: irtensor-opt %s | filecheck %s
// RUN: irtensor-opt %s | irtensor-opt | filecheck %s
// RUN: irtensor-opt %s --generic | irtensor-opt | filecheck %s
// RUN: irtensor-opt %s --generic | filecheck %s --check-prefix=GENERIC

func.func @unary(%x: tensor<2x3xf32>, %i: tensor<4xi32>, %b: tensor<4xi1>) {
  %neg = hl.neg %x : tensor<2x3xf32>
  %ineg = hl.neg %i : tensor<4xi32>
  %abs = hl.abs %i : tensor<4xi32>
  %relu = hl.relu %x : tensor<2x3xf32>
  %exp = hl.exp %x : tensor<2x3xf32>
  %exp2 = hl.exp2 %x : tensor<2x3xf32>
  %log = hl.log %x : tensor<2x3xf32>
  %log2 = hl.log2 %x : tensor<2x3xf32>
  %sqrt = hl.sqrt %x : tensor<2x3xf32>
  %rsqrt = hl.rsqrt %x : tensor<2x3xf32>
  %rcp = hl.reciprocal %x : tensor<2x3xf32>
  %sin = hl.sin %x : tensor<2x3xf32>
  %cos = hl.cos %x : tensor<2x3xf32>
  %sig = hl.sigmoid %x : tensor<2x3xf32>
  %tanh = hl.tanh %x : tensor<2x3xf32>
  %not = hl.not %b : tensor<4xi1>
  func.return
}

// CHECK-LABEL: func.func @unary(%x: tensor<2x3xf32>, %i: tensor<4xi32>, %b: tensor<4xi1>) {
// CHECK-NEXT:    %neg = hl.neg %x : tensor<2x3xf32>
// CHECK-NEXT:    %ineg = hl.neg %i : tensor<4xi32>
// CHECK-NEXT:    %abs = hl.abs %i : tensor<4xi32>
// CHECK-NEXT:    %relu = hl.relu %x : tensor<2x3xf32>
// CHECK-NEXT:    %exp = hl.exp %x : tensor<2x3xf32>
// CHECK-NEXT:    %exp2 = hl.exp2 %x : tensor<2x3xf32>
// CHECK-NEXT:    %log = hl.log %x : tensor<2x3xf32>
// CHECK-NEXT:    %log2 = hl.log2 %x : tensor<2x3xf32>
// CHECK-NEXT:    %sqrt = hl.sqrt %x : tensor<2x3xf32>
// CHECK-NEXT:    %rsqrt = hl.rsqrt %x : tensor<2x3xf32>
// CHECK-NEXT:    %rcp = hl.reciprocal %x : tensor<2x3xf32>
// CHECK-NEXT:    %sin = hl.sin %x : tensor<2x3xf32>
// CHECK-NEXT:    %cos = hl.cos %x : tensor<2x3xf32>
// CHECK-NEXT:    %sig = hl.sigmoid %x : tensor<2x3xf32>
// CHECK-NEXT:    %tanh = hl.tanh %x : tensor<2x3xf32>
// CHECK-NEXT:    %not = hl.not %b : tensor<4xi1>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// GENERIC:      "hl.neg"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// GENERIC:      "hl.not"(%b) : (tensor<4xi1>) -> tensor<4xi1>

func.func @cast(%x: tensor<4xf32>, %i: tensor<4xi32>, %b: tensor<4xi1>) {
  %0 = hl.cast %x : tensor<4xf32> -> tensor<4xi32>
  %1 = hl.cast %i : tensor<4xi32> -> tensor<4xf16>
  %2 = hl.cast %b : tensor<4xi1> -> tensor<4xbf16>
  %3 = hl.cast %x : tensor<4xf32> -> tensor<4xi1>
  func.return
}

// CHECK-LABEL: func.func @cast(
// CHECK-NEXT:    %0 = hl.cast %x : tensor<4xf32> -> tensor<4xi32>
// CHECK-NEXT:    %1 = hl.cast %i : tensor<4xi32> -> tensor<4xf16>
// CHECK-NEXT:    %2 = hl.cast %b : tensor<4xi1> -> tensor<4xbf16>
// CHECK-NEXT:    %3 = hl.cast %x : tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    func.return

// GENERIC:      "hl.cast"(%x) : (tensor<4xf32>) -> tensor<4xi32>

func.func @binary(%a: tensor<2x3xf32>, %r: tensor<3xf32>, %s: tensor<f32>,
                  %i: tensor<4xi64>, %b: tensor<4xi1>) {
  %add = hl.add %a, %r : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %sub = hl.sub %a, %s : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %mul = hl.mul %r, %a : tensor<3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %div = hl.div %a, %a : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %pow = hl.pow %a, %s : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %max = hl.maximum %a, %r : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %min = hl.minimum %b, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %idiv = hl.idiv %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %mod = hl.mod %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %and = hl.and %b, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %or = hl.or %b, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %xor = hl.xor %b, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %sum = hl.add %s, %s : tensor<f32>, tensor<f32> -> tensor<f32>
  func.return
}

// CHECK-LABEL: func.func @binary(
// CHECK-NEXT:    %add = hl.add %a, %r : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %sub = hl.sub %a, %s : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
// CHECK-NEXT:    %mul = hl.mul %r, %a : tensor<3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %div = hl.div %a, %a : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %pow = hl.pow %a, %s : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
// CHECK-NEXT:    %max = hl.maximum %a, %r : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %min = hl.minimum %b, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
// CHECK-NEXT:    %idiv = hl.idiv %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT:    %mod = hl.mod %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT:    %and = hl.and %b, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
// CHECK-NEXT:    %or = hl.or %b, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
// CHECK-NEXT:    %xor = hl.xor %b, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
// CHECK-NEXT:    %sum = hl.add %s, %s : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:    func.return

// GENERIC:      "hl.add"(%a, %r) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>

func.func @compare(%a: tensor<2x3xf32>, %r: tensor<3xf32>, %i: tensor<4xi32>, %b: tensor<4xi1>) {
  %lt = hl.lt %a, %r : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xi1>
  %le = hl.le %i, %i : tensor<4xi32>, tensor<4xi32> -> tensor<4xi1>
  %gt = hl.gt %a, %a : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
  %ge = hl.ge %b, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %eq = hl.eq %r, %a : tensor<3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
  %ne = hl.ne %i, %i : tensor<4xi32>, tensor<4xi32> -> tensor<4xi1>
  func.return
}

// CHECK-LABEL: func.func @compare(
// CHECK-NEXT:    %lt = hl.lt %a, %r : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xi1>
// CHECK-NEXT:    %le = hl.le %i, %i : tensor<4xi32>, tensor<4xi32> -> tensor<4xi1>
// CHECK-NEXT:    %gt = hl.gt %a, %a : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
// CHECK-NEXT:    %ge = hl.ge %b, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
// CHECK-NEXT:    %eq = hl.eq %r, %a : tensor<3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
// CHECK-NEXT:    %ne = hl.ne %i, %i : tensor<4xi32>, tensor<4xi32> -> tensor<4xi1>
// CHECK-NEXT:    func.return

func.func @where(%c: tensor<4xi1>, %a: tensor<2x4xf32>, %s: tensor<f32>) {
  %0 = hl.where %c, %a, %s : tensor<4xi1>, tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
  func.return
}

// CHECK-LABEL: func.func @where(
// CHECK-NEXT:    %0 = hl.where %c, %a, %s : tensor<4xi1>, tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
// CHECK-NEXT:    func.return

// GENERIC:      "hl.where"(%c, %a, %s) : (tensor<4xi1>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
