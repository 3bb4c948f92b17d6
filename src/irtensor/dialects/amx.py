"""The `amx` dialect: Intel's Advanced Matrix Extensions, tile by tile.

AMX adds eight tile registers (`tmm0`-`tmm7`), each up to 16 rows of 64 bytes, and
instructions that load a tile from memory rows a stride apart, store one, zero one,
and multiply-accumulate whole tiles: `tdpbf16ps` adds to a 16 x 16 f32 tile the
products of a 16 x 32 bf16 tile (A) and a bf16 tile in pair-interleaved ("VNNI")
layout (B: row `r` holds the pairs `B[2r, n], B[2r+1, n]` for 16 columns `n`), 16,384
flops in one instruction. MLIR's `amx` dialect names tiles as SSA values of a vector
type and leaves the register choice to LLVM (its `x86_amx` type); here a tile is the
register's number, as in the instruction, so the ops lower to LLVM's plain AMX
intrinsics, which take the numbers as immediates and pass through every LLVM IR
exporter:

    amx.tile_config [16, 64, 16, 64]          (rows, bytes) of tmm0, tmm1, ...
    amx.tile_zero 0
    amx.tile_load 4, %pack[%row] : memref<2048x32xbf16>
    amx.tile_dot_bf16 0, 4, 6                  tmm0 += tmm4 . tmm6 (tdpbf16ps)
    amx.tile_store 0, %stage[%row] : memref<64x16xf32>
    amx.tile_release

A tile load or store walks 16 rows of a 2-d buffer from row `%row`, its rows
apart by the buffer's row (every buffer the lowering hands a tile has 64-byte
rows). `lower-kernels-to-loops` builds these for a bf16 matmul on hosts with
AMX (`irtensor.host.amx`, `passes/loops/tile_block.py`); convert-to-llvm calls
`llvm.x86.ldtilecfg`, `tilezero`, `tileloadd64`, `tdpbf16ps`, `tilestored64` and
`tilerelease`. The process must ask Linux for the tiles' state first
(`irtensor.host.enable_tile_data`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    MemRefType,
    i64,
)
from xdsl.ir import Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from irtensor import dtypes

TILES = 8
TILE_ROWS = 16
ROW_BYTES = 64


def _tile(value: int, op: str, what: str = "tile") -> IntegerAttr:
    if not 0 <= value < TILES:
        raise VerifyException(f"{op}: {what} must be a tile register 0-{TILES - 1}, got {value}")
    return IntegerAttr(value, i64)


def _check_tile(attr: IntegerAttr, op: str, what: str = "tile") -> None:
    _tile(attr.value.data, op, what)


def _check_rows(buffer: SSAValue, op: str) -> None:
    t = buffer.type
    if not isinstance(t, MemRefType) or t.get_num_dims() != 2 or not t.has_static_shape():
        raise VerifyException(f"{op}: the buffer must be a static 2-d memref, got {t}")
    width = t.get_shape()[1] * dtypes.to_numpy(t.element_type).itemsize
    if width != ROW_BYTES:
        raise VerifyException(f"{op}: the buffer's rows must be {ROW_BYTES} bytes, got {width} "
                              f"({t})")
    if t.get_shape()[0] < TILE_ROWS:
        raise VerifyException(f"{op}: the buffer must have at least {TILE_ROWS} rows, got {t}")


@irdl_op_definition
class TileConfigOp(IRDLOperation):
    """ldtilecfg: tile i has `shapes[2i]` rows of `shapes[2i + 1]` bytes."""

    name = "amx.tile_config"
    shapes = prop_def(DenseArrayBase.constr(i64))
    assembly_format = "$shapes attr-dict"

    def __init__(self, shapes: list[tuple[int, int]]):
        flat = [x for rows_bytes in shapes for x in rows_bytes]
        super().__init__(properties={"shapes": DenseArrayBase.from_list(i64, flat)})

    def tile_shapes(self) -> list[tuple[int, int]]:
        flat = [int(x) for x in self.shapes.get_values()]
        return list(zip(flat[::2], flat[1::2], strict=True))

    def verify_(self) -> None:
        flat = self.shapes.get_values()
        if len(flat) % 2 or not 0 < len(flat) <= 2 * TILES:
            raise VerifyException(f"amx.tile_config: expected (rows, bytes) for 1 to {TILES} "
                                  f"tiles, got {len(flat)} values")
        for i, (rows, width) in enumerate(self.tile_shapes()):
            if not (0 < rows <= TILE_ROWS and 0 < width <= ROW_BYTES and width % 4 == 0):
                raise VerifyException(f"amx.tile_config: tile {i} must have 1-{TILE_ROWS} rows "
                                      f"of 4-{ROW_BYTES} bytes (a multiple of 4), got "
                                      f"{rows} x {width}")


@irdl_op_definition
class TileReleaseOp(IRDLOperation):
    """tilerelease: the tiles back to their initial state (no AMX state to save)."""

    name = "amx.tile_release"
    assembly_format = "attr-dict"


@irdl_op_definition
class TileZeroOp(IRDLOperation):
    """tilezero: every element of the tile 0."""

    name = "amx.tile_zero"
    tile = prop_def(IntegerAttr[I64])
    assembly_format = "$tile attr-dict"

    def __init__(self, tile: int):
        super().__init__(properties={"tile": _tile(tile, self.name)})

    def verify_(self) -> None:
        _check_tile(self.tile, self.name)


class _TileRowsOp(IRDLOperation):
    """A tile's 16 rows and `buffer[row + i, 0]`, i = 0..15 (a load or a store)."""

    tile = prop_def(IntegerAttr[I64])
    buffer = operand_def(MemRefType)
    row = operand_def(IndexType)
    assembly_format = "$tile `,` $buffer `[` $row `]` attr-dict `:` type($buffer)"

    def __init__(self, tile: int, buffer: SSAValue, row: SSAValue):
        super().__init__(operands=[buffer, row], properties={"tile": _tile(tile, self.name)})

    def verify_(self) -> None:
        _check_tile(self.tile, self.name)
        _check_rows(self.buffer, self.name)


