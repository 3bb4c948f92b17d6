// The seven element types, rank-0 tensors and zero-size dimensions print back
// exactly, in custom and in generic syntax.
// RUN: irtensor-opt %s | filecheck %s
// RUN: irtensor-opt %s | irtensor-opt | filecheck %s
// RUN: irtensor-opt %s --generic | irtensor-opt | filecheck %s
// RUN: irtensor-opt %s --generic | filecheck %s --check-prefix=GENERIC

func.func @types(%h: tensor<2xf16>, %bh: tensor<2xbf16>, %s: tensor<2xf32>, %d: tensor<2xf64>,
                 %i: tensor<2xi32>, %l: tensor<2xi64>, %b: tensor<2xi1>) -> tensor<2xf16> {
  %0 = hl.add %h, %h : tensor<2xf16>, tensor<2xf16> -> tensor<2xf16>
  %1 = hl.add %bh, %bh : tensor<2xbf16>, tensor<2xbf16> -> tensor<2xbf16>
  %2 = hl.add %s, %s : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %3 = hl.add %d, %d : tensor<2xf64>, tensor<2xf64> -> tensor<2xf64>
  %4 = hl.add %i, %i : tensor<2xi32>, tensor<2xi32> -> tensor<2xi32>
  %5 = hl.add %l, %l : tensor<2xi64>, tensor<2xi64> -> tensor<2xi64>
  %6 = hl.maximum %b, %b : tensor<2xi1>, tensor<2xi1> -> tensor<2xi1>
  %7 = ll.const 0.5 : tensor<2xf16>
  %8 = ll.const -0.5 : tensor<2xbf16>
  %9 = ll.const 2.5 : tensor<2xf32>
  %10 = ll.const 0.25 : tensor<2xf64>
  %11 = ll.const -7 : tensor<2xi32>
  %12 = ll.const 7 : tensor<2xi64>
  %13 = ll.const false : tensor<2xi1>
  func.return %0 : tensor<2xf16>
}

// CHECK-LABEL: func.func @types(%h: tensor<2xf16>, %bh: tensor<2xbf16>, %s: tensor<2xf32>, %d: tensor<2xf64>, %i: tensor<2xi32>, %l: tensor<2xi64>, %b: tensor<2xi1>) -> tensor<2xf16> {
// CHECK-NEXT:    %0 = hl.add %h, %h : tensor<2xf16>, tensor<2xf16> -> tensor<2xf16>
// CHECK-NEXT:    %1 = hl.add %bh, %bh : tensor<2xbf16>, tensor<2xbf16> -> tensor<2xbf16>
// CHECK-NEXT:    %2 = hl.add %s, %s : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
// CHECK-NEXT:    %3 = hl.add %d, %d : tensor<2xf64>, tensor<2xf64> -> tensor<2xf64>
// CHECK-NEXT:    %4 = hl.add %i, %i : tensor<2xi32>, tensor<2xi32> -> tensor<2xi32>
// CHECK-NEXT:    %5 = hl.add %l, %l : tensor<2xi64>, tensor<2xi64> -> tensor<2xi64>
// CHECK-NEXT:    %6 = hl.maximum %b, %b : tensor<2xi1>, tensor<2xi1> -> tensor<2xi1>
// CHECK-NEXT:    %7 = ll.const 0.5 : tensor<2xf16>
// CHECK-NEXT:    %8 = ll.const -0.5 : tensor<2xbf16>
// CHECK-NEXT:    %9 = ll.const 2.5 : tensor<2xf32>
// CHECK-NEXT:    %10 = ll.const 0.25 : tensor<2xf64>
// CHECK-NEXT:    %11 = ll.const -7 : tensor<2xi32>
// CHECK-NEXT:    %12 = ll.const 7 : tensor<2xi64>
// CHECK-NEXT:    %13 = ll.const false : tensor<2xi1>
// CHECK-NEXT:    func.return %0 : tensor<2xf16>

