"""A pass plugin for the `--load-pass-plugin` tests (not a test itself).

It registers `relu-to-maximum`, which rewrites `hl.relu %x` into
`hl.maximum %x, (ll.const FLOOR)`; FLOOR is its option, 0.0 by default. Two
more passes are defined without `@register_pass` (the plugin loader registers
the ModulePass classes a plugin defines) and misbehave on purpose:
`test-break-ir` leaves IR that does not verify, `test-raise` raises.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irtensor.dialects import hl, ll
from irtensor.passes import register_pass


@dataclass
class ReluToMaximum(RewritePattern):
    floor: float

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: hl.ReluOp, rewriter: PatternRewriter) -> None:
        bound = ll.ConstOp(self.floor, op.res.type)
        rewriter.replace_op(op, [bound, hl.MaximumOp(op.input, bound.res)])


class ReluToNot(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: hl.ReluOp, rewriter: PatternRewriter) -> None:
        rewriter.replace_op(op, hl.NotOp(op.input))


@register_pass
@dataclass(frozen=True)
class ReluToMaximumPass(ModulePass):
    """Rewrite hl.relu into hl.maximum with a constant (a test plugin)."""

    name = "relu-to-maximum"

    floor: float = 0.0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ReluToMaximum(self.floor)).rewrite_module(op)


@dataclass(frozen=True)
class BreakIRPass(ModulePass):
    """Replace each hl.relu by an hl.not of a float, which does not verify."""

    name = "test-break-ir"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ReluToNot()).rewrite_module(op)


@dataclass(frozen=True)
class RaisePass(ModulePass):
    """Raise a RuntimeError, as a buggy pass would."""

    name = "test-raise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise RuntimeError("this pass always fails")
