"""The lazy nodes `fuse` builds an `ll` program into, and the rewrites of node trees.

Each `ll` value is a node over its own index space: a read of a buffer through an index
map (`Read`), a constant, an elementwise op of nodes (`Apply`), a masked node (a pad of
a computed value) or a pending reduction. Movement ops only rewrite index maps (`move`).
`kernel_body` turns a node tree into a kernel's scalar body.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr

from irtensor.dialects import ll
from irtensor.dialects._base import element_of, shape_of
from irtensor.passes.kernel.views import (
    Constraints,
    Exprs,
    IndexMap,
    const,
    dims,
    linear_terms,
    simplify,
    simplify_constraint,
    substitute,
    substitute_constraint,
)


@dataclass(frozen=True, eq=False)
class Node:
    """A lazy value over an index space of `shape`."""

    shape: tuple[int, ...]
    element: Attribute


@dataclass(frozen=True, eq=False)
class Read(Node):
    """buffer[exprs] where `valid` holds, else `pad`."""

    buffer: SSAValue = field(default=None)  # type: ignore[assignment]
    exprs: Exprs = ()
    valid: Constraints = ()
    pad: float = 0.0


@dataclass(frozen=True, eq=False)
class Const(Node):
    value: float | int | bool = 0


@dataclass(frozen=True, eq=False)
class Apply(Node):
    """An elementwise `ll` op (its class and, for casts, nothing more) on nodes.

    A view of a computed value keeps it: this node is `origin` (the value in its own
    space, None when this node is it) read at `origin_index`. A reduction that reads the
    value at many points per element computes it once (`hoist`)."""

    op: type[Operation] = ll.AddOp
    args: tuple[Node, ...] = ()
    origin: Node | None = field(default=None, kw_only=True)
    origin_index: Exprs = field(default=(), kw_only=True)


@dataclass(frozen=True, eq=False)
class Masked(Node):
    """child where `valid` holds, else `pad` (a pad of a computed value).

    child is `origin` (the padded value in its own space) read at `origin_index`, where
    the pad came from a view of a computed value: a reduction that reads it through
    overlapping windows computes it once and reads the buffer, padded (`hoist`)."""

    child: Node = field(default=None)  # type: ignore[assignment]
    valid: Constraints = ()
    pad: float = 0.0
    origin: Node | None = field(default=None, kw_only=True)
    origin_index: Exprs = field(default=(), kw_only=True)


@dataclass(frozen=True, eq=False)
class Reduce(Node):
    """combine(child over `axes`), seen through `index`: this node's dims -> the
    keepdim result's indices (identity until a movement relabels it)."""

    kind: str = "sum"
    child: Node = field(default=None)  # type: ignore[assignment]
    axes: tuple[int, ...] = ()
    index: Exprs = ()


def size_of(node: Node) -> int:
    """Ops in a node's tree: how much recomputing it would cost."""
    if isinstance(node, Apply):
        return 1 + sum(size_of(a) for a in node.args)
    if isinstance(node, Masked):
        return 1 + size_of(node.child)
    return 0 if isinstance(node, Read | Const) else 1_000_000


def recompute_cost(node: Node) -> int:
    """What computing a node again costs at each point: its ops, a select for each
    masked value, and a compare for each distinct bound the masks check (a concat's
    pieces, a pad's borders)."""
    bounds: set[str] = set()

    def ops(node: Node) -> int:
        if isinstance(node, Apply):
            return 1 + sum(ops(a) for a in node.args)
        if isinstance(node, Masked):
            bounds.update(str(c) for c in node.valid)
            return 1 + ops(node.child)
        if isinstance(node, Read):
            bounds.update(str(c) for c in node.valid)
            return 1 if node.valid else 0
        return 0 if isinstance(node, Const) else 1_000_000

    return ops(node) + len(bounds)


def contains_reduce(node: Node) -> bool:
    if isinstance(node, Reduce):
        return True
    if isinstance(node, Apply):
        return any(contains_reduce(a) for a in node.args)
    return isinstance(node, Masked) and contains_reduce(node.child)


def move(node: Node, imap: IndexMap, shape: tuple[int, ...]) -> Node | None:
    """The node seen through a movement; None where a reduction cannot follow it."""
    by = imap.exprs
    if imap.valid and contains_reduce(node):
        return None  # a pending reduction's reads could not be guarded: compute it first
    if isinstance(node, Const):
        moved: Node = Const(shape, node.element, node.value)
    elif isinstance(node, Read):
        moved = Read(shape, node.element, node.buffer,
                     tuple(simplify(substitute(e, by), shape) for e in node.exprs),
                     tuple(simplify_constraint(substitute_constraint(c, by), shape)
                           for c in node.valid), node.pad)
        if imap.valid and node.valid and node.pad != imap.pad:
            return Masked(shape, node.element, _guard(moved, imap.valid), imap.valid, imap.pad)
        if imap.valid:
            return Read(shape, node.element, moved.buffer, moved.exprs,  # type: ignore[attr-defined]
                        moved.valid + imap.valid, imap.pad)  # type: ignore[attr-defined]
        return moved
    elif isinstance(node, Apply):
        args = [move(a, IndexMap(by), shape) for a in node.args]
        if any(a is None for a in args):
            return None
        origin, index = viewed(node)
        moved = Apply(shape, node.element, node.op, tuple(args),  # type: ignore[arg-type]
                      origin=origin, origin_index=_compose(index, by, shape))
    elif isinstance(node, Masked):
        child = move(node.child, IndexMap(by), shape)
        if child is None:
            return None
        moved = Masked(shape, node.element, child,
                       tuple(simplify_constraint(substitute_constraint(c, by), shape)
                             for c in node.valid), node.pad,
                       origin=node.origin, origin_index=_compose(node.origin_index, by, shape))
    else:
        assert isinstance(node, Reduce)
        if imap.valid:
            return None
        moved = Reduce(shape, node.element, node.kind, node.child, node.axes,
                       tuple(substitute(e, by) for e in node.index))
    if imap.valid:
        origin, index = viewed(node) if isinstance(node, Apply | Masked) else (None, ())
        return Masked(shape, moved.element, _guard(moved, imap.valid), imap.valid, imap.pad,
                      origin=origin, origin_index=_compose(index, by, shape))
    return moved


