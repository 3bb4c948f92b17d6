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
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
)
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


def simplify_constraint(c: AffineConstraintExpr, sizes: Sequence[int]) -> AffineConstraintExpr:
    return AffineConstraintExpr(c.kind, simplify(c.lhs - c.rhs, sizes), const(0))


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


# --------------------------------------------------------------------------- simplification


def linear_terms(expr: AffineExpr) -> tuple[list[tuple[int, AffineExpr]], int]:
    """expr as sum(coefficient * atom) + constant; atoms are dims or non-linear parts."""
    if isinstance(expr, AffineConstantExpr):
        return [], expr.value
    if isinstance(expr, AffineBinaryOpExpr) and expr.kind == AffineBinaryOpKind.Add:
        (a, ka), (b, kb) = linear_terms(expr.lhs), linear_terms(expr.rhs)
        return a + b, ka + kb
    if (isinstance(expr, AffineBinaryOpExpr) and expr.kind == AffineBinaryOpKind.Mul
            and isinstance(expr.rhs, AffineConstantExpr)):
        terms, k = linear_terms(expr.lhs)
        c = expr.rhs.value
        return [(t * c, atom) for t, atom in terms if t * c], k * c
    return [(1, expr)], 0


def _join(terms: list[tuple[int, AffineExpr]], constant: int) -> AffineExpr:
    merged: dict[str, tuple[int, AffineExpr]] = {}
    for c, atom in terms:
        key = str(atom)
        merged[key] = (merged[key][0] + c if key in merged else c, atom)
    out: AffineExpr = const(0)
    for c, atom in sorted(merged.values(), key=lambda t: str(t[1])):
        if c:
            out = out + (atom if c == 1 else atom * c)
    return out + constant if constant else out


def bounds(expr: AffineExpr, sizes: Sequence[int]) -> tuple[int, int]:
    """Smallest and largest value of `expr` over the index space `sizes`."""
    if isinstance(expr, AffineDimExpr):
        return 0, max(sizes[expr.position] - 1, 0)
    if isinstance(expr, AffineConstantExpr):
        return expr.value, expr.value
    assert isinstance(expr, AffineBinaryOpExpr)
    (a, b), (c, d) = bounds(expr.lhs, sizes), bounds(expr.rhs, sizes)
    if expr.kind == AffineBinaryOpKind.Add:
        return a + c, b + d
    if expr.kind == AffineBinaryOpKind.Mul:
        products = (a * c, a * d, b * c, b * d)
        return min(products), max(products)
    if expr.kind == AffineBinaryOpKind.Mod:
        return 0, max(d - 1, 0)
    if expr.kind == AffineBinaryOpKind.FloorDiv and c == d and c > 0:
        return a // c, b // c
    return -(2**62), 2**62


def simplify(expr: AffineExpr, sizes: Sequence[int]) -> AffineExpr:
    """Fold `mod` and `floordiv` by constants using the ranges of the dims, so that
    window and reshape arithmetic reads as the plain index it is."""
    if not isinstance(expr, AffineBinaryOpExpr):
        return expr
    lhs, rhs = simplify(expr.lhs, sizes), simplify(expr.rhs, sizes)
    kind = expr.kind
    if kind in (AffineBinaryOpKind.Mod, AffineBinaryOpKind.FloorDiv) and isinstance(
        rhs, AffineConstantExpr
    ) and rhs.value > 0:
        n = rhs.value
        if kind == AffineBinaryOpKind.Mod:
            return _simplify_mod(lhs, n, sizes)
        return _simplify_floordiv(lhs, n, sizes)
    if kind == AffineBinaryOpKind.Add:
        terms, k = _add_terms(lhs, rhs)
        return _join(_recombine(terms, sizes), k)
    if kind == AffineBinaryOpKind.Mul:
        return lhs * rhs
    return AffineBinaryOpExpr(kind, lhs, rhs)


