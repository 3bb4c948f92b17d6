// Round trip of the hl reductions and movement ops, with the optional parts of
// their syntax (`keepdim`, `correction`, pad's `value`).
// RUN: irtensor-opt %s | filecheck %s
// RUN: irtensor-opt %s | irtensor-opt | filecheck %s
// RUN: irtensor-opt %s --generic | irtensor-opt | filecheck %s
// RUN: irtensor-opt %s --generic | filecheck %s --check-prefix=GENERIC

func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<5xi32>, %b: tensor<5xi1>) {
  %sum = hl.sum %x axes [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %sumk = hl.sum %x axes [0, 2] keepdim : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  %all = hl.sum %i axes [0] : tensor<5xi32> -> tensor<i32>
  %none = hl.sum %x axes [] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %max = hl.max %b axes [0] : tensor<5xi1> -> tensor<i1>
  %min = hl.min %x axes [2] keepdim : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  %mean = hl.mean %x axes [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  %var = hl.var %x axes [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %var0 = hl.var %x axes [1] correction 0 : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %vark = hl.var %x axes [1] keepdim correction 2 : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %var1 = hl.var %x axes [1] correction 1 : tensor<2x3x4xf32> -> tensor<2x4xf32>
  func.return
}

// The default correction (1) is not printed.
// CHECK-LABEL: func.func @reductions(
// CHECK-NEXT:    %sum = hl.sum %x axes [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %sumk = hl.sum %x axes [0, 2] keepdim : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
// CHECK-NEXT:    %all = hl.sum %i axes [0] : tensor<5xi32> -> tensor<i32>
// CHECK-NEXT:    %none = hl.sum %x axes [] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    %max = hl.max %b axes [0] : tensor<5xi1> -> tensor<i1>
// CHECK-NEXT:    %min = hl.min %x axes [2] keepdim : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT:    %mean = hl.mean %x axes [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
// CHECK-NEXT:    %var = hl.var %x axes [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %var0 = hl.var %x axes [1] correction 0 : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %vark = hl.var %x axes [1] keepdim correction 2 : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// CHECK-NEXT:    %var1 = hl.var %x axes [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    func.return

// GENERIC:      "hl.sum"(%x) <{axes = array<i64: 1>}> : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// GENERIC:      "hl.sum"(%x) <{axes = array<i64: 0, 2>, keepdim}> : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
// GENERIC:      "hl.var"(%x) <{axes = array<i64: 1>, correction = 1 : i64}> : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// GENERIC-NEXT: "hl.var"(%x) <{axes = array<i64: 1>, correction = 0 : i64}> : (tensor<2x3x4xf32>) -> tensor<2x4xf32>

func.func @movement(%x: tensor<2x6xf32>, %v: tensor<4xf32>, %s: tensor<f32>, %e: tensor<0x3xf32>) {
  %reshape = hl.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
  %flat = hl.reshape %s : tensor<f32> -> tensor<1x1xf32>
  %empty = hl.reshape %e : tensor<0x3xf32> -> tensor<3x0xf32>
  %permute = hl.permute %x [1, 0] : tensor<2x6xf32> -> tensor<6x2xf32>
  %bcast = hl.broadcast_to %v : tensor<4xf32> -> tensor<3x4xf32>
  %bscalar = hl.broadcast_to %s : tensor<f32> -> tensor<2x2xf32>
  %pad = hl.pad %x low [1, 0] high [0, 2] : tensor<2x6xf32> -> tensor<3x8xf32>
  %padinf = hl.pad %x low [1, 0] high [0, 2] value -inf : tensor<2x6xf32> -> tensor<3x8xf32>
  %padone = hl.pad %x low [0, 0] high [1, 1] value 1.5 : tensor<2x6xf32> -> tensor<3x7xf32>
  %padzero = hl.pad %x low [0, 0] high [1, 1] value 0.0 : tensor<2x6xf32> -> tensor<3x7xf32>
  %slice = hl.slice %x starts [0, 1] limits [2, 6] steps [1, 2] : tensor<2x6xf32> -> tensor<2x3xf32>
  %flip = hl.flip %x axes [0, 1] : tensor<2x6xf32>
  %concat = hl.concat %x, %x axis 1 : tensor<2x6xf32>, tensor<2x6xf32> -> tensor<2x12xf32>
  %concat1 = hl.concat %v axis 0 : tensor<4xf32> -> tensor<4xf32>
  %concat3 = hl.concat %e, %e, %e axis 0 : tensor<0x3xf32>, tensor<0x3xf32>, tensor<0x3xf32> -> tensor<0x3xf32>
  func.return
}

// Pad's value 0.0 is the default and is not printed.
// CHECK-LABEL: func.func @movement(
// CHECK-NEXT:    %reshape = hl.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %flat = hl.reshape %s : tensor<f32> -> tensor<1x1xf32>
// CHECK-NEXT:    %empty = hl.reshape %e : tensor<0x3xf32> -> tensor<3x0xf32>
// CHECK-NEXT:    %permute = hl.permute %x [1, 0] : tensor<2x6xf32> -> tensor<6x2xf32>
// CHECK-NEXT:    %bcast = hl.broadcast_to %v : tensor<4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    %bscalar = hl.broadcast_to %s : tensor<f32> -> tensor<2x2xf32>
// CHECK-NEXT:    %pad = hl.pad %x low [1, 0] high [0, 2] : tensor<2x6xf32> -> tensor<3x8xf32>
// CHECK-NEXT:    %padinf = hl.pad %x low [1, 0] high [0, 2] value -inf : tensor<2x6xf32> -> tensor<3x8xf32>
// CHECK-NEXT:    %padone = hl.pad %x low [0, 0] high [1, 1] value 1.5 : tensor<2x6xf32> -> tensor<3x7xf32>
// CHECK-NEXT:    %padzero = hl.pad %x low [0, 0] high [1, 1] : tensor<2x6xf32> -> tensor<3x7xf32>
// CHECK-NEXT:    %slice = hl.slice %x starts [0, 1] limits [2, 6] steps [1, 2] : tensor<2x6xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %flip = hl.flip %x axes [0, 1] : tensor<2x6xf32>
// CHECK-NEXT:    %concat = hl.concat %x, %x axis 1 : tensor<2x6xf32>, tensor<2x6xf32> -> tensor<2x12xf32>
// CHECK-NEXT:    %concat1 = hl.concat %v axis 0 : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    %concat3 = hl.concat %e, %e, %e axis 0 : tensor<0x3xf32>, tensor<0x3xf32>, tensor<0x3xf32> -> tensor<0x3xf32>
// CHECK-NEXT:    func.return

// GENERIC:      "hl.pad"(%x) <{low = array<i64: 1, 0>, high = array<i64: 0, 2>, value = 0.000000e+00 : f64}> : (tensor<2x6xf32>) -> tensor<3x8xf32>
// GENERIC-NEXT: "hl.pad"(%x) <{low = array<i64: 1, 0>, high = array<i64: 0, 2>, value = 0xfff0000000000000 : f64}> : (tensor<2x6xf32>) -> tensor<3x8xf32>
// GENERIC:      "hl.concat"(%x, %x) <{axis = 1 : i64}> : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x12xf32>
