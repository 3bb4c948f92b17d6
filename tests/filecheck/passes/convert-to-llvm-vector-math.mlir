// convert-to-llvm lowers math.exp2 (and exp, log2, log, sin, cos) on f32 to plain
// arithmetic that the loop vectorizer can vectorize: no llvm.exp2 intrinsic, which
// would become one libm call per vector lane. exp2(x) = 2^n * p(r): clamp (ordered
// compares, false for NaN, so a NaN passes through: its r and p are NaN, and so is
// the result, with no select at the end), round to an integer with the 1.5 * 2^23
// trick, an FMA Horner polynomial, then 2^n as two exponent-field scalings. The
// constants are made once, at the top of the function, for all math ops to share.
// RUN: irtensor-opt %s -p convert-to-llvm | filecheck %s

func.func @exp2(%in0: memref<64xf32>, %out: memref<64xf32>, %start: index, %stop: index) attributes {irtensor.kernel} {
  %c1 = arith.constant 1 : index
  scf.for %i = %start to %stop step %c1 {
    %x = memref.load %in0[%i] : memref<64xf32>
    %y = math.exp2 %x : f32
    memref.store %y, %out[%i] : memref<64xf32>
  }
  func.return
}
// CHECK-LABEL: llvm.func @exp2
// CHECK-NOT:     llvm.intr.exp2
// CHECK-NOT:     llvm.call
// CHECK-DAG:     %[[MAGIC:.*]] = llvm.mlir.constant(0x4B400000 : f32) : f32
// CHECK-DAG:     %[[HIGH:.*]] = llvm.mlir.constant(1.290000e+02 : f32) : f32
// CHECK-DAG:     %[[LOW:.*]] = llvm.mlir.constant(-1.510000e+02 : f32) : f32
// CHECK:         llvm.br
// CHECK:         %x = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK-NEXT:    %[[IS_LOW:.*]] = llvm.fcmp "olt" %x, %[[LOW]] : f32
// CHECK-NEXT:    %[[X1:.*]] = llvm.select %[[IS_LOW]], %[[LOW]], %x : i1, f32
// CHECK-NEXT:    %[[IS_HIGH:.*]] = llvm.fcmp "ogt" %[[X1]], %[[HIGH]] : f32
// CHECK-NEXT:    %[[XC:.*]] = llvm.select %[[IS_HIGH]], %[[HIGH]], %[[X1]] : i1, f32
// CHECK-NEXT:    %[[SHIFTED:.*]] = llvm.fadd %[[XC]], %[[MAGIC]] : f32
// CHECK-NEXT:    %[[N:.*]] = llvm.fsub %[[SHIFTED]], %[[MAGIC]] : f32
// CHECK-NEXT:    %[[BITS:.*]] = llvm.bitcast %[[SHIFTED]] : f32 to i32
// CHECK:         %[[R:.*]] = llvm.fsub %[[XC]], %[[N]] : f32
// CHECK-COUNT-6: llvm.intr.fma(%{{.*}}) : (f32, f32, f32) -> f32
// CHECK-NOT:     llvm.fcmp "uno"
// CHECK:         llvm.ashr
// CHECK:         llvm.shl
// CHECK-NEXT:    %[[SCALE1:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:    %[[P1:.*]] = llvm.fmul %{{.*}}, %[[SCALE1]] : f32
// CHECK:         %[[SCALE2:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:    %y = llvm.fmul %[[P1]], %[[SCALE2]] : f32
// CHECK-NOT:     llvm.intr.exp2
// CHECK:         llvm.return

// bf16 computes in f32 and rounds the result (its f32 holds a bf16); sin works in f64.
func.func @sin_bf16(%in0: memref<64xbf16>, %out: memref<64xbf16>, %start: index, %stop: index) attributes {irtensor.kernel} {
  %c1 = arith.constant 1 : index
  scf.for %i = %start to %stop step %c1 {
    %x = memref.load %in0[%i] : memref<64xbf16>
    %y = math.sin %x : bf16
    memref.store %y, %out[%i] : memref<64xbf16>
  }
  func.return
}
// CHECK-LABEL: llvm.func @sin_bf16
// CHECK-NOT:     llvm.intr.sin
// CHECK:         llvm.fpext %{{.*}} : f32 to f64
// CHECK:         llvm.intr.fma(%{{.*}}) : (f64, f64, f64) -> f64
// CHECK:         llvm.fptrunc %{{.*}} : f64 to f32
// CHECK:         llvm.and %{{.*}}, %{{.*}} : i32
// CHECK:         llvm.return

// f64: exp2, exp, log2 and log are arithmetic too (2^n scaled with i64 bits); sin
// keeps LLVM's intrinsic (libm), called by its mangled name: xDSL exports
// llvm.intr.sin unmangled, which would clash with an f32 use in the same module.
func.func @f64(%in0: memref<64xf64>, %out: memref<64xf64>, %start: index, %stop: index) attributes {irtensor.kernel} {
  %c1 = arith.constant 1 : index
  scf.for %i = %start to %stop step %c1 {
    %x = memref.load %in0[%i] : memref<64xf64>
    %y = math.exp2 %x : f64
    %z = math.sin %y : f64
    memref.store %z, %out[%i] : memref<64xf64>
  }
  func.return
}
// CHECK-LABEL: llvm.func @f64
// CHECK-NOT:     llvm.intr.exp2
// CHECK-DAG:     llvm.mlir.constant(52) : i64
// CHECK-DAG:     llvm.mlir.constant(1023) : i64
// CHECK-DAG:     llvm.mlir.constant(0x4338000000000000 : f64) : f64
// CHECK:         llvm.intr.fma(%{{.*}}) : (f64, f64, f64) -> f64
// CHECK:         llvm.shl %{{.*}}, %{{.*}} : i64
// CHECK:         llvm.call_intrinsic "llvm.sin.f64"(%{{.*}}) : (f64) -> f64
