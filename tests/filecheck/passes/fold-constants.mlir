// fold-constants evaluates ll ops on constants (computing exactly what the
// reference interpreter computes, in the element type) and applies exact
// algebraic identities; what is not exact is left alone unless fast-math.
// RUN: irtensor-opt %s -p fold-constants | filecheck %s
// RUN: irtensor-opt %s -p 'fold-constants{fast-math=true}' | filecheck %s --check-prefix=FAST

// The seed's loop `x = zeros(1); for i in range(5): x += i`: one constant.
func.func @seed_loop() -> tensor<1xf32> {
  %x = ll.const 0.0 : tensor<1xf32>
  %c0 = ll.const 0.0 : tensor<1xf32>
  %c1 = ll.const 1.0 : tensor<1xf32>
  %c2 = ll.const 2.0 : tensor<1xf32>
  %c3 = ll.const 3.0 : tensor<1xf32>
  %c4 = ll.const 4.0 : tensor<1xf32>
  %x0 = ll.add %x, %c0 : tensor<1xf32>
  %x1 = ll.add %x0, %c1 : tensor<1xf32>
  %x2 = ll.add %x1, %c2 : tensor<1xf32>
  %x3 = ll.add %x2, %c3 : tensor<1xf32>
  %x4 = ll.add %x3, %c4 : tensor<1xf32>
  func.return %x4 : tensor<1xf32>
}
// CHECK-LABEL: func.func @seed_loop() -> tensor<1xf32> {
// CHECK-NEXT:    %x4 = ll.const 10.0 : tensor<1xf32>
// CHECK-NEXT:    func.return %x4 : tensor<1xf32>
// CHECK-NEXT:  }

// Elementwise ops on constants, rounded as the element type rounds.
func.func @elementwise() -> (tensor<3xf16>, tensor<2xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xi1>) {
  %a = ll.const 0.1 : tensor<3xf16>
  %b = ll.const 0.2 : tensor<3xf16>
  %s = ll.add %a, %b : tensor<3xf16>
  %c = ll.const 3.0 : tensor<2xbf16>
  %r = ll.reciprocal %c : tensor<2xbf16>
  %m1 = ll.const -1.0 : tensor<4xf32>
  %nan = ll.sqrt %m1 : tensor<4xf32>
  %z = ll.const -0.0 : tensor<4xf32>
  %inf = ll.reciprocal %z : tensor<4xf32>
  %x = ll.const 2.0 : tensor<4xf32>
  %e = ll.exp2 %x : tensor<4xf32>
  %t = ll.const true : tensor<2x2xi1>
  %f = ll.const false : tensor<2x2xi1>
  %lt = ll.cmplt %f, %t : tensor<2x2xi1> -> tensor<2x2xi1>
  func.return %s, %r, %nan, %inf, %e, %lt : tensor<3xf16>, tensor<2xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xi1>
}
// CHECK-LABEL: func.func @elementwise()
// CHECK-NEXT:    %s = ll.const 0.2998046875 : tensor<3xf16>
// CHECK-NEXT:    %r = ll.const 0.333984375 : tensor<2xbf16>
// CHECK-NEXT:    %nan = ll.const nan : tensor<4xf32>
// CHECK-NEXT:    %inf = ll.const -inf : tensor<4xf32>
// CHECK-NEXT:    %e = ll.const 4.0 : tensor<4xf32>
// CHECK-NEXT:    %lt = ll.const true : tensor<2x2xi1>
// CHECK-NEXT:    func.return

