"""Register blocks for reorder-loops: which kernels get one, and its shape and tiles.

A matmul- or conv-like kernel (a reduction whose body input is reused across a
parallel dimension) whose innermost loop walks the write contiguously is
scheduled in the i-k-j shape `[P..., R..., c]` (`block_order`), and its
schedule's `unroll` x `vector` become a block of accumulators that
lower-kernels-to-loops keeps in registers across the reduction loops
(`irtensor.passes.loops.register_block`), with L2 tiles of the first reduction and
the columns (`choose_block`).

A conv whose output rows are short (ResNet's 7 x 7, 14 x 14 and, with AVX2, 28 x 28
maps: a 7-wide row is vectors of 4 + 2 + 1 lanes) or whose input is read with a stride
along them (a stride-2 conv) is blocked across its output channels instead
(`channel_column`): the weight, packed with the channels last (pack-operands), is one
contiguous vector per step, the input one broadcast per row, and the block's rows are
points of the output row. Only the stores (once per block, after the whole reduction)
walk the output with a stride. Its channels are tiled so that the weight of one tile
stays in L2 for every output row (`channel_tile`).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from irtensor import host
from irtensor.dialects.kernel import KernelOp
from irtensor.passes.kernel.cost_model import (
    Access,
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
# partial sums' trips through the output, 2048^3 1.3 -> 2.0x numpy on one core. Where that
# tile is more than half the host's L2 (`reduction_tile`), its K is halved until it fits:
# on a 512 KiB L2 (Zen 1), one core, 2048^3 ran at 27.4 GFLOP/s with 512 and 33.0 with
# 256 (0.74x -> 0.91x numpy), 1024^3 at 28.0 and 34.4.
REDUCTION_TILE = 512
MIN_REDUCTION_TILE = 64
# A 1x1 conv is blocked across its channels only where each weight element is reused
# at this many output points (`channel_column`).
CHANNEL_MIN_REUSE = 64
COLUMN_TILE = 256
# The most of the vector registers a block's accumulators take: the rest hold the row's
# broadcasts and the column vectors (BLIS's 6 x 64 bf16 block: 24 of 32 on AVX-512).
ACCUMULATOR_SHARE = 3 / 4
# Vector registers a window's channel block leaves for its weight's vectors and the
# broadcasts of its row's points (`window_block`).
WINDOW_SPARE = 6


def contiguous_dim(model: KernelModel) -> int | None:
    """The parallel dimension that walks the kernel's write with stride 1."""
    return next((d for d in range(len(model.sizes)) if not model.is_reduction(d)
                 and model.sizes[d] > 1 and abs(model.write.strides[d]) == 1), None)


