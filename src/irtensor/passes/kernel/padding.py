"""Padded copies of a conv's windowed input, for pack-operands.

A conv with `padding` reads its input through windows that run off its edges: each
read is masked by the bounds of its indices and gives the pad value outside them. In
a channel block (schedule_blocks.channel_column) that read is the broadcast of every
step, for every point of the block, so the mask is tested seven times per vector of
products: LLVM turns the tests into branches around each load, spills the block, and
a 7 x 7 map's 3 x 3 conv ran at half of torch's speed. A copy of the input that has
the pad values written into its border (as im2col and oneDNN's padded layouts do)
makes the conv's read a plain load; the copy moves the input once per call, the conv
reads it ci x kh x kw x co / vector times.

A read is padded only when its mask says exactly "every index is within its axis" (a
pad of the input, as conv's lowering makes it): the copy's border then holds what the
mask gave, and the conv's read of the copy is the same value at every point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap, AffineSet
from xdsl.ir.affine.affine_set import AffineConstraintExpr, AffineConstraintKind

from irtensor.dialects._base import shape_of
from irtensor.dialects.kernel import AccessAttr, KernelOp
from irtensor.passes.kernel.cost_model import KernelModel
from irtensor.passes.kernel.schedule_blocks import (
    channel_column,
    contiguous_dim,
    taps_along,
    write_lanes,
)
from irtensor.passes.kernel.views import at_least_zero, bounds, const, linear_terms, simplify

# A padded copy is made only where it is at most this many times the input's size
# (a 7 x 7 map padded by 1 is 81 / 49 = 1.65 times; a 1-wide map's pads would be 3).
MAX_GROWTH = 2.0

LinearForm = tuple[tuple[tuple[str, int], ...], int]


@dataclass(frozen=True)
class PaddedRead:
    """Input `index` is read through a copy whose axis i starts at index `offsets[i]`
    of the input (negative: a border of pad values) and has `shape[i]` elements."""

    index: int
    offsets: tuple[int, ...]
    shape: tuple[int, ...]


def linear_form(expr: AffineExpr) -> LinearForm | None:
    """`expr` as sorted (atom, coefficient) pairs and a constant; None if not linear
    in dims (a floordiv or mod of a reshape)."""
    terms, constant = linear_terms(expr)
    merged: dict[str, int] = {}
    for coefficient, atom in terms:
        if not isinstance(atom, AffineDimExpr):
            return None
        merged[str(atom)] = merged.get(str(atom), 0) + coefficient
    return tuple(sorted((k, c) for k, c in merged.items() if c)), constant


def in_bounds_constraints(exprs: Sequence[AffineExpr], shape: Sequence[int]
                          ) -> list[LinearForm | None]:
    """The linear forms of `0 <= expr_i` and `expr_i <= shape_i - 1`, all axes."""
    forms = []
    for expr, size in zip(exprs, shape, strict=True):
        forms.append(linear_form(expr))
        forms.append(linear_form(const(size - 1) - expr))
    return forms


def mask_is_bounds(access: AccessAttr, shape: Sequence[int], sizes: Sequence[int]) -> bool:
    """Whether the access's mask holds exactly where all its indices are within `shape`
    over the iteration space `sizes` (every constraint is one of those bounds, and every
    bound that can fail is there)."""
    exprs = access.affine_map.results
    allowed = in_bounds_constraints(exprs, shape)
    present = set()
    for constraint in access.constraints.constraints:
        if constraint.kind != AffineConstraintKind.ge:
            return False
        form = linear_form(constraint.lhs - constraint.rhs)
        if form is None or form not in allowed:
            return False
        present.add(form)
    return all(form in present for form in needed_bounds(exprs, shape, sizes))


def needed_bounds(exprs: Sequence[AffineExpr], shape: Sequence[int], sizes: Sequence[int]
                  ) -> list[LinearForm | None]:
    """The bounds some point of `sizes` breaks: the constraints a mask must have."""
    needed = []
    for expr, size in zip(exprs, shape, strict=True):
        low, high = bounds(expr, sizes)
        if low < 0:
            needed.append(linear_form(expr))
        if high > size - 1:
            needed.append(linear_form(const(size - 1) - expr))
    return needed


def plan_pads(kernel: KernelOp, model: KernelModel) -> list[PaddedRead]:
    """The body reads of a channel-blocked conv (`schedule_blocks.channel_column`), or of
    a conv whose output rows are shorter than two vectors (`short_window_rows`), worth
    reading through a padded copy; `model` is the kernel's (`cost_model.model_of`)."""
    if not kernel.reduction_dims or kernel.schedule is not None:
        return []
    if channel_column(model) is None and not short_window_rows(model):
        return []
    plans = (plan_padded_read(kernel, index) for index in range(model.n_body_reads))
    return [plan for plan in plans if plan is not None]


