// lower-kernels-to-loops on a bf16 matmul with IRTENSOR_AMX=1, as on a host with AMX:
// the register block is built on AMX's tiles (passes/loops/tile_block.py). B's columns
// are copied in pairs of rows (two 16-element runs of rows 2k2 and 2k2 + 1 interleaved,
// one 64-byte row of `b_pairs`), A's rows of each 32-row block into 16 x 32 tiles
// (`a_tiles`); then each 32 x 32 block of the output is four C tiles zeroed, K / 32
// steps of two A tiles, two B tiles and four tdpbf16ps, stored to the stage and put
// through the epilogue (the bf16 rounding) row by row on vectors. Rows past the
// thread's range (40 = 32 + 8) are neither copied nor stored.
// With IRTENSOR_AMX=0 the same kernel keeps its vector block.
// RUN: env IRTENSOR_AMX=1 irtensor-opt %s -p lower-kernels-to-loops | filecheck %s
// RUN: env IRTENSOR_AMX=0 irtensor-opt %s -p lower-kernels-to-loops | filecheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @r_40_64_32_0(
// CHECK:         amx.tile_config [16, 64, 16, 64, 16, 64, 16, 64, 16, 64, 16, 64, 16, 64, 16, 64]
// CHECK-NEXT:    %a_tiles = memref.alloc() {alignment = 64 : i64} : memref<64x32xbf16>
// CHECK-NEXT:    %b_pairs = memref.alloc() {alignment = 64 : i64} : memref<96x32xbf16>
// CHECK-NEXT:    %c_tiles = memref.alloca() : memref<64x16xf32>
// CHECK-NEXT:    scf.for %nt = %c0 to %c32 step %c32 {
// CHECK:           scf.for %chunk = %c0 to %{{.*}} step %c1 {
// CHECK:             scf.for %k2 = %c0 to %c32 step %c1 {
// CHECK-NEXT:          %[[K:.*]] = arith.muli %k2, %c2 : index
// CHECK-NEXT:          %[[EVEN:.*]] = vector.load %in1[%[[K]], %[[N:.*]]] : memref<64x32xbf16>, vector<16xbf16>
// CHECK-NEXT:          %[[K1:.*]] = arith.addi %[[K]], %c1 : index
// CHECK-NEXT:          %[[ODD:.*]] = vector.load %in1[%[[K1]], %[[N]]] : memref<64x32xbf16>, vector<16xbf16>
// CHECK-NEXT:          %[[PAIRS:.*]] = vector.shuffle %[[EVEN]], %[[ODD]] [0, 16, 1, 17, {{.*}}, 15, 31] : vector<16xbf16>, vector<16xbf16>
// CHECK:               vector.store %[[PAIRS]], %b_pairs[%{{.*}}, %c0] : memref<96x32xbf16>, vector<32xbf16>
// CHECK:           scf.for %mb = %start to %stop step %c32 {
// CHECK:             scf.for %r = %c0 to %{{.*}} step %c1 {
// CHECK:               scf.for %kb = %c0 to %c2 step %c1 {
// CHECK:                 %[[AROW:.*]] = vector.load %in0[%{{.*}}, %{{.*}}] : memref<40x64xbf16>, vector<32xbf16>
// CHECK:                 vector.store %[[AROW]], %a_tiles[%{{.*}}, %c0] : memref<64x32xbf16>, vector<32xbf16>
// CHECK:             scf.for %nb = %nt to %{{.*}} step %c32 {
// CHECK:               amx.tile_zero 0
// CHECK-NEXT:          amx.tile_zero 1
// CHECK-NEXT:          amx.tile_zero 2
// CHECK-NEXT:          amx.tile_zero 3
// CHECK-NEXT:          scf.for %kb_2 = %c0 to %c2 step %c1 {
// CHECK:                 amx.tile_load 4, %a_tiles[%{{.*}}] : memref<64x32xbf16>
// CHECK-NEXT:            amx.tile_load 6, %b_pairs[%{{.*}}] : memref<96x32xbf16>
// CHECK-NEXT:            amx.tile_dot_bf16 0, 4, 6
// CHECK-NEXT:            amx.tile_load 7, %b_pairs[%{{.*}}] : memref<96x32xbf16>
// CHECK-NEXT:            amx.tile_dot_bf16 1, 4, 7
// CHECK-NEXT:            amx.tile_load 5, %a_tiles[%{{.*}}] : memref<64x32xbf16>
// CHECK-NEXT:            amx.tile_dot_bf16 2, 5, 6
// CHECK-NEXT:            amx.tile_dot_bf16 3, 5, 7
// CHECK-NEXT:          }
// CHECK-NEXT:          amx.tile_store 0, %c_tiles[%c0] : memref<64x16xf32>
// CHECK-NEXT:          amx.tile_store 1, %c_tiles[%c16] : memref<64x16xf32>
// CHECK-NEXT:          amx.tile_store 2, %c_tiles[%c32] : memref<64x16xf32>
// CHECK-NEXT:          amx.tile_store 3, %c_tiles[%c48] : memref<64x16xf32>
// CHECK:               scf.for %r_2 = %c0 to %{{.*}} step %c1 {
// CHECK-NEXT:            scf.for %nj = %c0 to %{{.*}} step %c1 {
// CHECK:                   %[[SUMS:.*]] = vector.load %c_tiles[%{{.*}}, %c0] : memref<64x16xf32>, vector<16xf32>
// CHECK:                   %[[ROUNDED:.*]] = arith.truncf %[[SUMS]] : vector<16xf32> to vector<16xbf16>
// CHECK-NEXT:              vector.store %[[ROUNDED]], %out[%{{.*}}, %{{.*}}] : memref<40x32xbf16>, vector<16xbf16>
// CHECK:         memref.dealloc %a_tiles : memref<64x32xbf16>
// CHECK-NEXT:    memref.dealloc %b_pairs : memref<96x32xbf16>
// CHECK-NEXT:    amx.tile_release
// CHECK-NEXT:    func.return

// OFF-LABEL: func.func @r_40_64_32_0(
// OFF-NOT:     amx.
// OFF:         arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : vector<32xf32>
// OFF-NOT:     amx.

  func.func @main(%a: tensor<40x64xbf16>, %b: tensor<64x32xbf16>) -> tensor<40x32xbf16> {
    %0 = kernel.kernel @r_40_64_32(%a, %b) space [40, 64, 32] reduce [1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2)> schedule <order [0, 1, 2], tiles [0, 0, 0], vector 32, unroll 6, parallel [0]> : (tensor<40x64xbf16>, tensor<64x32xbf16>) -> tensor<40x32xbf16> {
    ^bb0(%1: bf16, %2: bf16):
      %3 = arith.extf %1 : bf16 to f32
      %4 = arith.extf %2 : bf16 to f32
      %5 = arith.mulf %3, %4 : f32
      kernel.yield %5 : f32
    } epilogue {
    ^bb0(%6: f32):
      %7 = arith.truncf %6 : f32 to bf16
      kernel.yield %7 : bf16
    }
    func.return %0 : tensor<40x32xbf16>
  }
