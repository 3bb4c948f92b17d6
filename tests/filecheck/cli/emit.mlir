// --emit STAGE carries the module from the stage -p left it at down the ladder and
// prints that stage: the IR of ll, kernel, loops, llvm (the llvm dialect), LLVM IR
// before and after LLVM's optimisation, the host's assembly, or OpenCL C.
// RUN: irtensor-opt %s --emit ll | filecheck %s --check-prefix=LL
// RUN: irtensor-opt %s --emit kernel | filecheck %s --check-prefix=KERNEL
// RUN: irtensor-opt %s --emit loops | filecheck %s --check-prefix=LOOPS
// RUN: irtensor-opt %s -p hl-to-kernel --emit loops | filecheck %s --check-prefix=LOOPS
// RUN: irtensor-opt %s --emit llvm | filecheck %s --check-prefix=LLVM
// RUN: irtensor-opt %s --emit llvm-ir | filecheck %s --check-prefix=IR
// RUN: irtensor-opt %s -p hl-to-kernel,lower-kernels-to-loops --emit llvm-ir | filecheck %s --check-prefix=IR
// RUN: irtensor-opt %s --emit llvm-ir-opt | filecheck %s --check-prefix=OPT
// RUN: irtensor-opt %s --emit asm | filecheck %s --check-prefix=ASM
// RUN: not irtensor-opt %s -p hl-to-kernel --emit ll 2>&1 | filecheck %s --check-prefix=UP

// LL:     ll.exp2
// LL:     ll.reduce sum %{{.*}} axes [1]
// KERNEL: kernel.kernel @r_16_128(%{{.*}}) space [16, 128]
// LOOPS:  func.func @r_16_128_0(%{{.*}}: memref<16x128xf32>, %{{.*}}: memref<16xf32>, %{{.*}}: index, %{{.*}}: index) attributes {irtensor.kernel}
// LOOPS:  scf.for
// LLVM:   llvm.func @r_16_128_0(%{{.*}}: !llvm.ptr
// IR:     define void @"r_16_128_0"(ptr
// OPT:    define void @r_16_128_0(ptr readonly {{.*}}) local_unnamed_addr
// ASM:    r_16_128_0:
// ASM:    ret
// UP:     error: --emit ll: the module is already at stage kernel
func.func @main(%x: tensor<16x128xf32>) -> tensor<16xf32> {
  %e = hl.exp %x : tensor<16x128xf32>
  %s = hl.sum %e axes [1] : tensor<16x128xf32> -> tensor<16xf32>
  func.return %s : tensor<16xf32>
}