@irdl_op_definition
class TileLoadOp(_TileRowsOp):
    """tileloadd: the tile's rows from `buffer[row + i, 0]`, i = 0..15."""

    name = "amx.tile_load"


@irdl_op_definition
class TileStoreOp(_TileRowsOp):
    """tilestored: the tile's rows to `buffer[row + i, 0]`, i = 0..15."""

    name = "amx.tile_store"


@irdl_op_definition
class TileDotBF16Op(IRDLOperation):
    """tdpbf16ps: acc (f32, 16 x 16) += a (bf16, 16 x 32) . b (bf16 pairs, 16 x 16 x 2)."""

    name = "amx.tile_dot_bf16"
    acc = prop_def(IntegerAttr[I64])
    a = prop_def(IntegerAttr[I64])
    b = prop_def(IntegerAttr[I64])
    assembly_format = "$acc `,` $a `,` $b attr-dict"

    def __init__(self, acc: int, a: int, b: int):
        super().__init__(properties={"acc": _tile(acc, self.name, "acc"),
                                     "a": _tile(a, self.name, "a"),
                                     "b": _tile(b, self.name, "b")})

    def verify_(self) -> None:
        tiles = [(self.acc, "acc"), (self.a, "a"), (self.b, "b")]
        for attr, what in tiles:
            _check_tile(attr, self.name, what)
        numbers = [attr.value.data for attr, _ in tiles]
        if len(set(numbers)) != 3:
            raise VerifyException(f"{self.name}: acc, a and b must be three different tiles, "
                                  f"got {numbers}")


AMX = Dialect("amx", [TileConfigOp, TileReleaseOp, TileZeroOp, TileLoadOp, TileStoreOp,
                      TileDotBF16Op], [])

__all__ = ["AMX", "ROW_BYTES", "TILES", "TILE_ROWS", "TileConfigOp", "TileDotBF16Op",
           "TileLoadOp", "TileReleaseOp", "TileStoreOp", "TileZeroOp"]
