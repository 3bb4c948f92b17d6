// A pass given IR it does not take, or an option value it cannot use, says so
// by name instead of doing nothing (or crashing).

// convert-to-llvm lowers loops on memrefs; on hl input it used to erase @main
// and print an empty module.
// RUN: not irtensor-opt %s -p convert-to-llvm 2>&1 | filecheck %s --check-prefix=LLVM
// LLVM-NOT:    Traceback
// LLVM:        irtensor-opt: error: pass 'convert-to-llvm': cannot lower 'hl.exp' in @f at {{.*}}pass-input.mlir:[[# @LINE + 35]]:3: it is a tensor-level op, and this pass lowers loops on memrefs (run hl-to-kernel and lower-kernels-to-loops first)
// LLVM-NOT:    {{.}}
// The same after hl-to-ll: an ll op, which decompose-hlops located at the hl op it
// came from.
// RUN: not irtensor-opt %s -p hl-to-ll,convert-to-llvm 2>&1 | filecheck %s --check-prefix=LLVM-LL
// LLVM-LL:     irtensor-opt: error: pass 'convert-to-llvm': cannot lower 'll.const' in @f at {{.*}}pass-input.mlir:{{[0-9]+}}:3: it is a tensor-level op

// fuse forms kernels from ll ops; a call is not one.
// RUN: not irtensor-opt %s -p hl-to-kernel 2>&1 | filecheck %s --check-prefix=CALL
// RUN: not irtensor-opt %s --run --device llvm 2>&1 | filecheck %s --check-prefix=CALL
// CALL-NOT:    Traceback
// CALL:        irtensor-opt: error: pass 'fuse': cannot fuse 'func.call' in @main at {{.*}}pass-input.mlir:[[# @LINE + 29]]:3: calls are not supported: inline the callee
// CALL-NOT:    {{.}}
// ... and hl ops are not ll ops.
// RUN: not irtensor-opt %s -p fuse 2>&1 | filecheck %s --check-prefix=HL
// HL:          irtensor-opt: error: pass 'fuse': cannot fuse 'hl.exp' in @f at {{.*}}: run decompose-hlops (hl-to-ll) first

// Option values out of range are refused when the pipeline is read.
// RUN: not irtensor-opt %s -p "split-reductions{chunks=-3}" 2>&1 | filecheck %s --check-prefix=CHUNKS
// CHUNKS-NOT:  Traceback
// CHUNKS:      irtensor-opt: error: pass 'split-reductions': chunks must not be negative, got -3 (its options: min-length, chunks, lanes, min-ratio)
// CHUNKS-NOT:  {{.}}
// RUN: not irtensor-opt %s -p "split-reductions{lanes=-1}" 2>&1 | filecheck %s --check-prefix=LANES
// LANES:       irtensor-opt: error: pass 'split-reductions': lanes must not be negative, got -1
// RUN: not irtensor-opt %s -p "fuse{recompute-limit=-2}" 2>&1 | filecheck %s --check-prefix=RECOMPUTE
// RECOMPUTE:   irtensor-opt: error: pass 'fuse': recompute-limit must not be negative, got -2
// RUN: not irtensor-opt %s -p "lower-to-opencl{work-group-size=96}" 2>&1 | filecheck %s --check-prefix=GROUP
// GROUP:       irtensor-opt: error: pass 'lower-to-opencl': work-group-size must be 0 or a power of two, got 96
// RUN: not irtensor-opt %s -p "convert-to-llvm{alloca-limit=-1}" 2>&1 | filecheck %s --check-prefix=ALLOCA
// ALLOCA:      irtensor-opt: error: pass 'convert-to-llvm': alloca-limit must not be negative, got -1
// chunks=0 is documented: never cut into chunks.
// RUN: irtensor-opt %s -p "split-reductions{chunks=0}" | filecheck %s --check-prefix=ZERO
// ZERO:        func.call @f

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = hl.exp %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
