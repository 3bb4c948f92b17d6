// lower-kernels-to-loops with streaming stores: an elementwise output of at least
// IRTENSOR_STREAM_BYTES (the last-level cache by default; 512 bytes here) is written
// non-temporally, in blocks of four 64-byte lines. Each block's points are computed
// into a stack row, which is then stored a line at a time, `nontemporal`. A 1-d kernel's
// loop is the threads' [start, stop): the points before its first block boundary
// (head) and after its last (tail) are stored plainly. A row of whole lines (4 x 32 f64)
// is all blocks. Rows that are not whole lines (8 x 20 f32), a body with a math function
// (bound by its arithmetic) and a small output (400 bytes) keep the plain loop.
// convert-to-llvm keeps `nontemporal` and ends such a function with a store fence.
// RUN: env IRTENSOR_STREAM_BYTES=512 irtensor-opt %s -p lower-kernels-to-loops | filecheck %s
// RUN: env IRTENSOR_STREAM_BYTES=512 irtensor-opt %s -p lower-kernels-to-loops,convert-to-llvm | filecheck %s --check-prefix=LLVM
// RUN: env IRTENSOR_STREAM_BYTES=0 irtensor-opt %s -p lower-kernels-to-loops | filecheck %s --check-prefix=OFF

func.func @triad(%a: tensor<200xf32>, %b: tensor<200xf32>, %c: tensor<200xf32>) -> tensor<200xf32> {
  %r = kernel.kernel @E_200(%a, %b, %c) space [200] reads [#kernel.access<(d0) -> (d0)>, #kernel.access<(d0) -> (d0)>, #kernel.access<(d0) -> (d0)>] writes affine_map<(d0) -> (d0)> schedule <order [0], tiles [0], vector 8, unroll 1, parallel [0]> : (tensor<200xf32>, tensor<200xf32>, tensor<200xf32>) -> tensor<200xf32> {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %z : f32
    kernel.yield %s : f32
  }
  func.return %r : tensor<200xf32>
}

func.func @rows(%a: tensor<4x32xf64>, %b: tensor<32xf64>) -> tensor<4x32xf64> {
  %r = kernel.kernel @E_4_32(%a, %b) space [4, 32] reads [#kernel.access<(d0, d1) -> (d0, d1)>, #kernel.access<(d0, d1) -> (d1)>] writes affine_map<(d0, d1) -> (d0, d1)> schedule <order [0, 1], tiles [0, 0], vector 8, unroll 1, parallel [0]> : (tensor<4x32xf64>, tensor<32xf64>) -> tensor<4x32xf64> {
  ^bb0(%x: f64, %y: f64):
    %s = arith.subf %x, %y : f64
    kernel.yield %s : f64
  }
  func.return %r : tensor<4x32xf64>
}

func.func @ragged_rows(%a: tensor<8x20xf32>) -> tensor<8x20xf32> {
  %r = kernel.kernel @E_8_20(%a) space [8, 20] reads [#kernel.access<(d0, d1) -> (d0, d1)>] writes affine_map<(d0, d1) -> (d0, d1)> schedule <order [0, 1], tiles [0, 0], vector 8, unroll 1, parallel [0]> : (tensor<8x20xf32>) -> tensor<8x20xf32> {
  ^bb0(%x: f32):
    %s = arith.addf %x, %x : f32
    kernel.yield %s : f32
  }
  func.return %r : tensor<8x20xf32>
}

func.func @exp(%a: tensor<400xf32>) -> tensor<400xf32> {
  %r = kernel.kernel @E_400(%a) space [400] reads [#kernel.access<(d0) -> (d0)>] writes affine_map<(d0) -> (d0)> schedule <order [0], tiles [0], vector 8, unroll 1, parallel [0]> : (tensor<400xf32>) -> tensor<400xf32> {
  ^bb0(%x: f32):
    %s = math.exp %x : f32
    kernel.yield %s : f32
  }
  func.return %r : tensor<400xf32>
}

