// --split-input-file: chunks are independent. Good chunks are printed (joined
// by `// -----`), each bad one prints its error with the line and column of
// the whole file, and the exit code is 1 if any chunk failed.
// RUN: not irtensor-opt %s --split-input-file > %t.out 2> %t.err
// RUN: filecheck %s < %t.out
// RUN: filecheck %s --check-prefix=ERR < %t.err
// A pipeline runs on each good chunk.
// RUN: not irtensor-opt %s --split-input-file -p cse,dce 2>/dev/null | filecheck %s

// CHECK:      func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK:      // -----
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   func.func @third(
// CHECK-NOT:  // -----

func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = hl.neg %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @second(%x: tensor<4xf32>) -> tensor<4xf32> {
// ERR: {{.*}}split-input-file.mlir:[[# @LINE + 1]]:3: error: 'hl.not' op operand 'input' has element type f32, expected the boolean element type i1
  %0 = hl.not %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @third(%x: tensor<4xi1>) -> tensor<4xi1> {
  %0 = hl.not %x : tensor<4xi1>
  func.return %0 : tensor<4xi1>
}
