// The loops stage is upstream MLIR: mlir-opt parses it as it is and lowers it with its
// own passes to the llvm dialect, which mlir-translate turns into LLVM IR (the register
// block's rows are vector ops, lowered by convert-vector-to-llvm).
// REQUIRES: mlir-opt
// RUN: irtensor-opt %s -p hl-to-kernel,lower-kernels-to-loops | %mlir-opt | filecheck %s --check-prefix=LOOPS
// RUN: irtensor-opt %s -p hl-to-kernel,lower-kernels-to-loops | %mlir-opt --arith-expand --convert-scf-to-cf --convert-math-to-llvm --convert-vector-to-llvm --expand-strided-metadata --finalize-memref-to-llvm --convert-arith-to-llvm --convert-cf-to-llvm --convert-func-to-llvm=use-bare-ptr-memref-call-conv=1 --reconcile-unrealized-casts | %mlir-translate --mlir-to-llvmir | filecheck %s --check-prefix=IR

// LOOPS:      func.func @r_4_8_16_0(%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<8x16xf32>, %{{.*}}: memref<16xf32>, %{{.*}}: memref<4x16xf32>, %{{.*}}: index, %{{.*}}: index) attributes {irtensor.kernel, irtensor.small}
// LOOPS:      scf.for
// LOOPS:      vector.load
// LOOPS:      arith.maximumf
// LOOPS:      vector.store
// LOOPS:      func.func @main(

// IR: define void @r_4_8_16_0(ptr %{{.*}}, ptr %{{.*}}, ptr %{{.*}}, ptr %{{.*}}, i64 %{{.*}}, i64 %{{.*}})
// IR: fmul contract <{{[0-9]+}} x float>
// IR: define {{.*}} @main(
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %h = hl.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %hb = hl.add %h, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %r = hl.relu %hb : tensor<4x16xf32>
  func.return %r : tensor<4x16xf32>
}
