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

import math
import weakref
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass

from irtensor import dtypes, ir
from irtensor.dialects import kernel, ll
from irtensor.dialects._base import element_of, ints, shape_of
from irtensor.passes.kernel.hoist import hoisted
from irtensor.passes.kernel.kernel_body import BodyBuilder
from irtensor.passes.kernel.nodes import (
    Apply,
    Const,
    Node,
    Read,
    Reduce,
    contains_reduce,
    epilogue_dims,
    find_reduce,
    identity_read,
    move,
    recompute_cost,
    reduce_shape,
    replace_reduce,
)
from irtensor.passes.kernel.views import (
    dims,
    movement_map,
)
from irtensor.passes.registry import PassInputError, register_pass

# Why each kernel fuse made exists: the reason its value must be in memory (a function
# result, a reduction's input, a value with several consumers...), kept with the kernel op.
BOUNDARIES: weakref.WeakKeyDictionary[kernel.KernelOp, str] = weakref.WeakKeyDictionary()


@register_pass
@dataclass(frozen=True)
class FusePass(ModulePass):
    """fuse: form kernels from ll ops; movement ops become reads, never copies.

    `recompute_limit`: a value with several consumers is recomputed inside each
    when it costs at most this many ops a point, the compares of its masked reads
    included (`recompute_cost`; 0: always computed once).
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
                results = [self.materialize(self.nodes[v], "a result of the function")
                           for v in op.operands]
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
                why = (f"'{op.name}' views the reduction's result in a way its kernel cannot "
                       "write (a broadcast or pad of it): computed first, then viewed")
                self.nodes[op.operands[0]] = identity_read(self.materialize(source, why))
                node = self.node_of(op)
                assert node is not None
            if (consumers := len(list(op.results[0].uses))) > 1:
                node = self.shared(op, node, consumers)
            self.nodes[op.results[0]] = node
        for op in reversed(list(block.ops)):
            if not isinstance(op, func.ReturnOp | kernel.KernelOp) and not op.results[0].uses:
                op.detach()
                op.erase()

    def shared(self, op: Operation, node: Node, consumers: int) -> Node:
        """The node of a value with several consumers: recomputed in each when cheap,
        else computed once. A view (a broadcast, a pad, a reshape) is not stored: what it
        views is, in its own space, and the consumers read through the view."""
        why = f"'{op.name}' has {consumers} consumers"
        node = self.settle(node, f"{why}: a reduction is computed once")
        if self.cheap(node):
            return node
        why = (f"{why} and recomputing it costs {recompute_cost(node)} ops (limit "
               f"recompute-limit={self.recompute_limit})")
        chain = self.view_chain(op)
        if chain:
            source = chain[0].operands[0]
            self.nodes[source] = identity_read(self.materialize(self.nodes[source], why))
            for view in chain:
                viewed = self.node_of(view)
                assert viewed is not None
                self.nodes[view.results[0]] = viewed
            return self.nodes[op.results[0]]
        return identity_read(self.materialize(node, why))

    def view_chain(self, op: Operation) -> list[Operation]:
        """The movement ops from the value `op` views to `op`: the earliest value with the
        fewest elements `op` sees through views with no other consumer and no pending
        reduction, so that it is stored in the space it was computed in; [] when `op` is
        no view or views only bigger values (a slice)."""
        chain: list[Operation] = []
        best: list[Operation] = []
        size = math.prod(shape_of(op.results[0]))
        while isinstance(op, ll.MOVEMENT_OPS):
            chain.insert(0, op)
            source = op.operands[0]
            if contains_reduce(self.nodes[source]):
                break
            viewed = math.prod(shape_of(source))
            if viewed <= size:
                size, best = viewed, list(chain)
            if not isinstance(source.owner, Operation) or len(list(source.uses)) > 1:
                break
            op = source.owner
        return best

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
        return not contains_reduce(node) and recompute_cost(node) <= self.recompute_limit

    def settle(self, node: Node, why: str) -> Node:
        """`node` with no pending reduction: computed whole when it is a reduction with
        an epilogue it can carry, else with each reduction computed and read back."""
        reduce = find_reduce(node)
        if reduce is None:
            return node
        if epilogue_dims(node, reduce, reduce.child.shape) is not None:
            return identity_read(self.materialize(node, why))
        return self.realize_reduces(node, why)

    def realize_reduces(self, node: Node, why: str) -> Node:
        """`node` with each pending reduction computed into a buffer and read back."""
        while (reduce := find_reduce(node)) is not None:
            plain = Reduce(reduce_shape(reduce), reduce.element, reduce.kind, reduce.child,
                           reduce.axes, dims(len(reduce.child.shape)))
            node = replace_reduce(node, reduce, self.materialize(plain, why))
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
            source = self.settle(self.nodes[op.input], "the input of a reduction holds a "
                                 "reduction of its own: one reduction per kernel")
            source = hoisted(source, ints(op.axes), lambda node, points: self.materialize(
                node, "a reduction reads it broadcast or through windows: computed once, "
                f"not at each of the {points} points that see each value"))
            return Reduce(shape, element, op.kind.data, source, ints(op.axes),
                          dims(len(shape)))
        if isinstance(op, ll.MOVEMENT_OPS):
            return move(self.nodes[op.operands[0]], movement_map(op), shape)
        args = [self.nodes[v] for v in op.operands]
        pending = [i for i, a in enumerate(args) if contains_reduce(a)]
        for i in pending[1:]:  # one reduction per kernel: compute the others first
            args[i] = self.settle(args[i], f"'{op.name}' combines two reductions: one "
                                  "reduction per kernel")
        return Apply(shape, element, type(op), tuple(args))

    # ------------------------------------------------------------------ kernels

    def materialize(self, node: Node, why: str) -> SSAValue:
        """A buffer holding `node` (an existing buffer when the node is one); `why` says
        why it must be in memory (what `explain` reports for its kernel)."""
        if (isinstance(node, Read) and not node.valid and node.exprs == dims(len(node.shape))
                and shape_of(node.buffer) == node.shape):
            return node.buffer
        reduce = find_reduce(node)
        made = self.elementwise_kernel(node) if reduce is None else self.reduce_kernel(node, reduce)
        BOUNDARIES[made] = why
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
            buffer = self.materialize(plain, "its consumer does not iterate the reduction's "
                                      "result: the reduction alone, then its consumer")
            return self.elementwise_kernel(replace_reduce(node, reduce, buffer))
        body = BodyBuilder(rank)
        value = body.emit(reduce.child)
        # arith's max is signed; an unsigned max combines x ^ sign bit (the same order as
        # signed values), and the epilogue flips the bit back
        unsigned_max = reduce.kind == "max" and dtypes.is_unsigned(reduce.element)
        if unsigned_max:
            value = body.flip_sign_bit(value)
        epilogue = None
        if node is not reduce or unsigned_max:
            epilogue = BodyBuilder(rank, reduction=reduce.axes, accumulator=reduce.element,
                                   relabel=relabel, unsigned_max=unsigned_max)
            epilogue_value = epilogue.emit(node, accumulator_for=reduce)
        name = "r_" + "_".join(map(str, space))
        return body.finish(
            name=name, space=space, value=value,
            writes=AffineMap(rank, 0, tuple(relabel)),
            result=TensorType(node.element, list(node.shape)),
            reduce=reduce.axes, combiner=reduce.kind,
            epilogue=(epilogue, epilogue_value) if epilogue is not None else None,
        )
