"""Schedule search: time a few candidate schedules of a kernel on its real inputs and keep
the fastest (tinygrad's BEAM, in our terms).

`reorder-loops` picks a schedule from a cost model; the model does not know the cache
sizes, the prefetchers or what LLVM will vectorise. With `IRTENSOR_SEARCH=N` (N > 0)
device `llvm` times up to N candidates of each new kernel the first time it runs it, on the
arrays it is about to compute with, and keeps the fastest. The choice is remembered on
disk (`runtime.cache`) by the kernel's IR without its schedule, the target machine and the
thread count, so a later process searches nothing. A search that takes more than a second
shows a progress line on stderr.

Candidates (`candidates`): the cost model's own schedule first, then for a register-
blocked kernel (matmul, conv) other block shapes and tile widths around the model's
(`block_variants`), then the same without tiles, then loop orders that keep the
reduction loops after the outermost parallel loop (each with that loop parallel), each
order with and without the model's vector width.
"""

from __future__ import annotations

import itertools
import os
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

from irtensor import ir
from irtensor.dialects.kernel import KernelOp, ScheduleAttr
from irtensor.runtime import cache

REPEATS = 3
SCHEDULE_KIND = "schedule"
PROGRESS_AFTER_S = 1.0

Timer = Callable[[KernelOp, Sequence[np.ndarray], np.ndarray], float]

# How many searches ran and how many schedules they timed, in this process.
COUNTS = {"searches": 0, "schedules_timed": 0}


def search_width() -> int:
    """IRTENSOR_SEARCH: how many schedules to try per kernel (0: no search)."""
    value = os.environ.get("IRTENSOR_SEARCH", "0")
    return int(value) if value.isdigit() else 0


def candidates(kernel: KernelOp, limit: int) -> list[ScheduleAttr]:
    """Up to `limit` valid, distinct schedules of `kernel`, the model's first."""
    rank = len(kernel.sizes)
    base = kernel.schedule or ScheduleAttr(list(range(rank)), [0] * rank, 1, 1, [])
    found: list[ScheduleAttr] = []

    def add(schedule: ScheduleAttr) -> None:
        if len(found) < limit and schedule not in found \
                and not kernel.schedule_problems(schedule):
            found.append(schedule)

    add(base)
    for schedule in block_variants(base):
        add(schedule)
    add(ScheduleAttr(base.order_dims, [0] * rank, base.vector.data, base.unroll.data,
                     base.parallel_dims))
    for order in _orders(kernel):
        parallel = [order[0]] if order and order[0] in kernel.parallel_dims else []
        for vector in dict.fromkeys((base.vector.data, 1)):
            add(ScheduleAttr(list(order), [0] * rank, vector, 1, parallel))
    return found


# Register blocks of a blocked kernel (unroll rows x vector columns) and tile widths to
# try around the model's: the best block depends on the core (an Intel Xeon with AMX ran a
# 1024^3 f32 matmul fastest at 4 or 5 rows where the model, fitted on Zen, picks 6).
BLOCK_ROWS = (4, 5, 6, 8)
TILE_SCALES = (0.5, 2.0)


def block_variants(base: ScheduleAttr) -> list[ScheduleAttr]:
    """The model's schedule with other register-block rows, half its vector width, and
    each tile halved or doubled (a matmul's or conv's block; nothing for an unblocked
    kernel, whose `unroll` is 1)."""
    unroll, vector = base.unroll.data, base.vector.data
    if unroll <= 1:
        return []
    order, tiles, parallel = base.order_dims, list(base.tile_sizes), base.parallel_dims
    found = [ScheduleAttr(order, tiles, vector, rows, parallel)
             for rows in BLOCK_ROWS if rows != unroll]
    if vector >= 32:
        found.append(ScheduleAttr(order, tiles, vector // 2, 2 * unroll, parallel))
    for i, tile in enumerate(tiles):
        for scale in TILE_SCALES:
            if tile and int(tile * scale) >= 16:
                other = tiles.copy()
                other[i] = int(tile * scale)
                found.append(ScheduleAttr(order, other, vector, unroll, parallel))
                found.extend(ScheduleAttr(order, other, vector, rows, parallel)
                             for rows in BLOCK_ROWS if rows != unroll)
    return found


def _orders(kernel: KernelOp) -> list[tuple[int, ...]]:
    """Loop orders worth timing: every permutation of a small space (at most 5 dims),
    else the schedule's order with one pair of adjacent loops swapped."""
    rank = len(kernel.sizes)
    wide = [d for d in range(rank) if kernel.sizes[d] > 1]
    if len(wide) <= 5:
        unit = [d for d in range(rank) if d not in wide]
        orders = [tuple(unit) + p for p in itertools.permutations(wide)]
    else:
        base = list(kernel.schedule.order_dims) if kernel.schedule else list(range(rank))
        orders = []
        for i in range(rank - 1):
            swapped = base.copy()
            swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
            orders.append(tuple(swapped))
    # Reductions outermost leave no parallel loop to split; try those last.
    return sorted(orders, key=lambda o: next(
        (i for i, d in enumerate(o) if kernel.sizes[d] > 1 and d in kernel.parallel_dims),
        rank))


def with_schedule(kernel: KernelOp, schedule: ScheduleAttr) -> KernelOp:
    """A detached copy of `kernel` (same operands) running `schedule`."""
    copy = kernel.clone()
    copy.properties["schedule"] = schedule
    return copy


def best_schedule(kernel: KernelOp, args: Sequence[np.ndarray], out: np.ndarray,
                  width: int, timer: Timer, key: str) -> ScheduleAttr | None:
    """The fastest of `candidates(kernel, width)` on these arrays as `timer` measures them
    on its device, remembered on disk under `key` (the device's name for the kernel without
    its schedule); None for a kernel with nothing to choose."""
    options = candidates(kernel, width)
    if len(options) < 2:
        return options[0] if options else None
    if (known := cache.load(key, SCHEDULE_KIND)) is not None:
        text = known.meta.get("schedule")
        chosen = _parse_schedule(text) if isinstance(text, str) else None
        if chosen is not None and not kernel.schedule_problems(chosen):
            return chosen
        cache.discard(key, "its schedule does not fit the kernel")
    COUNTS["searches"] += 1
    start = time.perf_counter()
    best: tuple[float, ScheduleAttr] | None = None
    for i, schedule in enumerate(options):
        seconds = timer(with_schedule(kernel, schedule), args, out)
        COUNTS["schedules_timed"] += 1
        if best is None or seconds < best[0]:
            best = (seconds, schedule)
        if time.perf_counter() - start > PROGRESS_AFTER_S:
            _progress(kernel, i + 1, len(options), best[0])
    assert best is not None
    if time.perf_counter() - start > PROGRESS_AFTER_S:
        sys.stderr.write("\n")
    cache.store(key, SCHEDULE_KIND, {"schedule": str(best[1])})
    return best[1]


def _progress(kernel: KernelOp, done: int, total: int, best_s: float) -> None:
    filled = round(20 * done / total)
    sys.stderr.write(f"\rsearch {kernel.sym_name.data}: [{'#' * filled}{'.' * (20 - filled)}]"
                     f" {done}/{total}, best {best_s * 1e3:.3f} ms")
    sys.stderr.flush()


def _parse_schedule(text: str) -> ScheduleAttr | None:
    from xdsl.parser import Parser

    try:
        attr = Parser(ir.make_context(), text).parse_attribute()
    except Exception:  # a damaged entry: search again
        return None
    return attr if isinstance(attr, ScheduleAttr) else None


__all__ = ["COUNTS", "best_schedule", "candidates", "search_width", "with_schedule"]
