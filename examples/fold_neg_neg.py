"""A pass of your own: fold-neg-neg rewrites hl.neg(hl.neg(x)) to x.

Load it into irtensor-opt (`--load-pass-plugin examples/fold_neg_neg.py`), import it and
put it in what realizing runs (`t.realize(pipeline=...)`, `irtensor.Context`), and
property-test it (docs/inspect.md walks through all three). Run as a script, it shows
the pass at work on a Tensor program.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from irtensor.dialects import hl
from irtensor.passes import register_pass, trace


class NegNegToInput(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: hl.NegOp, rewriter: PatternRewriter) -> None:
        if isinstance(inner := op.input.owner, hl.NegOp):
            rewriter.replace(op, [], [inner.input])


@register_pass
@dataclass(frozen=True)
class FoldNegNeg(ModulePass):
    """fold-neg-neg: rewrite hl.neg(hl.neg(x)) to x."""

    name = "fold-neg-neg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        trace.rewrite_module(op, [NegNegToInput()])


MY_PIPELINE = "fold-neg-neg,hl-to-kernel"

if __name__ == "__main__":
    import numpy as np

    import irtensor
    from irtensor import Tensor

    x = Tensor(np.arange(4, dtype=np.float32))
    y = x.neg().neg() * 2
    with irtensor.Context(pipeline=MY_PIPELINE, trace=True) as ctx:
        assert y.numpy().tolist() == [0.0, 2.0, 4.0, 6.0]
    assert ctx.trace.fired("fold-neg-neg") == {"NegNegToInput": 1}  # type: ignore[union-attr]
    print(ctx.trace.text())  # type: ignore[union-attr]
