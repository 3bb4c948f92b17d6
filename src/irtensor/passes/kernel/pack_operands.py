"""pack-operands: copy a contraction's reused operand into the layout its register
block reads, as BLAS packs its operands.

A matmul-like kernel is register-blocked over the dimension that walks its write
contiguously (its columns, `j`): each step of the reduction loads a vector of
`B[k, j:j+16]`. When the operand is stored the other way round (`x @ w.T`: every
`nn.Linear` weight, ONNX Gemm's `transB`, attention's `q @ k.T`), that vector is
sixteen loads a row apart and the kernel runs at scalar speed (2 GFLOP/s against 84
for the same matmul with `B` row-major). This pass gives such an operand a kernel
of its own that writes it transposed (`pack_...`), so that the columns walk it with
stride 1, and reads the copy instead. The copy moves the operand's `N*K` elements
once; it pays when the contraction reuses each of them across at least `min-reuse`
rows.

An operand is packed when it is read by the reduction (not the epilogue) through a
plain projection (each index one iteration dimension or the 0 of a
size-1 axis, no mask), it is indexed by
the columns at an axis that is not its last, and the kernel reuses it across
parallel dimensions of at least `min-reuse` points. Scheduled kernels are left as
they are (their schedule was chosen for the layout they read), so the pass runs
before reorder-loops. Identical packs of one value are one kernel after `cse`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, TensorType
from xdsl.ir import Block, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irtensor import dtypes
from irtensor.dialects._base import element_of, shape_of
from irtensor.dialects.kernel import AccessAttr, KernelOp, YieldOp, identity_access
from irtensor.passes.kernel.cost_model import KernelModel, model_of
from irtensor.passes.kernel.padding import apply_pad, plan_pads
from irtensor.passes.kernel.schedule_blocks import channel_column
from irtensor.passes.registry import register_pass


@dataclass(frozen=True)
class Pack:
    """Input `index` of a kernel is read through the copy `permutation` makes of it."""

    index: int
    permutation: tuple[int, ...]  # axis q of the copy is axis permutation[q] of the input


def column_dim(model: KernelModel) -> int | None:
    """The parallel dimension the register block's vectors run along: a conv's output
    channels where it is blocked across them (`schedule_blocks.channel_column`), else the
    one that walks the write with stride 1; None when there is none."""
    if (channel := channel_column(model)) is not None:
        return channel
    return next((d for d in range(len(model.sizes)) if not model.is_reduction(d)
                 and model.sizes[d] > 1 and abs(model.write.strides[d]) == 1), None)


def projected_dims(access: AccessAttr, shape: tuple[int, ...]) -> tuple[int | None, ...] | None:
    """The iteration dimension each index of `access` is (None: the 0 of a size-1 axis),
    or None for any other access."""
    if access.is_masked:
        return None
    dims: list[int | None] = []
    for expr, size in zip(access.affine_map.results, shape, strict=True):
        if isinstance(expr, AffineDimExpr):
            dims.append(expr.position)
        elif isinstance(expr, AffineConstantExpr) and expr.value == 0 and size == 1:
            dims.append(None)
        else:
            return None
    return tuple(dims)


def plan_packs(kernel: KernelOp, min_reuse: int) -> list[Pack]:
    """The inputs of `kernel` worth packing, and how."""
    if not kernel.reduction_dims or kernel.schedule is not None:
        return []
    model = model_of(kernel)
    column = column_dim(model)
    if column is None:
        return []
    packs = []
    for index in range(model.n_body_reads):
        read, access = model.reads[index], kernel.accesses[index]
        dims = projected_dims(access, read.shape)
        if dims is None or column not in dims or abs(read.strides[column]) <= 1:
            continue
        if not any(read.strides[r] for r in model.reductions):
            continue
        reuse = math.prod(model.sizes[d] for d in range(len(model.sizes))
                          if not model.is_reduction(d) and read.strides[d] == 0)
        if reuse < min_reuse:
            continue
        axis = dims.index(column)
        rank = len(dims)
        packs.append(Pack(index, (*[a for a in range(rank) if a != axis], axis)))
    return packs


def pack_kernel(value: SSAValue, permutation: tuple[int, ...]) -> KernelOp:
    """A kernel writing `value` with its axes in `permutation`'s order."""
    shape = shape_of(value)
    packed = [shape[a] for a in permutation]
    rank = len(packed)
    element = element_of(value)
    # axis a of the input is read at the copy's dimension q where permutation[q] == a
    read = identity_access(rank, [permutation.index(a) for a in range(rank)])
    body = Block(arg_types=[dtypes.signless(element)])
    body.add_op(YieldOp(body.args[0]))
    return KernelOp(
        name="pack_" + "_".join(map(str, packed)), inputs=[value], space=packed,
        reads=[read], writes=AffineMap.identity(rank),
        result_type=TensorType(element, packed), body=Region(body),
    )


def apply_pack(kernel: KernelOp, pack: Pack) -> KernelOp:
    """Insert the copy before `kernel` and read it there."""
    value = kernel.inputs[pack.index]
    copy = pack_kernel(value, pack.permutation)
    Rewriter.insert_op(copy, InsertPoint.before(kernel))
    old = kernel.accesses[pack.index].affine_map
    reads = list(kernel.accesses)
    reads[pack.index] = AccessAttr(AffineMap(old.num_dims, old.num_symbols,
                                             tuple(old.results[a] for a in pack.permutation)))
    kernel.properties["reads"] = ArrayAttr(reads)
    operands = list(kernel.operands)
    operands[pack.index] = copy.res
    kernel.operands = operands
    return copy


@dataclass(frozen=True)
class PackOperands(ModulePass):
    """pack-operands: copy a contraction's operand that its columns read with a stride
    (`x @ w.T`) into a transposed buffer, so its register block loads vectors.

    `min-reuse`: pack only an operand the kernel reads at least this many times per
    element (the parallel points it is reused across); 0 turns the pass off.
    `pad-windows`: read a channel-blocked conv's padded input windows through a copy
    with the pad values in its border (`padding.plan_pads`), not through masks.
    """

    name = "pack-operands"
    min_reuse: int = 8
    pad_windows: bool = True

    def __post_init__(self) -> None:
        if self.min_reuse < 0:
            raise ValueError(f"min-reuse must not be negative, got {self.min_reuse}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.min_reuse == 0:
            return
        for kernel in [k for k in op.walk() if isinstance(k, KernelOp)]:
            pads = plan_pads(kernel) if self.pad_windows else []
            for pack in plan_packs(kernel, self.min_reuse):
                apply_pack(kernel, pack)
            for pad in pads:
                apply_pad(kernel, pad)


register_pass(PackOperands)

__all__ = ["Pack", "PackOperands", "apply_pack", "pack_kernel", "plan_packs"]
