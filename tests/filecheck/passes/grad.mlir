// grad appends @f_grad to each one-result ll function: the result, then the
// vector-Jacobian product with respect to the chosen arguments, in ll ops.
// The cotangent is ones (the gradient of the result's sum) unless seed=arg.
// RUN: irtensor-opt %s -p grad | filecheck %s
// RUN: irtensor-opt %s -p 'grad{func=views wrt=0 seed=arg}' | filecheck %s --check-prefix=SEED

// mul: each operand gets the cotangent times the other; a value used twice adds up.
func.func @square_plus(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %sq = ll.mul %x, %x : tensor<3xf32>
  %r = ll.add %sq, %y : tensor<3xf32>
  func.return %r : tensor<3xf32>
}
// CHECK-LABEL: func.func @square_plus_grad(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
// CHECK:         %sq = ll.mul %x, %x : tensor<3xf32>
// CHECK-NEXT:    %r = ll.add %sq, %y : tensor<3xf32>
// CHECK-NEXT:    %dr = ll.const 1.0 : tensor<3xf32>
// CHECK-NEXT:    %dx = ll.mul %dr, %x : tensor<3xf32>
// CHECK-NEXT:    %dx_1 = ll.mul %dr, %x : tensor<3xf32>
// CHECK-NEXT:    %dx_2 = ll.add %dx, %dx_1 : tensor<3xf32>
// CHECK-NEXT:    func.return %r, %dx_2, %dr : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>

// Views: the gradient of a view is a view; of an expand, a sum over the
// expanded axes; of a sum, an expand.
func.func @views(%x: tensor<2x3xf32>) -> tensor<3x1xf32> {
  %t = ll.permute %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %p = ll.pad %t low [1, 0] high [0, 2] : tensor<3x2xf32> -> tensor<4x4xf32>
  %s = ll.shrink %p starts [1, 0] limits [4, 3] : tensor<4x4xf32> -> tensor<3x3xf32>
  %k = ll.stride %s [1, 2] : tensor<3x3xf32> -> tensor<3x2xf32>
  %r = ll.reduce sum %k axes [1] : tensor<3x2xf32> -> tensor<3x1xf32>
  func.return %r : tensor<3x1xf32>
}
// CHECK-LABEL: func.func @views_grad(%x: tensor<2x3xf32>) -> (tensor<3x1xf32>, tensor<2x3xf32>) {
// CHECK:         %dr = ll.const 1.0 : tensor<3x1xf32>
// CHECK-NEXT:    %dk = ll.expand %dr : tensor<3x1xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    %ds = ll.reshape %dk : tensor<3x2xf32> -> tensor<3x2x1xf32>
// CHECK-NEXT:    %ds_1 = ll.pad %ds low [0, 0, 0] high [0, 0, 1] : tensor<3x2x1xf32> -> tensor<3x2x2xf32>
// CHECK-NEXT:    %ds_2 = ll.reshape %ds_1 : tensor<3x2x2xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %ds_3 = ll.shrink %ds_2 starts [0, 0] limits [3, 3] : tensor<3x4xf32> -> tensor<3x3xf32>
// CHECK-NEXT:    %dp = ll.pad %ds_3 low [1, 0] high [0, 1] : tensor<3x3xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    %dt = ll.shrink %dp starts [1, 0] limits [4, 2] : tensor<4x4xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    %dx = ll.permute %dt [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %r, %dx : tensor<3x1xf32>, tensor<2x3xf32>
// SEED-LABEL: func.func @views_grad(%x: tensor<2x3xf32>, %seed: tensor<3x1xf32>) -> (tensor<3x1xf32>, tensor<2x3xf32>) {
// SEED:         %dk = ll.expand %seed : tensor<3x1xf32> -> tensor<3x2xf32>
// SEED-NOT:     func.func @square_plus_grad

// A max reduction shares the cotangent evenly among the inputs equal to the maximum.
func.func @amax(%x: tensor<4xf32>) -> tensor<1xf32> {
  %m = ll.reduce max %x axes [0] : tensor<4xf32> -> tensor<1xf32>
  func.return %m : tensor<1xf32>
}
// CHECK-LABEL: func.func @amax_grad(%x: tensor<4xf32>) -> (tensor<1xf32>, tensor<4xf32>) {
// CHECK:         %dm = ll.const 1.0 : tensor<1xf32>
// CHECK-NEXT:    %dx = ll.expand %m : tensor<1xf32> -> tensor<4xf32>
// CHECK-NEXT:    %dx_1 = ll.cmpeq %x, %dx : tensor<4xf32> -> tensor<4xi1>
// CHECK-NEXT:    %dx_2 = ll.cast %dx_1 : tensor<4xi1> -> tensor<4xf32>
// CHECK-NEXT:    %dx_3 = ll.reduce sum %dx_2 axes [0] : tensor<4xf32> -> tensor<1xf32>
// CHECK-NEXT:    %dx_4 = ll.reciprocal %dx_3 : tensor<1xf32>
// CHECK-NEXT:    %dx_5 = ll.mul %dm, %dx_4 : tensor<1xf32>
// CHECK-NEXT:    %dx_6 = ll.expand %dx_5 : tensor<1xf32> -> tensor<4xf32>
// CHECK-NEXT:    %dx_7 = ll.const 0.0 : tensor<4xf32>
// CHECK-NEXT:    %dx_8 = ll.where %dx_1, %dx_6, %dx_7 : tensor<4xi1>, tensor<4xf32>
// CHECK-NEXT:    func.return %m, %dx_8 : tensor<1xf32>, tensor<4xf32>

// where: the condition takes nothing; an argument the result does not use, zeros.
func.func @select(%c: tensor<2xi1>, %a: tensor<2xf32>, %b: tensor<2xf32>, %u: tensor<2xf32>) -> tensor<2xf32> {
  %r = ll.where %c, %a, %b : tensor<2xi1>, tensor<2xf32>
  func.return %r : tensor<2xf32>
}
// CHECK-LABEL: func.func @select_grad(%c: tensor<2xi1>, %a: tensor<2xf32>, %b: tensor<2xf32>, %u: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
// CHECK-NEXT:    %r = ll.where %c, %a, %b : tensor<2xi1>, tensor<2xf32>
// CHECK-NEXT:    %dr = ll.const 1.0 : tensor<2xf32>
// CHECK-NEXT:    %da = ll.const 0.0 : tensor<2xf32>
// CHECK-NEXT:    %da_1 = ll.where %c, %dr, %da : tensor<2xi1>, tensor<2xf32>
// CHECK-NEXT:    %da_2 = ll.where %c, %da, %dr : tensor<2xi1>, tensor<2xf32>
// CHECK-NEXT:    %du = ll.const 0.0 : tensor<2xf32>
// CHECK-NEXT:    func.return %r, %da_1, %da_2, %du : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
