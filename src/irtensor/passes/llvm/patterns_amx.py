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


def _call(e: Emitter, name: str, args: list[SSAValue]) -> None:
    e.insert(llvm.CallIntrinsicOp(name, args, []))


def _tile(e: Emitter, number: int) -> SSAValue:
    return e.int_const(number, i8)


def _row_address(e: Emitter, buffer: SSAValue, row: SSAValue) -> tuple[SSAValue, SSAValue]:
    t = buffer.type
    assert isinstance(t, MemRefType)
    stride = t.get_shape()[1] * byte_size(t.element_type)
    return element_pointer(e, buffer, [row, e.int_const(0)]), e.int_const(stride)


def _done(rewriter: PatternRewriter, op: Operation) -> None:
    rewriter.erase(op)


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
        _call(e, "llvm.x86.ldtilecfg", [slot])
        _done(rewriter, op)


class TileReleaseToLLVM(RewritePattern):
    op_types = (TileReleaseOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TileReleaseOp, rewriter: PatternRewriter) -> None:
        _call(Emitter(rewriter, op), "llvm.x86.tilerelease", [])
        _done(rewriter, op)


class TileZeroToLLVM(RewritePattern):
    op_types = (TileZeroOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TileZeroOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        _call(e, "llvm.x86.tilezero", [_tile(e, op.tile.value.data)])
        _done(rewriter, op)


class TileLoadToLLVM(RewritePattern):
    op_types = (TileLoadOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TileLoadOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        address, stride = _row_address(e, op.buffer, op.row)
        _call(e, "llvm.x86.tileloadd64", [_tile(e, op.tile.value.data), address, stride])
        _done(rewriter, op)


class TileStoreToLLVM(RewritePattern):
    op_types = (TileStoreOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TileStoreOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        address, stride = _row_address(e, op.buffer, op.row)
        _call(e, "llvm.x86.tilestored64", [_tile(e, op.tile.value.data), address, stride])
        _done(rewriter, op)


class TileDotBF16ToLLVM(RewritePattern):
    op_types = (TileDotBF16Op,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TileDotBF16Op, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        tiles = [_tile(e, t.value.data) for t in (op.acc, op.a, op.b)]
        _call(e, "llvm.x86.tdpbf16ps", tiles)
        _done(rewriter, op)


def amx_patterns() -> list[RewritePattern]:
    return [TileConfigToLLVM(), TileReleaseToLLVM(), TileZeroToLLVM(), TileLoadToLLVM(),
            TileStoreToLLVM(), TileDotBF16ToLLVM()]


__all__ = ["amx_patterns", "config_bytes"]
