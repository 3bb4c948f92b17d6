"""Register blocks for reorder-loops: which kernels get one, and its shape and tiles.

A matmul- or conv-like kernel (a reduction whose body input is reused across a
parallel dimension) whose innermost loop walks the write contiguously is
scheduled in the i-k-j shape `[P..., R..., c]` (`block_order`), and its
schedule's `unroll` x `vector` become a block of accumulators that
lower-kernels-to-loops keeps in registers across the reduction loops
(`irtensor.passes.loops.register_block`), with L2 tiles of the first reduction and
the columns (`choose_block`).
"""

from __future__ import annotations

from collections.abc import Sequence

from irtensor.dialects.kernel import KernelOp
from irtensor.passes.kernel.cost_model import (
    KernelModel,
    as_model,
    lanes_for,
    reuses_across_parallel,
)

# The register block of a contraction (lower-kernels-to-loops' register-blocked scheme):
# 6 rows of 2 AVX-512 vectors is 12 accumulator registers of the 32, leaving room for
# the row's broadcasts and the column vectors (BLIS's 6x32 sgemm kernel shape).
BLOCK_ROWS = 6
MIN_BLOCK_ROWS = 4
BLOCK_VECTORS = 2
# Its cache tiles: a 512 x 256 f32 tile of B (512 KiB) stays in L2 while all the rows
# pass over it. Measured against 256 x 512 (the same bytes): K tiles of 512 halve the
# partial sums' trips through the output, 2048^3 1.3 -> 2.0x numpy on one core.
REDUCTION_TILE = 512
COLUMN_TILE = 256


def block_shape(model: KernelModel, order: Sequence[int]) -> tuple[int | None, int] | None:
    """(rows dim, columns dim) when `order` is `[P..., R..., c]` (the reductions, then
    one parallel loop that walks the write contiguously: i-k-j) and the kernel is
    matmul- or conv-like; the rows are the last of P (None without P)."""
    reductions = model.reductions
    if not reductions or not order or model.is_reduction(order[-1]):
        return None
    first = min(order.index(d) for d in reductions)
    if any(not model.is_reduction(d) for d in order[first:-1]):
        return None
    column = order[-1]
    if abs(model.write.strides[column]) != 1 or not reuses_across_parallel(model):
        return None
    return (order[first - 1] if first else None), column


def block_order(model: KernelModel, order: Sequence[int]) -> tuple[int, ...]:
    """A matmul- or conv-like kernel whose innermost loop walks the write contiguously
    gets its other parallel loops moved outside the reductions (each group keeping
    its order), so that it can be register-blocked (`block_shape`): a short M made
    k-i-j the cheapest order for a 64-row matmul, whose rows are better held in
    registers. Any other kernel keeps `order`."""
    if (not order or not model.reductions or model.is_reduction(order[-1])
            or abs(model.write.strides[order[-1]]) != 1 or not reuses_across_parallel(model)):
        return tuple(order)
    parallel = [d for d in order[:-1] if not model.is_reduction(d)]
    reductions = [d for d in order if model.is_reduction(d)]
    return (*parallel, *reductions, order[-1])


def block_rows(size: int, outermost: bool) -> int:
    """BLOCK_ROWS, at most `size`; for rows of a known count (not the outermost loop,
    which threads split) the largest count down to MIN_BLOCK_ROWS that divides it, so
    no code is made for a remainder."""
    rows = min(BLOCK_ROWS, size)
    if outermost or size % rows == 0:
        return rows
    return next((r for r in range(rows, MIN_BLOCK_ROWS - 1, -1) if size % r == 0), rows)


def choose_block(kernel: KernelOp | KernelModel, order: Sequence[int], keeps_partials: bool,
                 lanes: int = 0) -> tuple[tuple[int, ...], int, int] | None:
    """(tiles, vector, unroll) for a register-blocked contraction, None for other kernels.

    The block is `unroll` rows (BLOCK_ROWS, at most the rows' size; `block_rows`) by
    `vector` columns: BLOCK_VECTORS vectors of `lanes` (0: the host's vector bytes over the
    element size), or all the columns when there are at most twice that many (a
    narrower tail block would have too few accumulators to hide the FMA latency).
    Tiles: the first reduction loop by REDUCTION_TILE when it is longer and the
    output `keeps_partials` (an accumulator of the output's type: the partial sums
    wait in the output between tiles, the epilogue applies in the last), the
    columns by COLUMN_TILE when they are longer."""
    model = as_model(kernel)
    shape = block_shape(model, order)
    if shape is None:
        return None
    rows, column = shape
    lanes = lanes or lanes_for(model, column)
    if model.sizes[column] <= 2 * BLOCK_VECTORS * lanes:
        vector = model.sizes[column]  # one block across (conv's 56 columns: no tail blocks)
    else:
        vector = BLOCK_VECTORS * lanes
    unroll = block_rows(model.sizes[rows], rows == order[0]) if rows is not None else 1
    if vector * unroll < 2:
        return None
    tiles = [0] * len(model.sizes)
    first = next(d for d in order if model.is_reduction(d))
    if keeps_partials and model.sizes[first] > REDUCTION_TILE:
        tiles[first] = REDUCTION_TILE
    if model.sizes[column] > COLUMN_TILE:
        tiles[column] = COLUMN_TILE
    return tuple(tiles), vector, unroll



def block_note(model: KernelModel, order: Sequence[int], values: dict[str, list[int] | int]
                ) -> str:
    shape = block_shape(model, order)
    assert shape is not None
    rows, column = shape
    across = f"d{rows} x d{column}" if rows is not None else f"d{column}"
    return f", register block {values['unroll']} x {values['vector']} ({across})"


__all__ = ["BLOCK_ROWS", "BLOCK_VECTORS", "COLUMN_TILE", "REDUCTION_TILE", "block_note",
           "block_order", "block_rows", "block_shape", "choose_block"]
