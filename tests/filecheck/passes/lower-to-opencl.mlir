// lower-to-opencl: every kernel becomes an ocl.kernel @<name>_<k> with one work item
// per output element (the last wide parallel dim on NDRange dimension 0), reads as
// linear-index loads, a reduction as an scf.for per work item; the host launches it
// with ocl.enqueue. The OpenCL C the printer writes is tested in tests/test_opencl.py.
// RUN: irtensor-opt %s -p lower-to-opencl | filecheck %s

// CHECK-LABEL: ocl.kernel @E_4_8_0 range [8, 4] (%in0: !ocl.ptr<f32, global>, %in1: !ocl.ptr<f32, global>, %out: !ocl.ptr<f32, global>) {
// CHECK:         %i1 = ocl.global_id 0
// CHECK-NEXT:    %i0 = ocl.global_id 1
// CHECK-NEXT:    %[[ROW:.*]] = arith.muli %i0, %c8 : index
// CHECK-NEXT:    %[[AT:.*]] = arith.addi %[[ROW]], %i1 : index
// CHECK-NEXT:    %[[X:.*]] = ocl.load %in0[%[[AT]]] : !ocl.ptr<f32, global> -> f32
// CHECK-NEXT:    %[[B:.*]] = ocl.load %in1[%i1] : !ocl.ptr<f32, global> -> f32
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[X]], %[[B]] : f32
// CHECK-NEXT:    ocl.store %[[S]], %out[%[[AT]]] : f32, !ocl.ptr<f32, global>
// CHECK-NEXT:    ocl.return
// CHECK-LABEL: func.func @add_bias(
// CHECK-NEXT:    %0 = ocl.enqueue @E_4_8_0(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
func.func @add_bias(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = kernel.kernel @E_4_8(%x, %b) space [4, 8] reads [#kernel.access<(d0, d1) -> (d0, d1)>, #kernel.access<(d0, d1) -> (d1)>] writes affine_map<(d0, d1) -> (d0, d1)> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.addf %1, %2 : f32
    kernel.yield %3 : f32
  }
  func.return %0 : tensor<4x8xf32>
}

// relu(a @ w + b): the reduction loop in each work item, then the epilogue.
// CHECK-LABEL: ocl.kernel @r_2_5_3_1 range [3, 2]
// CHECK:         %i2 = ocl.global_id 0
// CHECK-NEXT:    %i0 = ocl.global_id 1
// CHECK-NEXT:    %[[SUM:.*]] = scf.for %i1 = %c0 to %c5 step %c1 iter_args(%acc = %{{.*}}) -> (f32) {
// CHECK:           %[[P:.*]] = arith.mulf
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addf %acc, %[[P]] : f32
// CHECK-NEXT:      scf.yield %[[NEXT]] : f32
// CHECK:         %[[BIAS:.*]] = ocl.load %in2[%i2]
// CHECK-NEXT:    %[[Y:.*]] = arith.addf %[[SUM]], %[[BIAS]] : f32
// CHECK-NEXT:    arith.maximumf %[[Y]]
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
func.func @row_max(%x: tensor<6x7xf32>) -> tensor<6x1xf32> {
  %0 = kernel.kernel @r_6_7(%x) space [6, 7] reduce [1] max reads [#kernel.access<(d0, d1) -> (d0, d1 - 1), valid (d0, d1) : (d1 - 1 >= 0), pad 0.0>] writes affine_map<(d0, d1) -> (d0, 0)> : (tensor<6x7xf32>) -> tensor<6x1xf32> {

// A masked max (one row per work item: a block would share no load): the index clamped,
// the pad selected, the identity -inf.
// CHECK-LABEL: ocl.kernel @r_6_7_2 range [6]
// CHECK:         %{{.*}} = arith.constant 0xff800000 : f32
// CHECK:         scf.for %i1 = %c0 to %c7
// CHECK:           %[[VALID:.*]] = arith.cmpi sge, %i1, %c1 : index
// CHECK:           %[[V:.*]] = ocl.load %in0
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[VALID]], %[[V]], %{{.*}} : f32
// CHECK-NEXT:      arith.maximumf %acc, %[[R]] : f32
  ^bb0(%1: f32):
    kernel.yield %1 : f32
  }
  func.return %0 : tensor<6x1xf32>
}

