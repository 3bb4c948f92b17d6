// The examples in the repository's examples/ folder: each verifies, runs
// through cse,dce with every stage printed, and every printed stage (from
// --dump-dir) reads back to the same text. (No CHECK of IR: the examples may
// change; their numbers are checked where they are fixed by construction.)

// RUN: rm -rf %t && mkdir -p %t

// The .mlir examples checked here; a new one fails this line until it has its
// RUN lines below.
// RUN: ls %S/../../../examples | grep "[.]mlir$" | filecheck %s --check-prefix=LIST
// LIST:      conv_block.mlir
// LIST-NEXT: mlp.mlir
// LIST-NEXT: seed_loop.mlir
// LIST-NOT:  {{.}}

// RUN: irtensor-opt %S/../../../examples/mlp.mlir -p cse,dce --print-ir-after-all --dump-dir %t/mlp > %t/mlp.out 2> %t/mlp.stages
// RUN: filecheck %s --check-prefix=STAGES < %t/mlp.stages
// RUN: irtensor-opt %t/mlp/00-input.mlir -o %t/mlp/00.again && diff %t/mlp/00-input.mlir %t/mlp/00.again
// RUN: irtensor-opt %t/mlp/01-cse.mlir -o %t/mlp/01.again && diff %t/mlp/01-cse.mlir %t/mlp/01.again
// RUN: irtensor-opt %t/mlp/02-dce.mlir -o %t/mlp/02.again && diff %t/mlp/02-dce.mlir %t/mlp/02.again
// RUN: diff %t/mlp/02-dce.mlir %t/mlp.out
// RUN: irtensor-opt %t/mlp.out --generic | irtensor-opt | diff %t/mlp.out -
// RUN: irtensor-opt %S/../../../examples/mlp.mlir --run | filecheck %s --check-prefix=MLP
// MLP:        // result #0: tensor<4x3xf32>

// RUN: irtensor-opt %S/../../../examples/conv_block.mlir -p cse,dce --print-ir-after-all --dump-dir %t/conv > %t/conv.out 2> %t/conv.stages
// RUN: filecheck %s --check-prefix=STAGES < %t/conv.stages
// RUN: irtensor-opt %t/conv/00-input.mlir -o %t/conv/00.again && diff %t/conv/00-input.mlir %t/conv/00.again
// RUN: irtensor-opt %t/conv/01-cse.mlir -o %t/conv/01.again && diff %t/conv/01-cse.mlir %t/conv/01.again
// RUN: irtensor-opt %t/conv/02-dce.mlir -o %t/conv/02.again && diff %t/conv/02-dce.mlir %t/conv/02.again
// RUN: diff %t/conv/02-dce.mlir %t/conv.out
// RUN: irtensor-opt %t/conv.out --generic | irtensor-opt | diff %t/conv.out -
// RUN: irtensor-opt %S/../../../examples/conv_block.mlir --run | filecheck %s --check-prefix=CONV
// CONV:       // result #0: tensor<2x4xf32>

// RUN: irtensor-opt %S/../../../examples/seed_loop.mlir -p cse,dce --print-ir-after-all --dump-dir %t/loop > %t/loop.out 2> %t/loop.stages
// RUN: filecheck %s --check-prefix=STAGES < %t/loop.stages
// RUN: irtensor-opt %t/loop/00-input.mlir -o %t/loop/00.again && diff %t/loop/00-input.mlir %t/loop/00.again
// RUN: irtensor-opt %t/loop/01-cse.mlir -o %t/loop/01.again && diff %t/loop/01-cse.mlir %t/loop/01.again
// RUN: irtensor-opt %t/loop/02-dce.mlir -o %t/loop/02.again && diff %t/loop/02-dce.mlir %t/loop/02.again
// RUN: diff %t/loop/02-dce.mlir %t/loop.out
// RUN: irtensor-opt %t/loop.out --generic | irtensor-opt | diff %t/loop.out -
// 0 + 0 + 1 + 2 + 3 + 4, before and after the passes.
// RUN: irtensor-opt %S/../../../examples/seed_loop.mlir --run | filecheck %s --check-prefix=LOOP
// RUN: irtensor-opt %S/../../../examples/seed_loop.mlir -p cse,dce --run | filecheck %s --check-prefix=LOOP
// LOOP:       // result #0: tensor<1xf32>
// LOOP-NEXT:  [10.]

// STAGES:      // -----// IR Dump After cse //----- //
// STAGES-NEXT: builtin.module {
// STAGES:      // -----// IR Dump After dce //----- //
// STAGES-NEXT: builtin.module {
