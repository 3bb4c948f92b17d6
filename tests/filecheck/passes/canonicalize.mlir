// The ll ops expose their exact identities through xDSL's canonicalization
// hooks (get_canonicalization_patterns), so `canonicalize` applies them too.
// Constant arithmetic is left to fold-constants: canonicalize moves constants
// (a splat stays a splat) but does not evaluate ops on them.
// RUN: irtensor-opt %s -p canonicalize | filecheck %s

func.func @unary(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %n1 = ll.neg %x : tensor<4xf32>
  %n2 = ll.neg %n1 : tensor<4xf32>
  %c = ll.cast %x : tensor<4xf32> -> tensor<4xf32>
  %up = ll.cast %x : tensor<4xf32> -> tensor<4xf64>
  %down = ll.cast %up : tensor<4xf64> -> tensor<4xf32>
  func.return %n2, %c, %down : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @unary(%x: tensor<4xf32>)
// CHECK-NEXT:    func.return %x, %x, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>

func.func @binary(%x: tensor<4xf32>, %c: tensor<4xi1>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>) {
  %one = ll.const 1.0 : tensor<4xf32>
  %mzero = ll.const -0.0 : tensor<4xf32>
  %zero = ll.const 0.0 : tensor<4xf32>
  %a = ll.mul %x, %one : tensor<4xf32>
  %b = ll.add %mzero, %a : tensor<4xf32>
  %m = ll.max %b, %b : tensor<4xf32>
  %w = ll.where %c, %m, %m : tensor<4xi1>, tensor<4xf32>
  %plus0 = ll.add %x, %zero : tensor<4xf32>
  %ione = ll.const 1 : tensor<4xi32>
  %d = ll.idiv %i, %ione : tensor<4xi32>
  %lt = ll.cmplt %x, %x : tensor<4xf32> -> tensor<4xi1>
  func.return %w, %plus0, %a, %d, %lt : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>
}
// x + 0.0 is not canonicalized away: it turns -0.0 into 0.0.
// CHECK-LABEL: func.func @binary(
// CHECK-NEXT:    %zero = ll.const 0.0 : tensor<4xf32>
// CHECK-NEXT:    %plus0 = ll.add %x, %zero : tensor<4xf32>
// CHECK-NEXT:    %lt = ll.const false : tensor<4xi1>
// CHECK-NEXT:    func.return %x, %plus0, %x, %i, %lt :

// x / 1 is x; x / 3 stays a division (x * (1/3) is up to an ulp from it).
func.func @divide(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %one = ll.const 1.0 : tensor<4xf32>
  %three = ll.const 3.0 : tensor<4xf32>
  %a = ll.div %x, %one : tensor<4xf32>
  %b = ll.div %x, %three : tensor<4xf32>
  func.return %a, %b : tensor<4xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @divide(
// CHECK-NEXT:    %three = ll.const 3.0 : tensor<4xf32>
// CHECK-NEXT:    %b = ll.div %x, %three : tensor<4xf32>
// CHECK-NEXT:    func.return %x, %b : tensor<4xf32>, tensor<4xf32>

func.func @movement(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<3x2xf32>) {
  %r1 = ll.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %r2 = ll.reshape %r1 : tensor<6xf32> -> tensor<2x3xf32>
  %p1 = ll.permute %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %p2 = ll.permute %p1 [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  %pad = ll.pad %x low [0, 0] high [0, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  %sh = ll.shrink %pad starts [0, 0] limits [2, 3] : tensor<2x3xf32> -> tensor<2x3xf32>
  %f = ll.flip %sh axes [] : tensor<2x3xf32>
  %s = ll.stride %f [1, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  %e = ll.expand %s : tensor<2x3xf32> -> tensor<2x3xf32>
  %c = ll.const 5.0 : tensor<6xf32>
  %cr = ll.reshape %c : tensor<6xf32> -> tensor<3x2xf32>
  func.return %r2, %p1, %e, %cr : tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<3x2xf32>
}
// CHECK-LABEL: func.func @movement(
// CHECK-NEXT:    %p1 = ll.permute %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    %cr = ll.const 5.0 : tensor<3x2xf32>
// CHECK-NEXT:    func.return %x, %p1, %x, %cr :

func.func @reduce(%x: tensor<4x1xf32>, %y: tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>) {
  %m = ll.reduce max %x axes [1] : tensor<4x1xf32> -> tensor<4x1xf32>
  %s = ll.reduce sum %y axes [1] : tensor<4x1xf32> -> tensor<4x1xf32>
  func.return %m, %s : tensor<4x1xf32>, tensor<4x1xf32>
}
// A max over one element is the element; a float sum over one element is not
// (numpy's sum turns -0.0 into 0.0), so it stays.
// CHECK-LABEL: func.func @reduce(
// CHECK-NEXT:    %s = ll.reduce sum %y axes [1] : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    func.return %x, %s :

func.func @constants_are_not_evaluated() -> tensor<2xf32> {
  %a = ll.const 1.5 : tensor<2xf32>
  %b = ll.const 2.0 : tensor<2xf32>
  %s = ll.add %a, %b : tensor<2xf32>
  func.return %s : tensor<2xf32>
}
// CHECK-LABEL: func.func @constants_are_not_evaluated(
// CHECK:         %s = ll.add %a, %b : tensor<2xf32>
