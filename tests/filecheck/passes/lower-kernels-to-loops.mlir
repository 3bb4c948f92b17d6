// lower-kernels-to-loops: every kernel becomes a func.func @<name>_<k> on memrefs
// (inputs, output, then the index range %start, %stop of its outermost loop),
// marked irtensor.kernel, whose body is an scf.for nest in the schedule's order;
// the function that held the kernel allocates the output and calls it over the
// full range. Kernels are written by hand here, with their schedules.
// RUN: irtensor-opt %s -p lower-kernels-to-loops | filecheck %s
// RUN: irtensor-opt %s -p 'lower-kernels-to-loops{fast-reductions=false}' | filecheck %s --check-prefix=GEN

// An elementwise kernel without a schedule: loops d0, d1 in order, d0 over [start, stop).
// CHECK-LABEL: func.func @E_4_8_0(%in0: memref<4x8xf32>, %in1: memref<8xf32>, %out: memref<4x8xf32>, %start: index, %stop: index) attributes {irtensor.kernel, irtensor.small} {
// CHECK:         scf.for %i0 = %start to %stop step %c1 {
// CHECK-NEXT:      scf.for %i1 = %c0 to %c8 step %c1 {
// CHECK-NEXT:        %[[X:.*]] = memref.load %in0[%i0, %i1] : memref<4x8xf32>
// CHECK-NEXT:        %[[B:.*]] = memref.load %in1[%i1] : memref<8xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[X]], %[[B]] : f32
// CHECK-NEXT:        memref.store %[[S]], %out[%i0, %i1] : memref<4x8xf32>
// CHECK:         func.return
// CHECK-LABEL: func.func @add_bias(%x: memref<4x8xf32>, %b: memref<8xf32>) -> memref<4x8xf32> {
// CHECK-NEXT:    %buf = memref.alloc() : memref<4x8xf32>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c4 = arith.constant 4 : index
// CHECK-NEXT:    func.call @E_4_8_0(%x, %b, %buf, %c0, %c4) : (memref<4x8xf32>, memref<8xf32>, memref<4x8xf32>, index, index) -> ()
// CHECK-NEXT:    func.return %buf : memref<4x8xf32>
func.func @add_bias(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = kernel.kernel @E_4_8(%x, %b) space [4, 8] reads [#kernel.access<(d0, d1) -> (d0, d1)>, #kernel.access<(d0, d1) -> (d1)>] writes affine_map<(d0, d1) -> (d0, d1)> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.addf %1, %2 : f32
    kernel.yield %3 : f32
  }
  func.return %0 : tensor<4x8xf32>
}

