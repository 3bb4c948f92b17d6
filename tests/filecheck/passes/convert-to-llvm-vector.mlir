// convert-to-llvm lowers the vector ops of a register block's rows: a
// vector.load/store of a run becomes one llvm.load/store of the vector type
// through the element's GEP, aligned as one element is (a run starts anywhere
// in a row); a broadcast is LLVM's splat (insertelement into the block's one
// undef vector + a zero shufflevector);
// float arithmetic keeps its vector type; maximumf becomes llvm.maximum (a relu's
// max with +0.0 needs no more: see @ties). A memref.collapse_shape view is the
// same pointer.
// RUN: irtensor-opt %s -p convert-to-llvm | filecheck %s

func.func @row(%in0: memref<2x8xf32>, %in1: memref<2xf32>, %out: memref<2x8xf32>, %start: index, %stop: index) attributes {irtensor.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.000000e+00 : f32
  %run = vector.load %in0[%start, %c4] : memref<2x8xf32>, vector<4xf32>
  %s = memref.load %in1[%start] : memref<2xf32>
  %splat = vector.broadcast %s : f32 to vector<4xf32>
  %p = arith.mulf %run, %splat fastmath<contract> : vector<4xf32>
  %zeros = vector.broadcast %zero : f32 to vector<4xf32>
  %relu = arith.maximumf %p, %zeros : vector<4xf32>
  vector.store %relu, %out[%start, %c0] : memref<2x8xf32>, vector<4xf32>
  func.return
}
// CHECK-LABEL: llvm.func @row(
// CHECK-SAME:    irtensor.written_args = array<i64: 2>
// CHECK:         %[[EMPTY:.*]] = llvm.mlir.undef : vector<4xf32>
// CHECK:         %[[AT:.*]] = llvm.getelementptr inbounds %in0[%start, 4] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<8 x f32>
// CHECK-NEXT:    %[[LOADED:.*]] = llvm.load %[[AT]] {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK:         %[[S:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK-NEXT:    %[[LANE0:.*]] = llvm.insertelement %[[S]], %[[EMPTY]][%{{.*}} : i32] : vector<4xf32>
// CHECK-NEXT:    %[[SPLAT:.*]] = llvm.shufflevector %[[LANE0]], %[[LANE0]] [0, 0, 0, 0] : vector<4xf32>
// CHECK-NEXT:    %[[P:.*]] = llvm.fmul %[[LOADED]], %[[SPLAT]] {fastmathFlags = #llvm.fastmath<contract>} : vector<4xf32>
// CHECK:         %[[RELU:.*]] = llvm.call_intrinsic "llvm.maximum.v4f32"(%[[P]], %{{.*}}) : (vector<4xf32>, vector<4xf32>) -> vector<4xf32>
// CHECK-NOT:     llvm.bitcast
// CHECK:         %[[TO:.*]] = llvm.getelementptr inbounds %out[%start, 0] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<8 x f32>
// CHECK-NEXT:    llvm.store %[[RELU]], %[[TO]] {alignment = 4 : i64} : vector<4xf32>, !llvm.ptr

// A row stored through a view without the output's trailing size-1 dimension:
// the view is the buffer's own pointer.
func.func @row_view(%in0: memref<2x8xf32>, %out: memref<2x8x1xf32>, %start: index, %stop: index) attributes {irtensor.kernel} {
  %c0 = arith.constant 0 : index
  %view = memref.collapse_shape %out [[0], [1, 2]] : memref<2x8x1xf32> into memref<2x8xf32>
  %run = vector.load %in0[%start, %c0] : memref<2x8xf32>, vector<8xf32>
  vector.store %run, %view[%start, %c0] : memref<2x8xf32>, vector<8xf32>
  func.return
}
// CHECK-LABEL: llvm.func @row_view(
// CHECK-SAME:    irtensor.written_args = array<i64: 1>
// CHECK:         %[[ROW:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK:         %[[TO:.*]] = llvm.getelementptr inbounds %out{{.*}}[%start{{.*}}, 0] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<8 x f32>
// CHECK-NEXT:    llvm.store %[[ROW]], %[[TO]] {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr

