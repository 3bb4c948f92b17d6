// `-p` runs a pipeline: cse merges the two identical hl.exp ops, and the dead
// hl.neg is gone after cse,dce.
// RUN: irtensor-opt %s -p cse,dce | filecheck %s
// RUN: irtensor-opt %s -p dce | filecheck %s --check-prefix=DCE
// RUN: irtensor-opt %s --passes=cse | irtensor-opt -p dce | filecheck %s
// An empty pipeline prints the input back.
// RUN: irtensor-opt %s -p "" | filecheck %s --check-prefix=NONE
// RUN: irtensor-opt %s -p canonicalize,cse,dce | filecheck %s

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = hl.exp %x : tensor<4xf32>
  %b = hl.exp %x : tensor<4xf32>
  %dead = hl.neg %x : tensor<4xf32>
  %s = hl.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}

// CHECK-LABEL: func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %a = hl.exp %x : tensor<4xf32>
// CHECK-NEXT:    %s = hl.add %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %s : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-NOT:   hl.neg

// DCE-LABEL: func.func @main(
// DCE-NEXT:    %a = hl.exp %x : tensor<4xf32>
// DCE-NEXT:    %b = hl.exp %x : tensor<4xf32>
// DCE-NEXT:    %s = hl.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// DCE-NEXT:    func.return %s : tensor<4xf32>

// NONE:        %dead = hl.neg %x : tensor<4xf32>