def viewed(node: Apply | Masked) -> tuple[Node, Exprs]:
    """The computed value `node` views (an Apply's own value; a Masked one as a whole)
    and its indices at each point of `node`."""
    if isinstance(node, Apply) and node.origin is not None:
        return node.origin, node.origin_index
    return node, dims(len(node.shape))


def _compose(index: Exprs, by: Exprs, shape: tuple[int, ...]) -> Exprs:
    return tuple(simplify(substitute(e, by), shape) for e in index)


def _guard(node: Node, valid: Constraints) -> Node:
    """Add `valid` to every read below `node`, so masked-out points read nothing."""
    if isinstance(node, Read):
        return Read(node.shape, node.element, node.buffer, node.exprs, node.valid + valid,
                    node.pad)
    if isinstance(node, Apply):
        return replace(node, args=tuple(_guard(a, valid) for a in node.args))
    if isinstance(node, Masked):
        return replace(node, child=_guard(node.child, valid))
    return node


def identity_read(value: SSAValue) -> Read:
    shape = shape_of(value)
    return Read(shape, element_of(value), value, dims(len(shape)))


def find_reduce(node: Node) -> Reduce | None:
    if isinstance(node, Reduce):
        return node
    if isinstance(node, Apply):
        found = [r for a in node.args if (r := find_reduce(a)) is not None]
        return found[0] if found else None
    if isinstance(node, Masked):
        return find_reduce(node.child)
    return None


def reduce_shape(reduce: Reduce) -> tuple[int, ...]:
    return tuple(1 if i in reduce.axes else s for i, s in enumerate(reduce.child.shape))


def replace_reduce(node: Node, reduce: Reduce, buffer: SSAValue) -> Node:
    if node is reduce:
        return Read(node.shape, node.element, buffer, reduce.index)
    if isinstance(node, Apply):
        return Apply(node.shape, node.element, node.op,
                     tuple(replace_reduce(a, reduce, buffer) for a in node.args))
    if isinstance(node, Masked):
        return replace(node, child=replace_reduce(node.child, reduce, buffer))
    return node


def epilogue_dims(node: Node, reduce: Reduce, space: Sequence[int]) -> list[AffineExpr] | None:
    """For each dim of `node`'s space, the iteration expression it stands for (0 on a
    unit axis), when the reduction is seen through a relabeling of its parallel axes or a
    reshape that splits one of them (a 1x1 conv's H * W points back into (H, W): h is
    `hw floordiv W`, w is `hw mod W`); None when it is not (a broadcast or a pad of it),
    and it must be computed first."""
    if isinstance(node, Masked) and contains_reduce(node):
        return None
    kept = reduce_shape(reduce)
    out: list[AffineExpr | None] = [None] * len(node.shape)
    for axis, (expr, size) in enumerate(zip(reduce.index, kept, strict=True)):
        if size == 1:
            continue  # any in-range index of a unit axis is 0
        parts = _row_major(expr, node.shape, size)
        if parts is None or any(out[d] is not None for d, _ in parts):
            return None
        for d, stride in parts:
            split: AffineExpr = AffineExpr.dimension(axis)
            if stride > 1:
                split = split // stride
            if stride * node.shape[d] < size:
                split = split % node.shape[d]
            out[d] = split
    for position, size in enumerate(node.shape):
        if out[position] is None:
            if size != 1:
                return None
            out[position] = const(0)
    return out  # type: ignore[return-value]


def _row_major(expr: AffineExpr, shape: Sequence[int], size: int
               ) -> list[tuple[int, int]] | None:
    """(dim, stride) of each dim of `expr` when it is `d_0 * s_0 + ... + d_k` with the
    strides of a row-major (shape[d_0], ..., shape[d_k]) of `size` elements (dims longer
    than 1); None for any other expression."""
    if isinstance(expr, AffineDimExpr):
        return [(expr.position, 1)] if shape[expr.position] == size else None
    terms, constant = linear_terms(expr)
    if constant or not all(isinstance(atom, AffineDimExpr) for _, atom in terms):
        return None
    parts = sorted(((atom.position, k) for k, atom in terms),  # type: ignore[attr-defined]
                   key=lambda part: -part[1])
    if len({d for d, _ in parts}) != len(parts):
        return None
    stride = 1
    for d, k in reversed(parts):
        if k != stride or shape[d] == 1:
            return None
        stride *= shape[d]
    return parts if stride == size else None
