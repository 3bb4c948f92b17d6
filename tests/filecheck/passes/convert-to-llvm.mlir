// convert-to-llvm lowers loop-level kernels to llvm.func on bare pointers:
// memrefs become !llvm.ptr, loads one GEP indexed by every index over the buffer's
// row-major array type (a strided view or a stack slot: over the linear index, its
// strides made once per block, at its start),
// loops blocks with branches, math ops LLVM intrinsics. Functions that are not
// kernels are erased unless kernels-only=false.
// RUN: irtensor-opt %s -p convert-to-llvm | filecheck %s
// RUN: irtensor-opt %s -p 'convert-to-llvm{kernels-only=false}' | filecheck %s --check-prefix=ALL

func.func @scale(%in0: memref<4x8xf32>, %out: memref<4x8xf32>, %start: index, %stop: index) attributes {irtensor.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %half = arith.constant 0.5 : f32
  scf.for %i = %start to %stop step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %in0[%i, %j] : memref<4x8xf32>
      %y = arith.mulf %x, %half : f32
      %z = math.sqrt %y : f32
      memref.store %z, %out[%i, %j] : memref<4x8xf32>
    }
  }
  func.return
}
// CHECK-LABEL: llvm.func @scale(%in0: !llvm.ptr, %out: !llvm.ptr, %start: i64, %stop: i64)
// CHECK-SAME:    irtensor.arg_types = [memref<4x8xf32>, memref<4x8xf32>, index, index]
// CHECK-SAME:    irtensor.written_args = array<i64: 1>
// CHECK:         %half = llvm.mlir.constant(5.000000e-01 : f32) : f32
// CHECK-NEXT:    llvm.br ^[[OUTER:bb[0-9]+]](%start : i64)
// CHECK-NEXT:  ^[[OUTER]](%i: i64):
// CHECK-NEXT:    %[[MORE:.*]] = llvm.icmp "slt" %i, %stop : i64
// CHECK-NEXT:    llvm.cond_br %[[MORE]], ^{{.*}}, ^[[EXIT:bb[0-9]+]]
// CHECK:       ^{{.*}}(%j: i64):
// CHECK-NOT:     llvm.mul
// CHECK:         %[[P:.*]] = llvm.getelementptr inbounds %in0[%i, %j] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<8 x f32>
// CHECK-NEXT:    %x = llvm.load %[[P]] : !llvm.ptr -> f32
// CHECK-NEXT:    %y = llvm.fmul %x, %half : f32
// CHECK-NEXT:    %z = llvm.intr.sqrt(%y) : (f32) -> f32
// CHECK-NEXT:    %[[Q:.*]] = llvm.getelementptr inbounds %out[%i, %j] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<8 x f32>
// CHECK-NEXT:    llvm.store %z, %[[Q]] : f32, !llvm.ptr
// CHECK:       ^[[EXIT]]:
// CHECK-NEXT:    llvm.return
// CHECK-NOT:   func.func
// CHECK-NOT:   @host

// A size-1 dimension's index (0, in bounds) and a constant index are held in the GEP
// itself: %src[%c0, %k, %c0, %c2] of a 1x4x1x8 buffer takes one op and no arithmetic.
func.func @unit_dims(%src: memref<1x4x1x8xf32>, %dst: memref<4xf32>, %lo: index, %hi: index) attributes {irtensor.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %k = %lo to %hi step %c1 {
    %v = memref.load %src[%c0, %k, %c0, %c2] : memref<1x4x1x8xf32>
    memref.store %v, %dst[%k] : memref<4xf32>
  }
  func.return
}
// CHECK-LABEL: llvm.func @unit_dims(
// CHECK:         %[[P:.*]] = llvm.getelementptr inbounds %src[0, %k, 0, 2] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<4 x !llvm.array<1 x !llvm.array<8 x f32>>>
// CHECK-NEXT:    %v = llvm.load %[[P]] : !llvm.ptr -> f32
// CHECK-NEXT:    %[[Q:.*]] = llvm.getelementptr inbounds %dst[%k] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.store %v, %[[Q]] : f32, !llvm.ptr

