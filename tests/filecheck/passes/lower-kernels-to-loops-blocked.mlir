// lower-kernels-to-loops accumulates in blocks: no accumulator adds more than 128
// values. A reduction loop of more trips is split into levels of at most 128 trips
// (steps 128**k, each level within the block its enclosing level starts), and the
// body of each level starts a fresh accumulator that the levels inside fill and that
// is then added to the enclosing one: the error of a float sum grows as log(n), not
// as n (a sum of 2**24 f32 ones would stop growing).
// RUN: irtensor-opt %s -p lower-kernels-to-loops | filecheck %s
// RUN: irtensor-opt %s -p 'lower-kernels-to-loops{fast-reductions=false}' | filecheck %s --check-prefix=GEN

// A sum of 20000 points in registers: levels of 16384, 128 and 1 points.
// CHECK-LABEL: func.func @r_20000_0(
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[TOP:.*]] = scf.for %i0b2 = %start to %stop step %c16384 iter_args(%acc = %[[ZERO]]) -> (f32) {
// CHECK-NEXT:      %[[END2:.*]] = arith.addi %i0b2, %c16384 : index
// CHECK-NEXT:      %[[CUT2:.*]] = arith.minsi %[[END2]], %stop : index
// CHECK-NEXT:      %[[MID:.*]] = scf.for %i0b1 = %i0b2 to %[[CUT2]] step %c128 iter_args(%acc_1 = %[[ZERO]]) -> (f32) {
// CHECK-NEXT:        %[[END1:.*]] = arith.addi %i0b1, %c128 : index
// CHECK-NEXT:        %[[CUT1:.*]] = arith.minsi %[[END1]], %stop : index
// CHECK-NEXT:        %[[LOW:.*]] = scf.for %i0 = %i0b1 to %[[CUT1]] step %c1 iter_args(%acc_2 = %[[ZERO]]) -> (f32) {
// CHECK-NEXT:          %[[X:.*]] = memref.load %in0[%i0] : memref<20000xf32>
// CHECK-NEXT:          %[[S:.*]] = arith.addf %acc_2, %[[X]] : f32
// CHECK-NEXT:          scf.yield %[[S]] : f32
// CHECK-NEXT:        }
// CHECK-NEXT:        %[[S1:.*]] = arith.addf %acc_1, %[[LOW]] : f32
// CHECK-NEXT:        scf.yield %[[S1]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[S2:.*]] = arith.addf %acc, %[[MID]] : f32
// CHECK-NEXT:      scf.yield %[[S2]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.store %[[TOP]], %out[] : memref<f32>
// The general scheme (in memory) blocks the same way, one buffer per level.
// GEN-LABEL: func.func @r_20000_0(
// GEN:           %block = memref.alloc() : memref<f32>
// GEN-NEXT:      %block_1 = memref.alloc() : memref<f32>
// GEN-NEXT:      memref.store %[[Z:.*]], %out[] : memref<f32>
// GEN-NEXT:      scf.for %i0b2 = %start to %stop step %c16384 {
// GEN-NEXT:        memref.store %[[Z]], %block[] : memref<f32>
// GEN:             scf.for %i0b1 = %i0b2 to %{{.*}} step %c128 {
// GEN-NEXT:          memref.store %[[Z]], %block_1[] : memref<f32>
// GEN:               scf.for %i0 = %i0b1 to %{{.*}} step %c1 {
// GEN:                 memref.store %{{.*}}, %block_1[] : memref<f32>
// GEN-NEXT:          }
// GEN-NEXT:          %[[B1:.*]] = memref.load %block_1[] : memref<f32>
// GEN-NEXT:          %[[B:.*]] = memref.load %block[] : memref<f32>
// GEN-NEXT:          %[[SB:.*]] = arith.addf %[[B]], %[[B1]] : f32
// GEN-NEXT:          memref.store %[[SB]], %block[] : memref<f32>
// GEN-NEXT:        }
// GEN-NEXT:        %[[B0:.*]] = memref.load %block[] : memref<f32>
// GEN-NEXT:        %[[O:.*]] = memref.load %out[] : memref<f32>
// GEN-NEXT:        %[[SO:.*]] = arith.addf %[[O]], %[[B0]] : f32
// GEN-NEXT:        memref.store %[[SO]], %out[] : memref<f32>
// GEN-NEXT:      }
// GEN-NEXT:      memref.dealloc %block : memref<f32>
// GEN-NEXT:      memref.dealloc %block_1 : memref<f32>
func.func @full_sum(%x: tensor<20000xf32>) -> tensor<f32> {
  %0 = kernel.kernel @r_20000(%x) space [20000] reduce [0] sum reads [#kernel.access<(d0) -> (d0)>] writes affine_map<(d0) -> ()> : (tensor<20000xf32>) -> tensor<f32> {
  ^bb0(%v: f32):
    kernel.yield %v : f32
  }
  func.return %0 : tensor<f32>
}

// A column sum keeps its accumulators in memory, a row of them per level. 400 rows are
// levels of 4 blocks and of 128 rows; the blocks share the output's accumulators with
// d0 (3 x 4 values each), each block of 128 rows sums into a row of its own, which is
// then added to the output's.
// CHECK-LABEL: func.func @r_3_400_300_1(
// CHECK:         %block = memref.alloc() : memref<300xf32>
// CHECK-NEXT:    scf.for %i2 = %c0 to %c300 step %c1 {
// CHECK-NEXT:      memref.store %[[Z:.*]], %out[%i2] : memref<300xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %i0 = %start to %stop step %c1 {
// CHECK-NEXT:      scf.for %i1b1 = %c0 to %c400 step %c128 {
// CHECK-NEXT:        scf.for %[[C:.*]] = %c0 to %c300 step %c1 {
// CHECK-NEXT:          memref.store %[[Z]], %block[%[[C]]] : memref<300xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:        %[[END:.*]] = arith.addi %i1b1, %c128 : index
// CHECK-NEXT:        %[[CUT:.*]] = arith.minsi %[[END]], %c400 : index
// CHECK-NEXT:        scf.for %i1 = %i1b1 to %[[CUT]] step %c1 {
// CHECK-NEXT:          scf.for %[[C2:.*]] = %c0 to %c300 step %c1 {
// CHECK-NEXT:            %[[X:.*]] = memref.load %in0[%i0, %i1, %[[C2]]] : memref<3x400x300xf32>
// CHECK-NEXT:            %[[A:.*]] = memref.load %block[%[[C2]]] : memref<300xf32>
// CHECK-NEXT:            %[[S:.*]] = arith.addf %[[A]], %[[X]] : f32
// CHECK-NEXT:            memref.store %[[S]], %block[%[[C2]]] : memref<300xf32>
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:        scf.for %[[C3:.*]] = %c0 to %c300 step %c1 {
// CHECK-NEXT:          %[[B:.*]] = memref.load %block[%[[C3]]] : memref<300xf32>
// CHECK-NEXT:          %[[O:.*]] = memref.load %out[%[[C3]]] : memref<300xf32>
// CHECK-NEXT:          %[[SO:.*]] = arith.addf %[[O]], %[[B]] : f32
// CHECK-NEXT:          memref.store %[[SO]], %out[%[[C3]]] : memref<300xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %block : memref<300xf32>
func.func @column_sum(%x: tensor<3x400x300xf32>) -> tensor<300xf32> {
  %0 = kernel.kernel @r_3_400_300(%x) space [3, 400, 300] reduce [0, 1] sum reads [#kernel.access<(d0, d1, d2) -> (d0, d1, d2)>] writes affine_map<(d0, d1, d2) -> (d2)> schedule <order [0, 1, 2], tiles [0, 0, 0], vector 1, unroll 1, parallel []> : (tensor<3x400x300xf32>) -> tensor<300xf32> {
  ^bb0(%v: f32):
    kernel.yield %v : f32
  }
  func.return %0 : tensor<300xf32>
}
