"""The register-blocked reduction of `lower-kernels-to-loops` (matmul, conv).

A matmul- or conv-like kernel (an input reused across a parallel dimension,
`reorder_loops.block_shape`) whose loop order ends with its reduction loops and
then one parallel loop that walks the output contiguously (matmul's i-k-j:
`order [P..., R..., c]`) is lowered as a block
of `unroll` x `vector` output elements, `unroll` consecutive points of the last
parallel dimension before the reductions (`r`, the rows) by `vector`
consecutive points of the innermost one (`c`, the columns), whose accumulators
are `iter_args` of the reduction loops: registers, not memory. Where the kernel allows,
each row is one vector value (`vector_block`); otherwise the body is cloned
once per point of the block at each step of the reduction loops, each input
element read once per step (A's row element once per row, B's run once per
column), so LLVM's SLP vectoriser turns a row of the block into vector FMAs on
broadcast A values (`contract` on a float sum of products).

    tile loops of the tiled dims (MLIR's convention, in order)
      point loops of P except r
        r in blocks of `unroll`, then single rows
          c in blocks of `vector`, then of the powers of two below it (each at most
            once), so any tail is covered by ever narrower blocks
            accumulators = identity (or the output's partial sums, for a tiled reduction)
            reduction point loops carrying the accumulators
            store the block (through the epilogue)

A tiled reduction keeps its partial sums in the output between its tiles (the
epilogue, if any, applies in its last tile), which needs an accumulator of the
output's element type; otherwise the kernel is lowered by the general schemes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import SSAValue

from irtensor import dtypes
from irtensor.passes.kernel.cost_model import model_of, strides_of
from irtensor.passes.kernel.kernel_facts import access_dims, keeps_partials
from irtensor.passes.kernel.schedule_blocks import block_shape, row_of
from irtensor.passes.loops import blocked
from irtensor.passes.loops.loop_parts import Env, Loop, Planned, tile_key
from irtensor.passes.loops.tile_block import TileBlock
from irtensor.passes.loops.vector_block import VectorRows

if TYPE_CHECKING:
    from irtensor.passes.loops.loop_builder import KernelFunction

MAX_ACCUMULATORS = 512  # a larger block would spill registers anyway
PACK_BYTES = 1 << 20  # a packed tile larger than L2 would not stay there
# B's rows this far apart are copied in panels (`RegisterBlock.panel`), so that a block's
# run down K is one contiguous stretch: they map to few cache sets (an L1 set's period is
# 4 KiB on x86; 1 KiB apart, a run down K takes four). An f32 256-column B gained (a 2048
# x 1024 x 256 matmul: 20.4 -> 17.2 ms on a Zen 3 core). So are closer rows that are not
# a whole number of cache lines apart, whose runs the lines split: ResNet-50's 1x1 convs
# on 14 x 14 maps (rows 784 bytes apart) and on 7 x 7 maps (196) ran 7-16% faster at
# batch 8 on two Zen 3 threads (each variant's best of twelve alternated calls, the copy
# included).
STRIDED_ROW_BYTES = 1024
LINE_BYTES = 64


def block_dims(order: Sequence[int], reductions: Sequence[int], sizes: Sequence[int]
               ) -> tuple[list[int], int | None, list[int], int] | None:
    """(P, r, R, c) when `order` is `[P..., R..., c]` with R the reductions (r: the
    last of P longer than 1, `schedule_blocks.row_of`; None without P); None for any
    other order."""
    if not reductions or order[-1] in reductions:
        return None
    first = min(order.index(d) for d in reductions)
    middle = list(order[first:-1])
    if any(d not in reductions for d in middle):
        return None
    outer = list(order[:first])
    return outer, row_of(outer, sizes), middle, order[-1]


def row_widths(rows: int, extent: int | None) -> list[int]:
    """The row counts of a dimension's blocks: `rows` at a time, then the rows left over
    as one block where their count is known when the kernel is built, else one at a time
    (the order's outermost dimension, whose range the threads split). A row alone has
    a vector or two of accumulators, too few to hide the FMAs' latency: ResNet-50's 1x1
    convs with 64 output channels (10 blocks of 6, then 4 rows) ran 5-14% slower with
    the 4 rows one at a time (batch 8, two Zen 3 threads, best of 25 alternated calls)."""
    if extent is None:
        return [rows, 1] if rows > 1 else [1]
    whole, left = divmod(extent, rows)
    return [rows] * bool(whole) + [left] * bool(left)


def column_widths(vector: int, extent: int | None = None) -> list[int]:
    """`vector`, then every power of two below it: after blocks of `vector`, fewer
    than `vector` points remain, and each narrower block is needed at most once
    (the last, width 1, as often as needed). With a known `extent`, only the
    widths it needs (their code would never run)."""
    widths = [vector]
    power = 1 << (vector.bit_length() - 1)
    if power == vector:
        power //= 2
    while power >= 1:
        widths.append(power)
        power //= 2
    if extent is None:
        return widths
    needed, left = [], extent
    for width in widths:
        if left >= width:
            needed.append(width)
            left %= width
    return needed


class RegisterBlock:
    """Builds one kernel's register-blocked reduction into a `KernelFunction`."""

    rows_as_vectors: VectorRows | None = None

    def __init__(self, kf: KernelFunction):
        self.kf = kf
        op = kf.op
        schedule = op.schedule
        self.rows = schedule.unroll.data if schedule is not None else 1
        self.cols = schedule.vector.data if schedule is not None else 1
        self.dims = block_dims(kf.order, op.reduction_dims, kf.sizes) \
            if schedule is not None else None
        # Only where reorder-loops would block (a matmul- or conv-like kernel whose
        # columns walk the output contiguously); elsewhere `vector` and `unroll` keep
        # their meaning of hints for the innermost loop (a column sum must keep
        # streaming its rows, not walk 16 columns down the whole matrix).
        if self.dims is not None and block_shape(model_of(op), kf.order) is None:
            self.dims = None

    def applies(self) -> bool:
        if self.dims is None or self.rows * self.cols > MAX_ACCUMULATORS:
            return False
        if self.rows * self.cols < 2:
            return False
        tiled_reduction = any(self.kf.tile(d) for d in self.kf.op.reduction_dims)
        return not tiled_reduction or keeps_partials(self.kf.op)

    def build(self) -> None:
        assert self.dims is not None
        if (tiles := TileBlock.of(self)) is not None:
            tiles.build()
            return
        outer, row, _, _ = self.dims
        kf = self.kf
        tiled = [d for d in kf.order if kf.tile(d)]
        loops = [Planned(d, "tile", kf.tile(d)) for d in tiled]
        loops += [Planned(d, "point", kf.tile(d)) if kf.tile(d) else Planned(d)
                  for d in outer if d != row]

        def rows(env: Env, carried: list[SSAValue]) -> list[SSAValue]:
            if row is None:
                self.columns(env, [], None)
            else:
                widths = row_widths(self.rows, self.static_extent(row))
                self.blocks(row, env, widths, lambda e, first, n: self.columns(
                    e, [self.offset(first, k) for k in range(n)], row))
            return []

        packs = self.allocate_packs()
        self.rows_as_vectors = VectorRows.of(self, list(packs))
        # A copy is filled once per tile, outside the point loops it does not vary along
        # (a conv's weight: once for all its batch and output rows, not once per row).
        used = {d for i in packs for d in access_dims(kf.op.accesses[i])}
        fill_at = len(loops) - next((k for k, loop in enumerate(reversed(loops))
                                     if loop.kind == "tile" or loop.dim in used), len(loops))

        def packed_rows(env: Env, carried: list[SSAValue]) -> list[SSAValue]:
            for i, buffer in packs.items():
                self.fill_pack(i, buffer, env)
            kf.packed = {i: (buffer, self.pack_dims(), self.panel()) for i, buffer in
                         packs.items()}
            try:
                return kf.nest(loops[fill_at:], [], rows, env)
            finally:
                kf.packed = None

        kf.nest(loops[:fill_at], [], packed_rows)
        for buffer in packs.values():
            kf.at.insert(memref.DeallocOp.get(buffer))

    # ------------------------------------------------------------------ packing

    def pack_dims(self) -> list[int]:
        assert self.dims is not None
        return [*self.dims[2], self.dims[3]]

    def pack_extents(self) -> list[int] | None:
        """The points of each reduction dim and the columns in one tile (None: the
        order's outermost dimension is among them, its range known only at run time)."""
        kf = self.kf
        dims = self.pack_dims()
        if kf.order[0] in dims:
            return None
        return [kf.tile(d) or kf.sizes[d] for d in dims]

    def panel(self) -> int:
        """Columns per panel of a copy: the block's width where a tile has more columns,
        so that a block's run down K is one contiguous stretch (`[column // panel, K...,
        column % panel]`, as BLAS packs B) and not one line per k a tile's row apart,
        lines that fall into a few cache sets; 1 (the layout `[K..., columns]`) else."""
        extents = self.pack_extents()
        assert extents is not None
        return self.cols if extents[-1] > self.cols else 1

    def pack_shape(self) -> list[int]:
        extents = self.pack_extents()
        assert extents is not None
        panel = self.panel()
        if panel == 1:
            return extents
        return [-(-extents[-1] // panel), *extents[:-1], panel]

    def should_pack(self, i: int) -> bool:
        """Copy read #i (it does not vary along the rows) into a buffer laid out as the
        block reads it, once per tile, reused by every row block: when it is masked (the
        copy holds the pads, so the block's loads are plain contiguous loads) or when
        the reduction steps through it STRIDED_ROW_BYTES or more apart (a block's run
        down K would be lines in a few cache sets) or by a part of a cache line (the
        lines would split its runs), and closer in the copy, and the buffer stays
        within PACK_BYTES."""
        kf = self.kf
        assert self.dims is not None
        _, row, reductions, column = self.dims
        access = kf.op.accesses[i]
        used = access_dims(access)
        extents = self.pack_extents()
        if row is None or row in used or column not in used or extents is None:
            return False
        buffer = kf.inputs[i]
        assert isinstance(buffer.type, MemRefType)
        item = dtypes.to_numpy(buffer.type.element_type).itemsize
        if math.prod(extents) * item > PACK_BYTES:
            return False
        steps = strides_of(access.affine_map.results, tuple(buffer.type.get_shape()),
                           kf.sizes)
        copied = self.copy_steps()
        return access.is_masked or any(
            copied[d] < abs(steps[d]) and (abs(steps[d]) * item >= STRIDED_ROW_BYTES
                                            or abs(steps[d]) * item % LINE_BYTES)
            for d in reductions)

    def copy_steps(self) -> dict[int, int]:
        """Elements between neighbours along each reduction dim in the copy
        (`pack_shape`): the copy is worth making only where they lie closer than in the
        input (a weight already laid out as the copy would be is read as it is)."""
        dims, shape = self.pack_dims(), self.pack_shape()
        inner = shape[1:] if self.panel() > 1 else shape
        reductions = dims[:-1]
        steps, step = {}, inner[-1]
        for d, size in zip(reversed(reductions), reversed(inner[:len(reductions)]),
                           strict=True):
            steps[d] = step
            step *= size
        return steps

    def allocate_packs(self) -> dict[int, SSAValue]:
        kf = self.kf
        extents = self.pack_extents()
        packs: dict[int, SSAValue] = {}
        for i in range(len(kf.op.body_inputs)):
            if extents is not None and self.should_pack(i):
                buffer = kf.inputs[i]
                assert isinstance(buffer.type, MemRefType)
                alloc = kf.at.insert(memref.AllocOp.get(buffer.type.element_type,
                                                        shape=self.pack_shape()))
                alloc.memref.name_hint = f"pack{i}"
                packs[i] = alloc.memref
        return packs

    def fill_pack(self, i: int, buffer: SSAValue, env: Env) -> None:
        """pack[points of the tile] = read #i there (the pad where its mask fails)."""
        kf = self.kf
        loops = [Planned(d, "point", kf.tile(d)) if kf.tile(d) else Planned(d)
                 for d in self.pack_dims()]

        def copy(e: Env, carried: list[SSAValue]) -> list[SSAValue]:
            kf.store(kf.read(i, e, kf.sizes), buffer,
                     kf.pack_indices(self.pack_dims(), e, self.panel()))
            return []

        kf.nest(loops, [], copy, env)

    def columns(self, env: Env, row_values: list[SSAValue], row: int | None) -> None:
        assert self.dims is not None
        column = self.dims[3]
        widths = column_widths(self.cols, self.static_extent(column))
        rows = self.rows_as_vectors

        def block(e: Env, first: SSAValue, n: int) -> None:
            if rows is not None and n > 1:
                rows.block(e, row, row_values, first, n)
            else:
                self.block(e, row, row_values, [self.offset(first, k) for k in range(n)])

        self.blocks(column, env, widths, block)

    def static_extent(self, dim: int) -> int | None:
        """The points of `dim` in every tile when it is the same for all (the whole
        dimension untiled, a tile that divides it); None for the order's outermost
        dimension, whose range [start, stop) is known only when the function runs."""
        kf = self.kf
        if dim == kf.order[0]:
            return None
        size, tile = kf.sizes[dim], kf.tile(dim)
        if not tile:
            return size
        return tile if size % tile == 0 else None

    def minus(self, value: SSAValue, k: int) -> SSAValue:
        """value - k, folded when the value is a constant (a static range)."""
        kf = self.kf
        if k == 0:
            return value
        if isinstance(value.owner, arith.ConstantOp) and isinstance(
                value.owner.value, IntegerAttr):
            return kf.index(value.owner.value.value.data - k)
        return kf.emit(arith.SubiOp(value, kf.index(k)))

    def offset(self, first: SSAValue, k: int) -> SSAValue:
        return first if k == 0 else self.kf.emit(arith.AddiOp(first, self.kf.index(k)))

    def blocks(self, dim: int, env: Env, widths: Sequence[int],
               inner: Callable[[Env, SSAValue, int], None]) -> None:
        """Cover the points of `dim` in the current tile with blocks of `widths[0]`, then
        of each narrower width in turn, each loop starting where the last one stopped;
        `inner(env, first point, width)` builds one block."""
        kf = self.kf
        lower, upper = kf.point_range(dim, env)
        for n, width in enumerate(widths):
            last = self.minus(upper, width - 1)

            def body(e: Env, carried: list[SSAValue], width: int = width) -> list[SSAValue]:
                inner(e, e[dim], width)
                return []

            kf.nest([Loop(dim, lower, last, width)], [], body, env)
            if n + 1 < len(widths):  # where the next, narrower blocks start
                left = kf.emit(arith.SubiOp(upper, lower))
                whole = kf.emit(arith.FloorDivSIOp(left, kf.index(width)))
                covered = kf.emit(arith.MuliOp(whole, kf.index(width)))
                lower = kf.emit(arith.AddiOp(lower, covered))

    def block(self, env: Env, row: int | None, row_values: list[SSAValue],
              col_values: list[SSAValue]) -> None:
        """One block: accumulators through the reduction loops, then stored."""
        assert self.dims is not None
        kf = self.kf
        column, reductions = self.dims[3], self.dims[2]
        points = [{**env, **({row: r} if row is not None else {}), column: c}
                  for r in (row_values or [None]) for c in col_values]  # type: ignore[list-item]
        element = kf.accumulator_type()
        starts = [self.initial(p, element) for p in points]
        tiled = any(kf.tile(d) for d in reductions)
        # A tile's values accumulate on their own (blocked) and join the partial sums of
        # the tiles before once: a tile is a level of the blocked sum.
        inits = [kf.constant(kf.identity(element), element)] * len(points) if tiled else starts
        loops = [Planned(d, "point", kf.tile(d)) if kf.tile(d) else Planned(d)
                 for d in reductions]

        def step(e: Env, carried: list[SSAValue]) -> list[SSAValue]:
            kf.read_cache = {}
            try:
                return [kf.combine(acc, kf.body_value({**p, **{d: e[d] for d in reductions}}))
                        for acc, p in zip(carried, points, strict=True)]
            finally:
                kf.read_cache = None

        totals = blocked.accumulate(kf, loops, inits, step, env)
        if tiled:
            totals = [kf.combine(start, total) for start, total in zip(starts, totals,
                                                                       strict=True)]
        # Every epilogue first, then every store: a store between two reads of an
        # epilogue input could alias it (the pointers are not noalias), and LLVM would
        # then keep the block's results scalar.
        results = [kf.finished(total, p) for total, p in zip(totals, points, strict=True)]
        last = self.last_tile(env) if kf.op.epilogue_block is not None else None
        for total, (value, buffer, indices) in zip(totals, results, strict=True):
            # A tiled reduction with an epilogue: partial sums until its last tile.
            kf.store(value if last is None else kf.emit(arith.SelectOp(last, value, total)),
                     buffer, indices)

    def last_tile(self, env: Env) -> SSAValue | None:
        """Whether every tiled reduction loop is in its last tile (None: none is tiled)."""
        kf = self.kf
        last: SSAValue | None = None
        for d in (d for d in kf.op.reduction_dims if kf.tile(d)):
            end = kf.emit(arith.AddiOp(env[tile_key(d)], kf.index(kf.tile(d))))
            done = kf.emit(arith.CmpiOp(end, kf.dim_range(d)[1], "sge"))
            last = done if last is None else kf.emit(arith.AndIOp(last, done))
        return last

    def initial(self, point: Env, element: object) -> SSAValue:
        """The identity; for a tiled reduction, the output's partial sum after the first
        tile (the output holds it between tiles)."""
        kf = self.kf
        identity = kf.constant(kf.identity(element), element)  # type: ignore[arg-type]
        first = self.first_tile(point)
        if first is None:
            return identity
        reduced = {**point, **{d: kf.index(0) for d in kf.op.reduction_dims}}
        partial = kf.load(kf.output, kf.write_indices(reduced))
        return kf.emit(arith.SelectOp(first, identity, partial))


    def first_tile(self, point: Env) -> SSAValue | None:
        """Whether every tiled reduction loop is in its first tile (None: none is tiled)."""
        kf = self.kf
        first: SSAValue | None = None
        for d in (d for d in kf.op.reduction_dims if kf.tile(d)):
            at_start = kf.emit(arith.CmpiOp(point[tile_key(d)], kf.dim_range(d)[0], "eq"))
            first = at_start if first is None else kf.emit(arith.AndIOp(first, at_start))
        return first
