"""Broadcast and windowed subexpressions of a reduction's input, computed once (`fuse`).

A contraction's input often holds an elementwise expression of only some of its
dims. The weight gradient of `relu(x @ w1.T) @ w2.T` multiplies the incoming
gradient by relu's mask before its matmul: `g[b, o] * (h[b, o] > 0)`, read at every
input feature `i`. Fused into the matmul's body, that product is recomputed for each
of the 784 columns, inside the register block's hot loop, where it costs more than
the FMAs. A subexpression of at least HOIST_MIN_OPS ops that the reduction's space
broadcasts over at least HOIST_MIN_REPEATS points becomes a kernel of its own over
the dims it uses (64 x 256 here), and the reduction reads its buffer. A convolution
reads its input through overlapping windows, so a computed input (a batch norm's
affine and relu) is computed once in its own space and read padded (`hoisted`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from math import prod

from xdsl.ir import SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
)

from irtensor.dialects import ll
from irtensor.passes.kernel.kernel_facts import expr_dims
from irtensor.passes.kernel.nodes import (
    Apply,
    Masked,
    Node,
    Read,
    contains_reduce,
    move,
    size_of,
)
from irtensor.passes.kernel.views import IndexMap

# One op is enough: a relu on a matmul's operand, recomputed in the register block's
# loop, ran the 1024^3 matmul at half speed. A lone cast is left to the contraction,
# which reads narrow types itself (the bf16 dot products).
HOIST_MIN_OPS = 1
HOIST_MIN_REPEATS = 16
# A padded computed value is read through a window: a depthwise 3x3 conv reads each value
# at its 9 taps only (no output channels share it), and fused, the value's ops, its mask
# and (after a channel shuffle) its gathered channel ran at every tap: ShuffleNet's
# depthwise convs took 0.3-0.9 ms each, 0.03-0.4 ms with the value computed once.
HOIST_MIN_WINDOW_REPEATS = 9
DIGITS = (AffineBinaryOpKind.FloorDiv, AffineBinaryOpKind.Mod)


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


def hoisted(source: Node, reduced: tuple[int, ...],
            materialize: Callable[[Node, int], SSAValue]) -> Node:
    """`source` (the input of a reduction over `reduced`, no reduction pending in it) with
    each broadcast or windowed subexpression worth it computed by `materialize(node in a
    space of its own, points that see each of its values)` and read back. Worth it: it
    varies along a reduced axis (one that does not is the same all along the reduction's
    loop for an output, which LLVM hoists: softmax's -max), and each value is read at
    HOIST_MIN_REPEATS points or more.

    A broadcast subexpression is computed over the dims it uses, or as the value it views
    where that is smaller: a convolution reads `relu(x * s + t)` through overlapping
    windows, and over its used dims it would be x copied once per tap. A padded computed
    value (`Masked`) read at HOIST_MIN_WINDOW_REPEATS points per value (a 3x3 window's
    taps) is computed once and read as a padded buffer: fused, `pad(relu(x))` ran its
    mask and op at every tap of every output channel (a 3x3 conv over 64 channels ran 6x
    slower). A pad that stacks values (the moments' pair) repeats each one once or twice
    and stays fused; a masked value's child stays as it is, as its reads may be valid
    only under the mask."""
    space = prod(source.shape)
    done: dict[int, SSAValue] = {}

    def viewed_once(node: Apply | Masked, origin: Node) -> Read:
        if id(origin) not in done:
            done[id(origin)] = materialize(origin, space // prod(origin.shape))
        valid, pad = (node.valid, node.pad) if isinstance(node, Masked) else ((), 0.0)
        return Read(node.shape, node.element, done[id(origin)], node.origin_index, valid, pad)

    def visit(node: Node) -> Node:
        if not isinstance(node, Apply | Masked) or not node_dims(node) & set(reduced):
            return node
        if isinstance(node, Masked):
            origin = computed_origin(node)
            if origin is not None and space // prod(origin.shape) >= HOIST_MIN_WINDOW_REPEATS:
                return viewed_once(node, origin)
            return node
        used = node_dims(node)
        if (node is not source and size_of(node) >= HOIST_MIN_OPS
                and not (node.op is ll.CastOp and size_of(node) == 1)
                and repeats(node, used) >= HOIST_MIN_REPEATS):
            origin = computed_origin(node)
            if origin is not None and (prod(origin.shape) < prod(node.shape[d] for d in used)
                                       or views_through_digits(node)):
                return viewed_once(node, origin)
            return read_back(node, sorted(used),
                             lambda compact: materialize(compact, repeats(node, used)))
        return replace(node, args=tuple(visit(a) for a in node.args))

    return visit(source)


def views_through_digits(node: Apply) -> bool:
    """Whether `node` reads the value it views through a reshape's digits (floordiv or
    mod): a pool's result viewed as a 1x1 conv's (C, H * W) points. Computed over those
    points, each of its reads would take the digits too (a max pool's strided taps ran
    at a tenth of their speed); computed in its own space, they stay plain strides."""
    return any(isinstance(sub, AffineBinaryOpExpr) and sub.kind in DIGITS
               for e in node.origin_index for sub in e.dfs())


def computed_origin(node: Apply | Masked) -> Node | None:
    """The computed value that `node` views, when it is one that has no reduction pending
    and is not empty."""
    origin = node.origin
    if origin is None or contains_reduce(origin) or prod(origin.shape) == 0:
        return None
    return origin


def read_back(node: Node, keep: list[int], materialize: Callable[[Node], SSAValue]) -> Read:
    """`node` computed over the dims `keep` only, read in its space."""
    by: list[AffineExpr] = [AffineDimExpr(keep.index(d)) if d in keep else AffineConstantExpr(0)
                            for d in range(len(node.shape))]
    compact = move(node, IndexMap(tuple(by)), tuple(node.shape[d] for d in keep))
    assert compact is not None  # no reduction is pending in a reduction's input
    buffer = materialize(compact)
    return Read(node.shape, node.element, buffer, tuple(AffineDimExpr(d) for d in keep))


__all__ = ["HOIST_MIN_OPS", "HOIST_MIN_REPEATS", "HOIST_MIN_WINDOW_REPEATS", "hoisted", "node_dims"]
