"""`LLBuilder`: emit `ll` ops in front of the op a pattern is rewriting.

    b = LLBuilder(rewriter, like=op)
    y = b.add(x, b.neg(b.broadcast(z, shape_of(x))))
    rewriter.replace(op, [], [y])

Every method inserts one `ll` op (or none, when the op would change nothing:
a reshape to the same shape, a pad by zero, a permute by the identity) and
returns its result; a half-precision `sum` is three (cast to f32, sum, cast
back). The new values are named after the op being replaced, so `%s = hl.sub ...`
becomes `%s = ll.neg ...`, `%s_1 = ll.add ...` in the printed IR.
Operands of `ll` ops never broadcast: `broadcast` makes shapes match first.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType, bf16, f16, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from irtensor.dialects import ll
from irtensor.dialects._base import element_of, shape_of

Shape = tuple[int, ...]


class LLBuilder:
    """Inserts `ll` ops before the matched op through a `PatternRewriter`."""

    def __init__(self, rewriter: PatternRewriter, like: Operation | None = None):
        self.rewriter = rewriter
        if like is not None and like.results:
            rewriter.name_hint = like.results[0].name_hint

    def emit(self, op: Operation) -> SSAValue:
        self.rewriter.insert(op)
        return op.results[0]

    # ----------------------------------------------------------------------- constants

    def full(self, value: float | int | bool, shape: Sequence[int], element: Attribute) -> SSAValue:
        """`ll.const value : tensor<shape x element>`."""
        return self.emit(ll.ConstOp(value, TensorType(element, list(shape))))

    def const(self, value: float | int | bool, like: SSAValue) -> SSAValue:
        """A scalar constant of `like`'s shape and element type."""
        return self.full(value, shape_of(like), element_of(like))

    # ----------------------------------------------------------------------- unary

    def neg(self, x: SSAValue) -> SSAValue:
        return self.emit(ll.NegOp(x))

    def exp2(self, x: SSAValue) -> SSAValue:
        return self.emit(ll.Exp2Op(x))

    def log2(self, x: SSAValue) -> SSAValue:
        return self.emit(ll.Log2Op(x))

    def sqrt(self, x: SSAValue) -> SSAValue:
        return self.emit(ll.SqrtOp(x))

    def reciprocal(self, x: SSAValue) -> SSAValue:
        return self.emit(ll.ReciprocalOp(x))

    def sin(self, x: SSAValue) -> SSAValue:
        return self.emit(ll.SinOp(x))

    def cast(self, x: SSAValue, element: Attribute) -> SSAValue:
        """`ll.cast` to `element`; nothing when `x` already has that element type."""
        return x if element_of(x) == element else self.emit(ll.CastOp(x, element))

    # ----------------------------------------------------------------------- binary, ternary

    def add(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.emit(ll.AddOp(x, y))

    def mul(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.emit(ll.MulOp(x, y))

    def max(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.emit(ll.MaxOp(x, y))

    def div(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.emit(ll.DivOp(x, y))

    def idiv(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.emit(ll.IDivOp(x, y))

    def mod(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.emit(ll.ModOp(x, y))

    def cmplt(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.emit(ll.CmpLtOp(x, y))

    def cmpeq(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.emit(ll.CmpEqOp(x, y))

    def where(self, cond: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.emit(ll.WhereOp(cond, x, y))

    # ----------------------------------------------------------------------- reduce

    def reduce(self, kind: str, x: SSAValue, axes: Sequence[int], keepdim: bool) -> SSAValue:
        """`ll.reduce` (which keeps the reduced axes as 1s), then a reshape that drops
        them unless `keepdim`. Over no axes it is still emitted: a sum over nothing
        is x + 0, which turns -0.0 into 0.0 (numpy's sum with axis=() does)."""
        kept = self.emit(ll.ReduceOp(kind, x, tuple(axes)))
        dropped = tuple(d for i, d in enumerate(shape_of(x)) if i not in axes)
        return kept if keepdim else self.reshape(kept, dropped)

    def sum(self, x: SSAValue, axes: Sequence[int], keepdim: bool = False) -> SSAValue:
        """A sum of f16 or bf16 accumulates in f32 and rounds once (as torch and tinygrad
        do): their 11 and 8 bits would lose every addend below 2**-11 (2**-8) of the sum,
        and f16 overflows past 65504."""
        element = element_of(x)
        if element not in (f16, bf16):
            return self.reduce("sum", x, axes, keepdim)
        return self.cast(self.reduce("sum", self.cast(x, f32), axes, keepdim), element)

    def sum_of_products(self, x: SSAValue, y: SSAValue, axes: Sequence[int],
                        keepdim: bool = False) -> SSAValue:
        """sum(x * y) over `axes` (matmul, conv); f16 and bf16 products are exact in f32
        (11 or 8 bits times as many fit in its 24), so they are taken there, summed there and
        the sum rounded once, as torch and the matrix units do."""
        element = element_of(x)
        if element not in (f16, bf16):
            return self.reduce("sum", self.mul(x, y), axes, keepdim)
        product = self.mul(self.cast(x, f32), self.cast(y, f32))
        return self.cast(self.reduce("sum", product, axes, keepdim), element)

    def max_over(self, x: SSAValue, axes: Sequence[int], keepdim: bool = False) -> SSAValue:
        return self.reduce("max", x, axes, keepdim)

    # ----------------------------------------------------------------------- movement

    def reshape(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        shape = tuple(shape)
        return x if shape_of(x) == shape else self.emit(ll.ReshapeOp(x, shape))

    def expand(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        shape = tuple(shape)
        return x if shape_of(x) == shape else self.emit(ll.ExpandOp(x, shape))

    def broadcast(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        """numpy's broadcast_to as views: reshape to prepend 1s, then expand."""
        ones = (1,) * (len(shape) - len(shape_of(x)))
        return self.expand(self.reshape(x, (*ones, *shape_of(x))), shape)

    def permute(self, x: SSAValue, perm: Sequence[int]) -> SSAValue:
        perm = tuple(perm)
        return x if perm == tuple(range(len(perm))) else self.emit(ll.PermuteOp(x, perm))

    def pad(
        self, x: SSAValue, low: Sequence[int], high: Sequence[int], value: float = 0.0
    ) -> SSAValue:
        if not any(low) and not any(high):
            return x
        return self.emit(ll.PadOp(x, tuple(low), tuple(high), value))

    def shrink(self, x: SSAValue, starts: Sequence[int], limits: Sequence[int]) -> SSAValue:
        if not any(starts) and tuple(limits) == shape_of(x):
            return x
        return self.emit(ll.ShrinkOp(x, tuple(starts), tuple(limits)))

    def stride(self, x: SSAValue, strides: Sequence[int]) -> SSAValue:
        return x if all(s == 1 for s in strides) else self.emit(ll.StrideOp(x, tuple(strides)))

    def flip(self, x: SSAValue, axes: Sequence[int]) -> SSAValue:
        return self.emit(ll.FlipOp(x, tuple(axes))) if axes else x
