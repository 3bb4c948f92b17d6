// irtensor's dialects and passes load into xdsl-opt through xDSL's plugin entry point
// (the `xdsl.universe` group; src/irtensor/universe.py).
// RUN: xdsl-opt %s -p decompose-hlops,fuse | filecheck %s
// RUN: xdsl-opt %s | filecheck %s --check-prefix=PARSED

// PARSED: hl.relu %{{.*}} : tensor<4xf32>
// CHECK:      kernel.kernel @E_4(%{{.*}}) space [4]
// CHECK:        arith.maximumf
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = hl.relu %a : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
