"""irtensor.testing: the semantic check catches a pass that changes meaning."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irtensor import ir
from irtensor.dialects import ll
from irtensor.testing import Program, assert_preserves_semantics, assert_same_results, programs

ADD = """
func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = ll.add %a, %b : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
"""


@dataclass(frozen=True)
class AddToMul(ModulePass):
    """test-add-to-mul: a wrong rewrite, a + b -> a * b."""

    name = "test-add-to-mul"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(AddIsMul()).rewrite_module(op)


class AddIsMul(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ll.AddOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, ll.MulOp(op.lhs, op.rhs))


def test_a_wrong_rewrite_is_caught_with_the_ir_before_and_after() -> None:
    a, b = np.array([1, 2, 3], np.float32), np.array([4, 5, 6], np.float32)
    with pytest.raises(AssertionError) as e:
        assert_preserves_semantics(AddToMul(), ir.parse(ADD), [a, b])
    text = str(e.value)
    assert "changed the results of @main" in text
    assert "--- IR before ---" in text and "ll.add" in text
    assert "--- IR after ---" in text and "ll.mul" in text


def test_a_meaning_preserving_pipeline_passes_and_returns_the_result() -> None:
    a = np.array([1, 2, 3], np.float32)
    after = assert_preserves_semantics("cse,dce", ir.parse(ADD), [a, a])
    assert "ll.add" in ir.to_text(after)


def test_results_compare_dtypes_shapes_and_nans() -> None:
    nan = np.array([np.nan, 1.0], np.float32)
    assert_same_results([nan], [nan.copy()])
    with pytest.raises(AssertionError, match="dtype"):
        assert_same_results([nan], [nan.astype(np.float64)])
    with pytest.raises(AssertionError, match="shape"):
        assert_same_results([nan], [nan.reshape(2, 1)])
    with pytest.raises(AssertionError):
        assert_same_results([np.array([1], np.int32)], [np.array([2], np.int32)])


@given(programs(dialect="ll"))
def test_generated_programs_come_with_inputs_of_their_argument_types(program: Program) -> None:
    args = program.module.body.block.first_op.body.block.args  # type: ignore[union-attr]
    assert len(args) == len(program.inputs)
    for arg, x in zip(args, program.inputs, strict=True):
        assert arg.type.get_shape() == x.shape  # type: ignore[attr-defined]
