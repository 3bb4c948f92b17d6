"""merge_duplicates (lower-kernels-to-loops' cse): the merges xDSL's cse makes, in one walk."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.transforms.common_subexpression_elimination import cse

from irtensor import ir
from irtensor.passes.loops.merge_duplicates import merge_duplicates

KERNEL = """
func.func @k(%a: memref<8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c0b = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %x = memref.load %a[%c0] : memref<8xf32>
  %y = memref.load %a[%c0b] : memref<8xf32>
  %s = arith.addf %x, %y : f32
  memref.store %s, %out[%c0] : memref<8xf32>
  %z = memref.load %a[%c0] : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %c1b = arith.constant 1 : index
    %j = arith.addi %i, %c1b : index
    %k = arith.addi %i, %c1 : index
    %u = memref.load %a[%j] : memref<8xf32>
    %v = memref.load %a[%k] : memref<8xf32>
    %w = memref.load %a[%c0] : memref<8xf32>
    %t = arith.addf %u, %v : f32
    %t2 = arith.addf %t, %w : f32
    %t3 = arith.addf %t2, %z : f32
    memref.store %t3, %out[%i] : memref<8xf32>
  }
  %unused = arith.mulf %z, %z : f32
  func.return
}
"""


def _body(text: str) -> func.FuncOp:
    (function,) = ir.parse(text).ops
    assert isinstance(function, func.FuncOp)
    return function


def test_the_same_merges_as_xdsl_cse() -> None:
    ours, theirs = _body(KERNEL), _body(KERNEL)
    merge_duplicates(ours.body.block)
    cse(theirs)
    assert ir.to_text(ours) == ir.to_text(theirs)


def test_loads_merge_only_without_a_store_between() -> None:
    function = _body(KERNEL)
    merge_duplicates(function.body.block)
    text = ir.to_text(function)
    # before the store: one load of a[0]; after it, a load of its own; inside the
    # loop (a block of its own) a[i + 1] once and a[0] again
    assert text.count("memref.load") == 4, text
    assert text.count("arith.constant 0 : index") == 1
    assert text.count("arith.constant 1 : index") == 1  # the loop's merged with the outer
    assert text.count("arith.addi") == 1
    assert "arith.mulf" not in text  # unused and effect-free: erased
    assert text.count("memref.store") == 2 and "scf.for" in text
