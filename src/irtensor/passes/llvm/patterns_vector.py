"""`vector` -> `llvm` patterns of `convert-to-llvm`: the ops a register block's rows use.

`lower-kernels-to-loops` builds a matmul- or conv-like kernel's block of
accumulators as one vector per row (`irtensor.passes.loops.vector_block`); these
patterns lower its ops:

- `vector.load` / `vector.store` of a contiguous run of a memref's last dimension
  become a `getelementptr inbounds` and one `llvm.load` / `llvm.store` of the
  vector type, aligned as one element is (a run starts anywhere in a row);
- `vector.broadcast` of a scalar becomes `insertelement` into lane 0 and a
  `shufflevector` with an all-zero mask, LLVM's splat idiom (a broadcast of a
  constant folds to a constant vector);
- `memref.collapse_shape` (a row-major buffer's view without its trailing size-1
  dimensions) is the same pointer.

- a row of bf16 is the bits memory holds (`vector<N x i16>`): `arith.extf` to f32
  shifts them into each lane's high half; `vector.shuffle` (a bf16 dot's pairs) is
  `shufflevector`; `x86vector.avx512.dot` calls `llvm.x86.avx512bf16.dpbf16ps.*`
  with the pairs as i32 lanes (the form LLVM upgrades to its bfloat one).

Arithmetic on vectors goes through the arith patterns unchanged (`llvm.fadd` &
co. take vector operands); only f32 and f64 lanes are computed on. `maximumf` and
`minimumf` on vectors (a relu in an epilogue) keep numpy's meaning as the
scalar lowering does, without a vector compare (xDSL's `llvm.fcmp` is scalar):
`llvm.maximum`/`llvm.minimum` propagate NaN as `np.maximum` does, and where
both operands are zeros (the only equal operands the two can tell apart) the
second operand is taken, through a mask made of the bits: `t = (a | b) & ~sign`
is 0 exactly there, and `(t - 1) >> (width - 1)` (arithmetic) is all ones then
and 0 otherwise. The mask is left out where an operand is a constant splat that
settles the tie (`zero_tie_settled`): a relu's `max(x, 0.0)` is the intrinsic alone.
"""

from __future__ import annotations

import math

from xdsl.dialects import arith, llvm, memref, vector
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    UnrealizedConversionCastOp,
    VectorType,
    f32,
    i32,
)
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from irtensor.dialects.x86vector import DotBF16Op
from irtensor.passes.llvm.lowering import (
    Emitter,
    LLVMLoweringError,
    byte_size,
    float_width,
    llvm_type,
    made_like,
)
from irtensor.passes.llvm.patterns_memref import (
    buffer_origin,
    element_pointer,
    is_nontemporal,
    static_memref,
)


def _run_type(memory: object, run: VectorType, what: str) -> int:
    """The bytes of one element, after checking that `run` is a vector of `memory`'s
    element type over its last dimension only."""
    if not isinstance(memory, MemRefType) or run.get_num_dims() != 1:
        raise LLVMLoweringError(f"convert-to-llvm: {what} needs a memref and a 1-d vector, "
                                f"got {memory} and {run}")
    llvm_type(run)  # raises for lanes the lowering lacks
    return byte_size(memory.element_type)


class VectorLoadToLLVM(RewritePattern):
    """vector.load -> getelementptr inbounds + llvm.load of the vector (element-aligned)."""

    op_types = (vector.LoadOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.LoadOp, rewriter: PatternRewriter) -> None:
        run = op.result.type
        assert isinstance(run, VectorType)
        align = _run_type(op.base.type, run, "vector.load")
        e = Emitter(rewriter, op)
        pointer = element_pointer(e, op.base, op.indices)
        e.finish(e.load(pointer, llvm_type(run), align))


def on_stack(buffer: SSAValue) -> bool:
    """Whether `buffer` is a `memref.alloca` (or what convert-to-llvm made of one)."""
    return isinstance(buffer_origin(buffer), memref.AllocaOp | llvm.AllocaOp)


class VectorStoreToLLVM(RewritePattern):
    """vector.store -> getelementptr inbounds + llvm.store of the vector (element-aligned,
    `nontemporal` kept: LLVM splits an under-aligned one into 8-byte non-temporal stores)."""

    op_types = (vector.StoreOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.StoreOp, rewriter: PatternRewriter) -> None:
        run = op.vector.type
        assert isinstance(run, VectorType)
        align = _run_type(op.base.type, run, "vector.store")
        e = Emitter(rewriter, op)
        pointer = element_pointer(e, op.base, op.indices)
        if on_stack(op.base):
            # llvmlite types a stack slot's pointer by its element and refuses to store a
            # vector through it: a step of 0 vectors gives the pointer the vector's type.
            pointer = e.gep(pointer, [0], llvm_type(run))
        e.store(e.value(op.vector), pointer, align, is_nontemporal(op))
        rewriter.erase(op)


