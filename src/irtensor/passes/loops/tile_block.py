"""A bf16 matmul's register block on AMX's tiles (`lower-kernels-to-loops`, hosts with AMX).

AMX's `tdpbf16ps` multiplies a 16 x 32 bf16 tile of A by a 32 x 16 bf16 tile of B
into a 16 x 16 f32 tile, 16,384 exact products summed in f32 in one instruction: on
a Sapphire Rapids core about 7 times what its FMAs do on f32. A kernel that sums
`extf(a) * extf(b)` of two bf16 reads (`paired_dot.is_bf16_product`) over one
reduction dim, A varying along the rows and B along the columns, is built as
oneDNN's and BLIS's kernels are: operands copied into the layouts the tiles load,
then 2 x 2 tiles of C (32 x 32) accumulated over the whole K in four tile registers:

    amx.tile_config: tmm0-3 C, tmm4-5 A, tmm6-7 B, each 16 rows of 64 bytes
    the block's tile and outer loops (as `register_block`)
      column blocks of NT (256) columns in the block's column range
        B's block in pairs of rows ("VNNI": row r of a chunk of 16 columns holds
          B[2r, n], B[2r+1, n] for each n), two 16-element loads interleaved a store
        row blocks of 32 rows
          A's 32 rows in tiles (16 rows x 32 k, 1 KiB each, contiguous in k)
          column blocks of 32
            tmm0-3 = 0; for k in K / 32: load tmm4-7, 4 x tdpbf16ps
            tmm0-3 -> a stage of 32 x 32 f32; its rows through the epilogue on
              vectors and into the output (`vector_block.VectorRows.store_rows`)
    amx.tile_release

Rows and columns past the block's end compute on whatever the copies hold there
(their results are never stored; a tile row or column depends only on its own A
row and B column); K is padded with zeros to a multiple of 32 in both copies (a
row's last elements copied one by one). The kernel is built this way where K is at
most 32 x 128 (each output element a sum of at most 128 f32 additions of 32-product
dots, the bound `blocked` keeps every reduction within), the columns a multiple of
16, A contiguous in k and B in the columns, neither masked; anything else keeps the
vector block (`vdpbf16ps` or FMAs). The products are exact and summed in f32, as the
other blocks do, in another order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    MemRefType,
    VectorType,
    f32,
    i64,
)
from xdsl.ir import SSAValue

from irtensor.dialects.amx import (
    ROW_BYTES,
    TILES,
    TileConfigOp,
    TileDotBF16Op,
    TileLoadOp,
    TileReleaseOp,
    TileStoreOp,
    TileZeroOp,
)
from irtensor.host import amx
from irtensor.passes.kernel.kernel_facts import access_dims
from irtensor.passes.loops.loop_parts import Env, Planned
from irtensor.passes.loops.paired_dot import is_bf16_product
from irtensor.passes.loops.vector_block import VectorRows, run_dim

if TYPE_CHECKING:
    from irtensor.passes.loops.register_block import RegisterBlock

TILE = 16  # rows of a tile; f32 columns of a C tile; pairs of a B tile's row
K_STEP = 32  # bf16 of an A tile's row: the k one tdpbf16ps reduces over
MAX_K_STEPS = 128  # `blocked.BLOCK`: f32 additions one accumulator takes
COLUMN_BLOCK = 256  # columns of B copied at once (K x 256 bf16: 512 KiB at K = 1024)
C_TILES, A_TILES, B_TILES = (0, 1, 2, 3), (4, 5), (6, 7)


class TileBlock:
    """Builds one bf16 matmul kernel's block on AMX tiles (see the module docstring)."""

    def __init__(self, owner: RegisterBlock, rows: VectorRows, a: int, b: int):
        self.owner, self.kf, self.rows = owner, owner.kf, rows
        assert owner.dims is not None
        _, row, reductions, column = owner.dims
        assert row is not None
        self.row, self.k, self.column = row, reductions[0], column
        self.a, self.b = a, b
        self.k_steps = -(-self.kf.sizes[self.k] // K_STEP)  # the last one padded with zeros
        self.column_block = min(COLUMN_BLOCK, self.kf.sizes[column])

    @staticmethod
    def of(owner: RegisterBlock) -> TileBlock | None:
        """The tile block of `owner`'s kernel, or None where the host has no AMX or the
        kernel is not a bf16 matmul the tiles take (see the module docstring)."""
        kf = owner.kf
        if not kf.matrix_units or owner.dims is None or not amx():
            return None
        _, row, reductions, column = owner.dims
        op = kf.op
        if (row is None or len(reductions) != 1 or len(op.body_inputs) != 2
                or any(kf.tile(d) for d in op.reduction_dims) or kf.combiner() != "sum"
                or kf.accumulator_type() != f32 or not is_bf16_product(op.body.block)):
            return None
        k = reductions[0]
        if kf.sizes[k] > K_STEP * MAX_K_STEPS or kf.sizes[column] % TILE:
            return None
        operands = _operands(owner, row, k, column)
        if operands is None:
            return None
        rows = VectorRows.of(owner, [])
        return TileBlock(owner, rows, *operands) if rows is not None else None

    # ------------------------------------------------------------------ the nest

    def build(self) -> None:
        kf, owner = self.kf, self.owner
        assert owner.dims is not None
        outer = owner.dims[0]
        loops = [Planned(d, "tile", kf.tile(d)) for d in kf.order if kf.tile(d)]
        loops += [Planned(d, "point", kf.tile(d)) if kf.tile(d) else Planned(d)
                  for d in outer if d != self.row]
        kf.at.insert(TileConfigOp([(TILE, ROW_BYTES)] * TILES))
        self.a_pack = self.alloc(2 * self.k_steps * TILE, "a_tiles")
        # one chunk more than a block holds: the second B tile of a block's last 16
        # columns loads from there (its products are never stored)
        self.b_pack = self.alloc((self.column_block // TILE + 1) * self.pairs(), "b_pairs")
        stage = kf.at.insert(memref.AllocaOp.get(f32, shape=[len(C_TILES) * TILE, TILE]))
        stage.memref.name_hint = "c_tiles"
        self.stage = stage.memref

        def inner(env: Env, carried: list[SSAValue]) -> list[SSAValue]:
            self.columns(env)
            return []

        kf.nest(loops, [], inner)
        for buffer in (self.a_pack, self.b_pack):
            kf.at.insert(memref.DeallocOp.get(buffer))
        kf.at.insert(TileReleaseOp())

    def columns(self, env: Env) -> None:
        kf = self.kf
        first, end = kf.point_range(self.column, env)

        def column_block(nt: SSAValue) -> None:
            stop = self.min(self.add(nt, self.column_block), end)
            self.pack_b(env, nt, stop)
            rows_first, rows_end = kf.point_range(self.row, env)
            self.kf.loop(rows_first, rows_end, 2 * TILE,
                      lambda mb: self.row_block(env, mb, rows_end, nt, stop), "mb")

        self.kf.loop(first, end, self.column_block, column_block, "nt")

    def row_block(self, env: Env, mb: SSAValue, rows_end: SSAValue, nt: SSAValue,
                  stop: SSAValue) -> None:
        kf = self.kf
        valid = [self.clamp(self.sub(rows_end, self.add(mb, TILE * mi))) for mi in (0, 1)]
        self.pack_a(env, mb, valid)

        def column_tiles(nb: SSAValue) -> None:
            chunk = kf.emit(arith.DivUIOp(self.sub(nb, nt), kf.index(TILE)))
            for c in C_TILES:
                kf.at.insert(TileZeroOp(c))
            self.kf.loop(kf.index(0), kf.index(self.k_steps), 1,
                      lambda kb: self.step(kb, chunk), "kb")
            for c in C_TILES:
                kf.at.insert(TileStoreOp(c, self.stage, kf.index(TILE * c)))
            self.store(env, mb, nb, stop, valid)

        self.kf.loop(nt, stop, 2 * TILE, column_tiles, "nb")

    def step(self, kb: SSAValue, chunk: SSAValue) -> None:
        """One k step of 32: A's two tiles, B's two, the four products."""
        kf = self.kf
        a0, a1 = A_TILES
        b0, b1 = B_TILES
        a_rows = [self.scaled(kb, TILE, mi * self.k_steps * TILE) for mi in (0, 1)]
        b_rows = [self.sum(self.scaled(chunk, self.pairs(), j * self.pairs()),
                           self.scaled(kb, TILE)) for j in (0, 1)]
        kf.at.insert(TileLoadOp(a0, self.a_pack, a_rows[0]))
        kf.at.insert(TileLoadOp(b0, self.b_pack, b_rows[0]))
        kf.at.insert(TileDotBF16Op(0, a0, b0))
        kf.at.insert(TileLoadOp(b1, self.b_pack, b_rows[1]))
        kf.at.insert(TileDotBF16Op(1, a0, b1))
        kf.at.insert(TileLoadOp(a1, self.a_pack, a_rows[1]))
        kf.at.insert(TileDotBF16Op(2, a1, b0))
        kf.at.insert(TileDotBF16Op(3, a1, b1))

    def store(self, env: Env, mb: SSAValue, nb: SSAValue, stop: SSAValue,
              valid: list[SSAValue]) -> None:
        """The stage's rows (C tile 2 mi + nj holds rows 16 mi.., columns 16 nj..) through
        the epilogue, for the rows and columns in range."""
        kf = self.kf
        chunks = self.min(kf.emit(arith.DivUIOp(self.sub(stop, nb), kf.index(TILE))),
                          kf.index(2))
        for mi in (0, 1):
            def row(r: SSAValue, mi: int = mi) -> None:
                def piece(nj: SSAValue) -> None:
                    at = self.sum(self.scaled(nj, TILE, 2 * mi * TILE), r)
                    total = kf.emit(vector.LoadOp(self.stage, [at, kf.index(0)],
                                                  VectorType(f32, [TILE])))
                    point = {**env, self.row: self.sum(self.add(mb, TILE * mi), r),
                             self.column: self.sum(self.scaled(nj, TILE), nb)}
                    self.rows.store_rows([total], [(point, TILE)], env)

                self.kf.loop(kf.index(0), chunks, 1, piece, "nj")

            self.kf.loop(kf.index(0), valid[mi], 1, row, "r")

    # ------------------------------------------------------------------ the copies

    def pack_a(self, env: Env, mb: SSAValue, valid: list[SSAValue]) -> None:
        """A's rows mb.. (16 per tile) into tiles: tile (mi, kb) at row (mi K/32 + kb) 16."""
        kf = self.kf
        run = VectorType(BFloat16Type(), [K_STEP])
        for mi in (0, 1):
            def row(r: SSAValue, mi: int = mi) -> None:
                m = self.sum(self.add(mb, TILE * mi), r)

                def piece(kb: SSAValue) -> None:
                    values = self.load_run(self.a, {**env, self.row: m,
                                                    self.k: self.scaled(kb, K_STEP)}, run)
                    at = self.sum(self.scaled(kb, TILE, mi * self.k_steps * TILE), r)
                    kf.at.insert(vector.StoreOp(values, self.a_pack, [at, kf.index(0)]))

                whole = self.kf.sizes[self.k] // K_STEP
                self.kf.loop(kf.index(0), kf.index(whole), 1, piece, "kb")
                if whole < self.k_steps:
                    self.a_tail({**env, self.row: m},
                                self.sum(kf.index((mi * self.k_steps + whole) * TILE), r))

            self.kf.loop(kf.index(0), valid[mi], 1, row, "r")

    def a_tail(self, env: Env, at: SSAValue) -> None:
        """A row's last k (fewer than 32): zeros, then its elements one by one."""
        kf = self.kf
        first = self.kf.sizes[self.k] // K_STEP * K_STEP
        zeros = kf.constant(0, VectorType(BFloat16Type(), [K_STEP]))
        kf.at.insert(vector.StoreOp(zeros, self.a_pack, [at, kf.index(0)]))

        def element(k: SSAValue) -> None:
            value = kf.read(self.a, {**env, self.k: k}, kf.sizes)
            kf.store(value, self.a_pack, [at, self.sub(k, kf.index(first))])

        self.kf.loop(kf.index(first), kf.index(self.kf.sizes[self.k]), 1, element, "k")

    def pack_b(self, env: Env, nt: SSAValue, stop: SSAValue) -> None:
        """B's columns nt..stop in pairs of rows: chunk j's row k2 holds B[2 k2, n] and
        B[2 k2 + 1, n] for its 16 columns n."""
        kf = self.kf
        run = VectorType(BFloat16Type(), [TILE])
        mask = DenseArrayBase.from_list(i64, [x for lane in range(TILE)
                                              for x in (lane, lane + TILE)])
        chunks = kf.emit(arith.DivUIOp(self.sub(stop, nt), kf.index(TILE)))

        def chunk(j: SSAValue) -> None:
            n = self.sum(nt, self.scaled(j, TILE))

            def pair(k2: SSAValue) -> None:
                k = self.scaled(k2, 2)
                even = self.load_run(self.b, {**env, self.k: k, self.column: n}, run)
                odd = self.load_run(self.b, {**env, self.k: self.add(k, 1), self.column: n},
                                    run)
                pairs = kf.emit(vector.ShuffleOp(
                    even, odd, mask, result_type=VectorType(BFloat16Type(), [2 * TILE])))
                at = self.sum(self.scaled(j, self.pairs()), k2)
                kf.at.insert(vector.StoreOp(pairs, self.b_pack, [at, kf.index(0)]))

            size = self.kf.sizes[self.k]
            self.kf.loop(kf.index(0), kf.index(size // 2), 1, pair, "k2")
            zeros = kf.constant(0, VectorType(BFloat16Type(), [2 * TILE]))
            if size % 2:  # the last k's pairs with zeros
                last = self.load_run(self.b, {**env, self.k: kf.index(size - 1),
                                              self.column: n}, run)
                pairs = kf.emit(vector.ShuffleOp(
                    last, kf.constant(0, run), mask,
                    result_type=VectorType(BFloat16Type(), [2 * TILE])))
                at = self.scaled(j, self.pairs(), size // 2)
                kf.at.insert(vector.StoreOp(pairs, self.b_pack, [at, kf.index(0)]))

            def padding(k2: SSAValue) -> None:
                at = self.sum(self.scaled(j, self.pairs()), k2)
                kf.at.insert(vector.StoreOp(zeros, self.b_pack, [at, kf.index(0)]))

            self.kf.loop(kf.index(-(-size // 2)), kf.index(self.pairs()), 1, padding, "k2")

        self.kf.loop(kf.index(0), chunks, 1, chunk, "chunk")

    def load_run(self, i: int, env: Env, run: VectorType) -> SSAValue:
        kf = self.kf
        access = kf.op.accesses[i]
        indices = [kf.index_expr(e, env) for e in access.affine_map.results]
        return kf.emit(vector.LoadOp(*self.rows.run_view(kf.inputs[i], indices), run))

    # ------------------------------------------------------------------ helpers

    def pairs(self) -> int:
        """Rows of a chunk of `b_pairs`: K / 2 rounded up to a whole tile's k."""
        return self.k_steps * TILE

    def alloc(self, rows: int, name: str) -> SSAValue:
        buffer = self.kf.at.insert(memref.AllocOp.get(BFloat16Type(), shape=[rows, K_STEP],
                                                      alignment=ROW_BYTES))
        buffer.memref.name_hint = name
        return buffer.memref

    def add(self, value: SSAValue, k: int) -> SSAValue:
        return value if k == 0 else self.kf.emit(arith.AddiOp(value, self.kf.index(k)))

    def scaled(self, value: SSAValue, k: int, plus: int = 0) -> SSAValue:
        """value * k + plus."""
        kf = self.kf
        product = value if k == 1 else kf.emit(arith.MuliOp(value, kf.index(k)))
        return self.add(product, plus)

    def sum(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.kf.emit(arith.AddiOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.kf.emit(arith.SubiOp(a, b))

    def min(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.kf.emit(arith.MinSIOp(a, b))

    def clamp(self, value: SSAValue) -> SSAValue:
        """value within [0, 16]."""
        kf = self.kf
        return kf.emit(arith.MaxSIOp(self.min(value, kf.index(TILE)), kf.index(0)))


def _operands(owner: RegisterBlock, row: int, k: int, column: int) -> tuple[int, int] | None:
    """(A's read, B's read): A varies along the rows and k, contiguous in k; B along k and
    the columns, contiguous in the columns; neither masked. None otherwise."""
    kf = owner.kf
    found: dict[str, int] = {}
    for i in range(2):
        access = kf.op.accesses[i]
        dims = set(access_dims(access))
        buffer = kf.inputs[i].type
        assert isinstance(buffer, MemRefType)
        if access.is_masked or not isinstance(buffer.element_type, BFloat16Type):
            return None
        exprs, shape = access.affine_map.results, buffer.get_shape()
        if row in dims and column not in dims and run_dim(exprs, k, shape) is not None:
            found.setdefault("a", i)
        elif column in dims and row not in dims and run_dim(exprs, column, shape) is not None:
            found.setdefault("b", i)
    if set(found) != {"a", "b"}:
        return None
    return found["a"], found["b"]


__all__ = ["TileBlock"]