// A strided view is addressed by its linear index: offset + sum(index * stride), a
// size-1 dimension adding nothing and a constant index joining the offset
// (%view[%k, %c0, %c2] of a 4x1x8 view with strides [16, 8, 1] from element 4 is
// element k * 16 + 6).
func.func @strided(%view: memref<4x1x8xf32, strided<[16, 8, 1], offset: 4>>, %dst: memref<4xf32>, %lo: index, %hi: index) attributes {irtensor.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %k = %lo to %hi step %c1 {
    %v = memref.load %view[%k, %c0, %c2] : memref<4x1x8xf32, strided<[16, 8, 1], offset: 4>>
    memref.store %v, %dst[%k] : memref<4xf32>
  }
  func.return
}
// CHECK-LABEL: llvm.func @strided(
// CHECK:         %[[SIX:.*]] = llvm.mlir.constant(6) : i64
// CHECK-NEXT:    %[[SIXTEEN:.*]] = llvm.mlir.constant(16) : i64
// CHECK-NEXT:    %[[ROW:.*]] = llvm.mul %{{k.*}}, %[[SIXTEEN]] overflow<nsw> : i64
// CHECK-NEXT:    %[[AT:.*]] = llvm.add %[[ROW]], %[[SIX]] overflow<nsw> : i64
// CHECK-NEXT:    %[[P:.*]] = llvm.getelementptr inbounds %view[%[[AT]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %{{.*}} = llvm.load %[[P]] : !llvm.ptr -> f32

// A host function: erased by default, lowered (with malloc and a call) on request.
func.func @host(%a: memref<4x8xf32>) -> memref<4x8xf32> {
  %buf = memref.alloc() : memref<4x8xf32>
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  func.call @scale(%a, %buf, %c0, %c4) : (memref<4x8xf32>, memref<4x8xf32>, index, index) -> ()
  func.return %buf : memref<4x8xf32>
}
// ALL:       llvm.func @malloc(i64) -> !llvm.ptr
// ALL:       llvm.func @free(!llvm.ptr)
// ALL-LABEL: llvm.func @host(%a: !llvm.ptr) -> !llvm.ptr
// ALL-NEXT:    %[[BYTES:.*]] = llvm.mlir.constant(128) : i64
// ALL-NEXT:    %[[BUF:.*]] = llvm.call @malloc(%[[BYTES]]) : (i64) -> !llvm.ptr
// ALL:         llvm.call @scale(%a, %[[BUF]], %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
// ALL-NEXT:    llvm.return %[[BUF]] : !llvm.ptr

// bf16 lives in an f32 and is rounded after each op (to nearest even, NaN
// quieted); in memory it is i16, and an i1 is a byte.
func.func @bf16_bool(%x: memref<bf16>, %m: memref<3xi1>, %out: memref<3xbf16>, %start: index, %stop: index) attributes {irtensor.kernel} {
  %c1 = arith.constant 1 : index
  %v = memref.load %x[] : memref<bf16>
  scf.for %i = %start to %stop step %c1 {
    %keep = memref.load %m[%i] : memref<3xi1>
    %s = arith.addf %v, %v : bf16
    %r = arith.select %keep, %s, %v : bf16
    memref.store %r, %out[%i] : memref<3xbf16>
  }
  func.return
}
// CHECK-LABEL: llvm.func @bf16_bool(
// CHECK:         %[[BITS:.*]] = llvm.load %x{{.*}} : !llvm.ptr -> i16
// CHECK-NEXT:    %[[WIDE:.*]] = llvm.zext %[[BITS]] : i16 to i32
// CHECK:         %[[HIGH:.*]] = llvm.shl %[[WIDE]], %{{.*}} : i32
// CHECK-NEXT:    %[[V:.*]] = llvm.bitcast %[[HIGH]] : i32 to f32
// CHECK:         %[[BYTE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i8
// CHECK:         %keep = llvm.icmp "ne" %[[BYTE]], %{{.*}} : i8
// CHECK-NEXT:    %[[SUM:.*]] = llvm.fadd %[[V]], %[[V]] : f32
// CHECK:         llvm.fcmp "uno" %[[SUM]], %[[SUM]] : f32
// CHECK:         %[[ROUNDED:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:    llvm.select %keep, %[[ROUNDED]], %[[V]] : i1, f32
// CHECK:         llvm.trunc %{{.*}} : i32 to i16
// CHECK-NEXT:    llvm.store %{{.*}}, %{{.*}} : i16, !llvm.ptr

