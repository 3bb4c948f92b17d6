// decompose-hlops writes each hl op as its definition in ll ops; operands of
// broadcasting ops become ll.reshape + ll.expand views first. No hl op is left.
// RUN: irtensor-opt %s --split-input-file -p decompose-hlops | filecheck %s
// RUN: irtensor-opt %s --split-input-file -p decompose-hlops | filecheck %s --check-prefix=NOHL
// The result is valid ll: it parses back and prints the same.
// RUN: irtensor-opt %s --split-input-file -p decompose-hlops \
// RUN:   | irtensor-opt --split-input-file | filecheck %s
// RUN: irtensor-opt %s --split-input-file -p decompose-hlops,cse | filecheck %s --check-prefix=CSE
// RUN: irtensor-opt %s --split-input-file -p 'decompose-hlops{one-pass-moments=false}' \
// RUN:   | filecheck %s --check-prefix=TWO

// Only the last chunk's pool is left in hl:
// NOHL-NOT:    hl.
// NOHL:        // -----
// NOHL:        hl.max_pool2d
// NOHL-NOT:    hl.

// sub = add(a, neg b)
func.func @sub(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = hl.sub %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @sub(
// CHECK-NEXT:    %[[NEG:.*]] = ll.neg %b : tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = ll.add %a, %[[NEG]] : tensor<4xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<4xf32>

// div = ll.div, numpy's correctly rounded quotient (not a * (1 / b), up to an ulp off);
// f16 and bf16 compute it in f32 and round once.
func.func @div(%a: tensor<4xf32>, %b: tensor<4xf32>, %h: tensor<4xf16>, %k: tensor<4xf16>)
    -> (tensor<4xf32>, tensor<4xf16>) {
  %r = hl.div %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %q = hl.div %h, %k : tensor<4xf16>, tensor<4xf16> -> tensor<4xf16>
  func.return %r, %q : tensor<4xf32>, tensor<4xf16>
}
// CHECK-LABEL: func.func @div(
// CHECK-NEXT:    %[[R:.*]] = ll.div %a, %b : tensor<4xf32>
// CHECK-NEXT:    %[[H:.*]] = ll.cast %h : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT:    %[[K:.*]] = ll.cast %k : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT:    %[[Q32:.*]] = ll.div %[[H]], %[[K]] : tensor<4xf32>
// CHECK-NEXT:    %[[Q:.*]] = ll.cast %[[Q32]] : tensor<4xf32> -> tensor<4xf16>
// CHECK-NEXT:    func.return %[[R]], %[[Q]] : tensor<4xf32>, tensor<4xf16>

// relu = max(x, 0)
func.func @relu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = hl.relu %x : tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
// CHECK-LABEL: func.func @relu(
// CHECK-NEXT:    %[[ZERO:.*]] = ll.const 0.0 : tensor<2x3xf32>
// CHECK-NEXT:    %[[R:.*]] = ll.max %x, %[[ZERO]] : tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<2x3xf32>

// exp(x) = exp2(x * log2 e)
func.func @exp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = hl.exp %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @exp(
// CHECK-NEXT:    %[[LOG2E:.*]] = ll.const 1.44269502{{[0-9]*}} : tensor<4xf32>
// CHECK-NEXT:    %[[Y:.*]] = ll.mul %x, %[[LOG2E]] : tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = ll.exp2 %[[Y]] : tensor<4xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<4xf32>

// minimum: floats -max(-a, -b) (NaN wins); ints a select (-INT_MIN overflows).
func.func @minimum(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi32>, %j: tensor<4xi32>)
    -> (tensor<4xf32>, tensor<4xi32>) {
  %f = hl.minimum %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %n = hl.minimum %i, %j : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  func.return %f, %n : tensor<4xf32>, tensor<4xi32>
}
// CHECK-LABEL: func.func @minimum(
// CHECK-NEXT:    %[[NA:.*]] = ll.neg %a : tensor<4xf32>
// CHECK-NEXT:    %[[NB:.*]] = ll.neg %b : tensor<4xf32>
// CHECK-NEXT:    %[[M:.*]] = ll.max %[[NA]], %[[NB]] : tensor<4xf32>
// CHECK-NEXT:    %[[F:.*]] = ll.neg %[[M]] : tensor<4xf32>
// CHECK-NEXT:    %[[LT:.*]] = ll.cmplt %j, %i : tensor<4xi32> -> tensor<4xi1>
// CHECK-NEXT:    %[[N:.*]] = ll.where %[[LT]], %j, %i : tensor<4xi1>, tensor<4xi32>
// CHECK-NEXT:    func.return %[[F]], %[[N]] : tensor<4xf32>, tensor<4xi32>

// le(a, b) = or(a < b, a == b), so that NaN <= x is false (not(b < a) would be true).
func.func @le(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %r = hl.le %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  func.return %r : tensor<4xi1>
}
// CHECK-LABEL: func.func @le(
// CHECK-NEXT:    %[[LT:.*]] = ll.cmplt %a, %b : tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    %[[EQ:.*]] = ll.cmpeq %a, %b : tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    %[[T:.*]] = ll.const true : tensor<4xi1>
// CHECK-NEXT:    %[[R:.*]] = ll.where %[[LT]], %[[T]], %[[EQ]] : tensor<4xi1>, tensor<4xi1>
// CHECK-NEXT:    func.return %[[R]] : tensor<4xi1>

// The seed's claim: min decomposes to neg / max / neg.
func.func @min(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %r = hl.min %x axes [1] : tensor<3x4xf32> -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}
// CHECK-LABEL: func.func @min(
// CHECK-NEXT:    %[[N:.*]] = ll.neg %x : tensor<3x4xf32>
// CHECK-NEXT:    %[[M:.*]] = ll.reduce max %[[N]] axes [1] : tensor<3x4xf32> -> tensor<3x1xf32>
// CHECK-NEXT:    %[[D:.*]] = ll.reshape %[[M]] : tensor<3x1xf32> -> tensor<3xf32>
// CHECK-NEXT:    %[[R:.*]] = ll.neg %[[D]] : tensor<3xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<3xf32>

// mean = sum / n, keepdim keeps ll.reduce's 1s. An f32 var takes one pass over
// x: with k = x's first element along the axes (0 if not finite) and d = x - k in f64 (exact),
// one sum of the stacked pair (d, d^2) gives sum(d) and sum(d^2); the variance is
// max(sum(d^2) - sum(d)^2 / n, 0), rounded to f32, over n - 1.
func.func @mean_var(%x: tensor<3x4xf32>) -> (tensor<3x1xf32>, tensor<4xf32>) {
  %m = hl.mean %x axes [1] keepdim : tensor<3x4xf32> -> tensor<3x1xf32>
  %v = hl.var %x axes [0] : tensor<3x4xf32> -> tensor<4xf32>
  func.return %m, %v : tensor<3x1xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @mean_var(
// CHECK-NEXT:    %[[S:.*]] = ll.reduce sum %x axes [1] : tensor<3x4xf32> -> tensor<3x1xf32>
// CHECK-NEXT:    %[[N:.*]] = ll.const 4.0 : tensor<3x1xf32>
// CHECK-NEXT:    %[[M:.*]] = ll.div %[[S]], %[[N]] : tensor<3x1xf32>
// CHECK-NEXT:    %[[K:.*]] = ll.shrink %x starts [0, 0] limits [1, 4] : tensor<3x4xf32> -> tensor<1x4xf32>
// CHECK:         %[[FINITE:.*]] = ll.cmpeq
// CHECK:         %[[SHIFT:.*]] = ll.where %[[FINITE]], %[[K]], %{{.*}} : tensor<1x4xi1>, tensor<1x4xf32>
// CHECK-NEXT:    %[[X64:.*]] = ll.cast %x : tensor<3x4xf32> -> tensor<3x4xf64>
// CHECK-NEXT:    %[[K64:.*]] = ll.cast %[[SHIFT]] : tensor<1x4xf32> -> tensor<1x4xf64>
// CHECK:         %[[D:.*]] = ll.add %[[X64]], %{{.*}} : tensor<3x4xf64>
// CHECK:         ll.pad %{{.*}} low [0, 0, 0] high [1, 0, 0] : tensor<1x3x4xf64> -> tensor<2x3x4xf64>
// CHECK-NEXT:    %[[D2:.*]] = ll.mul %[[D]], %[[D]] : tensor<3x4xf64>
// CHECK:         ll.pad %{{.*}} low [1, 0, 0] high [0, 0, 0] : tensor<1x3x4xf64> -> tensor<2x3x4xf64>
// CHECK-NEXT:    %[[PAIR:.*]] = ll.add
// CHECK-NEXT:    %[[SUMS:.*]] = ll.reduce sum %[[PAIR]] axes [1] : tensor<2x3x4xf64> -> tensor<2x1x4xf64>
// CHECK-NOT:     ll.reduce
// CHECK:         %[[SPREAD:.*]] = ll.max %{{.*}}, %{{.*}} : tensor<1x4xf64>
// CHECK-NEXT:    %[[S32:.*]] = ll.cast %[[SPREAD]] : tensor<1x4xf64> -> tensor<1x4xf32>
// CHECK-NEXT:    %[[DIV:.*]] = ll.const 2.0 : tensor<1x4xf32>
// CHECK-NEXT:    %[[V1:.*]] = ll.div %[[S32]], %[[DIV]] : tensor<1x4xf32>
// CHECK-NEXT:    %[[V:.*]] = ll.reshape %[[V1]] : tensor<1x4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[M]], %[[V]] : tensor<3x1xf32>, tensor<4xf32>

// With one-pass-moments=false (autograd's decomposition: its gradient costs half as
// much), var is the corrected two-pass formula: with d = x - mean,
// (sum(d^2) - sum(d)^2 / n) / (n - 1).
// TWO-LABEL: func.func @mean_var(
// TWO:         ll.reduce sum %x axes [1] : tensor<3x4xf32> -> tensor<3x1xf32>
// TWO:         %[[VS:.*]] = ll.reduce sum %x axes [0] : tensor<3x4xf32> -> tensor<1x4xf32>
// TWO:         %[[D:.*]] = ll.add %x, %{{.*}} : tensor<3x4xf32>
// TWO-NEXT:    %[[D2:.*]] = ll.mul %[[D]], %[[D]] : tensor<3x4xf32>
// TWO-NEXT:    ll.reduce sum %[[D2]] axes [0] : tensor<3x4xf32> -> tensor<1x4xf32>
// TWO:         ll.reduce sum %[[D]] axes [0] : tensor<3x4xf32> -> tensor<1x4xf32>
// TWO-NOT:     f64
// TWO:         func.return

// A mean beside a var of the same x and axes (a batch norm's statistics) takes the
// var's one pass too: the same sum of the stacked pair, which cse merges into one;
// mean = k + sum(d) / n in f64, rounded once.
func.func @mean_beside_var(%x: tensor<3x4xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %m = hl.mean %x axes [1] : tensor<3x4xf32> -> tensor<3xf32>
  %v = hl.var %x axes [1] : tensor<3x4xf32> -> tensor<3xf32>
  func.return %m, %v : tensor<3xf32>, tensor<3xf32>
}
// CHECK-LABEL: func.func @mean_beside_var(
// CHECK:         ll.reduce sum %{{.*}} axes [2] : tensor<2x3x4xf64> -> tensor<2x3x1xf64>
// CHECK:         %[[MEAN64:.*]] = ll.add %{{.*}}, %{{.*}} : tensor<3x1xf64>
// CHECK-NEXT:    ll.cast %[[MEAN64]] : tensor<3x1xf64> -> tensor<3x1xf32>
// CHECK:         ll.reduce sum %{{.*}} axes [2] : tensor<2x3x4xf64> -> tensor<2x3x1xf64>
// CHECK-NOT:     ll.reduce
// CHECK:         func.return
// CSE-LABEL: func.func @mean_beside_var(
// CSE-COUNT-1:   ll.reduce
// CSE-NOT:       ll.reduce
// CSE:           func.return

// A half-precision sum or mean accumulates in f32 and rounds once; max needs no widening.
func.func @half_sum_mean(%x: tensor<3x4xf16>) -> (tensor<3xf16>, tensor<4xbf16>, tensor<3xf16>) {
  %s = hl.sum %x axes [1] : tensor<3x4xf16> -> tensor<3xf16>
  %b = hl.cast %x : tensor<3x4xf16> -> tensor<3x4xbf16>
  %m = hl.mean %b axes [0] : tensor<3x4xbf16> -> tensor<4xbf16>
  %x2 = hl.max %x axes [1] : tensor<3x4xf16> -> tensor<3xf16>
  func.return %s, %m, %x2 : tensor<3xf16>, tensor<4xbf16>, tensor<3xf16>
}
// CHECK-LABEL: func.func @half_sum_mean(
// CHECK-NEXT:    %[[W:.*]] = ll.cast %x : tensor<3x4xf16> -> tensor<3x4xf32>
// CHECK-NEXT:    %[[S:.*]] = ll.reduce sum %[[W]] axes [1] : tensor<3x4xf32> -> tensor<3x1xf32>
// CHECK-NEXT:    %[[SD:.*]] = ll.reshape %[[S]] : tensor<3x1xf32> -> tensor<3xf32>
// CHECK-NEXT:    %[[SH:.*]] = ll.cast %[[SD]] : tensor<3xf32> -> tensor<3xf16>
// CHECK-NEXT:    %[[B:.*]] = ll.cast %x : tensor<3x4xf16> -> tensor<3x4xbf16>
// CHECK-NEXT:    %[[BW:.*]] = ll.cast %[[B]] : tensor<3x4xbf16> -> tensor<3x4xf32>
// CHECK-NEXT:    %[[MS:.*]] = ll.reduce sum %[[BW]] axes [0] : tensor<3x4xf32> -> tensor<1x4xf32>
// CHECK-NEXT:    %[[MSD:.*]] = ll.reshape %[[MS]] : tensor<1x4xf32> -> tensor<4xf32>
// CHECK-NEXT:    %[[MN:.*]] = ll.const 3.0 : tensor<4xf32>
// CHECK-NEXT:    %[[M:.*]] = ll.div %[[MSD]], %[[MN]] : tensor<4xf32>
// CHECK-NEXT:    %[[MH:.*]] = ll.cast %[[M]] : tensor<4xf32> -> tensor<4xbf16>
// CHECK-NEXT:    %[[X:.*]] = ll.reduce max %x axes [1] : tensor<3x4xf16> -> tensor<3x1xf16>
// CHECK-NEXT:    %[[XD:.*]] = ll.reshape %[[X]] : tensor<3x1xf16> -> tensor<3xf16>
// CHECK-NEXT:    func.return %[[SH]], %[[MH]], %[[XD]] : tensor<3xf16>, tensor<4xbf16>, tensor<3xf16>

// softmax = e / sum(e), e = exp(x - max(x)).
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %r = hl.softmax %x axis 1 : tensor<2x5xf32>
  func.return %r : tensor<2x5xf32>
}
// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT:    %[[MAX:.*]] = ll.reduce max %x axes [1] : tensor<2x5xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %[[MAXE:.*]] = ll.expand %[[MAX]] : tensor<2x1xf32> -> tensor<2x5xf32>
// CHECK-NEXT:    %[[NEG:.*]] = ll.neg %[[MAXE]] : tensor<2x5xf32>
// CHECK-NEXT:    %[[SH:.*]] = ll.add %x, %[[NEG]] : tensor<2x5xf32>
// CHECK-NEXT:    %[[LOG2E:.*]] = ll.const 1.44269502{{[0-9]*}} : tensor<2x5xf32>
// CHECK-NEXT:    %[[Y:.*]] = ll.mul %[[SH]], %[[LOG2E]] : tensor<2x5xf32>
// CHECK-NEXT:    %[[E:.*]] = ll.exp2 %[[Y]] : tensor<2x5xf32>
// CHECK-NEXT:    %[[S:.*]] = ll.reduce sum %[[E]] axes [1] : tensor<2x5xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %[[SE:.*]] = ll.expand %[[S]] : tensor<2x1xf32> -> tensor<2x5xf32>
// CHECK-NEXT:    %[[R:.*]] = ll.div %[[E]], %[[SE]] : tensor<2x5xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<2x5xf32>

// matmul: (.., n, k, 1) and (.., 1, k, m) views, multiplied and summed over k.
func.func @matmul(%a: tensor<5x2x3xf32>, %b: tensor<3x4xf32>) -> tensor<5x2x4xf32> {
  %r = hl.matmul %a, %b : tensor<5x2x3xf32>, tensor<3x4xf32> -> tensor<5x2x4xf32>
  func.return %r : tensor<5x2x4xf32>
}
// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    %[[A:.*]] = ll.reshape %a : tensor<5x2x3xf32> -> tensor<5x2x3x1xf32>
// CHECK-NEXT:    %[[AE:.*]] = ll.expand %[[A]] : tensor<5x2x3x1xf32> -> tensor<5x2x3x4xf32>
// CHECK-NEXT:    %[[B:.*]] = ll.reshape %b : tensor<3x4xf32> -> tensor<1x1x3x4xf32>
// CHECK-NEXT:    %[[BE:.*]] = ll.expand %[[B]] : tensor<1x1x3x4xf32> -> tensor<5x2x3x4xf32>
// CHECK-NEXT:    %[[P:.*]] = ll.mul %[[AE]], %[[BE]] : tensor<5x2x3x4xf32>
// CHECK-NEXT:    %[[S:.*]] = ll.reduce sum %[[P]] axes [2] : tensor<5x2x3x4xf32> -> tensor<5x2x1x4xf32>
// CHECK-NEXT:    %[[R:.*]] = ll.reshape %[[S]] : tensor<5x2x1x4xf32> -> tensor<5x2x4xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<5x2x4xf32>

// A broadcasting add: the operand becomes a reshape + expand view of the result shape.
func.func @broadcast_add(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = hl.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
// CHECK-LABEL: func.func @broadcast_add(
// CHECK-NEXT:    %[[B:.*]] = ll.reshape %b : tensor<3xf32> -> tensor<1x3xf32>
// CHECK-NEXT:    %[[BE:.*]] = ll.expand %[[B]] : tensor<1x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[R:.*]] = ll.add %a, %[[BE]] : tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<2x3xf32>

// slice = shrink, then stride when a step is not 1.
func.func @slice(%x: tensor<8x4xf32>) -> (tensor<3x4xf32>, tensor<2x2xf32>) {
  %s = hl.slice %x starts [1, 0] limits [7, 4] steps [2, 1] : tensor<8x4xf32> -> tensor<3x4xf32>
  %t = hl.slice %x starts [2, 1] limits [4, 3] steps [1, 1] : tensor<8x4xf32> -> tensor<2x2xf32>
  func.return %s, %t : tensor<3x4xf32>, tensor<2x2xf32>
}
// CHECK-LABEL: func.func @slice(
// CHECK-NEXT:    %[[S:.*]] = ll.shrink %x starts [1, 0] limits [7, 4] : tensor<8x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %[[SS:.*]] = ll.stride %[[S]] [2, 1] : tensor<6x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %[[T:.*]] = ll.shrink %x starts [2, 1] limits [4, 3] : tensor<8x4xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[SS]], %[[T]] : tensor<3x4xf32>, tensor<2x2xf32>

// concat: each input padded to the full length with -inf, then max (exact for every
// element type: -0.0 and NaN survive).
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<2x4xf32> {
  %r = hl.concat %a, %b axis 1 : tensor<2x3xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
// CHECK-LABEL: func.func @concat(
// CHECK-NEXT:    %[[A:.*]] = ll.pad %a low [0, 0] high [0, 1] value -inf : tensor<2x3xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[B:.*]] = ll.pad %b low [0, 3] high [0, 0] value -inf : tensor<2x1xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[R:.*]] = ll.max %[[A]], %[[B]] : tensor<2x4xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<2x4xf32>

// -----

// conv2d and the pools are conv-to-mul-sum's: decompose-hlops leaves them.
func.func @pool(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %p = hl.max_pool2d %x kernel [2, 2] strides [2, 2] : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  func.return %p : tensor<1x1x2x2xf32>
}
// CHECK-LABEL: func.func @pool(
// CHECK-NEXT:    hl.max_pool2d %x
