"""Shared pieces of `convert-to-llvm`: the type mapping and an emitter for patterns.

Types, in SSA values and in memory (the *bare-pointer* convention):

| builtin type | SSA value (llvm) | in memory        |
|--------------|------------------|------------------|
| index        | i64              | i64              |
| memref<...>  | !llvm.ptr        | (a pointer)      |
| f16          | f16 (`half`)     | half             |
| bf16         | f32, rounded     | i16 (the bits)   |
| i1           | i1               | i8 (numpy bool)  |
| f32 f64 iN   | the same         | the same         |

A bf16 value lives in an f32 that always holds a bf16 number: every bf16
operation computes in f32 and rounds the result to bf16 (`Emitter.round_bf16`,
round to nearest even as ml_dtypes), which is what numpy with ml_dtypes does.
Loads, constants, casts and the JIT's scalar arguments are exact or rounded too,
so a store only keeps the f32's high half.

Patterns see the original ops, whose operands still have the original types;
`Emitter.value` gives an operand's llvm value (looking through, or making, a
`builtin.unrealized_conversion_cast`) and `Emitter.finish` casts new results back
to the original types where they differ. `reconcile-unrealized-casts` removes
the cast pairs at the end, as in MLIR's dialect conversion.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Sequence

import ml_dtypes
import numpy as np
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    UnrealizedConversionCastOp,
    VectorType,
    f32,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from irtensor import dtypes
from irtensor.passes.registry import PassInputError

PTR = llvm.LLVMPointerType()
KERNEL_ATTR = "irtensor.kernel"
ARG_TYPES_ATTR = "irtensor.arg_types"
WRITTEN_ATTR = "irtensor.written_args"
# On a kernel function whose loops LLVM should not unroll (passes/loops/unroll_hint.py).
NO_UNROLL_ATTR = "irtensor.no_unroll"
# On a kernel function too small for LLVM's IR optimisation to pay (the same file).
SMALL_ATTR = "irtensor.small"

# The IEEE float types the llvm dialect carries as they are.
NATIVE_FLOATS = (Float16Type, Float32Type, Float64Type)


class LLVMLoweringError(PassInputError):
    """IR that convert-to-llvm cannot lower (an op, a type or a layout it does not know)."""


def llvm_type(t: Attribute) -> Attribute:
    """The type of an SSA value of builtin type `t` after lowering."""
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, MemRefType):
        return PTR
    if isinstance(t, BFloat16Type):
        return f32
    if isinstance(t, (IntegerType, llvm.LLVMPointerType, *NATIVE_FLOATS)):
        return t
    if isinstance(t, VectorType) and t.get_num_dims() == 1:
        # a register block's row (`vector_block`): f32 and f64 lanes; bf16 lanes as the
        # bits memory holds (a bf16 matmul's operands, widened or paired for `vdpbf16ps`)
        lane = t.element_type
        if isinstance(lane, BFloat16Type):
            return VectorType(i16, t.get_shape())
        if isinstance(lane, Float32Type | Float64Type | Float16Type | IntegerType):
            return t
    raise LLVMLoweringError(f"convert-to-llvm: no llvm type for {t}")


def memory_type(t: Attribute) -> Attribute:
    """The llvm type an element of type `t` has in memory."""
    if t == i1:
        return i8
    if isinstance(t, BFloat16Type):
        return i16
    return llvm_type(t)


def byte_size(t: Attribute) -> int:
    """Bytes of one element of type `t` in memory."""
    mem = memory_type(t)
    if isinstance(mem, IntegerType):
        return max(1, mem.width.data // 8)
    if isinstance(mem, Float16Type):
        return 2
    if isinstance(mem, Float32Type):
        return 4
    if isinstance(mem, Float64Type):
        return 8
    raise LLVMLoweringError(f"convert-to-llvm: cannot store elements of type {t} in memory")


def float_width(t: Attribute) -> int:
    return {Float16Type: 16, BFloat16Type: 16, Float32Type: 32, Float64Type: 64}[type(t)]


def exact_float(value: float, t: Attribute) -> float:
    """`value` rounded to the element type `t` (constants must be exact in LLVM IR)."""
    if isinstance(t, BFloat16Type):
        return float(dtypes.cast_array(np.float64(value), np.dtype(ml_dtypes.bfloat16)))
    if isinstance(t, Float16Type):
        return float(np.float16(value))
    if isinstance(t, Float32Type):
        return float(np.float32(value))
    return float(value)


def int_width(t: Attribute) -> int:
    assert isinstance(t, IntegerType), t
    return t.width.data


def int_attr(value: int, t: Attribute) -> IntegerAttr:
    """`value` as an attribute of the integer type `t` (two's complement into the signed
    range IntegerAttr accepts; an i1 is 0 or -1)."""
    width = int_width(t)
    if width > 1:
        value &= (1 << width) - 1
        if value >= 1 << (width - 1):
            value -= 1 << width
    else:
        value = -1 if value & 1 else 0
    return IntegerAttr(value, t)


# The constants `Emitter.constant` made, by block and (value, type); `Emitter.undef`'s
# under (_UNDEF, type).
_UNDEF = StringAttr("undef")
_CONSTANTS: weakref.WeakKeyDictionary[Block, dict[tuple[Attribute, Attribute], SSAValue]] = \
    weakref.WeakKeyDictionary()


def constant_index(value: SSAValue) -> int | None:
    """The integer an index is known to be: an `arith.constant`, or the llvm constant
    (behind its cast) it was lowered to."""
    owner = value.owner
    if isinstance(owner, UnrealizedConversionCastOp) and len(owner.inputs) == 1:
        owner = owner.inputs[0].owner
    if isinstance(owner, arith.ConstantOp | llvm.ConstantOp):
        attr = owner.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


# Ops that patterns make by the thousand, built by their constructors once per key and
# then by `create` from what the constructor made: an IRDL constructor assembles and
# checks every operand and property on each call (xDSL 0.x: a GEP 216 us, a load 85, an
# add 46, against 17-21 through `create`). Bounded: cleared past MAX_MADE keys.
_MADE: dict[Hashable, tuple[type[Operation], dict[str, Attribute], dict[str, Attribute],
                            tuple[Attribute, ...]]] = {}
MAX_MADE = 4096


def made_like(key: Hashable, operands: Sequence[SSAValue],
              build: Callable[[], Operation]) -> Operation:
    """`build()`, or an op equal to the one it would make: `key` names all that the op's
    properties, attributes and result types depend on other than `operands` (which are
    `build`'s operands, in the op's order)."""
    known = _MADE.get(key)
    if known is None:
        op = build()
        if list(op.operands) != list(operands):
            raise AssertionError(f"made_like: {op.name} took its operands in another order")
        if len(_MADE) >= MAX_MADE:
            _MADE.clear()
        _MADE[key] = (type(op), dict(op.properties), dict(op.attributes),
                      tuple(r.type for r in op.results))
        return op
    cls, properties, attributes, results = known
    return cls.create(operands=operands, result_types=results, properties=dict(properties),
                      attributes=dict(attributes))


def cast_op(value: SSAValue, t: Attribute) -> Operation:
    """`builtin.unrealized_conversion_cast` of `value` to `t` (through `made_like`)."""
    return made_like((UnrealizedConversionCastOp, value.type, t), (value,),
                     lambda: UnrealizedConversionCastOp.get([value], [t]))


def constant_op(value: Attribute, t: Attribute) -> Operation:
    """`llvm.mlir.constant` of `value` as `t` (through `made_like`)."""
    return made_like((llvm.ConstantOp, value, t), (), lambda: llvm.ConstantOp(value, t))


class Emitter:
    """Builds the llvm ops that replace one matched op, inserted before it.

    Methods return the SSA value they make, so a lowering reads as a formula:
    `e.select(e.icmp("eq", b, zero), zero, q)`.
    """

    def __init__(self, rewriter: PatternRewriter, op: Operation):
        self.rewriter, self.op = rewriter, op

    # ------------------------------------------------------------------ plumbing

    def emit(self, new: Operation) -> SSAValue:
        self.rewriter.insert(new, InsertPoint.before(self.op))
        return new.results[0]

    def insert(self, new: Operation) -> Operation:
        self.rewriter.insert(new, InsertPoint.before(self.op))
        return new

    def value(self, v: SSAValue) -> SSAValue:
        """`v` as its lowered type: through the cast that made it, or a new cast."""
        target = llvm_type(v.type)
        if v.type == target:
            return v
        owner = v.owner
        if (isinstance(owner, UnrealizedConversionCastOp) and len(owner.inputs) == 1
                and owner.inputs[0].type == target):
            return owner.inputs[0]
        return self.emit(cast_op(v, target))

    def values(self, vs: tuple[SSAValue, ...] | list[SSAValue]) -> list[SSAValue]:
        return [self.value(v) for v in vs]

    def finish(self, *results: SSAValue) -> None:
        """Replace the matched op by `results` (cast back to its result types)."""
        out = []
        for old, new in zip(self.op.results, results, strict=True):
            if new.type != old.type:
                new = self.emit(cast_op(new, old.type))
            out.append(new)
        self.rewriter.replace(self.op, [], out)

    # ------------------------------------------------------------------ constants

    def int_const(self, value: int, t: Attribute = i64) -> SSAValue:
        return self.constant(int_attr(value, t), t)

    def float_const(self, value: float, t: Attribute) -> SSAValue:
        """A constant of the lowered float type `t` (f16, f32 or f64)."""
        return self.constant(FloatAttr(exact_float(value, t), t), t)

    def constant(self, value: Attribute, t: Attribute) -> SSAValue:
        """One `llvm.mlir.constant` per value and block, at the block's start (where it
        dominates every use in the block): a register block's hundred loads would
        otherwise each make their own strides, a few hundred ops for xDSL to build,
        verify and export (LLVM folds them into immediates either way)."""
        return self._once_per_block((value, t), lambda: constant_op(value, t))

    def undef(self, t: Attribute) -> SSAValue:
        """One `llvm.mlir.undef` of type `t` per block, as `constant` shares constants (a
        register block's broadcasts each began with their own)."""
        return self._once_per_block((_UNDEF, t), lambda: llvm.UndefOp(t))

    def _once_per_block(self, key: tuple[Attribute, Attribute],
                        make: Callable[[], Operation]) -> SSAValue:
        """The result of the op `make` builds, made once per block under `key` at the
        block's start."""
        block = self.op.parent_block()
        if block is None:
            return self.emit(make())
        known = _CONSTANTS.setdefault(block, {})
        hit = known.get(key)
        if hit is not None and hit.owner.parent_block() is block:
            return hit
        made = make()
        self.rewriter.insert(made, InsertPoint.at_start(block))
        known[key] = made.results[0]
        return made.results[0]

    def bool_const(self, value: bool) -> SSAValue:
        return self.int_const(int(value), i1)

    # ------------------------------------------------------------------ integer ops

    def binop(self, cls: type[Operation], a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(made_like((cls, a.type, b.type), (a, b),
                                   lambda: cls(a, b)))  # type: ignore[call-arg]

    def icmp(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        def build() -> Operation:
            flag = llvm.ICmpPredicateFlag(predicate)
            return llvm.ICmpOp(a, b, IntegerAttr(flag.to_int(), i64))

        return self.emit(made_like((llvm.ICmpOp, predicate, a.type, b.type), (a, b), build))

    def fcmp(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(llvm.FCmpOp(a, b, predicate))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(made_like((llvm.SelectOp, cond.type, a.type, b.type), (cond, a, b),
                                   lambda: llvm.SelectOp(cond, a, b)))

    def gep(self, base: SSAValue, indices: Sequence[int | SSAValue], pointee: Attribute
            ) -> SSAValue:
        """`getelementptr inbounds` of `base` over `pointee` by `indices` (constants held
        in the op)."""
        pattern = tuple(i if isinstance(i, int) else None for i in indices)
        values = [i for i in indices if not isinstance(i, int)]
        return self.emit(made_like(
            (llvm.GEPOp, pointee, pattern, *(v.type for v in values)), (base, *values),
            lambda: llvm.GEPOp.from_mixed_indices(base, indices, pointee, inbounds=True)))

    def load(self, pointer: SSAValue, t: Attribute, alignment: int | None = None) -> SSAValue:
        return self.emit(made_like((llvm.LoadOp, t, alignment), (pointer,),
                                   lambda: llvm.LoadOp(pointer, t, alignment=alignment)))

    def store(self, value: SSAValue, pointer: SSAValue, alignment: int | None = None,
              nontemporal: bool = False) -> None:
        self.insert(made_like(
            (llvm.StoreOp, value.type, alignment, nontemporal), (value, pointer),
            lambda: llvm.StoreOp(value, pointer, alignment=alignment,
                                 nontemporal=nontemporal)))

    def bitcast(self, v: SSAValue, t: Attribute) -> SSAValue:
        return self.emit(llvm.BitcastOp(v, t))

    def trunc(self, v: SSAValue, t: Attribute) -> SSAValue:
        return self.emit(llvm.TruncOp(v, t))

    def zext(self, v: SSAValue, t: Attribute) -> SSAValue:
        return self.emit(llvm.ZExtOp(v, t))

    def sext(self, v: SSAValue, t: Attribute) -> SSAValue:
        return self.emit(llvm.SExtOp(v, t))

    def intrinsic(self, name: str, args: list[SSAValue], result: Attribute) -> SSAValue:
        """`llvm.call_intrinsic` of a fully mangled intrinsic (`llvm.maximum.f32`)."""
        return self.emit(llvm.CallIntrinsicOp(name, args, [result]))

    # ------------------------------------------------------------------ bf16

    def bf16_bits(self, x: SSAValue) -> SSAValue:
        """The bf16 nearest to the f32 `x` (ties to even), in the high half of an i32; for
        a vector of f32, of each lane, in a vector of i32.

        NaN becomes the quiet NaN 0x7fc0 with x's sign, as ml_dtypes rounds it: chosen by
        `fcmp uno` for a scalar and, as xDSL's compares are scalar, by a mask for a vector
        (`0x7f800000 - |bits|` is negative exactly for a NaN).
        """
        row = x.type if isinstance(x.type, VectorType) else None
        words = VectorType(i32, row.get_shape()) if row is not None else i32

        def k(value: int) -> SSAValue:
            if row is None:
                return self.int_const(value, i32)
            lane = int_attr(value, i32).value.data
            return self.constant(DenseIntOrFPElementsAttr.from_list(
                words, [lane] * words.get_shape()[0]), words)

        def op(cls: type[Operation], a: SSAValue, b: SSAValue) -> SSAValue:
            return self.binop(cls, a, b)

        u = self.bitcast(x, words)
        lsb = op(llvm.AndOp, op(llvm.LShrOp, u, k(16)), k(1))
        bias = op(llvm.AddOp, lsb, k(0x7FFF))
        rounded = op(llvm.AddOp, u, bias)
        sign = op(llvm.AndOp, u, k(0x80000000))
        quiet = op(llvm.OrOp, sign, k(0x7FC00000))
        if row is None:
            bits = self.select(self.fcmp("uno", x, x), quiet, rounded)
        else:
            magnitude = op(llvm.AndOp, u, k(0x7FFFFFFF))
            nan = op(llvm.AShrOp, op(llvm.SubOp, k(0x7F800000), magnitude), k(31))
            bits = op(llvm.OrOp, op(llvm.AndOp, nan, quiet),
                      op(llvm.AndOp, op(llvm.XOrOp, nan, k(-1)), rounded))
        return op(llvm.AndOp, bits, k(0xFFFF0000))

    def round_bf16(self, x: SSAValue) -> SSAValue:
        """The f32 `x` rounded to bf16 precision (still an f32)."""
        return self.bitcast(self.bf16_bits(x), f32)

    def bf16_from_i16(self, bits: SSAValue) -> SSAValue:
        wide = self.zext(bits, i32)
        return self.bitcast(self.binop(llvm.ShlOp, wide, self.int_const(16, i32)), f32)

    def bf16_to_i16(self, x: SSAValue) -> SSAValue:
        """The bits of a lowered bf16 (an f32 that holds a bf16 exactly: its high half)."""
        high = self.binop(llvm.LShrOp, self.bitcast(x, i32), self.int_const(16, i32))
        return self.trunc(high, i16)


__all__ = [
    "ARG_TYPES_ATTR",
    "KERNEL_ATTR",
    "NO_UNROLL_ATTR",
    "PTR",
    "SMALL_ATTR",
    "WRITTEN_ATTR",
    "Emitter",
    "LLVMLoweringError",
    "byte_size",
    "cast_op",
    "constant_index",
    "constant_op",
    "exact_float",
    "float_width",
    "int_width",
    "llvm_type",
    "made_like",
    "memory_type",
]
