"""Movement ops as index maps: how `fuse` turns a chain of views into one access.

Every `ll` movement op from shape S to shape T is an affine map from T's
indices to S's indices (with floordiv/mod for reshapes that split or merge
axes), plus, for `ll.pad`, the constraints under which the source index is
valid. Composing these maps is how a permute/reshape/pad/flip/stride chain
becomes a single masked read that copies nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.ir.affine import AffineExpr
from xdsl.ir.affine.affine_set import AffineConstraintExpr, AffineConstraintKind

from irtensor.dialects import ll
from irtensor.dialects._base import ints, shape_of

Exprs = tuple[AffineExpr, ...]
Constraints = tuple[AffineConstraintExpr, ...]


def dims(rank: int) -> Exprs:
    return tuple(AffineExpr.dimension(i) for i in range(rank))


def const(value: int) -> AffineExpr:
    return AffineExpr.constant(value)


def at_least_zero(expr: AffineExpr) -> AffineConstraintExpr:
    return AffineConstraintExpr(AffineConstraintKind.ge, expr, const(0))


@dataclass(frozen=True)
class IndexMap:
    """Source indices (and validity) of a movement, in terms of its result's dims."""

    exprs: Exprs
    valid: Constraints = ()
    pad: float = 0.0


def substitute(expr: AffineExpr, by: Sequence[AffineExpr]) -> AffineExpr:
    return expr.replace_dims_and_symbols(list(by), [])


def substitute_constraint(c: AffineConstraintExpr, by: Sequence[AffineExpr]
                          ) -> AffineConstraintExpr:
    return AffineConstraintExpr(c.kind, substitute(c.lhs, by), substitute(c.rhs, by))


def reshape_groups(src: Sequence[int], dst: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Pairs of (source axes, result axes) with equal element counts, in order."""
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(src) and j < len(dst):
        gs, gd, ps, pd = [i], [j], src[i], dst[j]
        i, j = i + 1, j + 1
        while ps != pd:
            if ps < pd:
                gs.append(i)
                ps, i = ps * src[i], i + 1
            else:
                gd.append(j)
                pd, j = pd * dst[j], j + 1
        groups.append((gs, gd))
    groups += [([k], []) for k in range(i, len(src))] + [([], [k]) for k in range(j, len(dst))]
    return groups


def reshape_map(src: Sequence[int], dst: Sequence[int]) -> Exprs:
    """Source indices of a row-major reshape, group by group, so a merge gives
    `d0 * 4 + d1` and a split `d0 floordiv 4`, `d0 mod 4`."""
    out: list[AffineExpr] = [const(0)] * len(src)
    if 0 in src or 0 in dst:
        return tuple(out)  # nothing is ever read
    t = dims(len(dst))
    for gs, gd in reshape_groups(src, dst):
        linear: AffineExpr = const(0)
        for k in gd:
            if dst[k] != 1:
                linear = linear * dst[k] + t[k]
        real = [k for k in gs if src[k] != 1]
        stride = 1
        for k in reversed(real):
            index = linear // stride if stride != 1 else linear
            out[k] = index if k == real[0] else index % src[k]
            stride *= src[k]
    return tuple(out)


def movement_map(op: Operation) -> IndexMap:
    """The IndexMap of one `ll` movement op."""
    src, dst = shape_of(op.operands[0]), shape_of(op.results[0])
    t = dims(len(dst))
    if isinstance(op, ll.ReshapeOp):
        return IndexMap(reshape_map(src, dst))
    if isinstance(op, ll.PermuteOp):
        perm = ints(op.perm)
        inverse = [perm.index(k) for k in range(len(perm))]
        return IndexMap(tuple(t[inverse[k]] for k in range(len(src))))
    if isinstance(op, ll.ExpandOp):
        return IndexMap(tuple(const(0) if s == 1 and d != 1 else t[k]
                              for k, (s, d) in enumerate(zip(src, dst, strict=True))))
    if isinstance(op, ll.ShrinkOp):
        return IndexMap(tuple(t[k] + s for k, s in enumerate(ints(op.starts))))
    if isinstance(op, ll.FlipOp):
        axes = ints(op.axes)
        return IndexMap(tuple(const(src[k] - 1) - t[k] if k in axes else t[k]
                              for k in range(len(src))))
    if isinstance(op, ll.StrideOp):
        return IndexMap(tuple(t[k] * s for k, s in enumerate(ints(op.strides))))
    if isinstance(op, ll.PadOp):
        exprs, valid = [], []
        for k, (lo, hi, size) in enumerate(zip(ints(op.low), ints(op.high), src, strict=True)):
            exprs.append(t[k] - lo if lo else t[k])
            if lo:
                valid.append(at_least_zero(t[k] - lo))
            if hi:
                valid.append(at_least_zero(const(size - 1 + lo) - t[k]))
        return IndexMap(tuple(exprs), tuple(valid), op.pad_value)
    raise TypeError(f"{op.name} is not a movement op")


MOVEMENT_OPS = ll.MOVEMENT_OPS
