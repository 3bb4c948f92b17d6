// --run executes @main (or --entry) with the reference interpreter after the
// pipeline and prints each result as `// result #N: TYPE` and its values.

// Inputs from .npy files, by argument name or by position.
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.array([0.0, 1.0, -1.0, 2.0], dtype=np.float32))"
// RUN: %python -c "import numpy as np; np.save('%t.n.npy', np.array([[1, -2, 3], [0, 5, -6]], dtype=np.int32))"
// RUN: %python -c "import numpy as np; np.save('%t.a.npy', np.array(3.0))"
// RUN: irtensor-opt %s --run --input x=%t.x.npy --input n=%t.n.npy | filecheck %s
// RUN: irtensor-opt %s --run --input 0=%t.x.npy --input 1=%t.n.npy | filecheck %s
// RUN: irtensor-opt %s -p cse,dce --run --input n=%t.n.npy --input x=%t.x.npy | filecheck %s

// 2 * exp(x); the row sums of n; n > 0.
// CHECK:      // result #0: tensor<4xf32>
// CHECK-NEXT: [ 2.      ,  5.436564,  0.735759, 14.778111]
// CHECK-NEXT: // result #1: tensor<2xi32>
// CHECK-NEXT: [ 2, -1]
// CHECK-NEXT: // result #2: tensor<2x3xi1>
// CHECK-NEXT: {{\[\[}} True, False,  True],
// CHECK-NEXT:  [False,  True, False]]
// CHECK-NOT:  {{.}}

// RUN: irtensor-opt %s --run --entry other --input a=%t.a.npy | filecheck %s --check-prefix=OTHER
// OTHER:      // result #0: tensor<f64>
// OTHER-NEXT: 1.5

// Inputs not given are random, from --seed (0 by default): runs repeat.
// RUN: irtensor-opt %s --run > %t.r0
// RUN: irtensor-opt %s --run --seed 0 > %t.r0b
// RUN: irtensor-opt %s --run --seed 1 > %t.r1
// RUN: diff %t.r0 %t.r0b
// RUN: not diff %t.r0 %t.r1
// RUN: filecheck %s --check-prefix=RANDOM < %t.r0
// RANDOM:      // result #0: tensor<4xf32>
// RANDOM-NEXT: {{^\[( *-?[0-9]+\.[0-9]*,){3} *-?[0-9]+\.[0-9]* *\]$}}
// RANDOM-NEXT: // result #1: tensor<2xi32>
// RANDOM-NEXT: {{^\[ *-?[0-9]+, *-?[0-9]+\]$}}
// RANDOM-NEXT: // result #2: tensor<2x3xi1>

// Given inputs are used as given; only the rest is random.
// RUN: irtensor-opt %s --run --seed 1 --input x=%t.x.npy | filecheck %s --check-prefix=MIXED
// MIXED:      // result #0: tensor<4xf32>
// MIXED-NEXT: [ 2.      ,  5.436564,  0.735759, 14.778111]

// Mistakes in the inputs are one error line, exit code 1.
// RUN: not irtensor-opt %s --run --input y=%t.x.npy 2>&1 | filecheck %s --check-prefix=NONAME
// NONAME:     error: --input y={{.*}}: @main has no argument 'y'
// RUN: not irtensor-opt %s --run --input 2=%t.x.npy 2>&1 | filecheck %s --check-prefix=NOPOS
// NOPOS:      error: --input 2={{.*}}: @main has no argument '2'
// RUN: not irtensor-opt %s --run --input x 2>&1 | filecheck %s --check-prefix=NOEQ
// NOEQ:       error: --input x: expected NAME=FILE.npy
// RUN: not irtensor-opt %s --run --input x=%t.missing.npy 2>&1 | filecheck %s --check-prefix=NOFILE
// NOFILE:     error: --input x={{.*}}missing.npy: cannot load {{.*}}missing.npy
// RUN: not irtensor-opt %s --run --input n=%t.x.npy 2>&1 | filecheck %s --check-prefix=SHAPE
// SHAPE:      error: @main argument #1: expected tensor<2x3xi32> (shape (2, 3), int32), got shape (4,) float32
// RUN: not irtensor-opt %s --run --input x=%t.a.npy 2>&1 | filecheck %s --check-prefix=DTYPE
// DTYPE:      error: @main argument #0: expected tensor<4xf32> (shape (4,), float32), got shape () float64
// RUN: not irtensor-opt %s --run --entry nosuch 2>&1 | filecheck %s --check-prefix=ENTRY
// ENTRY:      error: no function @nosuch to run

func.func @main(%x: tensor<4xf32>, %n: tensor<2x3xi32>) -> (tensor<4xf32>, tensor<2xi32>, tensor<2x3xi1>) {
  %e = hl.exp %x : tensor<4xf32>
  %e2 = hl.exp %x : tensor<4xf32>
  %s = hl.add %e, %e2 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %r = hl.sum %n axes [1] : tensor<2x3xi32> -> tensor<2xi32>
  %z = ll.const 0 : tensor<2x3xi32>
  %p = hl.gt %n, %z : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi1>
  func.return %s, %r, %p : tensor<4xf32>, tensor<2xi32>, tensor<2x3xi1>
}

func.func @other(%a: tensor<f64>) -> tensor<f64> {
  %c = ll.const 0.5 : tensor<f64>
  %m = ll.mul %a, %c : tensor<f64>
  func.return %m : tensor<f64>
}
