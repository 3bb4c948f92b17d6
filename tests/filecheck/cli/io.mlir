// Input from stdin (`-` or no file at all) and output to a file with -o.
// RUN: irtensor-opt - < %s | filecheck %s
// RUN: irtensor-opt < %s | filecheck %s
// RUN: cat %s | irtensor-opt -p cse - | filecheck %s
// RUN: rm -f %t.out && irtensor-opt %s -o %t.out > %t.stdout
// RUN: filecheck %s < %t.out
// RUN: filecheck %s --check-prefix=EMPTY --allow-empty < %t.stdout
// RUN: irtensor-opt %s --output=%t.out2 && diff %t.out %t.out2
// EMPTY-NOT: {{.}}

// Errors in stdin input are located in `<stdin>`.
// RUN: not irtensor-opt - < %S/Inputs/bad-ir.mlir 2>&1 | filecheck %s --check-prefix=STDIN-ERR
// STDIN-ERR: <stdin>:3:3: error: 'hl.exp' op

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %0 = hl.abs %x : tensor<4xf32>
// CHECK-NEXT:     func.return %0 : tensor<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = hl.abs %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
