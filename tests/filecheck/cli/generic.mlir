// --generic prints MLIR's generic syntax; irtensor-opt reads it back.
// RUN: irtensor-opt %s --generic | filecheck %s
// RUN: irtensor-opt %s --generic | irtensor-opt --generic | filecheck %s
// RUN: irtensor-opt %s --generic | irtensor-opt | filecheck %s --check-prefix=CUSTOM
// RUN: irtensor-opt %s -p cse --generic | filecheck %s --check-prefix=CSE

func.func @main(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %e = hl.exp %x : tensor<2x3xf32>
  %r = hl.sum %e axes [1] keepdim : tensor<2x3xf32> -> tensor<2x1xf32>
  %c = ll.const -inf : tensor<2x1xf32>
  %m = ll.max %r, %c : tensor<2x1xf32>
  %o = ll.reshape %m : tensor<2x1xf32> -> tensor<2xf32>
  func.return %o : tensor<2xf32>
}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "func.func"() <{sym_name = "main", function_type = (tensor<2x3xf32>) -> tensor<2xf32>}> ({
// CHECK-NEXT:   ^bb0(%x: tensor<2x3xf32>):
// CHECK-NEXT:     %e = "hl.exp"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:     %r = "hl.sum"(%e) <{axes = array<i64: 1>, keepdim}> : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK-NEXT:     %c = "ll.const"() <{value = 0xff800000 : f32}> : () -> tensor<2x1xf32>
// CHECK-NEXT:     %m = "ll.max"(%r, %c) : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
// CHECK-NEXT:     %o = "ll.reshape"(%m) : (tensor<2x1xf32>) -> tensor<2xf32>
// CHECK-NEXT:     "func.return"(%o) : (tensor<2xf32>) -> ()
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT: }) : () -> ()

// CUSTOM:      %r = hl.sum %e axes [1] keepdim : tensor<2x3xf32> -> tensor<2x1xf32>
// CUSTOM-NEXT: %c = ll.const -inf : tensor<2x1xf32>

// CSE:         "hl.exp"