// relu(a @ w + b): a sum with an epilogue. The reduction loop d1 is innermost, so
// the accumulator is an iter_arg and the epilogue runs right after the loop.
// With fast-reductions=false (GEN), the accumulator is a buffer over the parallel
// dims inside the first reduction loop (here none: rank 0).
// CHECK-LABEL: func.func @r_2_5_3_1(
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.for %i0 = %start to %stop step %c1 {
// CHECK-NEXT:      scf.for %i2 = %c0 to %c3 step %c1 {
// CHECK-NEXT:        %[[SUM:.*]] = scf.for %i1 = %c0 to %c5 step %c1 iter_args(%acc = %[[ZERO]]) -> (f32) {
// CHECK-NEXT:          %[[A:.*]] = memref.load %in0[%i0, %i1] : memref<2x5xf32>
// CHECK-NEXT:          %[[W:.*]] = memref.load %in1[%i1, %i2] : memref<5x3xf32>
// CHECK-NEXT:          %[[P:.*]] = arith.mulf %[[A]], %[[W]] fastmath<contract> : f32
// CHECK-NEXT:          %[[NEXT:.*]] = arith.addf %acc, %[[P]] fastmath<contract> : f32
// CHECK-NEXT:          scf.yield %[[NEXT]] : f32
// CHECK-NEXT:        }
// CHECK-NEXT:        %[[BIAS:.*]] = memref.load %in2[%i2] : memref<3xf32>
// CHECK-NEXT:        %[[Y:.*]] = arith.addf %[[SUM]], %[[BIAS]] : f32
// CHECK-NEXT:        %[[R:.*]] = arith.maximumf %[[Y]], %[[ZERO]] : f32
// CHECK-NEXT:        memref.store %[[R]], %out[%i0, %i2] : memref<2x3xf32>
// CHECK-LABEL: func.func @linear_relu(
// CHECK:         func.call @r_2_5_3_1(%a, %w, %b, %buf, %c0, %c2)

// GEN-LABEL: func.func @r_2_5_3_1(
// GEN:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// GEN:         %accumulator = memref.alloc() : memref<f32>
// GEN-NEXT:    scf.for %i0 = %start to %stop step %c1 {
// GEN-NEXT:      scf.for %i2 = %c0 to %c3 step %c1 {
// GEN-NEXT:        memref.store %[[ZERO]], %accumulator[] : memref<f32>
// GEN-NEXT:        scf.for %i1 = %c0 to %c5 step %c1 {
// GEN:               %[[OLD:.*]] = memref.load %accumulator[] : memref<f32>
// GEN-NEXT:          %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} fastmath<contract> : f32
// GEN-NEXT:          memref.store %[[NEW]], %accumulator[] : memref<f32>
// GEN-NEXT:        }
// GEN-NEXT:        %[[SUM:.*]] = memref.load %accumulator[] : memref<f32>
// GEN-NEXT:        %[[BIAS:.*]] = memref.load %in2[%i2] : memref<3xf32>
// GEN-NEXT:        %[[Y:.*]] = arith.addf %[[SUM]], %[[BIAS]] : f32
// GEN:             memref.store %{{.*}}, %out[%i0, %i2] : memref<2x3xf32>
// GEN:         memref.dealloc %accumulator : memref<f32>
// GEN-NEXT:    func.return
func.func @linear_relu(%a: tensor<2x5xf32>, %w: tensor<5x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kernel.kernel @r_2_5_3(%a, %w, %b) space [2, 5, 3] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>, #kernel.access<(d0, d1, d2) -> (d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> epilogue_inputs 1 schedule <order [0, 2, 1], tiles [0, 0, 0], vector 1, unroll 1, parallel [0]> : (tensor<2x5xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%4: f32, %5: f32):
    %6 = arith.addf %4, %5 : f32
    %7 = arith.constant 0.000000e+00 : f32
    %8 = arith.maximumf %6, %7 : f32
    kernel.yield %8 : f32
  }
  func.return %0 : tensor<2x3xf32>
}

// The same kernel in i-k-j order: the reduction loop d1 sits between d0 and d2, so
// a row accumulator over d2 is initialised, summed into, and put through the
// epilogue for each d0.
// CHECK-LABEL: func.func @r_2_5_3_2(
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %accumulator = memref.alloc() : memref<3xf32>
// CHECK-NEXT:    scf.for %i0 = %start to %stop step %c1 {
// CHECK-NEXT:      scf.for %i2 = %c0 to %c3 step %c1 {
// CHECK-NEXT:        memref.store %[[ZERO]], %accumulator[%i2] : memref<3xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.for %i1 = %c0 to %c5 step %c1 {
// CHECK-NEXT:        scf.for %[[J:.*]] = %c0 to %c3 step %c1 {
// CHECK:               %[[OLD:.*]] = memref.load %accumulator[%[[J]]] : memref<3xf32>
// CHECK-NEXT:          %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} fastmath<contract> : f32
// CHECK-NEXT:          memref.store %[[NEW]], %accumulator[%[[J]]] : memref<3xf32>
// CHECK:           scf.for %[[K:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:        %[[SUM:.*]] = memref.load %accumulator[%[[K]]] : memref<3xf32>
// CHECK-NEXT:        %[[BIAS:.*]] = memref.load %in2[%[[K]]] : memref<3xf32>
// CHECK-NEXT:        %[[Y:.*]] = arith.addf %[[SUM]], %[[BIAS]] : f32
// CHECK-NEXT:        %[[R:.*]] = arith.maximumf %[[Y]], %[[ZERO]] : f32
// CHECK-NEXT:        memref.store %[[R]], %out[%i0, %[[K]]] : memref<2x3xf32>
// CHECK:         memref.dealloc %accumulator : memref<3xf32>
// CHECK-NEXT:    func.return
func.func @linear_relu_ikj(%a: tensor<2x5xf32>, %w: tensor<5x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kernel.kernel @r_2_5_3(%a, %w, %b) space [2, 5, 3] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>, #kernel.access<(d0, d1, d2) -> (d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> epilogue_inputs 1 schedule <order [0, 1, 2], tiles [0, 0, 0], vector 1, unroll 1, parallel [0]> : (tensor<2x5xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%4: f32, %5: f32):
    %6 = arith.addf %4, %5 : f32
    %7 = arith.constant 0.000000e+00 : f32
    %8 = arith.maximumf %6, %7 : f32
    kernel.yield %8 : f32
  }
  func.return %0 : tensor<2x3xf32>
}

