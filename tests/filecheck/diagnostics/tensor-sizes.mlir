// Tensor sizes every stage can index: known (no `?`), below 2**63, with an
// element count int64 holds. The verifier refuses the others where they are
// written, before any pass or device sees them.
// RUN: not irtensor-opt %s --split-input-file 2>&1 | filecheck %s
// RUN: not irtensor-opt %s --split-input-file -p hl-to-kernel --run --device llvm 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK: {{.*}}tensor-sizes.mlir:[[# @LINE + 1]]:1: error: 'func.func' op argument #0 has type tensor<?xf32>: dynamic sizes (?) are not supported: every size must be known
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  func.return %x : tensor<?xf32>
}

// -----

func.func @dynamic_result() {
// CHECK: {{.*}}tensor-sizes.mlir:[[# @LINE + 1]]:3: error: 'll.const' op result #0 has type tensor<4x?xf32>: dynamic sizes (?) are not supported
  %0 = ll.const 1.0 : tensor<4x?xf32>
  func.return
}

// -----

// CHECK: {{.*}}tensor-sizes.mlir:[[# @LINE + 1]]:1: error: 'func.func' op argument #0 has type tensor<18446744073709551616x2xf32>: size 18446744073709551616 is larger than 2**63 - 1
func.func @huge_size(%x: tensor<18446744073709551616x2xf32>) {
  func.return
}

// -----

// CHECK: {{.*}}tensor-sizes.mlir:[[# @LINE + 1]]:1: error: 'func.func' op argument #0 has type tensor<4294967296x4294967296xf32>: 18446744073709551616 elements are more than int64 counts (2**63 - 1)
func.func @too_many_elements(%x: tensor<4294967296x4294967296xf32>) {
  func.return
}

// -----

// A declaration's signature too.
// CHECK: {{.*}}tensor-sizes.mlir:[[# @LINE + 1]]:1: error: 'func.func' op function result #0 has type tensor<?x4xi32>: dynamic sizes (?) are not supported
func.func private @declared(tensor<4xi32>) -> tensor<?x4xi32>

// -----

func.func @constant() {
// CHECK: {{.*}}tensor-sizes.mlir:[[# @LINE + 1]]:3: error: 'll.const' op result #0 has type tensor<9223372036854775808xi1>: size 9223372036854775808 is larger than 2**63 - 1
  %0 = ll.const true : tensor<9223372036854775808xi1>
  func.return
}
