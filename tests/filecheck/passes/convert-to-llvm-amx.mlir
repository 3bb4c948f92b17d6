// convert-to-llvm on the amx dialect: each op is one call of LLVM's AMX intrinsic with
// the tile numbers as i8 immediates. The configuration is one 64-byte constant (palette
// 1 in byte 0; tile i's bytes per row at byte 16 + 2i, its rows at byte 48 + i) stored
// to an aligned stack slot for ldtilecfg; a tile load or store passes the address of
// the buffer's row and the row's bytes as the stride. A buffer only tiles are loaded
// from is not among the arguments the kernel writes.
// RUN: irtensor-opt %s -p convert-to-llvm | filecheck %s

// CHECK-LABEL: llvm.func @tiles(
// CHECK-SAME:    irtensor.written_args = array<i64: 2>
// CHECK-DAG:     %[[SIX:.*]] = llvm.mlir.constant(6 : i8) : i8
// CHECK-DAG:     %[[FOUR:.*]] = llvm.mlir.constant(4 : i8) : i8
// CHECK-DAG:     %[[ROWBYTES:.*]] = llvm.mlir.constant(64) : i64
// CHECK-DAG:     %[[ZERO:.*]] = llvm.mlir.constant(0 : i8) : i8
// CHECK-DAG:     %[[CONFIG:.*]] = llvm.mlir.constant(dense<[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 32, 0, 0, {{.*}}, 0, 16, 8, 0, {{.*}}]> : vector<64xi8>) : vector<64xi8>
// CHECK:         %[[SLOT:.*]] = llvm.alloca %{{.*}} x vector<64xi8> {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT:    llvm.store %[[CONFIG]], %[[SLOT]] {alignment = 64 : i64} : vector<64xi8>, !llvm.ptr
// CHECK-NEXT:    llvm.call_intrinsic "llvm.x86.ldtilecfg"(%[[SLOT]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    llvm.call_intrinsic "llvm.x86.tilezero"(%[[ZERO]]) : (i8) -> ()
// CHECK:         %[[A:.*]] = llvm.getelementptr inbounds %a[%row, 0] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<32 x i16>
// CHECK-NEXT:    llvm.call_intrinsic "llvm.x86.tileloadd64"(%[[FOUR]], %[[A]], %[[ROWBYTES]]) : (i8, !llvm.ptr, i64) -> ()
// CHECK:         %[[B:.*]] = llvm.getelementptr inbounds %b[%row, 0] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<32 x i16>
// CHECK-NEXT:    llvm.call_intrinsic "llvm.x86.tileloadd64"(%[[SIX]], %[[B]], %[[ROWBYTES]]) : (i8, !llvm.ptr, i64) -> ()
// CHECK-NEXT:    llvm.call_intrinsic "llvm.x86.tdpbf16ps"(%[[ZERO]], %[[FOUR]], %[[SIX]]) : (i8, i8, i8) -> ()
// CHECK:         %[[C:.*]] = llvm.getelementptr inbounds %c[%row, 0] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<16 x f32>
// CHECK-NEXT:    llvm.call_intrinsic "llvm.x86.tilestored64"(%[[ZERO]], %[[C]], %[[ROWBYTES]]) : (i8, !llvm.ptr, i64) -> ()
// CHECK-NEXT:    llvm.call_intrinsic "llvm.x86.tilerelease"() : () -> ()
// CHECK-NEXT:    llvm.return

func.func @tiles(%a: memref<32x32xbf16>, %b: memref<48x32xbf16>, %c: memref<64x16xf32>, %row: index) attributes {irtensor.kernel} {
  amx.tile_config [16, 64, 8, 32]
  amx.tile_zero 0
  amx.tile_load 4, %a[%row] : memref<32x32xbf16>
  amx.tile_load 6, %b[%row] : memref<48x32xbf16>
  amx.tile_dot_bf16 0, 4, 6
  amx.tile_store 0, %c[%row] : memref<64x16xf32>
  amx.tile_release
  func.return
}