// Integers wrap, and x idiv 0 = x mod 0 = 0, as numpy computes them.
func.func @integers() -> (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) {
  %max = ll.const 2147483647 : tensor<2xi32>
  %one = ll.const 1 : tensor<2xi32>
  %zero = ll.const 0 : tensor<2xi32>
  %m7 = ll.const -7 : tensor<2xi32>
  %two = ll.const 2 : tensor<2xi32>
  %w = ll.add %max, %one : tensor<2xi32>
  %d = ll.idiv %m7, %zero : tensor<2xi32>
  %q = ll.idiv %m7, %two : tensor<2xi32>
  %r = ll.mod %m7, %two : tensor<2xi32>
  func.return %w, %d, %q, %r : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>
}
// CHECK-LABEL: func.func @integers()
// CHECK-NEXT:    %w = ll.const -2147483648 : tensor<2xi32>
// CHECK-NEXT:    %d = ll.const 0 : tensor<2xi32>
// CHECK-NEXT:    %q = ll.const -4 : tensor<2xi32>
// CHECK-NEXT:    %r = ll.const 1 : tensor<2xi32>
// CHECK-NEXT:    func.return

// Casts on constants fold, except where numpy's result is undefined (NaN to int).
func.func @casts() -> (tensor<2xi32>, tensor<2xi32>, tensor<2xf16>) {
  %a = ll.const 3.75 : tensor<2xf32>
  %i = ll.cast %a : tensor<2xf32> -> tensor<2xi32>
  %n = ll.const nan : tensor<2xf32>
  %j = ll.cast %n : tensor<2xf32> -> tensor<2xi32>
  %big = ll.const 1.0e+30 : tensor<2xf32>
  %h = ll.cast %big : tensor<2xf32> -> tensor<2xf16>
  func.return %i, %j, %h : tensor<2xi32>, tensor<2xi32>, tensor<2xf16>
}
// CHECK-LABEL: func.func @casts()
// CHECK-NEXT:    %i = ll.const 3 : tensor<2xi32>
// CHECK-NEXT:    %n = ll.const nan : tensor<2xf32>
// CHECK-NEXT:    %j = ll.cast %n : tensor<2xf32> -> tensor<2xi32>
// CHECK-NEXT:    %h = ll.const inf : tensor<2xf16>
// CHECK-NEXT:    func.return

// Reductions of a constant: max is the constant; a float sum is n*c rounded once
// (as the interpreter sums equal values: exact, however long; 2**40 ones are
// 2**40, where adding one by one in f32 stops at 2**24). Integer sums wrap.
// Over no elements the result is the identity, whatever the input.
func.func @reduce(%x: tensor<3x0xf32>) -> (tensor<1x1xf32>, tensor<1xf32>, tensor<1xi32>, tensor<3x1xf32>, tensor<3x1xf32>, tensor<1x1xf32>, tensor<f32>) {
  %h = ll.const 0.5 : tensor<3x4xf32>
  %s = ll.reduce sum %h axes [0, 1] : tensor<3x4xf32> -> tensor<1x1xf32>
  %t = ll.const 0.1 : tensor<3xf32>
  %u = ll.reduce sum %t axes [0] : tensor<3xf32> -> tensor<1xf32>
  %big = ll.const 1073741824 : tensor<4xi32>
  %w = ll.reduce sum %big axes [0] : tensor<4xi32> -> tensor<1xi32>
  %e = ll.reduce sum %x axes [1] : tensor<3x0xf32> -> tensor<3x1xf32>
  %m = ll.reduce max %x axes [1] : tensor<3x0xf32> -> tensor<3x1xf32>
  %n = ll.const nan : tensor<5x5xf32>
  %mn = ll.reduce max %n axes [0, 1] : tensor<5x5xf32> -> tensor<1x1xf32>
  %one = ll.const 1.0 : tensor<1099511627776xf32>
  %huge = ll.reduce sum %one axes [0] : tensor<1099511627776xf32> -> tensor<1xf32>
  %hs = ll.reshape %huge : tensor<1xf32> -> tensor<f32>
  func.return %s, %u, %w, %e, %m, %mn, %hs : tensor<1x1xf32>, tensor<1xf32>, tensor<1xi32>, tensor<3x1xf32>, tensor<3x1xf32>, tensor<1x1xf32>, tensor<f32>
}
// CHECK-LABEL: func.func @reduce(
// CHECK-NEXT:    %s = ll.const 6.0 : tensor<1x1xf32>
// CHECK-NEXT:    %u = ll.const 0.30000001192092896 : tensor<1xf32>
// CHECK-NEXT:    %w = ll.const 0 : tensor<1xi32>
// CHECK-NEXT:    %e = ll.const 0.0 : tensor<3x1xf32>
// CHECK-NEXT:    %m = ll.const -inf : tensor<3x1xf32>
// CHECK-NEXT:    %mn = ll.const nan : tensor<1x1xf32>
// CHECK-NEXT:    %hs = ll.const 1099511627776.0 : tensor<f32>
// CHECK-NEXT:    func.return
// FAST-LABEL: func.func @reduce(
// FAST:         %u = ll.const 0.30000001192092896 : tensor<1xf32>

