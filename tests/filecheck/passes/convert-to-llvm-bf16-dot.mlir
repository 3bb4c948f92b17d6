// convert-to-llvm on the ops of a bf16 register block: a row of bf16 is the bits
// memory holds (vector<16xi16>), loaded as one vector; a broadcast of a bf16
// scalar splats its bits (one undef vector per block serves every splat); vector.shuffle is llvm.shufflevector; arith.extf of a
// row shifts each lane's bits into the high half of an i32 (exact) and reads it
// as f32; x86vector.avx512.dot calls LLVM's vdpbf16ps intrinsic on the pairs as
// i32 lanes (LLVM upgrades that form to its bfloat one).
// RUN: irtensor-opt %s -p convert-to-llvm | filecheck %s

// CHECK-LABEL: llvm.func @pairs(
// CHECK-DAG:     %[[SIXTEEN:.*]] = llvm.mlir.constant(dense<16> : vector<16xi32>) : vector<16xi32>
// CHECK-DAG:     %[[UNDEF:.*]] = llvm.mlir.undef : vector<16xi16>
// CHECK:         %[[BITS0:.*]] = llvm.trunc %{{.*}} : i32 to i16
// CHECK-NEXT:    %[[LANE0:.*]] = llvm.insertelement %[[BITS0]], %[[UNDEF]][%{{.*}} : i32] : vector<16xi16>
// CHECK-NEXT:    %[[SPLAT0:.*]] = llvm.shufflevector %[[LANE0]], %[[LANE0]] [0, 0, {{.*}}] : vector<16xi16>
// CHECK:         %[[PAIRA:.*]] = llvm.shufflevector %[[SPLAT0]], %{{.*}} [0, 16, 0, 16, {{.*}}] : vector<16xi16>
// CHECK-NEXT:    %[[B0:.*]] = llvm.load %b {alignment = 2 : i64} : !llvm.ptr -> vector<16xi16>
// CHECK:         %[[B1:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> vector<16xi16>
// CHECK-NEXT:    %[[PAIRB:.*]] = llvm.shufflevector %[[B0]], %[[B1]] [0, 16, 1, 17, {{.*}}, 15, 31] : vector<16xi16>
// CHECK-NEXT:    %[[WA:.*]] = llvm.bitcast %[[PAIRA]] : vector<32xi16> to vector<16xi32>
// CHECK-NEXT:    %[[WB:.*]] = llvm.bitcast %[[PAIRB]] : vector<32xi16> to vector<16xi32>
// CHECK-NEXT:    %d = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%acc, %[[WA]], %[[WB]]) : (vector<16xf32>, vector<16xi32>, vector<16xi32>) -> vector<16xf32>
// CHECK-NEXT:    %[[Z:.*]] = llvm.zext %[[B0]] : vector<16xi16> to vector<16xi32>
// CHECK-NEXT:    %[[HIGH:.*]] = llvm.shl %[[Z]], %[[SIXTEEN]] : vector<16xi32>
// CHECK-NEXT:    %wide = llvm.bitcast %[[HIGH]] : vector<16xi32> to vector<16xf32>
// CHECK-NEXT:    %sum = llvm.fadd %d, %wide : vector<16xf32>

func.func @pairs(%a: memref<2x4xbf16>, %b: memref<4x16xbf16>, %out: memref<2x16xf32>, %start: index, %stop: index) attributes {irtensor.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.000000e+00 : f32
  %acc = vector.broadcast %zero : f32 to vector<16xf32>
  %a0 = memref.load %a[%start, %c0] : memref<2x4xbf16>
  %a1 = memref.load %a[%start, %c1] : memref<2x4xbf16>
  %s0 = vector.broadcast %a0 : bf16 to vector<16xbf16>
  %s1 = vector.broadcast %a1 : bf16 to vector<16xbf16>
  %pa = vector.shuffle %s0, %s1 [0, 16, 0, 16, 0, 16, 0, 16, 0, 16, 0, 16, 0, 16, 0, 16, 0, 16, 0, 16, 0, 16, 0, 16, 0, 16, 0, 16, 0, 16, 0, 16] : vector<16xbf16>, vector<16xbf16>
  %b0 = vector.load %b[%c0, %c0] : memref<4x16xbf16>, vector<16xbf16>
  %b1 = vector.load %b[%c1, %c0] : memref<4x16xbf16>, vector<16xbf16>
  %pb = vector.shuffle %b0, %b1 [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31] : vector<16xbf16>, vector<16xbf16>
  %d = x86vector.avx512.dot %acc, %pa, %pb : vector<32xbf16> -> vector<16xf32>
  %wide = arith.extf %b0 : vector<16xbf16> to vector<16xf32>
  %sum = arith.addf %d, %wide : vector<16xf32>
  vector.store %sum, %out[%start, %c0] : memref<2x16xf32>, vector<16xf32>
  func.return
}

// A row rounded to bf16 (a bf16 output's epilogue) rounds as the scalar lowering
// does, on i32 lanes: to nearest even, a NaN (0x7f800000 - |bits| < 0: the mask)
// to the quiet 0x7fc0 with its sign; its high halves are stored as one vector.
// CHECK-LABEL: llvm.func @rounding(
// CHECK:         %[[U:.*]] = llvm.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK-NEXT:    %[[SH:.*]] = llvm.lshr %[[U]], %{{.*}} : vector<16xi32>
// CHECK-NEXT:    %[[LSB:.*]] = llvm.and %[[SH]], %{{.*}} : vector<16xi32>
// CHECK-NEXT:    %[[BIAS:.*]] = llvm.add %[[LSB]], %{{.*}} : vector<16xi32>
// CHECK-NEXT:    %[[ROUNDED:.*]] = llvm.add %[[U]], %[[BIAS]] : vector<16xi32>
// CHECK:         %[[NAN:.*]] = llvm.ashr %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK:         %[[HIGH:.*]] = llvm.lshr %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK-NEXT:    %[[BITS:.*]] = llvm.trunc %[[HIGH]] : vector<16xi32> to vector<16xi16>
// CHECK:         llvm.store %[[BITS]], %{{.*}} {alignment = 2 : i64} : vector<16xi16>, !llvm.ptr
func.func @rounding(%in: memref<16xf32>, %out: memref<16xbf16>, %start: index, %stop: index) attributes {irtensor.kernel} {
  %c0 = arith.constant 0 : index
  %row = vector.load %in[%c0] : memref<16xf32>, vector<16xf32>
  %r = arith.truncf %row : vector<16xf32> to vector<16xbf16>
  vector.store %r, %out[%c0] : memref<16xbf16>, vector<16xbf16>
  func.return
}
