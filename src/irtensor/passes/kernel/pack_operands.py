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
from collections.abc import Sequence
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
from irtensor.passes.kernel.padding import PaddedRead, pad_read, padded_access, plan_pads
from irtensor.passes.kernel.schedule_blocks import channel_column
from irtensor.passes.kernel.strided_reads import (
    DenseCopy,
    contiguous_dim,
    copy_read,
    dense_read,
    plan_channel_copies,
    plan_dense_copies,
)
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
    return contiguous_dim(model)


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


def plan_packs(kernel: KernelOp, min_reuse: int, model: KernelModel | None = None
               ) -> list[Pack]:
    """The inputs of `kernel` worth packing, and how (`model`: the kernel's, when made)."""
    if not kernel.reduction_dims or kernel.schedule is not None:
        return []
    model = model or model_of(kernel)
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


def copy_kernel(prefix: str, value: SSAValue, read: AccessAttr, shape: Sequence[int]
                ) -> KernelOp:
    """A kernel `<prefix>_<shape>` writing `value`, read through `read`, into a buffer of
    `shape`."""
    element = element_of(value)
    body = Block(arg_types=[dtypes.signless(element)])
    body.add_op(YieldOp(body.args[0]))
    return KernelOp(
        name=prefix + "_" + "_".join(map(str, shape)), inputs=[value], space=list(shape),
        reads=[read], writes=AffineMap.identity(len(shape)),
        result_type=TensorType(element, list(shape)), body=Region(body),
    )


def pack_kernel(value: SSAValue, permutation: tuple[int, ...]) -> KernelOp:
    """A kernel writing `value` with its axes in `permutation`'s order."""
    shape = shape_of(value)
    rank = len(shape)
    # axis a of the input is read at the copy's dimension q where permutation[q] == a
    read = identity_access(rank, [permutation.index(a) for a in range(rank)])
    return copy_kernel("pack", value, read, [shape[a] for a in permutation])


def read_copy(kernel: KernelOp, index: int, copy: KernelOp, access: AccessAttr) -> KernelOp:
    """Insert `copy` before `kernel`, which reads it through `access` in place of its
    input `index`."""
    Rewriter.insert_op(copy, InsertPoint.before(kernel))
    reads = list(kernel.accesses)
    reads[index] = access
    kernel.properties["reads"] = ArrayAttr(reads)
    operands = list(kernel.operands)
    operands[index] = copy.res
    kernel.operands = operands
    return copy


def apply_pack(kernel: KernelOp, pack: Pack) -> KernelOp:
    """Insert the copy before `kernel` and read it there."""
    copy = pack_kernel(kernel.inputs[pack.index], pack.permutation)
    old = kernel.accesses[pack.index].affine_map
    access = AccessAttr(AffineMap(old.num_dims, old.num_symbols,
                                  tuple(old.results[a] for a in pack.permutation)))
    return read_copy(kernel, pack.index, copy, access)


def apply_pad(kernel: KernelOp, plan: PaddedRead) -> KernelOp:
    """Insert the padded copy before `kernel` and read it there, unmasked."""
    access = kernel.accesses[plan.index]
    value = kernel.inputs[plan.index]
    copy = copy_kernel("pad", value, pad_read(value, plan, access.pad_value), plan.shape)
    return read_copy(kernel, plan.index, copy, padded_access(access, plan, kernel.sizes))


def apply_dense_copy(kernel: KernelOp, plan: DenseCopy) -> KernelOp:
    """Insert the dense copy of a strided operand before `kernel` and read it there."""
    access = kernel.accesses[plan.index]
    shape = [kernel.sizes[d] for d in plan.dims]
    copy = copy_kernel("dense", kernel.inputs[plan.index], copy_read(access, plan.dims), shape)
    return read_copy(kernel, plan.index, copy, dense_read(access, plan.dims))


@dataclass(frozen=True)
class PackOperands(ModulePass):
    """pack-operands: copy a contraction's operand that its columns read with a stride
    (`x @ w.T`) into a transposed buffer, so its register block loads vectors.

    `min-reuse`: pack only an operand the kernel reads at least this many times per
    element (the parallel points it is reused across); 0 turns the pass off.
    `pad-windows`: read a channel-blocked conv's padded input windows through a copy
    with the pad values in its border (`padding.plan_pads`), not through masks.
    `dense-strided`: read an operand that the columns read with a stride, outside any
    window (a stride-2 1x1 conv's input), through a dense copy of the points it reads
    (`strided_reads.plan_dense_copies`), where it is reused as often as `min-reuse`;
    and a channel-blocked conv's operand read along its channels through a merged
    index (a grouped conv's weight) through a copy with the channels innermost
    (`plan_channel_copies`).
    """

    name = "pack-operands"
    min_reuse: int = 8
    pad_windows: bool = True
    dense_strided: bool = True

    def __post_init__(self) -> None:
        if self.min_reuse < 0:
            raise ValueError(f"min-reuse must not be negative, got {self.min_reuse}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.min_reuse == 0:
            return
        for kernel in [k for k in op.walk() if isinstance(k, KernelOp)]:
            model = model_of(kernel)
            dense = plan_dense_copies(kernel, model, self.min_reuse) if self.dense_strided else []
            if dense:
                for plan in dense:
                    apply_dense_copy(kernel, plan)
                model = model_of(kernel)
            # the plans are made before the copies below change the kernel's reads
            pads = plan_pads(kernel, model) if self.pad_windows else []
            packs = plan_packs(kernel, self.min_reuse, model)
            merged = (plan_channel_copies(kernel, model, self.min_reuse)
                      if self.dense_strided else [])
            for pack in packs:
                apply_pack(kernel, pack)
            for plan in merged:
                apply_dense_copy(kernel, plan)
            for pad in pads:
                apply_pad(kernel, pad)


register_pass(PackOperands)

__all__ = ["Pack", "PackOperands", "apply_dense_copy", "apply_pack", "apply_pad", "copy_kernel",
           "pack_kernel", "plan_packs", "read_copy"]