// Moving a constant gives a constant of the new shape; pad only when the pad
// value is the constant's own value (0.0 is not -0.0).
func.func @movement_of_constants() -> (tensor<2x3xf32>, tensor<4x3xf32>, tensor<3x2xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) {
  %c = ll.const 2.5 : tensor<6xf32>
  %r = ll.reshape %c : tensor<6xf32> -> tensor<2x3xf32>
  %one = ll.const 7.0 : tensor<1x3xf32>
  %e = ll.expand %one : tensor<1x3xf32> -> tensor<4x3xf32>
  %p = ll.permute %r [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %s = ll.const 2.0 : tensor<3xf32>
  %same = ll.pad %s low [1] high [1] value 2.0 : tensor<3xf32> -> tensor<5xf32>
  %other = ll.pad %s low [1] high [1] : tensor<3xf32> -> tensor<5xf32>
  %z = ll.const 0.0 : tensor<3xf32>
  %signed = ll.pad %z low [1] high [1] value -0.0 : tensor<3xf32> -> tensor<5xf32>
  func.return %r, %e, %p, %same, %other, %signed : tensor<2x3xf32>, tensor<4x3xf32>, tensor<3x2xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
}
// CHECK-LABEL: func.func @movement_of_constants()
// CHECK-NEXT:    %r = ll.const 2.5 : tensor<2x3xf32>
// CHECK-NEXT:    %e = ll.const 7.0 : tensor<4x3xf32>
// CHECK-NEXT:    %p = ll.const 2.5 : tensor<3x2xf32>
// CHECK-NEXT:    %s = ll.const 2.0 : tensor<3xf32>
// CHECK-NEXT:    %same = ll.const 2.0 : tensor<5xf32>
// CHECK-NEXT:    %other = ll.pad %s low [1] high [1] : tensor<3xf32> -> tensor<5xf32>
// CHECK-NEXT:    %z = ll.const 0.0 : tensor<3xf32>
// CHECK-NEXT:    %signed = ll.pad %z low [1] high [1] value -0.0 : tensor<3xf32> -> tensor<5xf32>
// CHECK-NEXT:    func.return

// Exact identities: x * 1, x + (-0.0), neg(neg x), max(x, x), max(x, -inf),
// where(c, x, x), where(true, a, b), cast to the same type, a cast round trip
// through a type that holds every value. x + 0.0 is NOT x (x = -0.0 gives 0.0)
// and reciprocal(reciprocal x) is NOT x (two roundings; 1/tiny overflows).
func.func @identities(%x: tensor<4xf32>, %y: tensor<4xf32>, %c: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %one = ll.const 1.0 : tensor<4xf32>
  %mzero = ll.const -0.0 : tensor<4xf32>
  %zero = ll.const 0.0 : tensor<4xf32>
  %ninf = ll.const -inf : tensor<4xf32>
  %true = ll.const true : tensor<4xi1>
  %a = ll.mul %one, %x : tensor<4xf32>
  %b = ll.add %a, %mzero : tensor<4xf32>
  %n1 = ll.neg %b : tensor<4xf32>
  %n2 = ll.neg %n1 : tensor<4xf32>
  %m = ll.max %n2, %n2 : tensor<4xf32>
  %m2 = ll.max %ninf, %m : tensor<4xf32>
  %w = ll.where %c, %m2, %m2 : tensor<4xi1>, tensor<4xf32>
  %w2 = ll.where %true, %w, %y : tensor<4xi1>, tensor<4xf32>
  %k = ll.cast %w2 : tensor<4xf32> -> tensor<4xf32>
  %up = ll.cast %k : tensor<4xf32> -> tensor<4xf64>
  %down = ll.cast %up : tensor<4xf64> -> tensor<4xf32>
  %plus0 = ll.add %x, %zero : tensor<4xf32>
  %r1 = ll.reciprocal %x : tensor<4xf32>
  %r2 = ll.reciprocal %r1 : tensor<4xf32>
  %lossy = ll.cast %x : tensor<4xf32> -> tensor<4xf16>
  %back = ll.cast %lossy : tensor<4xf16> -> tensor<4xf32>
  %times0 = ll.mul %x, %zero : tensor<4xf32>
  %lt = ll.cmplt %x, %x : tensor<4xf32> -> tensor<4xi1>
  %eq = ll.cmpeq %x, %x : tensor<4xf32> -> tensor<4xi1>
  %sel = ll.where %lt, %y, %x : tensor<4xi1>, tensor<4xf32>
  %sel2 = ll.where %eq, %x, %y : tensor<4xi1>, tensor<4xf32>
  func.return %down, %plus0, %r2, %back, %times0, %sel, %sel2, %y, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @identities(
// CHECK-NEXT:    %zero = ll.const 0.0 : tensor<4xf32>
// CHECK-NEXT:    %plus0 = ll.add %x, %zero : tensor<4xf32>
// CHECK-NEXT:    %r1 = ll.reciprocal %x : tensor<4xf32>
// CHECK-NEXT:    %r2 = ll.reciprocal %r1 : tensor<4xf32>
// CHECK-NEXT:    %lossy = ll.cast %x : tensor<4xf32> -> tensor<4xf16>
// CHECK-NEXT:    %back = ll.cast %lossy : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT:    %times0 = ll.mul %x, %zero : tensor<4xf32>
// CHECK-NEXT:    %eq = ll.cmpeq %x, %x : tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    %sel2 = ll.where %eq, %x, %y : tensor<4xi1>, tensor<4xf32>
// CHECK-NEXT:    func.return %x, %plus0, %r2, %back, %times0, %x, %sel2, %y, %x :
// fast-math: x + 0.0 -> x, 1/(1/x) -> x, x * 0.0 -> 0.0 (NaN, inf and the sign of zero may change).
// FAST-LABEL: func.func @identities(
// FAST-NEXT:    %lossy = ll.cast %x : tensor<4xf32> -> tensor<4xf16>
// FAST-NEXT:    %back = ll.cast %lossy : tensor<4xf16> -> tensor<4xf32>
// FAST-NEXT:    %times0 = ll.const 0.0 : tensor<4xf32>
// FAST-NEXT:    %eq = ll.cmpeq %x, %x : tensor<4xf32> -> tensor<4xi1>
// FAST-NEXT:    %sel2 = ll.where %eq, %x, %y : tensor<4xi1>, tensor<4xf32>
// FAST-NEXT:    func.return %x, %x, %x, %back, %times0, %x, %sel2, %y, %x :

// Integer identities: x * 1, x + 0, x idiv 1 are x; x * 0, x mod 1 are 0;
// cmpeq(x, x) is true (no NaN among integers).
func.func @integer_identities(%x: tensor<3xi64>) -> (tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi1>) {
  %one = ll.const 1 : tensor<3xi64>
  %zero = ll.const 0 : tensor<3xi64>
  %a = ll.mul %x, %one : tensor<3xi64>
  %b = ll.add %zero, %a : tensor<3xi64>
  %c = ll.idiv %b, %one : tensor<3xi64>
  %d = ll.mul %c, %zero : tensor<3xi64>
  %e = ll.mod %c, %one : tensor<3xi64>
  %eq = ll.cmpeq %c, %c : tensor<3xi64> -> tensor<3xi1>
  func.return %c, %d, %e, %eq : tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi1>
}
// CHECK-LABEL: func.func @integer_identities(
// CHECK-NEXT:    %d = ll.const 0 : tensor<3xi64>
// CHECK-NEXT:    %e = ll.const 0 : tensor<3xi64>
// CHECK-NEXT:    %eq = ll.const true : tensor<3xi1>
// CHECK-NEXT:    func.return %x, %d, %e, %eq :

// Movement that moves nothing is x; two movements of one kind are one.
func.func @movement(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>, %z: tensor<1x1xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>, tensor<4x3xf32>, tensor<1x2xf32>, tensor<1x3xf32>, tensor<6x9xf32>) {
  %r0 = ll.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %p0 = ll.permute %r0 [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  %e0 = ll.expand %p0 : tensor<2x3xf32> -> tensor<2x3xf32>
  %pad0 = ll.pad %e0 low [0, 0] high [0, 0] value 5.0 : tensor<2x3xf32> -> tensor<2x3xf32>
  %s0 = ll.shrink %pad0 starts [0, 0] limits [2, 3] : tensor<2x3xf32> -> tensor<2x3xf32>
  %st0 = ll.stride %s0 [1, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  %f0 = ll.flip %y axes [0] : tensor<1x3xf32>
  %r1 = ll.reshape %st0 : tensor<2x3xf32> -> tensor<6xf32>
  %r2 = ll.reshape %r1 : tensor<6xf32> -> tensor<3x2xf32>
  %e1 = ll.expand %z : tensor<1x1xf32> -> tensor<1x3xf32>
  %e2 = ll.expand %e1 : tensor<1x3xf32> -> tensor<4x3xf32>
  %sh1 = ll.shrink %x starts [1, 0] limits [2, 3] : tensor<2x3xf32> -> tensor<1x3xf32>
  %sh2 = ll.shrink %sh1 starts [0, 1] limits [1, 3] : tensor<1x3xf32> -> tensor<1x2xf32>
  %fl1 = ll.flip %f0 axes [1] : tensor<1x3xf32>
  %fl2 = ll.flip %fl1 axes [1] : tensor<1x3xf32>
  %pa1 = ll.pad %x low [1, 2] high [0, 1] value -1.0 : tensor<2x3xf32> -> tensor<3x6xf32>
  %pa2 = ll.pad %pa1 low [2, 0] high [1, 3] value -1.0 : tensor<3x6xf32> -> tensor<6x9xf32>
  func.return %st0, %r2, %e2, %sh2, %fl2, %pa2 : tensor<2x3xf32>, tensor<3x2xf32>, tensor<4x3xf32>, tensor<1x2xf32>, tensor<1x3xf32>, tensor<6x9xf32>
}
// CHECK-LABEL: func.func @movement(
// CHECK-NEXT:    %r2 = ll.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    %e2 = ll.expand %z : tensor<1x1xf32> -> tensor<4x3xf32>
// CHECK-NEXT:    %sh2 = ll.shrink %x starts [1, 1] limits [2, 3] : tensor<2x3xf32> -> tensor<1x2xf32>
// CHECK-NEXT:    %pa2 = ll.pad %x low [3, 2] high [1, 4] value -1.0 : tensor<2x3xf32> -> tensor<6x9xf32>
// CHECK-NEXT:    func.return %x, %r2, %e2, %sh2, %y, %pa2 :

// Permutes compose; strides multiply; two flips of one axis cancel.
func.func @compose(%x: tensor<2x3x4xf32>, %v: tensor<9xf32>) -> (tensor<4x2x3xf32>, tensor<2xf32>, tensor<2x3x4xf32>) {
  %p1 = ll.permute %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %p2 = ll.permute %p1 [1, 2, 0] : tensor<3x4x2xf32> -> tensor<4x2x3xf32>
  %s1 = ll.stride %v [2] : tensor<9xf32> -> tensor<5xf32>
  %s2 = ll.stride %s1 [3] : tensor<5xf32> -> tensor<2xf32>
  %p3 = ll.permute %x [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %p4 = ll.permute %p3 [1, 2, 0] : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
  func.return %p2, %s2, %p4 : tensor<4x2x3xf32>, tensor<2xf32>, tensor<2x3x4xf32>
}
// CHECK-LABEL: func.func @compose(
// CHECK-NEXT:    %p2 = ll.permute %x [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %s2 = ll.stride %v [6] : tensor<9xf32> -> tensor<2xf32>
// CHECK-NEXT:    func.return %p2, %s2, %x :

// min(min(x)) decomposes to neg, reduce max, neg, neg, reduce max, neg. The
// inner neg(neg ...) cancels, leaving neg, reduce max, reduce max, neg: a chain
// of k mins costs k reductions and 2 negs, not 2k. The two max reductions stay
// two for floats (max picks between 0.0 and -0.0 by order); for integers they
// merge into one.
func.func @min_of_min(%x: tensor<4x5xf32>) -> tensor<1x1xf32> {
  %n0 = ll.neg %x : tensor<4x5xf32>
  %m0 = ll.reduce max %n0 axes [1] : tensor<4x5xf32> -> tensor<4x1xf32>
  %n1 = ll.neg %m0 : tensor<4x1xf32>
  %n2 = ll.neg %n1 : tensor<4x1xf32>
  %m1 = ll.reduce max %n2 axes [0] : tensor<4x1xf32> -> tensor<1x1xf32>
  %n3 = ll.neg %m1 : tensor<1x1xf32>
  func.return %n3 : tensor<1x1xf32>
}
// CHECK-LABEL: func.func @min_of_min(
// CHECK-NEXT:    %n0 = ll.neg %x : tensor<4x5xf32>
// CHECK-NEXT:    %m0 = ll.reduce max %n0 axes [1] : tensor<4x5xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %m1 = ll.reduce max %m0 axes [0] : tensor<4x1xf32> -> tensor<1x1xf32>
// CHECK-NEXT:    %n3 = ll.neg %m1 : tensor<1x1xf32>
// CHECK-NEXT:    func.return %n3 : tensor<1x1xf32>

func.func @min_of_min_int(%x: tensor<4x5xi32>) -> tensor<1x1xi32> {
  %n0 = ll.neg %x : tensor<4x5xi32>
  %m0 = ll.reduce max %n0 axes [1] : tensor<4x5xi32> -> tensor<4x1xi32>
  %n1 = ll.neg %m0 : tensor<4x1xi32>
  %n2 = ll.neg %n1 : tensor<4x1xi32>
  %m1 = ll.reduce max %n2 axes [0] : tensor<4x1xi32> -> tensor<1x1xi32>
  %n3 = ll.neg %m1 : tensor<1x1xi32>
  func.return %n3 : tensor<1x1xi32>
}
// CHECK-LABEL: func.func @min_of_min_int(
// CHECK-NEXT:    %n0 = ll.neg %x : tensor<4x5xi32>
// CHECK-NEXT:    %m1 = ll.reduce max %n0 axes [0, 1] : tensor<4x5xi32> -> tensor<1x1xi32>
// CHECK-NEXT:    %n3 = ll.neg %m1 : tensor<1x1xi32>
// CHECK-NEXT:    func.return %n3 : tensor<1x1xi32>

// An op whose result has no elements is a constant: there is nothing to compute.
func.func @empty(%x: tensor<0x3xf32>) -> tensor<0x3xf32> {
  %e = ll.exp2 %x : tensor<0x3xf32>
  func.return %e : tensor<0x3xf32>
}
// CHECK-LABEL: func.func @empty(
// CHECK-NEXT:    %e = ll.const 0.0 : tensor<0x3xf32>
// CHECK-NEXT:    func.return %e : tensor<0x3xf32>
