// lower-kernels-to-loops on a bf16 matmul (`extf a`, `extf b`, `mulf` in f32: exact
// products) with IRTENSOR_BF16_DOT=1, as on a host with AVX512-BF16: the innermost
// reduction loop steps over pairs of k. Each step pairs a row's two A elements in
// every lane ([a_k, a_k+1] x 16), interleaves B's runs at k and k + 1 once for all
// rows, and adds both products per lane with one `x86vector.avx512.dot`
// (`vdpbf16ps`). K = 5 is odd: its last k runs on the widened FMA row after the
// pairs loop. The epilogue rounds each row to bf16 as a vector and stores it.
// With IRTENSOR_BF16_DOT=0 the same kernel widens the rows to f32 and multiplies
// on FMAs, one loop over k.
// RUN: env IRTENSOR_BF16_DOT=1 irtensor-opt %s -p lower-kernels-to-loops | filecheck %s
// RUN: env IRTENSOR_BF16_DOT=0 irtensor-opt %s -p lower-kernels-to-loops | filecheck %s --check-prefix=FMA

// CHECK-LABEL: func.func @r_2_5_16_0(
// CHECK:         scf.for %i0 = %start to %{{.*}} step %c2 {
// CHECK-NEXT:      %[[ROW1:.*]] = arith.addi %i0, %c1 : index
// CHECK:             %{{.*}}, %{{.*}} = scf.for %i1 = %c0 to %c4 step %c2 iter_args(%acc = %{{.*}}, %acc_1 = %{{.*}}) -> (vector<16xf32>, vector<16xf32>) {
// CHECK-NEXT:          %[[NEXT:.*]] = arith.addi %i1, %c1 : index
// CHECK-NEXT:          %[[A0:.*]] = memref.load %in0[%i0, %i1] : memref<2x5xbf16>
// CHECK-NEXT:          %[[A1:.*]] = memref.load %in0[%i0, %[[NEXT]]] : memref<2x5xbf16>
// CHECK-NEXT:          %[[S0:.*]] = vector.broadcast %[[A0]] : bf16 to vector<16xbf16>
// CHECK-NEXT:          %[[S1:.*]] = vector.broadcast %[[A1]] : bf16 to vector<16xbf16>
// CHECK-NEXT:          %[[PAIRA:.*]] = vector.shuffle %[[S0]], %[[S1]] [0, 16, 0, 16, {{.*}}] : vector<16xbf16>, vector<16xbf16>
// CHECK-NEXT:          %[[B0:.*]] = vector.load %in1[%i1, %i2] : memref<5x16xbf16>, vector<16xbf16>
// CHECK-NEXT:          %[[B1:.*]] = vector.load %in1[%[[NEXT]], %i2] : memref<5x16xbf16>, vector<16xbf16>
// CHECK-NEXT:          %[[PAIRB:.*]] = vector.shuffle %[[B0]], %[[B1]] [0, 16, 1, 17, 2, 18, {{.*}}, 15, 31] : vector<16xbf16>, vector<16xbf16>
// CHECK-NEXT:          %[[D0:.*]] = x86vector.avx512.dot %acc, %[[PAIRA]], %[[PAIRB]] : vector<32xbf16> -> vector<16xf32>
// CHECK:               %[[D1:.*]] = x86vector.avx512.dot %acc_1, %{{.*}}, %[[PAIRB]] : vector<32xbf16> -> vector<16xf32>
// CHECK-NEXT:          scf.yield %[[D0]], %[[D1]] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:        %{{.*}} = memref.load %in0[%i0, %c4] : memref<2x5xbf16>
// CHECK-NEXT:        %{{.*}} = vector.load %in1[%c4, %i2] : memref<5x16xbf16>, vector<16xbf16>
// CHECK:             arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK:             %[[ROW0:.*]] = arith.addf %{{.*}}, %{{.*}} fastmath<contract> : vector<16xf32>
// CHECK:             %[[ROW1SUM:.*]] = arith.addf %{{.*}}, %{{.*}} fastmath<contract> : vector<16xf32>
// CHECK-NEXT:        %[[R0:.*]] = arith.truncf %[[ROW0]] : vector<16xf32> to vector<16xbf16>
// CHECK-NEXT:        %[[R1:.*]] = arith.truncf %[[ROW1SUM]] : vector<16xf32> to vector<16xbf16>
// CHECK-NEXT:        vector.store %[[R0]], %out[%i0, %i2] : memref<2x16xbf16>, vector<16xbf16>
// CHECK-NEXT:        vector.store %[[R1]], %out[%[[ROW1]], %i2] : memref<2x16xbf16>, vector<16xbf16>

// FMA-LABEL: func.func @r_2_5_16_0(
// FMA-NOT:     x86vector
// FMA:         scf.for %i1 = %c0 to %c5 step %c1 iter_args
// FMA:           vector.load %in1[%i1, %i2] : memref<5x16xbf16>, vector<16xbf16>
// FMA:           arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// FMA:           arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : vector<16xf32>

func.func @main(%a: tensor<2x5xbf16>, %b: tensor<5x16xbf16>) -> tensor<2x16xbf16> {
  %0 = kernel.kernel @r_2_5_16(%a, %b) space [2, 5, 16] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> schedule <order [0, 1, 2], tiles [0, 0, 0], vector 16, unroll 2, parallel []> : (tensor<2x5xbf16>, tensor<5x16xbf16>) -> tensor<2x16xbf16> {
  ^bb0(%x: bf16, %y: bf16):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    kernel.yield %p : f32
  } epilogue {
  ^bb0(%s: f32):
    %r = arith.truncf %s : f32 to bf16
    kernel.yield %r : bf16
  }
  func.return %0 : tensor<2x16xbf16>
}
