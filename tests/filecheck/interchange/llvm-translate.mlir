// irtensor's llvm-dialect stage is upstream's llvm dialect: mlir-opt parses it and
// mlir-translate exports it as the LLVM IR irtensor's JIT compiles.
// REQUIRES: mlir-opt
// RUN: irtensor-opt %s -p hl-to-kernel,lower-kernels-to-loops,convert-to-llvm | %mlir-opt | filecheck %s --check-prefix=DIALECT
// RUN: irtensor-opt %s -p hl-to-kernel,lower-kernels-to-loops,convert-to-llvm | %mlir-translate --mlir-to-llvmir | filecheck %s

// DIALECT: llvm.func @E_1024_0(
// CHECK: define void @E_1024_0(ptr %{{.*}}, ptr %{{.*}}, i64 %{{.*}}, i64 %{{.*}})
// CHECK: fcmp
// CHECK: select
func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %r = hl.relu %x : tensor<1024xf32>
  func.return %r : tensor<1024xf32>
}