// GENERIC:      %7 = "ll.const"() <{value = 5.000000e-01 : f16}> : () -> tensor<2xf16>
// GENERIC-NEXT: %8 = "ll.const"() <{value = -5.000000e-01 : bf16}> : () -> tensor<2xbf16>
// GENERIC-NEXT: %9 = "ll.const"() <{value = 2.500000e+00 : f32}> : () -> tensor<2xf32>
// GENERIC-NEXT: %10 = "ll.const"() <{value = 2.500000e-01 : f64}> : () -> tensor<2xf64>
// GENERIC-NEXT: %11 = "ll.const"() <{value = -7 : i32}> : () -> tensor<2xi32>
// GENERIC-NEXT: %12 = "ll.const"() <{value = 7 : i64}> : () -> tensor<2xi64>
// GENERIC-NEXT: %13 = "ll.const"() <{value = false}> : () -> tensor<2xi1>

func.func @rank0(%x: tensor<f32>, %b: tensor<i1>) -> tensor<f32> {
  %c = ll.const 2.5 : tensor<f32>
  %0 = ll.add %x, %c : tensor<f32>
  %1 = hl.exp %0 : tensor<f32>
  %2 = ll.where %b, %1, %x : tensor<i1>, tensor<f32>
  %3 = hl.sum %2 axes [] : tensor<f32> -> tensor<f32>
  %4 = ll.reshape %3 : tensor<f32> -> tensor<1x1xf32>
  %5 = ll.reshape %4 : tensor<1x1xf32> -> tensor<f32>
  %6 = ll.permute %5 [] : tensor<f32> -> tensor<f32>
  func.return %6 : tensor<f32>
}

// CHECK-LABEL: func.func @rank0(%x: tensor<f32>, %b: tensor<i1>) -> tensor<f32> {
// CHECK-NEXT:    %c = ll.const 2.5 : tensor<f32>
// CHECK-NEXT:    %0 = ll.add %x, %c : tensor<f32>
// CHECK-NEXT:    %1 = hl.exp %0 : tensor<f32>
// CHECK-NEXT:    %2 = ll.where %b, %1, %x : tensor<i1>, tensor<f32>
// CHECK-NEXT:    %3 = hl.sum %2 axes [] : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    %4 = ll.reshape %3 : tensor<f32> -> tensor<1x1xf32>
// CHECK-NEXT:    %5 = ll.reshape %4 : tensor<1x1xf32> -> tensor<f32>
// CHECK-NEXT:    %6 = ll.permute %5 [] : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    func.return %6 : tensor<f32>

func.func @zero_size(%x: tensor<0x3xf32>, %y: tensor<3x0xi64>) -> tensor<3xf32> {
  %c = ll.const -inf : tensor<0x3xf32>
  %0 = ll.max %x, %c : tensor<0x3xf32>
  %1 = hl.sum %0 axes [0] : tensor<0x3xf32> -> tensor<3xf32>
  %2 = hl.cast %y : tensor<3x0xi64> -> tensor<3x0xf32>
  %3 = hl.matmul %x, %2 : tensor<0x3xf32>, tensor<3x0xf32> -> tensor<0x0xf32>
  %4 = ll.permute %x [1, 0] : tensor<0x3xf32> -> tensor<3x0xf32>
  func.return %1 : tensor<3xf32>
}

// CHECK-LABEL: func.func @zero_size(%x: tensor<0x3xf32>, %y: tensor<3x0xi64>) -> tensor<3xf32> {
// CHECK-NEXT:    %c = ll.const -inf : tensor<0x3xf32>
// CHECK-NEXT:    %0 = ll.max %x, %c : tensor<0x3xf32>
// CHECK-NEXT:    %1 = hl.sum %0 axes [0] : tensor<0x3xf32> -> tensor<3xf32>
// CHECK-NEXT:    %2 = hl.cast %y : tensor<3x0xi64> -> tensor<3x0xf32>
// CHECK-NEXT:    %3 = hl.matmul %x, %2 : tensor<0x3xf32>, tensor<3x0xf32> -> tensor<0x0xf32>
// CHECK-NEXT:    %4 = ll.permute %x [1, 0] : tensor<0x3xf32> -> tensor<3x0xf32>
// CHECK-NEXT:    func.return %1 : tensor<3xf32>

// GENERIC-LABEL: "func.func"() <{sym_name = "zero_size", function_type = (tensor<0x3xf32>, tensor<3x0xi64>) -> tensor<3xf32>}> ({
// GENERIC-NEXT:  ^bb0(%x: tensor<0x3xf32>, %y: tensor<3x0xi64>):
// GENERIC-NEXT:    %c = "ll.const"() <{value = 0xff800000 : f32}> : () -> tensor<0x3xf32>
