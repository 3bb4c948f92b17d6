"""Broadcast subexpressions of a reduction's input, computed once (`fuse`).

A contraction's input often holds an elementwise expression of only some of its
dims. The weight gradient of `relu(x @ w1.T) @ w2.T` multiplies the incoming
gradient by relu's mask before its matmul: `g[b, o] * (h[b, o] > 0)`, read at every
input feature `i`. Fused into the matmul's body, that product is recomputed for each
of the 784 columns, inside the register block's hot loop, where it costs more than
the FMAs. A subexpression of at least HOIST_MIN_OPS ops that the reduction's space
broadcasts over at least HOIST_MIN_REPEATS points becomes a kernel of its own over
the dims it uses (64 x 256 here), and the reduction reads its buffer.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod

from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr

from irtensor.passes.kernel.kernel_facts import expr_dims
from irtensor.passes.kernel.nodes import Apply, Masked, Node, Read, move, size_of
from irtensor.passes.kernel.views import IndexMap

HOIST_MIN_OPS = 2
HOIST_MIN_REPEATS = 16


def node_dims(node: Node) -> set[int]:
    """The dims of its space a node's value depends on (indices and masks)."""
    if isinstance(node, Read):
        used: set[int] = set()
        for e in node.exprs:
            used |= expr_dims(e)
        for c in node.valid:
            used |= expr_dims(c.lhs) | expr_dims(c.rhs)
        return used
    if isinstance(node, Apply):
        return set().union(*(node_dims(a) for a in node.args))
    if isinstance(node, Masked):
        used = node_dims(node.child)
        for c in node.valid:
            used |= expr_dims(c.lhs) | expr_dims(c.rhs)
        return used
    return set()


def repeats(node: Node, used: set[int]) -> int:
    """How many points of the space see each value of `node`."""
    return prod(size for d, size in enumerate(node.shape) if d not in used)


def hoisted(source: Node, materialize: Callable[[Node, int], SSAValue]) -> Node:
    """`source` (a reduction's input, no reduction pending in it) with each broadcast
    subexpression worth it computed by `materialize(node over its own dims, points that
    see each of its values)` and read back.
    A masked value's child stays as it is: its reads may be valid only under the mask."""

    def visit(node: Node) -> Node:
        if not isinstance(node, Apply):
            return node
        used = node_dims(node)
        if (node is not source and used and size_of(node) >= HOIST_MIN_OPS
                and repeats(node, used) >= HOIST_MIN_REPEATS):
            return read_back(node, sorted(used),
                             lambda compact: materialize(compact, repeats(node, used)))
        return Apply(node.shape, node.element, node.op, tuple(visit(a) for a in node.args))

    return visit(source)


def read_back(node: Node, keep: list[int], materialize: Callable[[Node], SSAValue]) -> Read:
    """`node` computed over the dims `keep` only, read in its space."""
    by: list[AffineExpr] = [AffineDimExpr(keep.index(d)) if d in keep else AffineConstantExpr(0)
                            for d in range(len(node.shape))]
    compact = move(node, IndexMap(tuple(by)), tuple(node.shape[d] for d in keep))
    assert compact is not None  # no reduction is pending in a reduction's input
    buffer = materialize(compact)
    return Read(node.shape, node.element, buffer, tuple(AffineDimExpr(d) for d in keep))


__all__ = ["HOIST_MIN_OPS", "HOIST_MIN_REPEATS", "hoisted", "node_dims"]
