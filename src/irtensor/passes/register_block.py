"""The register-blocked reduction of `lower-kernels-to-loops` (matmul, conv).

A reduction kernel whose loop order ends with its reduction loops and then one
parallel loop (matmul's i-k-j: `order [P..., R..., c]`) is lowered as a block
of `unroll` x `vector` output elements, `unroll` consecutive points of the last
parallel dimension before the reductions (`r`, the rows) by `vector`
consecutive points of the innermost one (`c`, the columns), whose accumulators
are `iter_args` of the reduction loops: registers, not memory. The body is
cloned once per point of the block at each step of the reduction loops; each
input element is read once per step (A's row element once per row, B's run
once per column), so LLVM's SLP vectoriser turns a row of the block into
vector FMAs on broadcast A values (`contract` on a float sum of products).

    tile loops of the tiled dims (MLIR's convention, in order)
      point loops of P except r
        r in blocks of `unroll`, then single rows
          c in blocks of `vector`, then of the powers of two below it (each at most
            once), so any tail is covered by ever narrower blocks
            accumulators = identity (or the output's partial sums, for a tiled reduction)
            reduction point loops carrying the accumulators
            store the block (through the epilogue)

A tiled reduction keeps its partial sums in the output between its tiles,
which needs a kernel without an epilogue; with one, the kernel is lowered by
the general schemes instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from irtensor.passes.loop_builder import Env, Loop, Planned, tile_key

if TYPE_CHECKING:
    from irtensor.passes.loop_builder import KernelFunction

MAX_ACCUMULATORS = 512  # a larger block would spill registers anyway


def block_dims(order: Sequence[int], reductions: Sequence[int]
               ) -> tuple[list[int], int | None, list[int], int] | None:
    """(P, r, R, c) when `order` is `[P..., R..., c]` with R the reductions (r: the
    last of P, None without P); None for any other order."""
    if not reductions or order[-1] in reductions:
        return None
    first = min(order.index(d) for d in reductions)
    middle = list(order[first:-1])
    if any(d not in reductions for d in middle):
        return None
    outer = list(order[:first])
    return outer, (outer[-1] if outer else None), middle, order[-1]


def column_widths(vector: int) -> list[int]:
    """`vector`, then every power of two below it: after blocks of `vector`, fewer
    than `vector` columns remain, and each narrower block is needed at most once."""
    widths = [vector]
    power = 1 << (vector.bit_length() - 1)
    if power == vector:
        power //= 2
    while power >= 1:
        widths.append(power)
        power //= 2
    return widths


class RegisterBlock:
    """Builds one kernel's register-blocked reduction into a `KernelFunction`."""

    def __init__(self, kf: KernelFunction):
        self.kf = kf
        op = kf.op
        schedule = op.schedule
        self.rows = schedule.unroll.data if schedule is not None else 1
        self.cols = schedule.vector.data if schedule is not None else 1
        self.dims = block_dims(kf.order, op.reduction_dims) if schedule is not None else None

    def applies(self) -> bool:
        if self.dims is None or self.rows * self.cols > MAX_ACCUMULATORS:
            return False
        if self.rows * self.cols < 2:
            return False
        tiled_reduction = any(self.kf.tile(d) for d in self.kf.op.reduction_dims)
        return not (tiled_reduction and self.kf.op.epilogue_block is not None)

    def build(self) -> None:
        assert self.dims is not None
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
                widths = [self.rows, 1] if self.rows > 1 else [1]
                self.blocks(row, env, widths, lambda e, first, n: self.columns(
                    e, [self.offset(first, k) for k in range(n)], row))
            return []

        kf.nest(loops, [], rows)

    def columns(self, env: Env, row_values: list[SSAValue], row: int | None) -> None:
        assert self.dims is not None
        column = self.dims[3]
        self.blocks(column, env, column_widths(self.cols), lambda e, first, n: self.block(
            e, row, row_values, [self.offset(first, k) for k in range(n)]))

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
            last = kf.emit(arith.SubiOp(upper, kf.index(width - 1))) if width > 1 else upper

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
        inits = [self.initial(p, element) for p in points]
        loops = [Planned(d, "point", kf.tile(d)) if kf.tile(d) else Planned(d)
                 for d in reductions]

        def step(e: Env, carried: list[SSAValue]) -> list[SSAValue]:
            kf.read_cache = {}
            try:
                return [kf.combine(acc, kf.body_value({**p, **{d: e[d] for d in reductions}}))
                        for acc, p in zip(carried, points, strict=True)]
            finally:
                kf.read_cache = None

        totals = kf.nest(loops, inits, step, env)
        for total, p in zip(totals, points, strict=True):
            kf.finish(total, p)

    def initial(self, point: Env, element: object) -> SSAValue:
        """The identity; for a tiled reduction, the output's partial sum after the first
        tile (the output holds it between tiles: there is no epilogue then)."""
        kf = self.kf
        identity = kf.constant(kf.identity(element), element)  # type: ignore[arg-type]
        tiled = [d for d in kf.op.reduction_dims if kf.tile(d)]
        if not tiled:
            return identity
        first: SSAValue | None = None
        for d in tiled:
            at_start = kf.emit(arith.CmpiOp(point[tile_key(d)], kf.dim_range(d)[0], "eq"))
            first = at_start if first is None else kf.emit(arith.AndIOp(first, at_start))
        reduced = {**point, **{d: kf.index(0) for d in kf.op.reduction_dims}}
        partial = kf.load(kf.output, kf.write_indices(reduced))
        return kf.emit(arith.SelectOp(first, identity, partial))

