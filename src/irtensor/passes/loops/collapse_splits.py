"""Buffer axes indexed by the row-major digits of one dim, as one axis (`lower-kernels-to-loops`).

A 1x1 conv runs over its output's H * W points as one dim p (`conv-to-mul-sum`): it
reads x at (n, c, p floordiv W, p mod W) and writes its result at (n, o, p floordiv W,
p mod W). Those two axes of a row-major buffer are one axis of H * W elements read at p,
so the kernel's function views each such buffer through a `memref.collapse_shape` and
lowers a copy of the kernel whose accesses index the view by plain dims again: a run
along p is then contiguous, and the register block loads it as a vector (through the
digits, it fell back to scalar reads at a tenth of the speed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import memref
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, MemRefType, TensorType, i64
from xdsl.ir import Block, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap

from irtensor.dialects._base import element_of, shape_of
from irtensor.dialects.kernel import AccessAttr, KernelOp, split_of

Groups = list[list[int]]


def collapsed_access(exprs: Sequence[AffineExpr], shape: Sequence[int]
                     ) -> tuple[list[AffineExpr], list[int], Groups] | None:
    """(exprs, shape, reassociation) with each run of axes that holds the row-major
    digits of one dim (outermost `d floordiv s`, innermost `d mod n`) as one axis indexed
    by d; None when there is no such run."""
    out_exprs: list[AffineExpr] = []
    out_shape: list[int] = []
    groups: Groups = []
    axis, merged = 0, False
    while axis < len(exprs):
        last = _run_end(exprs, shape, axis)
        if last > axis:
            part = split_of(exprs[axis])
            assert part is not None
            out_exprs.append(AffineDimExpr(part[0]))
            out_shape.append(math.prod(shape[axis:last + 1]))
            merged = True
        else:
            out_exprs.append(exprs[axis])
            out_shape.append(shape[axis])
        groups.append(list(range(axis, last + 1)))
        axis = last + 1
    return (out_exprs, out_shape, groups) if merged else None


def _run_end(exprs: Sequence[AffineExpr], shape: Sequence[int], first: int) -> int:
    """The last axis of the digit run that starts at `first` (`first` itself: none).
    Its axes, innermost first, are `d mod shape`, then `(d floordiv s) mod shape` with s
    the product of the sizes inside (a size-1 axis at 0 between them counts for nothing),
    and the outermost is `d floordiv s` without a mod: the run then holds all of d, and
    the collapsed axis is indexed by d itself (with a mod there, d would wrap: a run of
    d's lower digits only, as a flatten's (12,) of (2, 1, 3, 4) at 24 points has)."""
    head = split_of(exprs[first])
    if head is None or head[2] is not None:
        return first
    dim = head[0]
    for last in range(first + 1, len(exprs)):
        if _digits_of(exprs, shape, first, last, dim):
            return last
    return first


def _digits_of(exprs: Sequence[AffineExpr], shape: Sequence[int], first: int, last: int,
               dim: int) -> bool:
    """Whether axes first..last are the row-major digits of `dim`, `first` its top one."""
    stride = 1
    for axis in range(last, first - 1, -1):
        if shape[axis] == 1 and str(exprs[axis]) == "0" and first < axis < last:
            continue
        part = split_of(exprs[axis])
        if part is None or part[0] != dim or part[1] != stride:
            return False
        if (part[2] is None) != (axis == first) or part[2] not in (None, shape[axis]):
            return False
        stride *= shape[axis]
    return True


def collapsed_kernel(op: KernelOp) -> tuple[KernelOp, list[Groups | None], Groups | None] | None:
    """A copy of `op` over the same space whose inputs and result have their digit runs
    collapsed (its operands stand-ins of the collapsed types, never run), and each
    buffer's reassociation (None: kept as it is); None when no buffer has a run."""
    reads: list[AccessAttr] = []
    types: list[TensorType] = []
    input_groups: list[Groups | None] = []
    rank = len(op.sizes)
    for value, access in zip(op.inputs, op.accesses, strict=True):
        found = collapsed_access(access.affine_map.results, shape_of(value))
        if found is None:
            reads.append(access)
            types.append(value.type)  # type: ignore[arg-type]
            input_groups.append(None)
            continue
        exprs, shape, groups = found
        reads.append(AccessAttr(AffineMap(rank, 0, tuple(exprs)), access.constraints,
                                access.pad_value))
        types.append(TensorType(element_of(value), shape))
        input_groups.append(groups)
    written = collapsed_access(op.writes.data.results, shape_of(op.res))
    if written is None and all(g is None for g in input_groups):
        return None
    writes, result, output_groups = op.writes.data, op.res.type, None
    if written is not None:
        exprs, shape, output_groups = written
        writes = AffineMap(rank, 0, tuple(exprs))
        result = TensorType(element_of(op.res), shape)
    stand_ins = Block(arg_types=types).args
    epilogue = op.epilogue.clone() if op.epilogue_block is not None else None
    copy = KernelOp(op.sym_name.data, list(stand_ins), op.sizes, reads, writes,
                    result, op.body.clone(), op.reduction_dims,  # type: ignore[arg-type]
                    op.combiner.data if op.combiner is not None else None, epilogue,
                    op.epilogue_inputs.value.data, op.schedule)
    return copy, input_groups, output_groups


def collapse_view(at: Builder, buffer: SSAValue, groups: Groups | None) -> SSAValue:
    """`buffer` with each group of its axes as one (`memref.collapse_shape`); itself
    where `groups` is None."""
    if groups is None:
        return buffer
    t = buffer.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    merged = [math.prod(shape[a] for a in group) for group in groups]
    view = at.insert(memref.CollapseShapeOp.build(
        operands=[buffer], result_types=[MemRefType(t.element_type, merged)],
        properties={"reassociation": ArrayAttr(
            [ArrayAttr([IntegerAttr(a, i64) for a in group]) for group in groups])}))
    return view.result


__all__ = ["collapse_view", "collapsed_access", "collapsed_kernel"]