// Signed division: by a value, guarded (b == 0 gives 0, b == -1 is a negation);
// by a known positive constant (an index's floordiv), sdiv and the remainder's
// sign alone: floor subtracts one for a negative remainder, ceil adds one for a
// positive one, remsi is srem.
func.func @divisions(%in0: memref<8xi64>, %out: memref<4x8xi64>, %start: index, %stop: index) attributes {irtensor.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c16 = arith.constant 16 : i64
  scf.for %i = %start to %stop step %c1 {
    %a = memref.load %in0[%i] : memref<8xi64>
    %floor = arith.floordivsi %a, %c16 : i64
    memref.store %floor, %out[%c0, %i] : memref<4x8xi64>
    %ceil = arith.ceildivsi %a, %c16 : i64
    memref.store %ceil, %out[%c1, %i] : memref<4x8xi64>
    %rem = arith.remsi %a, %c16 : i64
    memref.store %rem, %out[%c2, %i] : memref<4x8xi64>
    %by_value = arith.floordivsi %a, %a : i64
    memref.store %by_value, %out[%c3, %i] : memref<4x8xi64>
  }
  func.return
}
// CHECK-LABEL: llvm.func @divisions(
// CHECK:         %[[A:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK-NEXT:    %[[Q:.*]] = llvm.sdiv %[[A]], %[[C16:.*]] : i64
// CHECK-NEXT:    %[[R:.*]] = llvm.srem %[[A]], %[[C16]] : i64
// CHECK-NEXT:    %[[NEG:.*]] = llvm.icmp "slt" %[[R]], %{{.*}} : i64
// CHECK-NEXT:    %[[DOWN:.*]] = llvm.zext %[[NEG]] : i1 to i64
// CHECK-NEXT:    %[[FLOOR:.*]] = llvm.sub %[[Q]], %[[DOWN]] : i64
// CHECK-NEXT:    llvm.getelementptr
// CHECK-NEXT:    llvm.store %[[FLOOR]]
// CHECK-NEXT:    %[[Q2:.*]] = llvm.sdiv %[[A]], %[[C16]] : i64
// CHECK-NEXT:    %[[R2:.*]] = llvm.srem %[[A]], %[[C16]] : i64
// CHECK-NEXT:    %[[POS:.*]] = llvm.icmp "sgt" %[[R2]], %{{.*}} : i64
// CHECK-NEXT:    %[[UP:.*]] = llvm.zext %[[POS]] : i1 to i64
// CHECK-NEXT:    %[[CEIL:.*]] = llvm.add %[[Q2]], %[[UP]] : i64
// CHECK-NEXT:    llvm.getelementptr
// CHECK-NEXT:    llvm.store %[[CEIL]]
// CHECK-NEXT:    %[[REM:.*]] = llvm.srem %[[A]], %[[C16]] : i64
// CHECK-NEXT:    llvm.getelementptr
// CHECK-NEXT:    llvm.store %[[REM]]
// CHECK-NEXT:    llvm.icmp "eq" %[[A]]
// CHECK-NEXT:    llvm.icmp "eq" %[[A]]
// CHECK:         llvm.select
// CHECK:         llvm.sdiv %[[A]]
