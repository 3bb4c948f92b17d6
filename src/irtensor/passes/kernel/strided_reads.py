"""Dense copies of a contraction's operand read with a stride along its columns, for
pack-operands.

A stride-2 1x1 conv (ResNet's downsampling shortcut) reads its input at every other
point of every other row: (n, c, 2 * (p floordiv W), 2 * (p mod W)). Its register
block cannot load a vector of such points, so the conv is blocked across its output
channels and broadcasts each point's input from a scalar load; ResNet-50's three ran
at about 120 GFLOP/s against 140-160 for the stride-1 1x1 convs around them. A copy of
the points it reads, written densely (n, c, p), makes it a stride-1 1x1 conv: the copy
moves the input's N * C * P points once, the conv reads each of them once per output
channel.

An operand is copied when it is a body read whose index along the write's contiguous
dimension `p` steps by more than one element (other than a permuted operand's, which
pack-operands transposes); `p` is not in an index with a reduction (a window's taps:
those convs have their own blocks); the kernel reuses each point it reads across at
least `min-reuse` parallel points; and the copy is at most `padding.MAX_GROWTH` times
the operand (an index that mixes `p` with another parallel dimension could read each
element at many points). A masked read (a window padded past the input's edge) is
copied with its mask: the copy holds the pad value there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap, AffineSet
from xdsl.ir.affine.affine_set import AffineConstraintExpr

from irtensor.dialects.kernel import AccessAttr, KernelOp
from irtensor.passes.kernel.cost_model import KernelModel
from irtensor.passes.kernel.kernel_facts import expr_dims
from irtensor.passes.kernel.padding import MAX_GROWTH
from irtensor.passes.kernel.schedule_blocks import channel_column, contiguous_dim


@dataclass(frozen=True)
class DenseCopy:
    """Input `index` is read through a copy over the iteration dimensions `dims` (the
    copy's axes in that order; the strided one last)."""

    index: int
    dims: tuple[int, ...]


def is_projection(access: AccessAttr) -> bool:
    """Each index a dimension or a constant: a permuted operand, which `pack_kernel`
    transposes instead."""
    return all(isinstance(e, AffineDimExpr | AffineConstantExpr)
               for e in access.affine_map.results)


def plan_dense_copies(kernel: KernelOp, model: KernelModel, min_reuse: int
                      ) -> list[DenseCopy]:
    """The strided operands of `kernel` worth a dense copy (see the module's docstring)."""
    if not kernel.reduction_dims or kernel.schedule is not None:
        return []
    column = contiguous_dim(model)
    return [] if column is None else copies_along(kernel, model, column, min_reuse)


def plan_channel_copies(kernel: KernelOp, model: KernelModel, min_reuse: int
                        ) -> list[DenseCopy]:
    """A channel-blocked conv's operands that vary along its channel column through an
    index merging two dims (a grouped conv's weight, read at `(g * O/G + o, c, kh, kw)`),
    as dense copies with the channels innermost: `pack_kernel` transposes only plain
    permutations, and without a copy the block's weight vectors were gathers (a 4-group
    conv ran 4-8 times slower than four convs)."""
    if not kernel.reduction_dims or kernel.schedule is not None:
        return []
    column = channel_column(model)
    return [] if column is None else copies_along(kernel, model, column, min_reuse)


def copies_along(kernel: KernelOp, model: KernelModel, column: int, min_reuse: int
                 ) -> list[DenseCopy]:
    """The operands that `column` walks with a step of more than one element, outside
    any window and not as a permutation, reused enough and not grown too much by a copy
    over the dims they use, with `column` innermost."""
    copies = []
    for index in range(model.n_body_reads):
        read, access = model.reads[index], kernel.accesses[index]
        if abs(read.strides[column]) <= 1 or is_projection(access):
            continue
        index_dims = [expr_dims(e) for e in access.affine_map.results]
        index_dims += [expr_dims(c.lhs) | expr_dims(c.rhs) for c in access.constraints.constraints]
        if any(column in dims and any(model.is_reduction(d) for d in dims)
               for dims in index_dims):
            continue
        used = set().union(*index_dims)
        if not any(model.is_reduction(d) for d in used):
            continue
        reuse = math.prod(model.sizes[d] for d in range(len(model.sizes))
                          if d not in used and not model.is_reduction(d))
        points = math.prod(model.sizes[d] for d in used)
        if reuse < min_reuse or points > MAX_GROWTH * math.prod(read.shape):
            continue
        # the copy keeps the read's order of its dims, with the column innermost
        order = sorted(used - {column}, key=lambda d: -abs(read.strides[d]))
        copies.append(DenseCopy(index, (*order, column)))
    return copies


def copy_read(access: AccessAttr, dims: tuple[int, ...]) -> AccessAttr:
    """What the copy reads at its point (q0, q1, ...): the input at the kernel's
    `access` with its dimension dims[i] at q_i, masked as the kernel's read was (the
    copy then holds the pad value where the kernel read it)."""
    old = access.affine_map
    rename = [AffineDimExpr(dims.index(d)) if d in dims else AffineDimExpr(0)
              for d in range(old.num_dims)]
    results = tuple(e.replace_dims_and_symbols(rename, []) for e in old.results)
    if not access.is_masked:
        return AccessAttr(AffineMap(len(dims), 0, results))
    valid = tuple(AffineConstraintExpr(c.kind, c.lhs.replace_dims_and_symbols(rename, []),
                                       c.rhs.replace_dims_and_symbols(rename, []))
                  for c in access.constraints.constraints)
    return AccessAttr(AffineMap(len(dims), 0, results), AffineSet(len(dims), 0, valid),
                      access.pad_value)


def dense_read(access: AccessAttr, dims: tuple[int, ...]) -> AccessAttr:
    """How the kernel reads the copy: axis i at its dimension dims[i]."""
    old = access.affine_map
    return AccessAttr(AffineMap(old.num_dims, 0, tuple(AffineDimExpr(d) for d in dims)))


__all__ = ["DenseCopy", "contiguous_dim", "copies_along", "copy_read", "dense_read",
           "plan_channel_copies", "plan_dense_copies"]