def channel_column(model: KernelModel) -> int | None:
    """The output-channel dimension a conv-like kernel is better blocked across, or None.

    Where the output's contiguous dimension `c` is shorter than two vectors; or is read
    by a window's taps and ends in a part of a vector, with too few registers for 3 rows
    of its vectors, the vectors and a broadcast (a 3 x 3 conv's 28-wide row with AVX2: 3
    rows by 3.5 vectors and the 4 column vectors took 17 registers of 16, and spilled;
    blocked across the channels, ResNet-50's 3 x 3 conv on 28 x 28 maps at batch 8 took
    47.5 ms on one Zen 1 core against 55); or a body read walks it with a stride other
    than 1: the longest parallel dimension `o` of at least two vectors that the output
    varies along, such that every body read either does not vary along `o` (the input: a
    broadcast) or is a weight, which varies along `o` and the reductions but not `c`, and
    is reused across at least two parallel dimensions (a conv's output rows and columns;
    a matmul's weight is reused across its rows only, and keeps the usual block)."""
    sizes = model.sizes
    if not model.reductions or not reuses_across_parallel(model):
        return None
    parallel = [d for d in range(len(sizes)) if not model.is_reduction(d) and sizes[d] > 1]
    contiguous = contiguous_dim(model)
    if contiguous is None:
        return None
    lanes = write_lanes(model)
    body = model.reads[: model.n_body_reads]
    strided = any(abs(a.strides[contiguous]) > 1 for a in body)
    row, vectors = sizes[contiguous], -(-sizes[contiguous] // lanes)
    # 3 rows of accumulators, the row's column vectors and a broadcast do not fit
    spills = row % lanes and 4 * vectors + 1 > host.vector_registers()
    if row >= 2 * lanes and not (spills and taps_along(model, contiguous)) and not strided:
        return None

    def weight(a: Access) -> bool:
        return (a.strides[contiguous] == 0 and any(a.strides[r] for r in model.reductions)
                and sum(a.strides[p] == 0 for p in parallel) >= 2)

    def pays(o: int) -> bool:
        """A 1x1 conv's rows are plain vector loads, if short: its weight's copy (made
        on every call) pays only where each element is reused at CHANNEL_MIN_REUSE
        points or more (ResNet-50's 1x1 convs on its 7x7 maps, 49 points, ran about as
        fast either way, and their copies cost more than the rest of the conv)."""
        if strided or taps_along(model, contiguous):
            return True
        reuse = min(prod(sizes[p] for p in parallel if a.strides[p] == 0)
                    for a in body if a.strides[o] != 0)
        return reuse >= CHANNEL_MIN_REUSE

    candidates = [o for o in parallel if o != contiguous and sizes[o] >= 2 * lanes
                  and model.write.strides[o] != 0
                  and all(a.strides[o] == 0 or weight(a) for a in body)
                  and any(a.strides[o] != 0 for a in body) and pays(o)]
    return max(candidates, key=lambda o: (sizes[o], -o)) if candidates else None


def taps_along(model: KernelModel, row: int) -> bool:
    """Whether a body read's window slides along `row`: a conv's taps read the row's
    points shifted, and the windows of neighbouring points overlap (a step along the
    row that is a whole number of taps, less than the window: a 3 x 3 conv's step of
    one tap, or of two with stride 2, whose point p reads 2p to 2p + 2)."""
    for a in model.reads[: model.n_body_reads]:
        step = abs(a.strides[row])
        if step and any(windowed_by(abs(a.strides[r]), model.sizes[r], step)
                        for r in model.reductions):
            return True
    return False


def windowed_by(tap: int, taps: int, step: int) -> bool:
    """Whether `taps` taps `tap` elements apart, moved by `step`, overlap where they were."""
    return taps > 1 and tap > 0 and step % tap == 0 and step < tap * taps


def write_lanes(model: KernelModel) -> int:
    """Vector lanes of the output's element: a channel block's width unit (its vectors
    are loads of the weight's channels-last copy, whatever the cost model's main read)."""
    return host.vector_bytes() // model.write.item_bytes


def channel_order(model: KernelModel, order: Sequence[int], channel: int) -> tuple[int, ...]:
    """`[P..., c, R..., o]`: the other parallel loops (the first of them longer than 1),
    the output's contiguous one (the block's rows), the reductions, the channels."""
    contiguous = next(d for d in order if not model.is_reduction(d)
                      and model.sizes[d] > 1 and abs(model.write.strides[d]) == 1)
    parallel = [d for d in order if not model.is_reduction(d) and d not in (channel, contiguous)]
    # size-1 loops second (`reorder_loops.choose_order`): the threads split the first
    # loop, and a batch-1 conv's first loop is its batch
    real = [d for d in parallel if model.sizes[d] > 1]
    parallel = [*real[:1], *(d for d in parallel if model.sizes[d] == 1), *real[1:]]
    reductions = [d for d in order if model.is_reduction(d)]
    return (*parallel, contiguous, *reductions, channel)


def channel_rows(size: int) -> int:
    """The rows of a channel block: a whole short output row (7), else the largest count
    from 8 down to MIN_BLOCK_ROWS that divides it (14: 7), else BLOCK_ROWS."""
    if size <= 8:
        return size
    return next((r for r in range(8, MIN_BLOCK_ROWS - 1, -1) if size % r == 0), BLOCK_ROWS)


def block_shape(model: KernelModel, order: Sequence[int]) -> tuple[int | None, int] | None:
    """(rows dim, columns dim) when `order` is `[P..., R..., c]` (the reductions, then
    one parallel loop that walks the write contiguously: i-k-j) and the kernel is
    matmul- or conv-like; the rows are the last of P longer than 1 (the last of P if
    none is; None without P): size-1 loops come second in an order, after the one the
    threads split, and a 1x1 conv's `[co, n, group, ci, h*w]` keeps its rows in co."""
    reductions = model.reductions
    if not reductions or not order or model.is_reduction(order[-1]):
        return None
    first = min(order.index(d) for d in reductions)
    if any(not model.is_reduction(d) for d in order[first:-1]):
        return None
    column = order[-1]
    if not reuses_across_parallel(model):
        return None
    if abs(model.write.strides[column]) != 1 and column != channel_column(model):
        return None
    return row_of(order[:first], model.sizes), column


def row_of(outer: Sequence[int], sizes: Sequence[int]) -> int | None:
    """The rows of a register block over the parallel loops `outer`: the last one longer
    than 1, else the last one, None without any."""
    return next((d for d in reversed(outer) if sizes[d] > 1), outer[-1] if outer else None)


def block_order(model: KernelModel, order: Sequence[int]) -> tuple[int, ...]:
    """A matmul- or conv-like kernel whose innermost loop walks the write contiguously
    gets its other parallel loops moved outside the reductions (each group keeping
    its order), so that it can be register-blocked (`block_shape`): a short M made
    k-i-j the cheapest order for a 64-row matmul, whose rows are better held in
    registers. A conv with a `channel_column` gets `channel_order`. Any other kernel
    keeps `order`."""
    if (channel := channel_column(model)) is not None:
        return channel_order(model, order, channel)
    if (not order or not model.reductions or model.is_reduction(order[-1])
            or abs(model.write.strides[order[-1]]) != 1 or not reuses_across_parallel(model)):
        return tuple(order)
    parallel = rows_last(model, [d for d in order[:-1] if not model.is_reduction(d)],
                         order[-1])
    reductions = [d for d in order if model.is_reduction(d)]
    return (*parallel, *reductions, order[-1])


def shares_columns(model: KernelModel, row: int, column: int) -> bool:
    """Whether every body read that varies along the columns is the same for each row
    along `row` (a matmul's B across its rows i; a conv's input across its output
    channels, not across its output rows): one load of those columns then serves all
    the block's rows."""
    body = model.reads[: model.n_body_reads]
    return all(a.strides[row] == 0 for a in body if a.strides[column] != 0)


def rows_last(model: KernelModel, parallel: Sequence[int], column: int) -> list[int]:
    """`parallel` with the register block's rows (the last loop longer than 1) moved to
    a loop that `shares_columns`, where the last one does not and another does, size-1
    loops kept second. A batch-1 conv's order `[co, n, g, oh]` put its rows on oh, and
    each row loaded its own masked input vectors (3 x 3 on a 28 x 28 map: 5 GFLOP/s
    against 24 at batch 2, whose rows are co)."""
    real = [d for d in parallel if model.sizes[d] > 1]
    if not real or shares_columns(model, real[-1], column):
        return list(parallel)
    better = [d for d in real if shares_columns(model, d, column)]
    if not better:
        return list(parallel)
    real = [*(d for d in real if d != better[-1]), better[-1]]
    units = [d for d in parallel if model.sizes[d] == 1]
    return [*real[:1], *units, *real[1:]]


def block_rows(size: int, windowed: bool = False) -> int:
    """BLOCK_ROWS, at most `size`; the rows left over are one block (register_block's
    `row_widths`). A `windowed` block (its columns read by a conv's taps) takes the
    largest count down to MIN_BLOCK_ROWS that divides its rows instead, so that no code
    is made for a remainder.

    A count that divides the rows (4 of 1024) made no code for a remainder, but its 8
    accumulators were just the FMA units' latency times their number, with no slack.
    ResNet-50 at batch 8 on two Zen 3 threads, the two rules alternated in one process:
    its 1x1 convs with 4 rows ran 2-23% faster with 6 (the medians of ten runs of each of
    its 11 such kernels); the whole model, warm, 527-627 -> 510-555 ms (four runs, 0-14%
    faster). Its 3 x 3 convs on 56 x 56 maps (64 channels: 4 rows of 16 columns) ran as
    fast either way (13.4 ms), and the bench's conv2d (the same conv) took 200 ms longer
    to compile with the remainder (first call 308-323 -> 509-548 ms on one thread)."""
    rows = min(BLOCK_ROWS, size)
    if not windowed or size % rows == 0:
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
    across_channels = abs(model.write.strides[column]) != 1
    lanes = lanes or (write_lanes(model) if across_channels else lanes_for(model, column))
    if model.sizes[column] <= 2 * BLOCK_VECTORS * lanes and not across_channels:
        vector = model.sizes[column]  # one block across (conv's 56 columns: no tail blocks)
    else:
        vector = min(BLOCK_VECTORS * lanes, model.sizes[column])
    if rows is None:
        unroll = 1
    elif across_channels:
        unroll = channel_rows(model.sizes[rows])
    else:
        # the outermost loop's rows are split by the threads: a remainder either way
        unroll = block_rows(model.sizes[rows], rows != order[0] and taps_along(model, column))
    windowed = across_channels and rows is not None and taps_along(model, rows)
    if windowed and unroll < 8 and (
            block := window_block(model, vector, unroll, model.sizes[rows])):
        vector, unroll = block
    else:
        # a 1x1 conv's channel block keeps its two vectors of channels, with fewer points;
        # so does a window's of 8 points that halving would leave one vector (the stem)
        fewer_rows = across_channels and rows is not None and (
            not windowed or accumulator_vectors(model, vector) <= 2)
        vector, unroll = within_registers(model, vector, unroll, fewer_rows)
    if vector * unroll < 2:
        return None
    tiles = [0] * len(model.sizes)
    first = next(d for d in order if model.is_reduction(d))
    k_tile = reduction_tile(model.write.item_bytes)
    if keeps_partials and model.sizes[first] > k_tile:
        tiles[first] = k_tile
    column_tile = channel_tile(model, tiles, vector) if across_channels else COLUMN_TILE
    if model.sizes[column] > column_tile:
        tiles[column] = column_tile
    return tuple(tiles), vector, unroll


def channel_tile(model: KernelModel, tiles: Sequence[int], vector: int) -> int:
    """The columns of a channel block's tile: the most blocks of `vector` channels (a power
    of two of them) whose weight, over every point of the reductions in one tile, takes at
    most half the host's L2. The block copies that slice once per tile (register_block's
    pack) and every output row of the batch reuses it from L2; with 256 channels a tile, a
    3 x 3 conv on a 7 x 7 map read its whole 2.4 MiB weight tile again for each output row
    (ResNet-50's, batch 8, one Zen 1 core: 57 ms; with 16 channels, 43 ms)."""
    per_column = prod(tiles[d] or model.sizes[d] for d in model.reductions) \
        * model.write.item_bytes
    blocks = max(1, host.l2_bytes() // 2 // (per_column * vector))
    return vector * (1 << (blocks.bit_length() - 1))


def reduction_tile(item_bytes: int) -> int:
    """REDUCTION_TILE, halved (down to MIN_REDUCTION_TILE) while a tile of B, it by
    COLUMN_TILE elements of `item_bytes`, would take more than half the host's L2
    (`host.l2_bytes`): the other half holds the rows of A and the partial sums passing by."""
    budget, tile = host.l2_bytes() // 2, REDUCTION_TILE
    while tile > MIN_REDUCTION_TILE and tile * COLUMN_TILE * item_bytes > budget:
        tile //= 2
    return tile


def accumulator_lanes(model: KernelModel) -> int:
    """Lanes of one vector register of the block's accumulators (a bf16 block's are f32)."""
    return host.vector_bytes() // (model.accumulator_bytes or model.write.item_bytes)


def accumulator_vectors(model: KernelModel, vector: int) -> int:
    """Vector registers one row of `vector` columns accumulates in."""
    return -(-vector // accumulator_lanes(model))


def window_block(model: KernelModel, vector: int, unroll: int, size: int
                 ) -> tuple[int, int] | None:
    """(vector, unroll) of a channel block whose points a window's taps read (a 3 x 3
    conv's short output rows): its `vector` channels and at most `unroll` points, fewer
    where the accumulators would leave under WINDOW_SPARE vector registers for the
    weight's vectors and the row's broadcasts, as even as blocks of at most that many
    make the row (14 points: 5, 5 and 4); None where two points would not fit.

    With AVX2's 16 registers that is 5 points of 2 vectors. ResNet-50's 3 x 3 convs at
    batch 8 on two Zen 3 threads, each schedule's best of eight alternated calls, against
    7 points of one vector (7 accumulators, fewer than the FMA units' latency times their
    number): on 28 x 28 outputs 11.9 -> 10.3 ms, 14 x 14 12.4 -> 10.7, 7 x 7 (4 and 3
    points) 14.0 -> 12.7; stride 2 13.3 -> 12.2, 13.9 -> 12.6, 15.0 -> 13.6. 6 points
    of 2 vectors left too few registers, and spilled (24-25 ms)."""
    most = min(unroll, (host.vector_registers() - WINDOW_SPARE)
               // accumulator_vectors(model, vector))
    if most < 2:
        return None
    blocks = -(-size // most)
    return vector, -(-size // blocks)


def within_registers(model: KernelModel, vector: int, unroll: int, fewer_rows: bool = False
                     ) -> tuple[int, int]:
    """(vector, unroll) whose accumulators (`unroll` rows of vectors of the accumulator's
    type) take at most ACCUMULATOR_SHARE of the vector registers (32 with AVX-512, else
    16): `vector` halved while they would take more (a bf16 block's columns count in bf16
    lanes, its accumulators are f32: 8 rows of 64 channels were all 32 registers, and
    spilled). A row of columns that ends in a part of a vector (a 28-wide conv row: 3
    vectors and a half with AVX2) keeps its columns and takes fewer rows instead, where
    at least two fit: halved, it was two blocks of a vector and a part (4 rows of 14),
    and one core ran a 1x1 conv on a 28 x 28 map at 19.6 GFLOP/s against 28.3 with 3
    rows of 28 (3 x 3: 22.8 against 28.2). With `fewer_rows` (a 1x1 conv's channel
    block) any block does so: 6 points of 2 AVX2 vectors, not 7 of 1, ran ResNet's 1x1
    convs on 7 x 7 and 14 x 14 maps at batch 8 10-25% faster on one Zen 1 core (three
    runs each). A 3 x 3 conv's block of up to 7 points (its taps share the row's
    broadcasts) takes `window_block`'s rows, and comes here only where two rows would not
    fit: it keeps its row, halved to 1 vector. A window's block of 8 points is halved too
    where that leaves two vectors or more, and takes fewer rows where it would leave one
    (ResNet's stem with AVX2, 7 x 7 taps on rows of 112: 8 points of one vector took
    21.6 ms, 6 of two 12.7)."""
    lanes = accumulator_lanes(model)
    registers = int(host.vector_registers() * ACCUMULATOR_SHARE)
    vectors = accumulator_vectors(model, vector)
    if (vector % lanes or fewer_rows) and unroll * vectors > registers \
            and registers // vectors >= 2:
        return vector, registers // vectors
    while vector > lanes and unroll * accumulator_vectors(model, vector) > registers:
        vector //= 2
    return vector, unroll


def block_note(model: KernelModel, order: Sequence[int], values: dict[str, list[int] | int]
                ) -> str:
    shape = block_shape(model, order)
    assert shape is not None
    rows, column = shape
    across = f"d{rows} x d{column}" if rows is not None else f"d{column}"
    return f", register block {values['unroll']} x {values['vector']} ({across})"


__all__ = ["BLOCK_ROWS", "BLOCK_VECTORS", "COLUMN_TILE", "REDUCTION_TILE", "block_note",
           "block_order", "block_rows", "block_shape", "channel_column", "channel_order",
           "channel_tile", "choose_block", "contiguous_dim", "reduction_tile", "row_of",
           "write_lanes"]
