// Floats that Python's repr writes with an exponent (1e-07, 1e+30) print as
// MLIR float literals, with a `.` before the exponent (1.0e-07), so that
// print -> parse -> print is a fixed point (ll.const and pad's `value`).
// RUN: irtensor-opt %s | filecheck %s
// RUN: irtensor-opt %s | irtensor-opt | filecheck %s
// RUN: irtensor-opt %s --generic | irtensor-opt | irtensor-opt | filecheck %s

func.func @exponents(%x: tensor<2xf32>) {
  %tiny = ll.const 1.0e-07 : tensor<f64>
  %huge = ll.const 1.0e+30 : tensor<f64>
  %neg = ll.const -2.5e-10 : tensor<f64>
  %f32 = ll.const 1.0e+20 : tensor<f32>
  %pad = ll.pad %x low [1] high [0] value 1.0e-07 : tensor<2xf32> -> tensor<3xf32>
  %hpad = hl.pad %x low [0] high [1] value -1.0e+20 : tensor<2xf32> -> tensor<3xf32>
  func.return
}

// CHECK-LABEL: func.func @exponents(
// CHECK-NEXT:    %tiny = ll.const 1.0e-07 : tensor<f64>
// CHECK-NEXT:    %huge = ll.const 1.0e+30 : tensor<f64>
// CHECK-NEXT:    %neg = ll.const -2.5e-10 : tensor<f64>
// CHECK-NEXT:    %f32 = ll.const 1.0000000200408773e+20 : tensor<f32>
// CHECK-NEXT:    %pad = ll.pad %x low [1] high [0] value 1.0e-07 : tensor<2xf32> -> tensor<3xf32>
// CHECK-NEXT:    %hpad = hl.pad %x low [0] high [1] value -1.0e+20 : tensor<2xf32> -> tensor<3xf32>
// CHECK-NEXT:    func.return