// np.maximum returns its second operand where both are zeros (np.maximum(0.0,
// -0.0) is -0.0); llvm.maximum takes +0.0 over -0.0 (llvm.minimum -0.0). The
// second operand is chosen there through a mask built of the bits, unless a
// constant operand settles it: a non-zero constant is never such a tie, and a
// second operand of +0.0 (-0.0 for the minimum) is what the intrinsic returns.
func.func @ties(%in0: memref<8xf32>, %in1: memref<8xf32>, %out: memref<6x8xf32>, %start: index, %stop: index) attributes {irtensor.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %pos = arith.constant 0.000000e+00 : f32
  %neg = arith.constant -0.000000e+00 : f32
  %two = arith.constant 2.000000e+00 : f32
  %a = vector.load %in0[%c0] : memref<8xf32>, vector<8xf32>
  %b = vector.load %in1[%c0] : memref<8xf32>, vector<8xf32>
  %pos8 = vector.broadcast %pos : f32 to vector<8xf32>
  %neg8 = vector.broadcast %neg : f32 to vector<8xf32>
  %two8 = vector.broadcast %two : f32 to vector<8xf32>
  %loaded = arith.maximumf %a, %b : vector<8xf32>
  vector.store %loaded, %out[%c0, %c0] : memref<6x8xf32>, vector<8xf32>
  %max_neg = arith.maximumf %a, %neg8 : vector<8xf32>
  vector.store %max_neg, %out[%c1, %c0] : memref<6x8xf32>, vector<8xf32>
  %min_pos = arith.minimumf %a, %pos8 : vector<8xf32>
  vector.store %min_pos, %out[%c2, %c0] : memref<6x8xf32>, vector<8xf32>
  %min_neg = arith.minimumf %a, %neg8 : vector<8xf32>
  vector.store %min_neg, %out[%c3, %c0] : memref<6x8xf32>, vector<8xf32>
  %two_first = arith.maximumf %two8, %a : vector<8xf32>
  vector.store %two_first, %out[%c4, %c0] : memref<6x8xf32>, vector<8xf32>
  %zero_first = arith.maximumf %pos8, %a : vector<8xf32>
  vector.store %zero_first, %out[%c5, %c0] : memref<6x8xf32>, vector<8xf32>
  func.return
}
// CHECK-LABEL: llvm.func @ties(
// CHECK:         llvm.call_intrinsic "llvm.maximum.v8f32"
// CHECK:         llvm.ashr
// CHECK:         %[[LOADED:.*]] = llvm.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK:         llvm.store %[[LOADED]]
// CHECK-NEXT:    llvm.call_intrinsic "llvm.maximum.v8f32"
// CHECK:         llvm.ashr
// CHECK:         %[[MAX_NEG:.*]] = llvm.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK:         llvm.store %[[MAX_NEG]]
// CHECK-NEXT:    llvm.call_intrinsic "llvm.minimum.v8f32"
// CHECK:         llvm.ashr
// CHECK:         %[[MIN_POS:.*]] = llvm.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK:         llvm.store %[[MIN_POS]]
// CHECK-NEXT:    %[[MIN_NEG:.*]] = llvm.call_intrinsic "llvm.minimum.v8f32"
// CHECK-NEXT:    llvm.getelementptr
// CHECK-NEXT:    llvm.store %[[MIN_NEG]]
// CHECK-NEXT:    %[[TWO_FIRST:.*]] = llvm.call_intrinsic "llvm.maximum.v8f32"
// CHECK-NEXT:    llvm.getelementptr
// CHECK-NEXT:    llvm.store %[[TWO_FIRST]]
// CHECK-NEXT:    llvm.call_intrinsic "llvm.maximum.v8f32"
// CHECK:         llvm.ashr
// CHECK:         %[[ZERO_FIRST:.*]] = llvm.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK:         llvm.store %[[ZERO_FIRST]]
