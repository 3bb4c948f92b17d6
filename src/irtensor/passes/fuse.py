"""fuse: turn `ll` programs into `kernel.kernel`s, tinygrad-style.

Each `ll` value becomes a lazy node over its own index space: a read of a
buffer through an index map (`Read`), a constant, an elementwise op of nodes,
a masked node (a pad of a computed value), or a reduction. Movement ops only
rewrite index maps, so views never copy. A kernel is made where a value must
exist in memory: a function result, a reduction's input being combined, or a
value used by several consumers that is not cheap to recompute. Elementwise
consumers of a reduction that iterate its result fuse as the kernel's
epilogue, so `matmul + bias + relu` is one kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.passes import ModulePass

from irtensor import dtypes, ir
from irtensor.dialects import kernel, ll
from irtensor.dialects._base import element_of, ints, shape_of
from irtensor.passes import PassInputError, register_pass
from irtensor.passes.kernel_body import BodyBuilder
from irtensor.passes.views import (
    Constraints,
    Exprs,
    IndexMap,
    const,
    dims,
    movement_map,
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
    """An elementwise `ll` op (its class and, for casts, nothing more) on nodes."""

    op: type[Operation] = ll.AddOp
    args: tuple[Node, ...] = ()


@dataclass(frozen=True, eq=False)
class Masked(Node):
    """child where `valid` holds, else `pad` (a pad of a computed value)."""

    child: Node = field(default=None)  # type: ignore[assignment]
    valid: Constraints = ()
    pad: float = 0.0


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
        moved = Apply(shape, node.element, node.op, tuple(args))  # type: ignore[arg-type]
    elif isinstance(node, Masked):
        child = move(node.child, IndexMap(by), shape)
        if child is None:
            return None
        moved = Masked(shape, node.element, child,
                       tuple(substitute_constraint(c, by) for c in node.valid), node.pad)
    else:
        assert isinstance(node, Reduce)
        if imap.valid:
            return None
        moved = Reduce(shape, node.element, node.kind, node.child, node.axes,
                       tuple(substitute(e, by) for e in node.index))
    if imap.valid:
        return Masked(shape, moved.element, _guard(moved, imap.valid), imap.valid, imap.pad)
    return moved


def _guard(node: Node, valid: Constraints) -> Node:
    """Add `valid` to every read below `node`, so masked-out points read nothing."""
    if isinstance(node, Read):
        return Read(node.shape, node.element, node.buffer, node.exprs, node.valid + valid,
                    node.pad)
    if isinstance(node, Apply):
        return Apply(node.shape, node.element, node.op, tuple(_guard(a, valid) for a in node.args))
    if isinstance(node, Masked):
        return Masked(node.shape, node.element, _guard(node.child, valid), node.valid, node.pad)
    return node


def identity_read(value: SSAValue) -> Read:
    shape = shape_of(value)
    return Read(shape, element_of(value), value, dims(len(shape)))


@register_pass
@dataclass(frozen=True)
class FusePass(ModulePass):
    """fuse: form kernels from ll ops; movement ops become reads, never copies.

    `recompute_limit`: a value with several consumers is recomputed inside each
    when it costs at most this many elementwise ops (0: always computed once).
    """

    name = "fuse"
    recompute_limit: int = 8

    def __post_init__(self) -> None:
        if self.recompute_limit < 0:
            raise ValueError(f"recompute-limit must not be negative, got {self.recompute_limit}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            if function.body.blocks:
                Fuser(self.recompute_limit).fuse_function(function)


LL_OPS = tuple(ll.LL.operations)


class FuseError(PassInputError):
    """A function holding an op that fuse does not form kernels from."""


def check_fusable(function: func.FuncOp) -> None:
    """Every op of the function is an ll op, a kernel or its return: fuse knows no other."""
    for op in function.body.block.ops:
        if isinstance(op, (*LL_OPS, kernel.KernelOp, func.ReturnOp)):
            continue
        hint = ("calls are not supported: inline the callee" if isinstance(op, func.CallOp)
                else "run decompose-hlops (hl-to-ll) first" if op.name.startswith("hl.")
                else "it forms kernels from ll ops only")
        where = "" if (at := ir.location(op)) == "<unknown>" else f" at {at}"
        raise FuseError(f"fuse: cannot fuse '{op.name}' in @{function.sym_name.data}{where}: "
                        f"{hint}")


class Fuser:
    def __init__(self, recompute_limit: int):
        self.recompute_limit = recompute_limit
        self.nodes: dict[SSAValue, Node] = {}
        self.block: Block | None = None
        self.insert_before: Operation | None = None

    def fuse_function(self, function: func.FuncOp) -> None:
        block = function.body.block
        check_fusable(function)
        self.block = block
        for arg in block.args:
            self.nodes[arg] = identity_read(arg)
        for op in list(block.ops):
            if isinstance(op, func.ReturnOp):
                self.insert_before = op
                results = [self.materialize(self.nodes[v]) for v in op.operands]
                for i, r in enumerate(results):
                    op.operands[i] = r
                continue
            if isinstance(op, kernel.KernelOp):
                self.nodes[op.res] = identity_read(op.res)
                continue
            self.insert_before = op
            node = self.node_of(op)
            if isinstance(op, ll.MOVEMENT_OPS) and self.breaks_epilogue(op, node):
                # Compute the reduction with its epilogue (matmul + bias + relu) before a
                # view its consumers cannot iterate, then view the result.
                source = self.nodes[op.operands[0]]
                self.nodes[op.operands[0]] = identity_read(self.materialize(source))
                node = self.node_of(op)
                assert node is not None
            if len(list(op.results[0].uses)) > 1:  # several consumers
                node = self.settle(node)  # a reduction is computed once
                if not self.cheap(node):
                    node = identity_read(self.materialize(node))
            self.nodes[op.results[0]] = node
        for op in reversed(list(block.ops)):
            if not isinstance(op, func.ReturnOp | kernel.KernelOp) and not op.results[0].uses:
                op.detach()
                op.erase()

    def breaks_epilogue(self, op: Operation, moved: Node | None) -> bool:
        """Whether a movement of a pending reduction's result leaves points that the
        reduction's kernel could not write (a broadcast, a pad): then compute it first."""
        source = self.nodes[op.operands[0]]
        if not contains_reduce(source):
            return False
        if moved is None:
            return True
        reduce = find_reduce(moved)
        assert reduce is not None
        return epilogue_dims(moved, reduce, reduce.child.shape) is None

    def cheap(self, node: Node) -> bool:
        """Recomputing it in each consumer costs less than a trip through memory."""
        return not contains_reduce(node) and size_of(node) <= self.recompute_limit

    def settle(self, node: Node) -> Node:
        """`node` with no pending reduction: computed whole when it is a reduction with
        an epilogue it can carry, else with each reduction computed and read back."""
        reduce = find_reduce(node)
        if reduce is None:
            return node
        if epilogue_dims(node, reduce, reduce.child.shape) is not None:
            return identity_read(self.materialize(node))
        return self.realize_reduces(node)

    def realize_reduces(self, node: Node) -> Node:
        """`node` with each pending reduction computed into a buffer and read back."""
        while (reduce := find_reduce(node)) is not None:
            plain = Reduce(reduce_shape(reduce), reduce.element, reduce.kind, reduce.child,
                           reduce.axes, dims(len(reduce.child.shape)))
            node = replace_reduce(node, reduce, self.materialize(plain))
        return node

    def node_of(self, op: Operation) -> Node | None:
        result = op.results[0]
        shape, element = shape_of(result), element_of(result)
        if isinstance(op, ll.ConstOp):
            return Const(shape, element, op.scalar)
        if isinstance(op, ll.ReduceOp):
            if not ints(op.axes):  # over no axes: x (a sum also turns -0.0 into 0.0)
                source = self.nodes[op.input]
                if op.kind.data == "max" or not dtypes.is_float(element):
                    return source
                return Apply(shape, element, ll.AddOp, (source, Const(shape, element, 0.0)))
            source = self.settle(self.nodes[op.input])
            return Reduce(shape, element, op.kind.data, source, ints(op.axes),
                          dims(len(shape)))
        if isinstance(op, ll.MOVEMENT_OPS):
            return move(self.nodes[op.operands[0]], movement_map(op), shape)
        args = [self.nodes[v] for v in op.operands]
        pending = [i for i, a in enumerate(args) if contains_reduce(a)]
        for i in pending[1:]:  # one reduction per kernel: compute the others first
            args[i] = self.settle(args[i])
        return Apply(shape, element, type(op), tuple(args))

    # ------------------------------------------------------------------ kernels

    def materialize(self, node: Node) -> SSAValue:
        """A buffer holding `node` (an existing buffer when the node is one)."""
        if (isinstance(node, Read) and not node.valid and node.exprs == dims(len(node.shape))
                and shape_of(node.buffer) == node.shape):
            return node.buffer
        reduce = find_reduce(node)
        made = self.elementwise_kernel(node) if reduce is None else self.reduce_kernel(node, reduce)
        assert self.block is not None and self.insert_before is not None
        self.block.insert_op_before(made, self.insert_before)
        return made.res

    def elementwise_kernel(self, node: Node) -> kernel.KernelOp:
        rank = len(node.shape)
        body = BodyBuilder(rank)
        value = body.emit(node)
        return body.finish(
            name="E_" + "_".join(map(str, node.shape)) if node.shape else "E",
            space=node.shape, value=value, writes=AffineMap(rank, 0, dims(rank)),
            result=TensorType(node.element, list(node.shape)),
        )

    def reduce_kernel(self, node: Node, reduce: Reduce) -> kernel.KernelOp:
        """A reduction kernel; `node` is the reduction seen through a relabeling, or an
        elementwise expression of it (the epilogue)."""
        space = reduce.child.shape
        rank = len(space)
        relabel = epilogue_dims(node, reduce, space)
        if relabel is None:  # the consumer does not iterate the result: reduce alone
            plain = Reduce(reduce_shape(reduce), reduce.element, reduce.kind, reduce.child,
                           reduce.axes, dims(len(space)))
            buffer = self.materialize(plain)
            return self.elementwise_kernel(replace_reduce(node, reduce, buffer))
        body = BodyBuilder(rank)
        value = body.emit(reduce.child)
        epilogue = None
        if node is not reduce:
            epilogue = BodyBuilder(rank, reduction=reduce.axes, accumulator=reduce.element,
                                   relabel=relabel)
            epilogue_value = epilogue.emit(node, accumulator_for=reduce)
        name = "r_" + "_".join(map(str, space))
        return body.finish(
            name=name, space=space, value=value,
            writes=AffineMap(rank, 0, tuple(relabel)),
            result=TensorType(node.element, list(node.shape)),
            reduce=reduce.axes, combiner=reduce.kind,
            epilogue=(epilogue, epilogue_value) if epilogue is not None else None,
        )


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
        return Masked(node.shape, node.element, replace_reduce(node.child, reduce, buffer),
                      node.valid, node.pad)
    return node


def epilogue_dims(node: Node, reduce: Reduce, space: Sequence[int]) -> list[AffineExpr] | None:
    """For each dim of `node`'s space, the iteration dim it stands for (0 on a unit
    axis), when the reduction is seen through a relabeling of its parallel axes;
    None when it is not (a broadcast or a pad of it), and it must be computed first."""
    if isinstance(node, Masked) and contains_reduce(node):
        return None
    kept = reduce_shape(reduce)
    out: list[AffineExpr | None] = [None] * len(node.shape)
    for axis, (expr, size) in enumerate(zip(reduce.index, kept, strict=True)):
        if size == 1:
            continue  # any in-range index of a unit axis is 0
        if not isinstance(expr, AffineDimExpr) or node.shape[expr.position] != size:
            return None
        if out[expr.position] is not None:
            return None
        out[expr.position] = AffineExpr.dimension(axis)
    for position, size in enumerate(node.shape):
        if out[position] is None:
            if size != 1:
                return None
            out[position] = const(0)
    return out  # type: ignore[return-value]