def _add_terms(a: AffineExpr, b: AffineExpr) -> tuple[list[tuple[int, AffineExpr]], int]:
    (ta, ka), (tb, kb) = linear_terms(a), linear_terms(b)
    return ta + tb, ka + kb


def _recombine(terms: list[tuple[int, AffineExpr]], sizes: Sequence[int]
               ) -> list[tuple[int, AffineExpr]]:
    """(e floordiv n) * c*n + (e mod n) * c is c * e: undo a split that a merge follows."""
    out = list(terms)
    for i, (ci, a) in enumerate(out):
        if not (isinstance(a, AffineBinaryOpExpr) and a.kind == AffineBinaryOpKind.FloorDiv
                and isinstance(a.rhs, AffineConstantExpr)):
            continue
        n = a.rhs.value
        for j, (cj, b) in enumerate(out):
            if (isinstance(b, AffineBinaryOpExpr) and b.kind == AffineBinaryOpKind.Mod
                    and str(b.lhs) == str(a.lhs) and isinstance(b.rhs, AffineConstantExpr)
                    and b.rhs.value == n and ci == cj * n and cj):
                rest = [t for k, t in enumerate(out) if k not in (i, j)]
                inner, constant = linear_terms(simplify(a.lhs, sizes))
                merged = [(c * cj, atom) for c, atom in inner]
                if constant:
                    merged.append((constant * cj, const(1)))
                return _recombine(rest + merged, sizes)
    return out


def _simplify_mod(lhs: AffineExpr, n: int, sizes: Sequence[int]) -> AffineExpr:
    # (e mod m) mod n is e mod n when n divides m
    if (isinstance(lhs, AffineBinaryOpExpr) and lhs.kind == AffineBinaryOpKind.Mod
            and isinstance(lhs.rhs, AffineConstantExpr) and lhs.rhs.value % n == 0):
        lhs = lhs.lhs
    terms, k = linear_terms(lhs)
    kept = [(c % n, atom) for c, atom in terms if c % n]
    reduced = _join(kept, k % n)  # n*x + r = r (mod n)
    lo, hi = bounds(reduced, sizes)
    if lo >= 0 and hi < n:
        return reduced
    # (c*x + r) mod (c*m) = c*(x mod m) + r when 0 <= r < c: a merged index taken apart
    for i, (c, atom) in enumerate(kept):
        others = _join([t for j, t in enumerate(kept) if j != i], k % n)
        o_lo, o_hi = bounds(others, sizes)
        if c > 1 and n % c == 0 and o_lo >= 0 and o_hi < c:
            return _join([(c, _simplify_mod(atom, n // c, sizes)),
                          *(t for j, t in enumerate(kept) if j != i)], k % n)
    return reduced % n


def _simplify_floordiv(lhs: AffineExpr, n: int, sizes: Sequence[int]) -> AffineExpr:
    terms, k = linear_terms(lhs)
    # floor((n*a + r) / n) = a + floor(r / n), exactly
    whole = [(c // n, atom) for c, atom in terms if c % n == 0]
    rest = [(c, atom) for c, atom in terms if c % n != 0]
    rest_k = k % n
    whole_k = k // n
    lo, hi = bounds(_join(rest, rest_k), sizes)
    if lo >= 0 and hi < n:  # the remainder never reaches n
        return _join(whole, whole_k)
    # floor((c*x + r) / n) = floor(x / (n/c)) when c divides n and 0 <= r < c
    for i, (c, atom) in enumerate(rest):
        others = _join([t for j, t in enumerate(rest) if j != i], rest_k)
        o_lo, o_hi = bounds(others, sizes)
        if c > 1 and n % c == 0 and o_lo >= 0 and o_hi < c:
            inner = atom if n // c == 1 else simplify(atom // (n // c), sizes)
            return _join([*whole, (1, inner)], whole_k)
    return _join([*whole, (1, _join(rest, rest_k) // n)], whole_k) if whole else lhs // n
