"""`amx` -> `llvm` patterns of `convert-to-llvm`: calls of LLVM's AMX intrinsics.

Each op is one intrinsic with its tile numbers as `i8` immediates:

- `amx.tile_config` stores the 64-byte configuration (palette 1; bytes per row of
  tile i at byte 16 + 2i, its rows at byte 48 + i) to a 64-byte aligned stack slot
  as one constant vector, then `llvm.x86.ldtilecfg`;
- `amx.tile_zero` -> `llvm.x86.tilezero`, `amx.tile_dot_bf16` -> `llvm.x86.tdpbf16ps`,
  `amx.tile_release` -> `llvm.x86.tilerelease`;
- `amx.tile_load` / `amx.tile_store` -> `llvm.x86.tileloadd64` / `tilestored64` at
  the address of `buffer[row, 0]`, the buffer's row in bytes as the stride.
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, MemRefType, VectorType, i8
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from irtensor.dialects.amx import (
    TileConfigOp,
    TileDotBF16Op,
    TileLoadOp,
    TileReleaseOp,
    TileStoreOp,
    TileZeroOp,
)
from irtensor.passes.llvm.lowering import Emitter, byte_size
from irtensor.passes.llvm.patterns_memref import element_pointer

CONFIG_BYTES = 64


def config_bytes(shapes: list[tuple[int, int]]) -> list[int]:
    """The ldtilecfg block of palette 1 for tiles 0, 1, ... of (rows, bytes per row)."""
    config = [0] * CONFIG_BYTES
    config[0] = 1
    for tile, (rows, width) in enumerate(shapes):
        config[16 + 2 * tile] = width & 0xFF
        config[17 + 2 * tile] = width >> 8
        config[48 + tile] = rows
    return config


def _row_address(e: Emitter, buffer: SSAValue, row: SSAValue) -> list[SSAValue]:
    """&buffer[row, 0] and the buffer's row in bytes (the tile's stride)."""
    t = buffer.type
    assert isinstance(t, MemRefType)
    stride = t.get_shape()[1] * byte_size(t.element_type)
    return [element_pointer(e, buffer, [row, e.int_const(0)]), e.int_const(stride)]


class TileConfigToLLVM(RewritePattern):
    op_types = (TileConfigOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TileConfigOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        block = VectorType(i8, [CONFIG_BYTES])
        slot = e.emit(llvm.AllocaOp(e.int_const(1), block, alignment=CONFIG_BYTES))
        value = e.constant(DenseIntOrFPElementsAttr.from_list(
            block, [b - 256 if b > 127 else b for b in config_bytes(op.tile_shapes())]), block)
        e.insert(llvm.StoreOp(value, slot, alignment=CONFIG_BYTES))
        e.insert(llvm.CallIntrinsicOp("llvm.x86.ldtilecfg", [slot], []))
        rewriter.erase(op)


TileOp = TileZeroOp | TileLoadOp | TileStoreOp | TileDotBF16Op | TileReleaseOp
INTRINSICS: dict[type[Operation], str] = {
    TileZeroOp: "llvm.x86.tilezero", TileLoadOp: "llvm.x86.tileloadd64",
    TileStoreOp: "llvm.x86.tilestored64", TileDotBF16Op: "llvm.x86.tdpbf16ps",
    TileReleaseOp: "llvm.x86.tilerelease",
}


class TileOpToLLVM(RewritePattern):
    """The other tile ops: their intrinsic, the tile numbers first (i8 immediates), then
    a load's or store's address and stride."""

    op_types = tuple(INTRINSICS)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TileOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        if isinstance(op, TileDotBF16Op):
            tiles = [op.acc, op.a, op.b]
        else:
            tiles = [] if isinstance(op, TileReleaseOp) else [op.tile]
        args = [e.int_const(t.value.data, i8) for t in tiles]
        if isinstance(op, TileLoadOp | TileStoreOp):
            args += _row_address(e, op.buffer, op.row)
        e.insert(llvm.CallIntrinsicOp(INTRINSICS[type(op)], args, []))
        rewriter.erase(op)


def amx_patterns() -> list[RewritePattern]:
    return [TileConfigToLLVM(), TileOpToLLVM()]


__all__ = ["amx_patterns", "config_bytes"]