class BroadcastToLLVM(RewritePattern):
    """vector.broadcast of a scalar -> insertelement into lane 0 + shufflevector splat."""

    op_types = (vector.BroadcastOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.BroadcastOp, rewriter: PatternRewriter) -> None:
        run = op.vector.type
        assert isinstance(run, VectorType)
        if isinstance(op.source.type, VectorType) or run.get_num_dims() != 1:
            raise LLVMLoweringError("convert-to-llvm: vector.broadcast is lowered from a "
                                    f"scalar to a 1-d vector only, got {op.source.type} "
                                    f"to {run}")
        e = Emitter(rewriter, op)
        lanes = run.get_shape()[0]
        source = e.value(op.source)
        if isinstance(op.source.type, BFloat16Type):  # a bf16 row holds the bits
            source = e.bf16_to_i16(source)
        vector_type = llvm_type(run)
        empty, position = e.undef(vector_type), e.int_const(0, i32)
        first = e.emit(made_like((llvm.InsertElementOp, vector_type, source.type),
                                 (empty, source, position),
                                 lambda: llvm.InsertElementOp(empty, source, position)))
        e.finish(e.emit(made_like(
            (llvm.ShuffleVectorOp, vector_type, "splat"), (first, first),
            lambda: llvm.ShuffleVectorOp(first, first, DenseArrayBase.from_list(i32, [0] * lanes),
                                         vector_type))))


def splat_value(v: SSAValue) -> float | None:
    """The float every lane of `v` holds when `v` is a constant splat (a scalar
    `arith.constant`'s `vector.broadcast`, or what convert-to-llvm made of it; vector
    constants are not lowered), else None."""
    owner = v.owner
    if isinstance(owner, UnrealizedConversionCastOp) and len(owner.inputs) == 1:
        return splat_value(owner.inputs[0])
    if isinstance(owner, vector.BroadcastOp):
        return splat_value(owner.source)
    if isinstance(owner, llvm.ShuffleVectorOp) and not any(owner.mask.get_values()) \
            and isinstance(first := owner.v1.owner, llvm.InsertElementOp) \
            and isinstance(position := first.index.owner, llvm.ConstantOp) \
            and isinstance(position.value, IntegerAttr) and position.value.value.data == 0:
        return splat_value(first.value)
    if isinstance(owner, arith.ConstantOp | llvm.ConstantOp) \
            and isinstance(owner.value, FloatAttr):
        return owner.value.value.data
    return None


def zero_tie_settled(is_max: bool, a: float | None, b: float | None) -> bool:
    """Whether `llvm.maximum(a, b)` (`minimum`) already returns numpy's answer where the
    two are zeros of opposite signs (numpy: `b`), given the constant lanes known: a
    non-zero (or NaN) constant is never such a tie, and the intrinsic takes +0.0 over
    -0.0 for the maximum (-0.0 for the minimum), which is `b` when `b` is that zero."""
    if b is not None:
        return b != 0 or math.copysign(1.0, b) == (1.0 if is_max else -1.0)
    return a is not None and a != 0


class VectorMaxMinFToLLVM(RewritePattern):
    """maximumf/minimumf on vectors -> llvm.maximum/minimum, the second operand where
    both are zeros (np.maximum(0.0, -0.0) is -0.0)."""

    op_types = (arith.MaximumfOp, arith.MinimumfOp)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.MaximumfOp | arith.MinimumfOp,
                          rewriter: PatternRewriter) -> None:
        run = op.result.type
        if not isinstance(run, VectorType):
            return
        llvm_type(run)
        lanes, width = run.get_shape()[0], float_width(run.element_type)
        e = Emitter(rewriter, op)
        a, b = e.values(op.operands)
        is_max = isinstance(op, arith.MaximumfOp)
        name = "maximum" if is_max else "minimum"
        picked = e.intrinsic(f"llvm.{name}.v{lanes}f{width}", [a, b], run)
        if zero_tie_settled(is_max, splat_value(op.lhs), splat_value(op.rhs)):
            e.finish(picked)
            return
        bits = VectorType(IntegerType(width), [lanes])

        def splat(value: int) -> SSAValue:
            return e.constant(DenseIntOrFPElementsAttr.from_list(bits, [value] * lanes), bits)

        a_bits, b_bits, picked_bits = (e.bitcast(v, bits) for v in (a, b, picked))
        magnitude = e.binop(llvm.AndOp, e.binop(llvm.OrOp, a_bits, b_bits),
                            splat((1 << (width - 1)) - 1))
        zeros = e.binop(llvm.AShrOp, e.binop(llvm.SubOp, magnitude, splat(1)),
                        splat(width - 1))
        others = e.binop(llvm.XOrOp, zeros, splat(-1))
        chosen = e.binop(llvm.OrOp, e.binop(llvm.AndOp, zeros, b_bits),
                         e.binop(llvm.AndOp, others, picked_bits))
        e.finish(e.bitcast(chosen, run))


