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
from xdsl.passes import ModulePass

from irtensor.dialects.kernel import KernelOp, ScheduleAttr
from irtensor.passes.kernel import kernel_facts
from irtensor.passes.kernel.cost_model import (
    LINE_BYTES,
    MAX_UNROLL,
    MIN_PARALLEL_POINTS,
    MIN_VECTOR_LENGTH,
    TILE_BYTES,
    Access,
    KernelModel,
    as_model,
    contiguous_in,
    dim_costs,
    footprint,
    is_broadcast,
    is_trivial,
    lanes_for,
    model_of,
    needs_tiles,
    smaller_power_of_two,
    strides_of,
    tile_bytes,
)
from irtensor.passes.kernel.schedule_blocks import (
    block_note,
    block_order,
    block_shape,
    choose_block,
)
from irtensor.passes.registry import register_pass


class ScheduleError(ValueError):
    """A schedule that does not fit its kernel."""


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


def choose_tiles(kernel: KernelOp | KernelModel, order: Sequence[int] | None = None
                 ) -> tuple[int, ...]:
    """Tile sizes (0: untiled), for kernels that `needs_tiles`: starting from whole
    loops, halve (to a power of two) the tile whose halving saves the most bytes
    (ties: the outer loop) until one tile's working set fits TILE_BYTES. Short
    reduction loops (conv taps) are never split, the innermost loop not below one
    vector."""
    model = as_model(kernel)
    sizes = model.sizes
    order = tuple(order) if order is not None else choose_order(model)
    if not needs_tiles(model):
        return transpose_tiles(model, order) or (0,) * len(sizes)
    tiles = list(sizes)

    def halved(d: int) -> list[int]:
        return [smaller_power_of_two(t) if i == d else t for i, t in enumerate(tiles)]

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


TRANSPOSE_TILE = 32  # 32 x 32 f32: 4 KiB read, 4 KiB written per tile


def transpose_tiles(model: KernelModel, order: Sequence[int]) -> tuple[int, ...] | None:
    """Tiles for a transposing copy (no reduction; its innermost loop walks the write
    with stride 1 and the largest read a line or more apart, and another loop walks that
    read with stride 1; pack-operands' copies): both loops by TRANSPOSE_TILE, so that
    the read's lines a tile touches are still in L1 when the next columns need them
    (a 2048 x 1024 f32 transpose: 13.0 -> 4.4 ms on one core, bench/convs.py); None
    for any other kernel."""
    if model.reductions or not order or not model.reads:
        return None
    inner = order[-1]
    read = max(model.reads, key=lambda a: a.weight)
    if abs(model.write.strides[inner]) != 1 or abs(read.strides[inner]) * read.item_bytes \
            < LINE_BYTES:
        return None
    across = next((d for d in order[:-1] if abs(read.strides[d]) == 1), None)
    if across is None:
        return None
    tiles = [0] * len(model.sizes)
    for d in (across, inner):
        if model.sizes[d] > TRANSPOSE_TILE:
            tiles[d] = TRANSPOSE_TILE
    return tuple(tiles) if any(tiles) else None


# --------------------------------------------------------------------------- vector, threads


def _extent(model: KernelModel, tiles: Sequence[int], dim: int) -> int:
    return tiles[dim] if tiles[dim] else model.sizes[dim]


def choose_vector(kernel: KernelOp | KernelModel, order: Sequence[int], tiles: Sequence[int],
                  lanes: int = 0) -> int:
    """The innermost loop's vector width: when it walks the write or the main read with
    stride 1 and runs at least MIN_VECTOR_LENGTH times, `lanes` (0: the host's vector
    bytes over the widest contiguous element) capped by its length, as a power of two;
    else 1."""
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
        keeps_partials = not isinstance(kernel, KernelOp) or kernel_facts.keeps_partials(kernel)
    order = choose_order(model)
    block = None
    if options.register_blocks:

        order = block_order(model, order)
        block = choose_block(model, order, keeps_partials, options.vector_width)
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
        model, options, kernel_facts.keeps_partials(kernel))
    assert schedule is not None
    if errors := schedule_errors(kernel, schedule):
        raise ScheduleError(f"kernel @{model.name}: {'; '.join(errors)}")
    v = schedule.values()
    order, tiles, parallel = v["order"], v["tiles"], v["parallel"]
    assert isinstance(order, list) and isinstance(tiles, list) and isinstance(parallel, list)
    costs = dim_costs(model)

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

    `vector-width`: lanes of a vector (0: the host's vector register, `irtensor.host`,
    over the element size; 1: no
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