func.func @small(%a: tensor<100xf32>) -> tensor<100xf32> {
  %r = kernel.kernel @E_100(%a) space [100] reads [#kernel.access<(d0) -> (d0)>] writes affine_map<(d0) -> (d0)> schedule <order [0], tiles [0], vector 8, unroll 1, parallel [0]> : (tensor<100xf32>) -> tensor<100xf32> {
  ^bb0(%x: f32):
    %s = arith.addf %x, %x : f32
    kernel.yield %s : f32
  }
  func.return %r : tensor<100xf32>
}

// CHECK-LABEL: func.func @E_200_0(
// CHECK:         %[[ROW:.*]] = memref.alloca() : memref<64xf32>
// CHECK:         %[[UP:.*]] = arith.addi %start, %c63 : index
// CHECK:         %[[BLOCKS:.*]] = arith.divsi %[[UP]], %c64 : index
// CHECK:         %[[CEIL:.*]] = arith.muli %[[BLOCKS]], %c64 : index
// CHECK:         %[[FIRST:.*]] = arith.minsi %[[CEIL]], %stop : index
// CHECK:         %[[WHOLE:.*]] = arith.divsi %stop, %c64 : index
// CHECK:         %[[FLOOR:.*]] = arith.muli %[[WHOLE]], %c64 : index
// CHECK:         %[[LAST:.*]] = arith.maxsi %[[FLOOR]], %[[FIRST]] : index
// CHECK:         scf.for %i0h = %start to %[[FIRST]] step %c1 {
// CHECK:           memref.store %{{.*}}, %out[%i0h] : memref<200xf32>
// CHECK:         scf.for %i0b = %[[FIRST]] to %[[LAST]] step %c64 {
// CHECK:           scf.for %k = %c0 to %c64 step %c1 {
// CHECK:             %[[POINT:.*]] = arith.addi %i0b, %k : index
// CHECK:             memref.load %in0[%[[POINT]]] : memref<200xf32>
// CHECK:             memref.store %{{.*}}, %[[ROW]][%k] : memref<64xf32>
// CHECK:           %[[LINE:.*]] = vector.load %[[ROW]][%c0] : memref<64xf32>, vector<16xf32>
// CHECK:           vector.store %[[LINE]], %out[%i0b] {nontemporal = true} : memref<200xf32>, vector<16xf32>
// CHECK-COUNT-3:   vector.store {{.*}} {nontemporal = true} : memref<200xf32>, vector<16xf32>
// CHECK:         scf.for %i0t = %[[LAST]] to %stop step %c1 {
// CHECK:           memref.store %{{.*}}, %out[%i0t] : memref<200xf32>

// CHECK-LABEL: func.func @E_4_32_1(
// CHECK:         memref.alloca() : memref<32xf64>
// CHECK:         scf.for %i0 = %start to %stop step %c1 {
// CHECK-NEXT:      scf.for %i1b = %c0 to %c32 step %c32 {
// CHECK-NOT:       %i1h
// CHECK-COUNT-4:   vector.store {{.*}} {nontemporal = true} : memref<4x32xf64>, vector<8xf64>
// CHECK-NOT:       %i1t
// CHECK:         func.return

// CHECK-LABEL: func.func @E_8_20_2(
// CHECK-NOT:     nontemporal
// CHECK:         scf.for %i1 = %c0 to %c20 step %c1 {
// CHECK-LABEL: func.func @E_400_3(
// CHECK-NOT:     nontemporal
// CHECK:         math.exp
// CHECK-LABEL: func.func @E_100_4(
// CHECK-NOT:     nontemporal
// CHECK:         func.return

// LLVM-LABEL: llvm.func @E_200_0(
// LLVM-COUNT-4: llvm.store {{.*}} {alignment = 4 : i64, nontemporal} : vector<16xf32>, !llvm.ptr
// LLVM:         llvm.call_intrinsic "llvm.x86.sse.sfence"() : () -> ()
// LLVM-NEXT:    llvm.return
// LLVM-LABEL: llvm.func @E_4_32_1(
// LLVM-COUNT-4: llvm.store {{.*}} {alignment = 8 : i64, nontemporal} : vector<8xf64>, !llvm.ptr
// LLVM:         llvm.call_intrinsic "llvm.x86.sse.sfence"() : () -> ()
// LLVM-LABEL: llvm.func @E_8_20_2(
// LLVM-NOT:     sfence
// LLVM:         llvm.return

// OFF-NOT:     nontemporal