// A masked read (a pad by one column on each side, value -1.5): validity from
// the mask, the index clamped into the input, the pad selected where invalid.
// CHECK-LABEL: func.func @E_3_6_3(
// CHECK:         %[[PAD:.*]] = arith.constant -1.500000e+00 : f32
// CHECK:         scf.for %i0 = %start to %stop step %c1 {
// CHECK-NEXT:      scf.for %i1 = %c0 to %c6 step %c1 {
// CHECK-NEXT:        %[[COL:.*]] = arith.subi %i1, %c1 : index
// CHECK-NEXT:        %[[LOW:.*]] = arith.cmpi sge, %i1, %c1 : index
// CHECK-NEXT:        %[[HIGH:.*]] = arith.cmpi sle, %i1, %c4 : index
// CHECK-NEXT:        %[[VALID:.*]] = arith.andi %[[LOW]], %[[HIGH]] : i1
// CHECK-NEXT:        %[[NEG:.*]] = arith.cmpi slt, %[[COL]], %c0 : index
// CHECK-NEXT:        %[[C1:.*]] = arith.select %[[NEG]], %c0, %[[COL]] : index
// CHECK-NEXT:        %[[BIG:.*]] = arith.cmpi sgt, %[[C1]], %c3 : index
// CHECK-NEXT:        %[[C2:.*]] = arith.select %[[BIG]], %c3, %[[C1]] : index
// CHECK-NEXT:        %[[X:.*]] = memref.load %in0[%i0, %[[C2]]] : memref<3x4xf32>
// CHECK-NEXT:        %[[V:.*]] = arith.select %[[VALID]], %[[X]], %[[PAD]] : f32
// CHECK-NEXT:        memref.store %[[V]], %out[%i0, %i1] : memref<3x6xf32>
func.func @pad(%x: tensor<3x4xf32>) -> tensor<3x6xf32> {
  %0 = kernel.kernel @E_3_6(%x) space [3, 6] reads [#kernel.access<(d0, d1) -> (d0, (d1 + -1)), valid (d0, d1) : ((d1 + -1) >= 0, ((d1 * -1) + 4) >= 0), pad -1.5>] writes affine_map<(d0, d1) -> (d0, d1)> : (tensor<3x4xf32>) -> tensor<3x6xf32> {
  ^bb0(%1: f32):
    kernel.yield %1 : f32
  }
  func.return %0 : tensor<3x6xf32>
}

// A column sum with the reduction loop d0 outermost: the output is zeroed over d1
// first, then every point adds into it; d0 (a reduction) runs over [start, stop).
// CHECK-LABEL: func.func @r_8_4_4(
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:         scf.for %i1 = %c0 to %c4 step %c1 {
// CHECK-NEXT:      memref.store %[[ZERO]], %out[%i1] : memref<4xi32>
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %i0 = %start to %stop step %c1 {
// CHECK-NEXT:      scf.for %[[J:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:        %[[X:.*]] = memref.load %in0[%i0, %[[J]]] : memref<8x4xi32>
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %out[%[[J]]] : memref<4xi32>
// CHECK-NEXT:        %[[NEW:.*]] = arith.addi %[[OLD]], %[[X]] : i32
// CHECK-NEXT:        memref.store %[[NEW]], %out[%[[J]]] : memref<4xi32>
// CHECK-LABEL: func.func @col_sum(
// CHECK:         func.call @r_8_4_4(%x, %buf, %c0, %c8)
func.func @col_sum(%x: tensor<8x4xi32>) -> tensor<4xi32> {
  %0 = kernel.kernel @r_8_4(%x) space [8, 4] reduce [0] sum reads [#kernel.access<(d0, d1) -> (d0, d1)>] writes affine_map<(d0, d1) -> (d1)> schedule <order [0, 1], tiles [0, 0], vector 1, unroll 1, parallel []> : (tensor<8x4xi32>) -> tensor<4xi32> {
  ^bb0(%1: i32):
    kernel.yield %1 : i32
  }
  func.return %0 : tensor<4xi32>
}
