// --run --device llvm lowers @main with default-llvm, compiles the kernels and runs
// them; the numbers are those of the interpreter.
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.array([[1, 2], [3, 4]], dtype=np.float32))"
// RUN: irtensor-opt %s --run --device llvm --input x=%t.x.npy | filecheck %s
// RUN: irtensor-opt %s --run --device interp --input x=%t.x.npy | filecheck %s
// RUN: not irtensor-opt %s --run --device llvm 2>&1 --input 0=%t.missing.npy | filecheck %s --check-prefix=BAD

// CHECK:      // result #0: tensor<2xf32>
// CHECK-NEXT: [ 7., 27.]
// BAD: error: --input 0={{.*}}: cannot load
func.func @main(%x: tensor<2x2xf32>) -> tensor<2xf32> {
  %s = hl.mul %x, %x : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %r = hl.sum %s axes [1] : tensor<2x2xf32> -> tensor<2xf32>
  %one = ll.const 2.0 : tensor<f32>
  %o = hl.add %r, %one : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
  func.return %o : tensor<2xf32>
}
