// --dump-dir DIR writes the input and the IR after each pass into numbered
// files, each of which irtensor-opt reads back.
// RUN: rm -rf %t && irtensor-opt %s -p cse,dce --dump-dir %t > %t.final
// RUN: ls %t | filecheck %s --check-prefix=FILES
// FILES:      00-input.mlir
// FILES-NEXT: 01-cse.mlir
// FILES-NEXT: 02-dce.mlir
// FILES-NOT:  {{.}}

// RUN: cat %t/00-input.mlir | filecheck %s --check-prefix=INPUT
// INPUT:      %b = hl.exp %x
// INPUT:      %dead = hl.neg %x

// RUN: cat %t/01-cse.mlir | filecheck %s --check-prefix=STAGE
// RUN: cat %t/02-dce.mlir | filecheck %s --check-prefix=STAGE
// STAGE:      builtin.module {
// STAGE-NEXT:   func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
// STAGE-NEXT:     %a = hl.exp %x : tensor<4xf32>
// STAGE-NEXT:     %s = hl.add %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// STAGE-NEXT:     func.return %s : tensor<4xf32>

// The last stage is the final output, and every stage is a fixed point.
// RUN: diff %t/02-dce.mlir %t.final
// RUN: irtensor-opt %t/00-input.mlir -o %t.0 && diff %t/00-input.mlir %t.0
// RUN: irtensor-opt %t/01-cse.mlir -o %t.1 && diff %t/01-cse.mlir %t.1

// A folder that does not exist yet is created, parents included.
// RUN: rm -rf %t.new && irtensor-opt %s -p dce --dump-dir %t.new/a/b > /dev/null
// RUN: ls %t.new/a/b | filecheck %s --check-prefix=NEW
// NEW:      00-input.mlir
// NEW-NEXT: 01-dce.mlir

// --generic dumps are generic.
// RUN: rm -rf %t.g && irtensor-opt %s -p cse --generic --dump-dir %t.g > /dev/null
// RUN: cat %t.g/01-cse.mlir | filecheck %s --check-prefix=GENERIC
// GENERIC:    "hl.add"(%a, %a)

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = hl.exp %x : tensor<4xf32>
  %b = hl.exp %x : tensor<4xf32>
  %dead = hl.neg %x : tensor<4xf32>
  %s = hl.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
