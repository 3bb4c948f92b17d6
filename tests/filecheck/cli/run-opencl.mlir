// --run --device opencl lowers @main with default-opencl, builds the OpenCL C and runs
// it; the numbers are those of the interpreter. --emit opencl prints the C instead,
// lowering the module as far as it needs (the same C as the explicit pipeline).
// REQUIRES: opencl
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.array([[1, 2], [3, 4]], dtype=np.float32))"
// RUN: irtensor-opt %s --run --device opencl --input x=%t.x.npy | filecheck %s
// RUN: irtensor-opt %s -p default-opencl,lower-to-opencl --emit opencl | filecheck %s --check-prefix=C
// RUN: irtensor-opt %s --emit opencl | filecheck %s --check-prefix=C

// CHECK:      // result #0: tensor<2xf32>
// CHECK-NEXT: [ 7., 27.]
// C:          __kernel void r_2_2_0(__global const float* in0, __global float* out) {
// C:            for (long i1 = 0; i1 < 2; i1++) {
// C:            out[i0] = {{.*}};
func.func @main(%x: tensor<2x2xf32>) -> tensor<2xf32> {
  %s = hl.mul %x, %x : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %r = hl.sum %s axes [1] : tensor<2x2xf32> -> tensor<2xf32>
  %one = ll.const 2.0 : tensor<f32>
  %o = hl.add %r, %one : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
  func.return %o : tensor<2xf32>
}
