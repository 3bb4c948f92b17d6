"""split-reductions: split a long reduction into a partial kernel (chunks and vector
lanes as new parallel dimensions) and a small final reduction kernel.

A reduction whose parallel space is small (`sum` of a whole tensor: one output
element) runs on one thread, and a reduction whose innermost loop is the
reduction itself (a row sum) is a chain of dependent scalar adds that LLVM does
not vectorize without reassociating the float adds. Both are memory-bound and
should run at memory speed. This pass rewrites such a kernel in two:

- **partial**: the outermost (largest-stride) reduction dimension is split into
  `P` chunks, a new parallel dimension, so threads can share the work (only when
  the parallel space has fewer than `chunks` points); the reduction dimension the
  main read walks with stride 1 is split into `(j, l)` with `l` of `L` lanes, a new
  parallel, contiguous dimension: the kernel accumulates `L` independent partial
  results side by side, a loop the vectorizer handles as plain elementwise code;
- **final**: reduces the `P x L` partial results of each output element and
  applies the original epilogue.

A split dimension `d` of size `S` is rewritten in every read (and mask) as
`p * (S / P) + d` and/or `d * L + l`; the new dimensions are appended after the
kernel's own, so the other dimensions (and `kernel.index` on them) keep their
numbers. `max` (and integer and bool reductions) give exactly the same result;
a float `sum` is added in another order, so it may differ in the last bits (it
is usually closer to the exact sum: a chunked sum is a step towards pairwise
summation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap, AffineSet
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irtensor import dtypes, host
from irtensor.dialects.kernel import AccessAttr, IndexOp, KernelOp, YieldOp
from irtensor.passes.kernel.cost_model import model_of
from irtensor.passes.kernel.views import simplify, substitute, substitute_constraint
from irtensor.passes.registry import register_pass

# Independent vector accumulators per 16 vector registers: 2 hide the add's latency. The
# lanes loop is unrolled and its accumulators kept in registers (as scalars where LLVM does
# not pack them again): on a 16-register AVX2 CPU, 4 vectors (32 lanes) spilled, and a
# 4096 x 4096 row sum took 13.1 ms against 5.7 with 2 (numpy 6.1); 32 AVX-512 registers
# take 4 (64 lanes).
LANE_VECTORS = 2


@dataclass(frozen=True)
class SplitPlan:
    """How one kernel is split: the chunked dim (or None) and P, the laned dim (or None)
    and L."""

    chunk_dim: int | None
    chunks: int
    lane_dim: int | None
    lanes: int

    @property
    def extra_sizes(self) -> tuple[int, ...]:
        return ((self.chunks,) if self.chunk_dim is not None else ()) + (
            (self.lanes,) if self.lane_dim is not None else ())


def _largest_divisor_at_most(n: int, limit: int) -> int:
    return max(d for d in range(1, max(min(n, limit), 1) + 1) if n % d == 0)


def _smallest_divisor_at_least(n: int, low: int) -> int | None:
    """Looked for up to 4 * low only: a large prime size is not worth a long search."""
    return next((d for d in range(max(low, 2), min(n, 4 * max(low, 2)) + 1) if n % d == 0),
                None)


def plan_split(kernel: KernelOp, options: SplitReductions) -> SplitPlan | None:
    """The split for `kernel`, or None when it is not worth it (or not possible)."""
    sizes, reductions = kernel.sizes, kernel.reduction_dims
    if not reductions or kernel.schedule is not None or kernel.combiner is None:
        return None
    length = int(np.prod([sizes[d] for d in reductions], dtype=np.int64))
    parallel = int(np.prod([sizes[d] for d in kernel.parallel_dims], dtype=np.int64))
    if length < options.min_length or parallel == 0:
        return None
    indexed = {op.dim.value.data for op in kernel.body.walk() if isinstance(op, IndexOp)}
    strides, item = _walk(kernel)
    lane_dim, lanes = _plan_lanes(kernel, strides, item, indexed, options)
    left = dict(zip(reductions, (sizes[d] for d in reductions), strict=True))
    if lane_dim is not None:
        left[lane_dim] //= lanes
    chunk_dim, chunks = None, 1
    if parallel < options.chunks:
        want = -(-options.chunks // parallel)
        # The largest stride first: each chunk then reads one contiguous stretch.
        for d in sorted(left, key=lambda d: -abs(strides[d])):
            if d in indexed or left[d] < 2:
                continue
            found = left[d] if left[d] <= want else _smallest_divisor_at_least(left[d], want)
            if found is not None:
                chunk_dim, chunks = d, found
                break
    if chunk_dim is None and lane_dim is None:
        return None
    plan = SplitPlan(chunk_dim, chunks, lane_dim, lanes)
    partial_points = parallel * int(np.prod(plan.extra_sizes, dtype=np.int64))
    if partial_points * options.min_ratio > parallel * length:
        return None  # the partial results would cost a noticeable share of the traffic
    return plan


def _walk(kernel: KernelOp) -> tuple[tuple[int, ...], int]:
    """The strides (per dimension) and item bytes of the read that moves the most bytes;
    a kernel that reads nothing (a constant or `kernel.index` body) is split as if it
    read its reduction dims row-major: it still gets lanes and chunks (threads)."""
    main = model_of(kernel).main_read
    if main is not None:
        return main.strides, main.item_bytes
    yielded = kernel.body.block.last_op
    assert isinstance(yielded, YieldOp)
    strides = [0] * len(kernel.sizes)
    step = 1
    for d in sorted(kernel.reduction_dims, reverse=True):
        strides[d], step = step, step * kernel.sizes[d]
    return tuple(strides), dtypes.to_numpy(yielded.value.type).itemsize


def _plan_lanes(kernel: KernelOp, strides: Sequence[int], item_bytes: int, indexed: set[int],
                options: SplitReductions) -> tuple[int | None, int]:
    """The reduction dim the main read walks contiguously and its lane count, if any."""
    if options.lanes == 1:
        return None, 1
    vector_bytes = host.vector_bytes()
    lane_vectors = LANE_VECTORS * host.vector_registers() // 16
    lanes = options.lanes or lane_vectors * vector_bytes // item_bytes
    for d in kernel.reduction_dims:
        size = kernel.sizes[d]
        if abs(strides[d]) != 1 or d in indexed:
            continue
        count = _largest_divisor_at_most(size, lanes)
        if count >= max(2, min(lanes, vector_bytes // item_bytes)) and size // count >= 2:
            return d, count
    return None, 1


def split_kernel(kernel: KernelOp, plan: SplitPlan) -> tuple[KernelOp, KernelOp]:
    """The partial and final kernels that together compute `kernel` (see the module doc)."""
    sizes = list(kernel.sizes)
    n = len(sizes)
    extra = plan.extra_sizes
    by: list[AffineExpr] = [AffineExpr.dimension(d) for d in range(n)]
    chunk_at, lane_at = n, n + (plan.chunk_dim is not None)  # the new dims' numbers
    if plan.lane_dim is not None:  # lanes first: a chunk covers whole runs of lanes
        d = plan.lane_dim
        by[d] = by[d] * plan.lanes + AffineExpr.dimension(lane_at)
        sizes[d] //= plan.lanes
    if plan.chunk_dim is not None:
        d = plan.chunk_dim
        elements = kernel.sizes[d] // plan.chunks
        by[d] = AffineExpr.dimension(chunk_at) * elements + by[d]
        sizes[d] //= plan.chunks
    space = [*sizes, *extra]
    partial = _partial(kernel, space, by)
    return partial, _final(kernel, partial.res, extra)


def _moved(access: AccessAttr, by: Sequence[AffineExpr], space: Sequence[int]) -> AccessAttr:
    amap = access.affine_map
    exprs = tuple(simplify(substitute(e, by), space) for e in amap.results)
    constraints = tuple(substitute_constraint(c, by) for c in access.constraints.constraints)
    return AccessAttr(AffineMap(len(space), 0, exprs), AffineSet(len(space), 0, constraints),
                      access.pad_value)


def _partial(kernel: KernelOp, space: Sequence[int], by: Sequence[AffineExpr]) -> KernelOp:
    n = len(kernel.sizes)
    body_inputs = kernel.body_inputs
    reads = [_moved(a, by, space) for a in kernel.accesses[: len(body_inputs)]]
    out_dims = [*kernel.parallel_dims, *range(n, len(space))]
    writes = AffineMap(len(space), 0, tuple(AffineExpr.dimension(d) for d in out_dims))
    yielded = kernel.body.block.last_op
    assert isinstance(yielded, YieldOp)
    element = yielded.value.type
    result = TensorType(element, [space[d] for d in out_dims])
    body = kernel.body.clone()
    return KernelOp("r_" + "_".join(map(str, space)), body_inputs, space, reads, writes,
                    result, body, kernel.reduction_dims, kernel.combiner.data)


def _final(kernel: KernelOp, partial: SSAValue, extra: Sequence[int]) -> KernelOp:
    """Space: the kernel's own dims, its reductions at size 1, then the partial's new dims
    as reductions; reads the partial, then the epilogue inputs as before."""
    n = len(kernel.sizes)
    reductions = kernel.reduction_dims
    space = [1 if d in reductions else s for d, s in enumerate(kernel.sizes)] + list(extra)
    rank = len(space)
    partial_indices = [*kernel.parallel_dims, *range(n, rank)]
    reads = [AccessAttr(AffineMap(rank, 0, tuple(AffineExpr.dimension(d)
                                                 for d in partial_indices)))]
    for access in kernel.accesses[len(kernel.body_inputs):]:
        reads.append(AccessAttr(AffineMap(rank, 0, access.affine_map.results),
                                AffineSet(rank, 0, access.constraints.constraints),
                                access.pad_value))
    writes = AffineMap(rank, 0, kernel.writes.data.results)
    yielded = kernel.body.block.last_op
    assert isinstance(yielded, YieldOp)
    body = Block(arg_types=[yielded.value.type])
    body.add_op(YieldOp(body.args[0]))
    epilogue = kernel.epilogue.clone() if kernel.epilogue_block is not None else None
    epilogue_inputs = list(kernel.inputs[len(kernel.body_inputs):])
    return KernelOp("r_" + "_".join(map(str, space)), [partial, *epilogue_inputs], space,
                    reads, writes, kernel.res.type, Region(body),  # type: ignore[arg-type]
                    (*reductions, *range(n, rank)), kernel.combiner.data, epilogue,
                    len(epilogue_inputs))


def _accumulates(kernel: KernelOp) -> bool:
    """Whether partial results in the body's element type keep the result's accuracy:
    not for f16/bf16 sums, where rounding each partial sum to 8 or 11 bits would show."""
    yielded = kernel.body.block.last_op
    if not isinstance(yielded, YieldOp):
        return False
    t = yielded.value.type
    sums = kernel.combiner is not None and kernel.combiner.data.value == "sum"
    return not (sums and dtypes.is_float(t) and dtypes.to_numpy(t).itemsize < 4)


@register_pass
@dataclass(frozen=True)
class SplitReductions(ModulePass):
    """split-reductions: split a long reduction over a small parallel space into chunks
    and vector lanes (a partial kernel) and a small final reduction.

    `min-length`: reductions shorter than this (points per output element) are
    left alone. `chunks`: when the parallel space has fewer points than this,
    the reduction is cut into chunks until it has about this many (0: never).
    `lanes`: lanes of the contiguous reduction dim (0: two of the host's vectors per 16
    vector registers, `irtensor.host`; 1: no lane split). `min-ratio`: the partial buffer
    must be at most 1/min-ratio of the points the kernel reduces.
    """

    name = "split-reductions"
    min_length: int = 1 << 12
    chunks: int = 64
    lanes: int = 0
    min_ratio: int = 16

    def __post_init__(self) -> None:
        for option in ("min_length", "chunks", "lanes", "min_ratio"):
            if (value := getattr(self, option)) < 0:
                raise ValueError(f"{option.replace('_', '-')} must not be negative, got {value}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, KernelOp)]:
            if not _accumulates(kernel) or (plan := plan_split(kernel, self)) is None:
                continue
            partial, final = split_kernel(kernel, plan)
            Rewriter.insert_op(partial, InsertPoint.before(kernel))
            Rewriter.replace_op(kernel, final)


__all__ = ["SplitPlan", "SplitReductions", "plan_split", "split_kernel"]