class CollapseShapeToLLVM(RewritePattern):
    """memref.collapse_shape of a static row-major memref -> the same pointer (a row's
    view without its trailing size-1 dimensions)."""

    op_types = (memref.CollapseShapeOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CollapseShapeOp, rewriter: PatternRewriter) -> None:
        source, result = op.src.type, op.result.type
        for t in (source, result):
            static_memref(t, "memref.collapse_shape")
            assert isinstance(t, MemRefType)
            if t.get_strides() != MemRefType(t.element_type, t.get_shape()).get_strides() \
                    or t.get_offset() != 0:
                raise LLVMLoweringError("convert-to-llvm: memref.collapse_shape is lowered "
                                        f"for row-major memrefs only, got {t}")
        e = Emitter(rewriter, op)
        e.finish(e.value(op.src))


class ShuffleToLLVM(RewritePattern):
    """vector.shuffle of two 1-d vectors -> shufflevector (a bf16 row's pairs)."""

    op_types = (vector.ShuffleOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.ShuffleOp, rewriter: PatternRewriter) -> None:
        run = op.result.type
        assert isinstance(run, VectorType)
        e = Emitter(rewriter, op)
        mask = DenseArrayBase.from_list(i32, list(op.mask.get_values()))
        e.finish(e.emit(llvm.ShuffleVectorOp(e.value(op.v1), e.value(op.v2), mask,
                                             llvm_type(run))))


class VectorExtFToLLVM(RewritePattern):
    """arith.extf of a row to f32 lanes: bf16 bits shifted into the high half of each
    lane (exact), f16 by fpext."""

    op_types = (arith.ExtFOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ExtFOp, rewriter: PatternRewriter) -> None:
        source, run = op.input.type, op.result.type
        if not isinstance(source, VectorType) or not isinstance(run, VectorType):
            return
        e = Emitter(rewriter, op)
        value = e.value(op.input)
        if isinstance(source.element_type, BFloat16Type) and run.element_type == f32:
            lanes = run.get_shape()[0]
            bits = VectorType(i32, [lanes])
            sixteen = DenseIntOrFPElementsAttr.from_list(bits, [16] * lanes)
            wide = e.binop(llvm.ShlOp, e.zext(value, bits), e.constant(sixteen, bits))
            e.finish(e.bitcast(wide, run))
            return
        if isinstance(source.element_type, Float16Type | Float32Type):
            e.finish(e.emit(llvm.FPExtOp(value, llvm_type(run))))
            return
        raise LLVMLoweringError(f"convert-to-llvm: arith.extf on vectors from {source} to "
                                f"{run} is not lowered")


class VectorTruncFToLLVM(RewritePattern):
    """arith.truncf of an f32 row: to f16 by fptrunc; to bf16 as the scalar lowering
    rounds (`Emitter.bf16_bits` on the row), its lanes' high halves as i16."""

    op_types = (arith.TruncFOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.TruncFOp, rewriter: PatternRewriter) -> None:
        source, run = op.input.type, op.result.type
        if not isinstance(source, VectorType) or not isinstance(run, VectorType):
            return
        e = Emitter(rewriter, op)
        value = e.value(op.input)
        if source.element_type != f32:
            raise LLVMLoweringError(f"convert-to-llvm: arith.truncf on vectors from {source} "
                                    f"to {run} is not lowered")
        if isinstance(run.element_type, Float16Type):
            e.finish(e.emit(llvm.FPTruncOp(value, llvm_type(run))))
            return
        words = VectorType(i32, run.get_shape())
        sixteen = DenseIntOrFPElementsAttr.from_list(words, [16] * run.get_shape()[0])
        high = e.binop(llvm.LShrOp, e.bf16_bits(value), e.constant(sixteen, words))
        e.finish(e.trunc(high, llvm_type(run)))


class DotBF16ToLLVM(RewritePattern):
    """x86vector.avx512.dot -> llvm.x86.avx512bf16.dpbf16ps.{128,256,512} (the pairs as
    i32 lanes, the form LLVM upgrades to its bfloat one)."""

    op_types = (DotBF16Op,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DotBF16Op, rewriter: PatternRewriter) -> None:
        run = op.res.type
        assert isinstance(run, VectorType)
        lanes = run.get_shape()[0]
        e = Emitter(rewriter, op)
        words = VectorType(i32, [lanes])
        a, b = (e.bitcast(e.value(v), words) for v in (op.a, op.b))
        e.finish(e.intrinsic(f"llvm.x86.avx512bf16.dpbf16ps.{32 * lanes}",
                             [e.value(op.acc), a, b], run))


def vector_patterns() -> list[RewritePattern]:
    return [VectorLoadToLLVM(), VectorStoreToLLVM(), BroadcastToLLVM(), VectorMaxMinFToLLVM(),
            CollapseShapeToLLVM(), ShuffleToLLVM(), VectorExtFToLLVM(), VectorTruncFToLLVM(),
            DotBF16ToLLVM()]


__all__ = ["BroadcastToLLVM", "CollapseShapeToLLVM", "DotBF16ToLLVM", "ShuffleToLLVM",
           "VectorExtFToLLVM", "VectorLoadToLLVM", "VectorMaxMinFToLLVM", "VectorStoreToLLVM",
           "VectorTruncFToLLVM", "vector_patterns"]