// A long reduction with few outputs: a work-group per output. The work items stride
// over the reduction, meet in a local array, and combine as a tree with barriers.
// CHECK-LABEL: ocl.kernel @r_2_4096_3 range [128, 2] local [128, 1]
// CHECK:         %lid = ocl.local_id 0
// CHECK-NEXT:    %i0 = ocl.group_id 1
// CHECK-NEXT:    %[[PART:.*]] = scf.for %i1 = %lid to %c4096 step %c128 iter_args(%acc = %{{.*}}) -> (f32) {
// CHECK:           arith.maximumf %acc
// CHECK:         %partial = ocl.local_array 128 : !ocl.ptr<f32, local>
// CHECK-NEXT:    ocl.store %[[PART]], %partial[%lid] : f32, !ocl.ptr<f32, local>
// CHECK-NEXT:    ocl.barrier local
// CHECK-NEXT:    %[[FIRST:.*]] = arith.cmpi ult, %lid, %c64 : index
// CHECK-NEXT:    scf.if %[[FIRST]] {
// CHECK:           arith.maximumf
// CHECK-COUNT-7: ocl.barrier local
// CHECK-NEXT:    %[[LEADER:.*]] = arith.cmpi eq, %lid, %c0 : index
// CHECK-NEXT:    scf.if %[[LEADER]] {
// CHECK-NEXT:      %[[TOP:.*]] = ocl.load %partial[%c0] : !ocl.ptr<f32, local> -> f32
// CHECK-NEXT:      ocl.store %[[TOP]], %out[%i0] : f32, !ocl.ptr<f32, global>
func.func @row_max_long(%x: tensor<2x4096xf32>) -> tensor<2xf32> {
  %0 = kernel.kernel @r_2_4096(%x) space [2, 4096] reduce [1] max reads [#kernel.access<(d0, d1) -> (d0, d1)>] writes affine_map<(d0, d1) -> (d0)> : (tensor<2x4096xf32>) -> tensor<2xf32> {
  ^bb0(%1: f32):
    kernel.yield %1 : f32
  }
  func.return %0 : tensor<2xf32>
}

// A work item's strided walk of more than 128 points is blocked as every reduction
// loop is: an outer level stepping 128 work-group strides, an inner one starting a
// fresh accumulator, so no accumulator adds more than 128 values (a sum's error
// grows with log(n), not n).
// CHECK-LABEL: ocl.kernel @r_1_65536_4 range [128, 1] local [128, 1]
// CHECK:         %lid = ocl.local_id 0
// CHECK-NEXT:    %[[OUTER:.*]] = scf.for %[[B:.*]] = %lid to %c65536 step %c16384 iter_args(%acc = %[[ZERO:.*]]) -> (f32) {
// CHECK-NEXT:      %[[END:.*]] = arith.addi %[[B]], %c16384 : index
// CHECK-NEXT:      %[[STOP:.*]] = arith.minsi %[[END]], %c65536 : index
// CHECK-NEXT:      %[[INNER:.*]] = scf.for %i1 = %[[B]] to %[[STOP]] step %c128 iter_args(%acc_1 = %[[ZERO]]) -> (f32) {
// CHECK-NEXT:        %[[V:.*]] = ocl.load %in0[%i1]
// CHECK-NEXT:        arith.addf %acc_1, %[[V]] : f32
// CHECK:           arith.addf %acc, %[[INNER]] : f32
// CHECK:         ocl.store %[[OUTER]], %partial[%lid]
func.func @row_sum_longer(%x: tensor<1x65536xf32>) -> tensor<1xf32> {
  %0 = kernel.kernel @r_1_65536(%x) space [1, 65536] reduce [1] sum reads [#kernel.access<(d0, d1) -> (d0, d1)>] writes affine_map<(d0, d1) -> (d0)> : (tensor<1x65536xf32>) -> tensor<1xf32> {
  ^bb0(%1: f32):
    kernel.yield %1 : f32
  }
  func.return %0 : tensor<1xf32>
}
