"""reorder-loops: choose each kernel's schedule (loop order, tiles, vector width,
unroll, parallel loops) from the strides of its accesses.

The cost model, in small functions that can be read and tested alone:

- `strides_of`: how far in memory (elements of a row-major buffer) one step
  of each iteration dimension moves an access; exact for affine indices (the
  dimension's coefficient times the buffer stride), measured on sample points
  for floordiv/mod indices (the median step, so a rare wrap-around does not
  count).
- `dim_costs`: per dimension, the cache lines one step of it would touch if it
  were the innermost loop, each access weighted by the bytes it moves (the
  write twice: a store reads its line and writes it back).
- `choose_order`: loops of size 1, then broadcast loops (stride 0 everywhere),
  then the rest from the costliest step to the cheapest; innermost, the
  cheapest loop that walks the write or the main read contiguously and is
  long enough to vectorize.
- `schedule_blocks.block_order`, `.choose_block`: matmul- and conv-like kernels (a reduction
  whose input is reused across a parallel dimension) whose innermost loop walks
  the write get the i-k-j shape and a register block (`unroll` rows x `vector`
  columns of accumulators that lower-kernels-to-loops keeps in registers) with
  L2 tiles of the reduction and the columns.
- `choose_tiles`: for the other matmul- and conv-like kernels whose buffers do
  not fit in cache; tiles shrink from the largest until one tile's working set
  fits in L1.
- `choose_vector`, `choose_unroll`, `choose_parallel`: the innermost loop's
  vector width and unroll factor, and the outermost parallel loops to split
  across threads.

The schedule never changes what a kernel computes (`irtensor.interp` ignores
it); a schedule already on a kernel (written by hand) is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
)
from xdsl.passes import ModulePass

from irtensor import dtypes
from irtensor.dialects._base import element_of, shape_of
from irtensor.dialects.kernel import KernelOp, ScheduleAttr
from irtensor.interp.kernel_impls import eval_expr
from irtensor.passes import loop_builder, register_pass
from irtensor.passes.views import bounds, simplify

LINE_BYTES = 64  # a cache line
VECTOR_BYTES = 64  # an AVX-512 register: 16 f32 lanes
CACHE_BYTES = 1 << 20  # L2 of one core: a kernel whose buffers fit is not tiled
TILE_BYTES = 32 << 10  # L1 of one core: what one tile's working set should fit
WRITE_FACTOR = 2  # a store reads its cache line, then writes it back
MIN_VECTOR_LENGTH = 4  # a shorter innermost loop is unrolled, not vectorized
MAX_UNROLL = 8  # an innermost loop this short (or shorter) is fully unrolled
MIN_PARALLEL_POINTS = 1 << 15  # a smaller kernel is not worth waking threads for
SAMPLES = 64  # points at which a floordiv/mod index's step is measured


class ScheduleError(ValueError):
    """A schedule that does not fit its kernel."""


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
    return KernelModel(kernel.sym_name.data, sizes, kernel.reduction_dims, reads,
                       len(kernel.body_inputs), write)


def as_model(kernel: KernelOp | KernelModel) -> KernelModel:
    return kernel if isinstance(kernel, KernelModel) else model_of(kernel)


# --------------------------------------------------------------------------- loop order


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


def choose_innermost(model: KernelModel, dims: Sequence[int]) -> int:
    """The cheapest loop among those that walk the write or main read contiguously and
    are long enough to vectorize; the cheapest of all when none does."""
    costs = dim_costs(model)
    vectorizable = [d for d in dims
                    if contiguous_in(model, d) and model.sizes[d] >= MIN_VECTOR_LENGTH]
    return min(vectorizable or dims, key=lambda d: (costs[d], -d))


def choose_order(kernel: KernelOp | KernelModel) -> tuple[int, ...]:
    """Loops outermost first: broadcast loops, then from the costliest step to the
    cheapest (ties: parallel before reduction, larger stride outside), and the
    innermost loop last. Size-1 loops go second, after the first real loop, so
    the outermost loop is one worth splitting across threads."""
    model = as_model(kernel)
    dims = range(len(model.sizes))
    trivial = [d for d in dims if is_trivial(model, d)]
    broadcast = [d for d in dims if is_broadcast(model, d)]
    rest = [d for d in dims if d not in trivial and d not in broadcast]
    if not rest:
        return _units_second((*broadcast,), trivial)
    inner = choose_innermost(model, rest)
    costs = dim_costs(model)

    def raw(d: int) -> int:
        return sum(a.weight * abs(a.strides[d]) for a in model.accesses)

    middle = sorted((d for d in rest if d != inner),  # costs compared to 1%
                    key=lambda d: (-round(costs[d], 2), model.is_reduction(d), -raw(d), d))
    return _units_second((*broadcast, *middle, inner), trivial)


def _units_second(order: tuple[int, ...], units: list[int]) -> tuple[int, ...]:
    return (*order[:1], *units, *order[1:])


# --------------------------------------------------------------------------- tiles


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


def _smaller_power_of_two(n: int) -> int:
    return 1 << ((n - 1).bit_length() - 1)


def lanes_for(model: KernelModel, dim: int) -> int:
    """Vector lanes along `dim`: VECTOR_BYTES over the widest element it walks contiguously."""
    walked = contiguous_in(model, dim)
    return VECTOR_BYTES // max(a.item_bytes for a in walked) if walked else 1


def choose_tiles(kernel: KernelOp | KernelModel, order: Sequence[int] | None = None
                 ) -> tuple[int, ...]:
    """Tile sizes (0: untiled), for kernels that `needs_tiles`: starting from whole
    loops, halve (to a power of two) the tile whose halving saves the most bytes
    (ties: the outer loop) until one tile's working set fits TILE_BYTES. Short
    reduction loops (conv taps) are never split, the innermost loop not below one
    vector."""
    model = as_model(kernel)
    sizes = model.sizes
    if not needs_tiles(model):
        return (0,) * len(sizes)
    order = tuple(order) if order is not None else choose_order(model)
    tiles = list(sizes)

    def halved(d: int) -> list[int]:
        return [_smaller_power_of_two(t) if i == d else t for i, t in enumerate(tiles)]

    def splittable(d: int) -> bool:
        if model.is_reduction(d) and sizes[d] <= MAX_UNROLL:
            return False
        return tiles[d] > (lanes_for(model, d) if d == order[-1] else 1)

    while (working := tile_bytes(model, tiles)) > TILE_BYTES:
        candidates = [d for d in order if splittable(d)]
        if not candidates:
            break
        d = max(candidates,
                key=lambda c: (working - tile_bytes(model, halved(c)), -order.index(c)))
        tiles = halved(d)
    return tuple(0 if t >= s else t for t, s in zip(tiles, sizes, strict=True))


# --------------------------------------------------------------------------- vector, threads


def _extent(model: KernelModel, tiles: Sequence[int], dim: int) -> int:
    return tiles[dim] if tiles[dim] else model.sizes[dim]


def choose_vector(kernel: KernelOp | KernelModel, order: Sequence[int], tiles: Sequence[int],
                  lanes: int = 0) -> int:
    """The innermost loop's vector width: when it walks the write or the main read with
    stride 1 and runs at least MIN_VECTOR_LENGTH times, `lanes` (0: VECTOR_BYTES over
    the widest contiguous element) capped by its length, as a power of two; else 1."""
    model = as_model(kernel)
    if not order:
        return 1
    inner = order[-1]
    extent = _extent(model, tiles, inner)
    if not contiguous_in(model, inner) or extent < MIN_VECTOR_LENGTH:
        return 1
    width = min(lanes or lanes_for(model, inner), extent)
    return 1 << (width.bit_length() - 1)


def choose_unroll(kernel: KernelOp | KernelModel, order: Sequence[int], tiles: Sequence[int],
                  vector: int) -> int:
    """A short innermost loop that is not vectorized (conv taps) is fully unrolled."""
    model = as_model(kernel)
    if not order or vector > 1:
        return 1
    extent = _extent(model, tiles, order[-1])
    return extent if 2 <= extent <= MAX_UNROLL else 1


def choose_parallel(kernel: KernelOp | KernelModel, order: Sequence[int], tiles: Sequence[int],
                    threads: int) -> tuple[int, ...]:
    """The outermost parallel loops (tile loops where tiled) until they have `threads`
    iterations between them; none for a small kernel. Reduction loops never."""
    model = as_model(kernel)
    points = int(np.prod(model.sizes, dtype=np.int64))
    if threads <= 1 or points < MIN_PARALLEL_POINTS:
        return ()
    chosen: list[int] = []
    iterations = 1
    for d in order:
        count = -(-model.sizes[d] // tiles[d]) if tiles[d] else model.sizes[d]
        if model.is_reduction(d) or count < 2:
            continue
        chosen.append(d)
        iterations *= count
        if iterations >= threads:
            break
    return tuple(chosen)


# --------------------------------------------------------------------------- the schedule


def choose_schedule(kernel: KernelOp | KernelModel, options: ReorderLoops | None = None,
                    keeps_partials: bool | None = None) -> ScheduleAttr:
    """The schedule of a kernel; `keeps_partials` (read from a KernelOp: its output has
    the accumulator's type) decides whether a register-blocked contraction may tile
    its reduction."""
    options = options or ReorderLoops()
    model = as_model(kernel)
    if keeps_partials is None:
        keeps_partials = not isinstance(kernel, KernelOp) or loop_builder.keeps_partials(kernel)
    order = choose_order(model)
    block = None
    if options.register_blocks:
        from irtensor.passes import schedule_blocks  # it builds on this module's model

        order = schedule_blocks.block_order(model, order)
        block = schedule_blocks.choose_block(model, order, keeps_partials, options.vector_width)
    if block is not None:
        tiles, vector, unroll = block
        if options.no_tiles:
            tiles = (0,) * len(order)
    else:
        tiles = (0,) * len(order) if options.no_tiles else choose_tiles(model, order)
        vector = choose_vector(model, order, tiles, options.vector_width)
        unroll = choose_unroll(model, order, tiles, vector)
    parallel = choose_parallel(model, order, tiles, options.threads)
    return ScheduleAttr(order, tiles, vector, unroll, parallel)


def schedule_errors(kernel: KernelOp, schedule: ScheduleAttr) -> list[str]:
    """What is wrong with `schedule` for `kernel` (nothing: an empty list)."""
    return kernel.schedule_problems(schedule)


def describe(kernel: KernelOp, options: ReorderLoops | None = None) -> str:
    """One line per loop, outermost first: what it is and why it sits there."""
    options = options or ReorderLoops()
    model = model_of(kernel)
    kept = kernel.schedule is not None and options.keep_existing
    schedule = kernel.schedule if kept else choose_schedule(
        model, options, loop_builder.keeps_partials(kernel))
    assert schedule is not None
    if errors := schedule_errors(kernel, schedule):
        raise ScheduleError(f"kernel @{model.name}: {'; '.join(errors)}")
    v = schedule.values()
    order, tiles, parallel = v["order"], v["tiles"], v["parallel"]
    assert isinstance(order, list) and isinstance(tiles, list) and isinstance(parallel, list)
    costs = dim_costs(model)
    from irtensor.passes.schedule_blocks import block_note, block_shape

    block = (block_shape(model, order) is not None
             and v["vector"] * v["unroll"] >= 2)  # type: ignore[operator]
    lines = []
    for position, d in enumerate(order):
        kind = "reduction" if model.is_reduction(d) else "parallel"
        tile = f", tile {tiles[d]}" if tiles[d] else ""
        strides = ", ".join(f"{a.label} {a.strides[d]}" for a in model.accesses)
        last = position == len(order) - 1
        notes = "".join([
            ", threads" if d in parallel else "",
            block_note(model, order, v) if last and block else "",
            f", vector {v['vector']}" if last and not block and v["vector"] != 1 else "",
            f", unroll {v['unroll']}" if last and not block and v["unroll"] != 1 else "",
        ])
        why = "written by hand (kept)" if kept else _why(model, order, position)
        lines.append(f"d{d} ({model.sizes[d]}{tile}, {kind}): {why}; strides {strides}; "
                     f"{costs[d]:.3f} lines/step{notes}")
    return "\n".join(lines)


def contiguous_run(model: KernelModel, order: Sequence[int], access: Access) -> int:
    """Elements the innermost loops walk `access` through without a jump."""
    run = 1
    for d in reversed(order):
        if is_trivial(model, d):
            continue
        if abs(access.strides[d]) != run:
            break
        run *= model.sizes[d]
    return run


def _why(model: KernelModel, order: Sequence[int], position: int) -> str:
    d, costs = order[position], dim_costs(model)
    if is_trivial(model, d):
        return "size 1, no loop"
    if is_broadcast(model, d):
        return "broadcast (stride 0 everywhere): an outer loop, it moves nothing"
    if position == len(order) - 1:
        walked = contiguous_in(model, d)
        if walked and model.sizes[d] >= MIN_VECTOR_LENGTH:
            runs = ", ".join(f"{a.label} in runs of {contiguous_run(model, order, a)}"
                             for a in walked)
            return f"innermost: walks {runs}"
        return "innermost: the cheapest step (no long contiguous loop)"
    inner = order[position + 1]
    mine, theirs = round(costs[d], 2), round(costs[inner], 2)
    if mine < theirs:
        return f"a cheaper step than d{inner}, which is the contiguous loop to vectorize"
    if mine > theirs:
        return f"a step costs more than one of d{inner}"
    if not model.is_reduction(d) and model.is_reduction(inner):
        return f"a step costs as much as one of d{inner}; parallel loops go outside reductions"
    return f"a step costs as much as one of d{inner}; the larger stride goes outside"


# --------------------------------------------------------------------------- the pass


@register_pass
@dataclass(frozen=True)
class ReorderLoops(ModulePass):
    """reorder-loops: give each kernel a schedule (order, tiles, vector, unroll, parallel)
    chosen from its accesses' strides; a schedule already there is kept.

    `vector-width`: lanes of a vector (0: 64 bytes over the element size; 1: no
    vectors). `no-tiles`: never tile. `register-blocks=false`: no register blocks
    for contractions (their schedules as for other kernels). `threads`: cores to
    plan parallel loops for (1: none). `keep-existing`: keep schedules already on
    kernels (false: replace them too).
    """

    name = "reorder-loops"
    vector_width: int = 0
    no_tiles: bool = False
    register_blocks: bool = True
    threads: int = 8
    keep_existing: bool = True

    def __post_init__(self) -> None:
        width = self.vector_width
        if width < 0 or (width and width & (width - 1)):
            raise ValueError(f"vector-width must be 0 or a power of two, got {width}")
        if self.threads < 1:
            raise ValueError(f"threads must be at least 1, got {self.threads}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, KernelOp)]:
            if kernel.schedule is not None and self.keep_existing:
                if errors := schedule_errors(kernel, kernel.schedule):
                    raise ScheduleError(f"kernel @{kernel.sym_name.data}: the schedule it "
                                        f"has does not fit it: {'; '.join(errors)}")
                continue
            kernel.properties["schedule"] = choose_schedule(kernel, self)


__all__ = [
    "Access",
    "KernelModel",
    "ReorderLoops",
    "ScheduleError",
    "choose_order",
    "choose_parallel",
    "choose_schedule",
    "choose_tiles",
    "choose_unroll",
    "choose_vector",
    "contiguous_run",
    "describe",
    "dim_costs",
    "footprint",
    "model_of",
    "schedule_errors",
    "strides_of",
]
