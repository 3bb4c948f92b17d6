// Seeing into a pipeline: --trace-rewrites prints each pattern application (pass,
// pattern, location, the op before and the ops it became), --pass-statistics the ops
// before/after and patterns fired per pass, --explain-fusion the kernels and why each
// boundary between them exists.
// RUN: irtensor-opt %s -p decompose-hlops,fold-constants --trace-rewrites -o /dev/null 2>&1 | filecheck %s --check-prefix=TRACE
// RUN: irtensor-opt %s -p hl-to-ll --pass-statistics -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: irtensor-opt %s --explain-fusion | filecheck %s --check-prefix=EXPLAIN

// TRACE:      ===- rewrite trace -===
// TRACE:      [decompose-hlops] DecomposeElementwise at {{.*}}inspect.mlir:38:3
// TRACE-NEXT:   - %e = hl.exp %x : tensor<4x8xf32>
// TRACE-NEXT:   + %e = ll.const 1.4426950216293335 : tensor<4x8xf32>
// TRACE-NEXT:   + %e_1 = ll.mul %x, %e : tensor<4x8xf32>
// TRACE-NEXT:   + %e_2 = ll.exp2 %e_1 : tensor<4x8xf32>
// TRACE-NEXT: [decompose-hlops] DecomposeStructured at {{.*}}inspect.mlir:39:3
// TRACE-NEXT:   - %s = hl.sum %e axes [1] : tensor<4x8xf32> -> tensor<4xf32>
// TRACE-NEXT:   + %s = ll.reduce sum %e axes [1] : tensor<4x8xf32> -> tensor<4x1xf32>
// TRACE-NEXT:   + %s_1 = ll.reshape %s : tensor<4x1xf32> -> tensor<4xf32>
// TRACE:      [fold-constants] MovementIdentity at
// TRACE-NEXT:   - %k = ll.reshape %s : tensor<4x1xf32> -> tensor<4x1xf32>
// TRACE-NEXT:   (replaced by values that existed)
// TRACE:      [fold-constants] MulOne at

// STATS:      ===- pass statistics -===
// STATS-NEXT: ops before  ops after  pass: patterns fired
// STATS-NEXT: {{ +}}9 {{ +}}13  decompose-hlops: DecomposeElementwise 4, DecomposeStructured 2
// STATS-NEXT: {{ +}}13 {{ +}}13  conv-to-mul-sum
// STATS-NEXT: {{ +}}13 {{ +}}9  fold-constants: ComposeMovement 1, MovementIdentity 1, MulOne 1

// EXPLAIN:      @main: 2 kernels
// EXPLAIN-NEXT: #1 @r_4_8  space [4, 8], sum over dims [1]
// EXPLAIN-NEXT:     reads: argument %x
// EXPLAIN-NEXT:     a kernel of its own because 'll.reduce' has 2 consumers: a reduction is computed once
// EXPLAIN-NEXT: #2 @E_4_8  space [4, 8]
// EXPLAIN-NEXT:     reads: argument %x, kernel #1 @r_4_8
// EXPLAIN-NEXT:     a kernel of its own because a result of the function
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = hl.exp %x : tensor<4x8xf32>
  %s = hl.sum %e axes [1] : tensor<4x8xf32> -> tensor<4xf32>
  %k = hl.reshape %s : tensor<4xf32> -> tensor<4x1xf32>
  %one = ll.const 1.0 : tensor<4x1xf32>
  %t = hl.mul %k, %one : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %u = hl.add %t, %k : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %r = hl.div %e, %u : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