def short_window_rows(model: KernelModel) -> bool:
    """Whether the output's rows are shorter than two vectors and read by a window's taps:
    a depthwise conv (no channel block: no output channel shares an input) on a 7 x 7 or
    14 x 14 map, whose every vector runs into a row's ends. Through the mask it ran at
    0.41 ms for 544 channels on 7 x 7 maps, through a padded copy at 0.08 (copy included;
    28-wide rows, two vectors with AVX2, ran slower with the copy: 0.12 -> 0.23 ms)."""
    row = contiguous_dim(model)
    return (row is not None and model.sizes[row] < 2 * write_lanes(model)
            and taps_along(model, row))


def within(span: tuple[int, int], size: int) -> bool:
    """Whether the values from span[0] to span[1] are all indices of an axis of `size`."""
    return 0 <= span[0] <= span[1] < size


def plan_padded_read(kernel: KernelOp, index: int) -> PaddedRead | None:
    """How to pad body input `index` of `kernel`, or None where its read is not a masked
    window whose mask is its bounds, or the copy would grow too much."""
    access = kernel.accesses[index]
    if not access.is_masked:
        return None
    shape = shape_of(kernel.inputs[index])
    sizes = kernel.sizes
    exprs = access.affine_map.results
    # an index the mask does not bound (a shuffled channel) needs no border, only bounds
    if any(linear_form(e) is None and not within(bounds(e, sizes), n)
           for e, n in zip(exprs, shape, strict=True)):
        return None
    if not mask_is_bounds(access, shape, sizes):
        return None
    offsets, padded = [], []
    for expr, size in zip(exprs, shape, strict=True):
        low, high = bounds(expr, sizes)
        start, end = min(low, 0), max(high, size - 1)
        offsets.append(start)
        padded.append(end - start + 1)
    if math.prod(padded) > MAX_GROWTH * max(math.prod(shape), 1):
        return None
    return PaddedRead(index, tuple(offsets), tuple(padded))


def pad_read(value: SSAValue, plan: PaddedRead, pad: float) -> AccessAttr:
    """The padded copy's read of `value`: index q of the copy is q + offset of the input,
    masked by the input's bounds where the copy runs past them, `pad` there."""
    shape = shape_of(value)
    rank = len(shape)
    indices = [AffineExpr.dimension(q) + const(start) if start else AffineExpr.dimension(q)
               for q, start in enumerate(plan.offsets)]
    valid: list[AffineConstraintExpr] = []
    for q, (start, size, extent) in enumerate(zip(plan.offsets, shape, plan.shape,
                                                  strict=True)):
        if start < 0:
            valid.append(at_least_zero(indices[q]))
        if start + extent > size:
            valid.append(at_least_zero(const(size - 1) - indices[q]))
    return AccessAttr(AffineMap(rank, 0, tuple(indices)), AffineSet(rank, 0, tuple(valid)),
                      pad)


def padded_access(access: AccessAttr, plan: PaddedRead, sizes: Sequence[int]) -> AccessAttr:
    """The kernel's read of the padded copy: the same indices, moved by the border, and
    no mask."""
    old = access.affine_map
    exprs = tuple(simplify(expr + const(-start), sizes) if start else expr
                  for expr, start in zip(old.results, plan.offsets, strict=True))
    return AccessAttr(AffineMap(old.num_dims, old.num_symbols, exprs))


__all__ = ["MAX_GROWTH", "PaddedRead", "mask_is_bounds", "pad_read", "padded_access",
           "plan_padded_read", "plan_pads", "short_window_rows"]
