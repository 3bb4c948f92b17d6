"""The cost model of the kernel rung's schedulers: what one step of each loop costs.

Shared by reorder-loops, its register-block rules (`schedule_blocks`), split-reductions
and the loop lowering's register block. In: a `kernel.kernel`; out: a `KernelModel`
(its accesses with their strides in every iteration dimension and the bytes each moves)
and the measures the schedulers compare (`dim_costs`, `footprint`, `lanes_for`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
)

from irtensor import dtypes, host
from irtensor.dialects._base import element_of, shape_of
from irtensor.dialects.kernel import KernelOp, YieldOp
from irtensor.interp.kernel_impls import eval_expr
from irtensor.passes.kernel.views import bounds, simplify

LINE_BYTES = 64  # a cache line
CACHE_BYTES = 1 << 20  # L2 of one core: a kernel whose buffers fit is not tiled
TILE_BYTES = 32 << 10  # L1 of one core: what one tile's working set should fit
WRITE_FACTOR = 2  # a store reads its cache line, then writes it back
MIN_VECTOR_LENGTH = 4  # a shorter innermost loop is unrolled, not vectorized
MAX_UNROLL = 8  # an innermost loop this short (or shorter) is fully unrolled
MIN_PARALLEL_POINTS = 1 << 15  # a smaller kernel is not worth waking threads for
SAMPLES = 64  # points at which a floordiv/mod index's step is measured

# --------------------------------------------------------------------------- strides


def row_major_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Elements between neighbours along each axis of a row-major buffer."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _uses(expr: AffineExpr, dim: int) -> bool:
    if isinstance(expr, AffineDimExpr):
        return expr.position == dim
    if isinstance(expr, AffineBinaryOpExpr):
        return _uses(expr.lhs, dim) or _uses(expr.rhs, dim)
    return False


def linear_coefficient(expr: AffineExpr, dim: int) -> int | None:
    """The coefficient of `dim` in `expr`; None when `dim` is under a floordiv or mod."""
    if not _uses(expr, dim):
        return 0
    if isinstance(expr, AffineDimExpr):
        return 1
    assert isinstance(expr, AffineBinaryOpExpr)
    lhs, rhs = linear_coefficient(expr.lhs, dim), linear_coefficient(expr.rhs, dim)
    if lhs is None or rhs is None:
        return None
    if expr.kind == AffineBinaryOpKind.Add:
        return lhs + rhs
    if expr.kind == AffineBinaryOpKind.Mul and isinstance(expr.rhs, AffineConstantExpr):
        return lhs * expr.rhs.value
    if expr.kind == AffineBinaryOpKind.Mul and isinstance(expr.lhs, AffineConstantExpr):
        return rhs * expr.lhs.value
    return None


def sampled_step(expr: AffineExpr, dim: int, sizes: Sequence[int]) -> int:
    """The median change of `expr` when `dim` steps by one, over fixed sample points."""
    rng = np.random.default_rng(0)
    point = [rng.integers(0, max(s, 1), SAMPLES) for s in sizes]
    point[dim] = rng.integers(0, sizes[dim] - 1, SAMPLES)
    stepped = list(point)
    stepped[dim] = point[dim] + 1
    deltas = np.broadcast_to(eval_expr(expr, stepped) - eval_expr(expr, point), (SAMPLES,))
    return int(np.sort(deltas)[SAMPLES // 2])


def address_of(exprs: Sequence[AffineExpr], shape: Sequence[int], sizes: Sequence[int]
               ) -> AffineExpr:
    """The element offset a row-major buffer of `shape` is read at, simplified over `sizes`."""
    address: AffineExpr = AffineExpr.constant(0)
    for expr, stride in zip(exprs, row_major_strides(shape), strict=True):
        address = address + simplify(expr, sizes) * stride
    return simplify(address, sizes)


def strides_of(exprs: Sequence[AffineExpr], shape: Sequence[int], sizes: Sequence[int]
               ) -> tuple[int, ...]:
    """Per iteration dimension: elements the access moves per step (0: reused)."""
    address = address_of(exprs, shape, sizes)
    out = []
    for dim, size in enumerate(sizes):
        coefficient = linear_coefficient(address, dim)
        if size < 2:
            coefficient = 0
        elif coefficient is None:
            coefficient = sampled_step(address, dim, sizes)
        out.append(coefficient)
    return tuple(out)


def footprint(exprs: Sequence[AffineExpr], shape: Sequence[int], extents: Sequence[int]) -> int:
    """Elements an access touches while each dimension runs over `extents`."""
    if any(e <= 0 for e in extents):
        return 0
    count = 1
    for expr, size in zip(exprs, shape, strict=True):
        low, high = bounds(simplify(expr, extents), extents)
        count *= max(min(high - low + 1, size), 1)
    return count


# --------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class Access:
    """One buffer a kernel reads or writes, as the cost model sees it."""

    label: str  # "read #0", "write"
    exprs: tuple[AffineExpr, ...]
    shape: tuple[int, ...]
    item_bytes: int
    strides: tuple[int, ...]  # per iteration dimension, in elements
    weight: int  # bytes it moves at least once (twice that for the write)
    is_write: bool = False


@dataclass(frozen=True)
class KernelModel:
    """What the cost model knows of a kernel."""

    name: str
    sizes: tuple[int, ...]
    reductions: tuple[int, ...]
    reads: tuple[Access, ...]  # body reads first, then epilogue reads
    n_body_reads: int
    write: Access
    accumulator_bytes: int = 0  # a reduction's accumulator (f32 for a bf16 sum); 0: none

    @property
    def accesses(self) -> tuple[Access, ...]:
        return (*self.reads, self.write)

    @property
    def main_read(self) -> Access | None:
        """The read that moves the most bytes (the first of equals)."""
        body = self.reads[: self.n_body_reads]
        return max(body, key=lambda a: a.weight) if body else None

    def is_reduction(self, dim: int) -> bool:
        return dim in self.reductions


def item_bytes(value: SSAValue) -> int:
    return dtypes.to_numpy(element_of(value)).itemsize


def make_access(label: str, exprs: Sequence[AffineExpr], value: SSAValue,
                sizes: Sequence[int], is_write: bool = False) -> Access:
    shape = shape_of(value)
    item = item_bytes(value)
    touched = min(footprint(exprs, shape, sizes), int(np.prod(shape, dtype=np.int64)))
    weight = touched * item * (WRITE_FACTOR if is_write else 1)
    return Access(label, tuple(exprs), shape, item, strides_of(exprs, shape, sizes), weight,
                  is_write)


def model_of(kernel: KernelOp) -> KernelModel:
    sizes = kernel.sizes
    reads = tuple(make_access(f"read #{i}", access.affine_map.results, value, sizes)
                  for i, (value, access) in enumerate(zip(kernel.inputs, kernel.accesses,
                                                          strict=True)))
    write = make_access("write", kernel.writes.data.results, kernel.res, sizes, is_write=True)
    accumulator = 0
    if kernel.reduction_dims and isinstance(body_yield := kernel.body.block.last_op, YieldOp):
        accumulator = dtypes.to_numpy(body_yield.value.type).itemsize
    return KernelModel(kernel.sym_name.data, sizes, kernel.reduction_dims, reads,
                       len(kernel.body_inputs), write, accumulator)


def as_model(kernel: KernelOp | KernelModel) -> KernelModel:
    return kernel if isinstance(kernel, KernelModel) else model_of(kernel)



# --------------------------------------------------------------------------- loop costs


def line_share(stride: int, item: int) -> int:
    """Bytes of a new cache line one step touches (at most a line; 0 when reused)."""
    return min(abs(stride) * item, LINE_BYTES)


def dim_costs(model: KernelModel) -> tuple[float, ...]:
    """Per dimension: the cache lines one step of it touches were it the innermost loop,
    averaged over the accesses weighted by the bytes each moves (0: a step reuses every
    line; 1: a step touches a new line of every access)."""
    total = sum(a.weight for a in model.accesses) * LINE_BYTES
    return tuple(sum(a.weight * line_share(a.strides[d], a.item_bytes) for a in model.accesses)
                 / max(total, 1) for d in range(len(model.sizes)))


def is_trivial(model: KernelModel, dim: int) -> bool:
    return model.sizes[dim] <= 1


def is_broadcast(model: KernelModel, dim: int) -> bool:
    """A loop that moves no access: it re-walks the same memory."""
    return not is_trivial(model, dim) and all(a.strides[dim] == 0 for a in model.accesses)


def contiguous_in(model: KernelModel, dim: int) -> list[Access]:
    """The write and main read, where `dim` walks them with stride 1."""
    candidates = [model.write] + ([m] if (m := model.main_read) is not None else [])
    return [a for a in candidates if abs(a.strides[dim]) == 1]


def reuses_across_parallel(model: KernelModel) -> bool:
    """A reduction with an input reused across a parallel dimension (matmul, conv)."""
    parallel = [d for d in range(len(model.sizes))
                if not model.is_reduction(d) and model.sizes[d] > 1]
    return any(any(a.strides[p] == 0 for p in parallel)
               and any(a.strides[r] != 0 for r in model.reductions)
               for a in model.reads[: model.n_body_reads])


def needs_tiles(model: KernelModel) -> bool:
    """Matmul- and conv-like (`reuses_across_parallel`) and too big for CACHE_BYTES."""
    total = sum(a.weight for a in model.reads) + model.write.weight // WRITE_FACTOR
    return bool(model.reductions) and reuses_across_parallel(model) and total > CACHE_BYTES


def tile_bytes(model: KernelModel, tiles: Sequence[int]) -> int:
    """The working set of one tile: what the body reads and the write (the accumulators)
    touch over it; epilogue reads come once per output element, after the reduction."""
    inside = (*model.reads[: model.n_body_reads], model.write)
    return sum(footprint(a.exprs, a.shape, tiles) * a.item_bytes for a in inside)


def smaller_power_of_two(n: int) -> int:
    return 1 << ((n - 1).bit_length() - 1)


def lanes_for(model: KernelModel, dim: int) -> int:
    """Vector lanes along `dim`: the host's vector bytes (`irtensor.host`) over the widest
    element it walks contiguously."""
    walked = contiguous_in(model, dim)
    return host.vector_bytes() // max(a.item_bytes for a in walked) if walked else 1
