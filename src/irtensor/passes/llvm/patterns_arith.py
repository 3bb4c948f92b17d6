"""`arith` -> `llvm` patterns of `convert-to-llvm`, with numpy's meaning kept.

Where LLVM leaves a case undefined that numpy defines, the lowering spells
numpy's answer out (constant operands let LLVM fold the guards away):

- integer division and remainder by 0 give 0, and `INT_MIN / -1` wraps to
  `INT_MIN` (LLVM's `sdiv` would trap on both);
- shifts by the bit width or more give 0 (or -1 for a negative `shrsi`);
- `fptosi` of NaN, of an infinity or of a value out of range gives `INT_MIN`,
  what numpy's `astype` gives on x86 (`llvm.fptosi.sat` plus a select);
- `maximumf`/`minimumf` propagate NaN and, on ties (-0.0 vs 0.0), return what
  `np.maximum` returns: the second operand, but the first for f16.

bf16 arithmetic computes in f32 and rounds to bf16 after each op; f16 converts
through f32 wherever a direct conversion would need a runtime library call the
JIT cannot resolve (f64 -> f16 rounds to odd in f32 first, so it rounds once).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    VectorType,
    f16,
    f32,
    f64,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from irtensor.passes.llvm.lowering import (
    Emitter,
    LLVMLoweringError,
    constant_index,
    constant_op,
    exact_float,
    int_attr,
    int_width,
    llvm_type,
    made_like,
)

# --------------------------------------------------------------------------- helpers


def fast_math_of(op: Operation, contract: bool) -> llvm.FastMathAttr:
    """The op's own arith fast-math flags (as llvm flags), plus `contract` if asked."""
    flags = getattr(op, "fastmath", None)
    names = {f.value for f in flags.data} if isinstance(flags, arith.FastMathFlagsAttr) else set()
    if contract:
        names.add("contract")
    return llvm.FastMathAttr([llvm.FastMathFlag(n) for n in sorted(names)])


def compute_type(t: Attribute) -> Attribute:
    """The llvm float type arithmetic on `t` runs in (bf16 and f16 both in f32)."""
    return f32 if isinstance(t, BFloat16Type | Float16Type) else t


def to_compute(e: Emitter, v: SSAValue, t: Attribute) -> SSAValue:
    """A lowered float of type `t` as its compute type (f16 is widened)."""
    return e.emit(llvm.FPExtOp(v, f32)) if isinstance(t, Float16Type) else v


def from_compute(e: Emitter, v: SSAValue, t: Attribute) -> SSAValue:
    """An f32/f64 result rounded back to the lowered form of `t`."""
    if isinstance(t, BFloat16Type):
        return e.round_bf16(v)
    if isinstance(t, Float16Type):
        return e.emit(llvm.FPTruncOp(v, f16))
    return v


def f64_to_f32_odd(e: Emitter, d: SSAValue) -> SSAValue:
    """d rounded to f32 *to odd*: an inexact result gets its last bit set, so rounding
    it again to a narrower type (f16) rounds as if from d itself."""
    t = e.emit(llvm.FPTruncOp(d, f32))
    back = e.emit(llvm.FPExtOp(t, f64))
    inexact = e.fcmp("one", back, d)
    bits = e.bitcast(t, i32)
    above = e.fcmp("ogt", e.emit(llvm.FAbsOp(back, f64)), e.emit(llvm.FAbsOp(d, f64)))
    truncated = e.select(above, e.binop(llvm.SubOp, bits, e.int_const(1, i32)), bits)
    odd = e.binop(llvm.OrOp, truncated, e.int_const(1, i32))
    return e.bitcast(e.select(inexact, odd, bits), f32)


def convert_float(e: Emitter, v: SSAValue, src: Attribute, dst: Attribute) -> SSAValue:
    """A lowered float of builtin type `src` as a lowered float of type `dst`."""
    if src == dst:
        return v
    if isinstance(src, Float16Type):  # every f16 is exact in f32
        v, src = e.emit(llvm.FPExtOp(v, f32)), f32
    elif isinstance(src, BFloat16Type):  # already an f32
        src = f32
    if src == dst:
        return v
    if isinstance(dst, Float64Type):
        return e.emit(llvm.FPExtOp(v, f64))
    if dst == f32:
        return e.emit(llvm.FPTruncOp(v, f32))
    if src == f64:  # one rounding from the f64, as numpy and ml_dtypes round
        v = f64_to_f32_odd(e, v)
    if isinstance(dst, BFloat16Type):
        return e.round_bf16(v)
    assert isinstance(dst, Float16Type), dst
    return e.emit(llvm.FPTruncOp(v, f16))


def i64_to_f64_sticky(e: Emitter, v: SSAValue) -> SSAValue:
    """An i64 as an f64 that rounds to f32 and narrower types as `v` itself does.

    Beyond 2**53 the low 12 bits are replaced by one sticky bit (2048 if any was set):
    the result is exact in f64, and every rounding to 24 bits or fewer sees the same
    kept, guard and sticky bits as it would in `v`.
    """
    low = e.binop(llvm.AndOp, v, e.int_const(0xFFF))
    high = e.emit(llvm.SIToFPOp(e.binop(llvm.SubOp, v, low), f64))
    sticky = e.select(e.icmp("ne", low, e.int_const(0)), e.float_const(2048.0, f64),
                      e.float_const(0.0, f64))
    compressed = e.emit(llvm.FAddOp(high, sticky))
    shifted = e.binop(llvm.AddOp, v, e.int_const(1 << 53))
    small = e.icmp("ule", shifted, e.int_const(1 << 54))
    return e.select(small, e.emit(llvm.SIToFPOp(v, f64)), compressed)


def signed_to_float(e: Emitter, v: SSAValue, target: Attribute, narrow: bool) -> SSAValue:
    """sitofp; for a narrow (f16/bf16) result an f64 whose later rounding is exact."""
    if narrow and int_width(v.type) == 64:
        return i64_to_f64_sticky(e, v)
    return e.emit(llvm.SIToFPOp(v, target))


def unsigned_i64_to_float(e: Emitter, v: SSAValue, target: Attribute,
                          narrow: bool = False) -> SSAValue:
    """uitofp of an i64: halve a value with the top bit set (keeping its last bit as a
    sticky bit), convert, double."""
    negative = e.icmp("slt", v, e.int_const(0))
    halved = e.binop(llvm.OrOp, e.binop(llvm.LShrOp, v, e.int_const(1)),
                     e.binop(llvm.AndOp, v, e.int_const(1)))
    half = signed_to_float(e, halved, target, narrow)
    big = e.emit(llvm.FAddOp(half, half))
    return e.select(negative, big, signed_to_float(e, v, target, narrow))


def int_to_float(e: Emitter, v: SSAValue, dst: Attribute, signed: bool) -> SSAValue:
    """An integer as a float of type `dst`, rounded once (to f16/bf16 through an f64 that
    holds the integer, or its sticky form, rounded to f32 *to odd*)."""
    narrow = isinstance(dst, BFloat16Type | Float16Type)
    target = f64 if narrow or isinstance(dst, Float64Type) else f32
    width = int_width(v.type)
    if signed:
        result = signed_to_float(e, v, target, narrow)
    elif width < 64:
        result = e.emit(llvm.SIToFPOp(e.zext(v, i64), target))
    else:
        result = unsigned_i64_to_float(e, v, target, narrow)
    if narrow:
        result = f64_to_f32_odd(e, result)
    return from_compute(e, result, dst)


def float_to_int(e: Emitter, v: SSAValue, src: Attribute, dst: Attribute, signed: bool
                 ) -> SSAValue:
    v = to_compute(e, v, src)
    src = compute_type(src)
    width = int_width(dst)
    kind = "s" if signed else "u"
    suffix = "f64" if isinstance(src, Float64Type) else "f32"
    result = e.intrinsic(f"llvm.fpto{kind}i.sat.i{width}.{suffix}", [v], dst)
    if signed and width in (32, 64):  # numpy on x86: NaN and out of range give INT_MIN
        low = e.float_const(-(2.0 ** (width - 1)), src)
        high = e.float_const(2.0 ** (width - 1), src)
        inside = e.binop(llvm.AndOp, e.fcmp("oge", v, low), e.fcmp("olt", v, high))
        result = e.select(inside, result, e.int_const(-(1 << (width - 1)), dst))
    return result


# --------------------------------------------------------------------------- constants


class ConstantToLLVM(RewritePattern):
    """arith.constant -> llvm.mlir.constant (floats rounded to their type; bf16 as f32)."""

    op_types = (arith.ConstantOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        t = op.result.type
        lowered = llvm_type(t)
        value = op.value
        if isinstance(value, IntegerAttr):  # in place, keeping its name
            e.finish(e.emit(constant_op(int_attr(value.value.data, lowered), lowered)))
        elif isinstance(value, FloatAttr):
            attr = FloatAttr(exact_float(value.value.data, t), lowered)
            e.finish(e.emit(constant_op(attr, lowered)))
        else:
            raise LLVMLoweringError(f"convert-to-llvm: cannot lower the constant {value} "
                                    "(only scalar integer and float constants)")


# --------------------------------------------------------------------------- floats

FLOAT_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
}


@dataclass
class FloatBinaryToLLVM(RewritePattern):
    """addf subf mulf divf -> fadd fsub fmul fdiv (bf16: in f32, then rounded)."""

    op_types = tuple(FLOAT_BINARY)

    contract: bool = False

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        new = FLOAT_BINARY.get(type(op))
        if new is None:
            return
        e = Emitter(rewriter, op)
        a, b = e.values(op.operands)
        result = e.emit(made_like(
            (new, a.type, b.type, getattr(op, "fastmath", None), self.contract), (a, b),
            lambda: new(a, b, fast_math=fast_math_of(op, self.contract))))  # type: ignore[call-arg]
        t = op.results[0].type
        e.finish(e.round_bf16(result) if isinstance(t, BFloat16Type) else result)


class NegfToLLVM(RewritePattern):
    """negf -> fneg (exact in every type)."""

    op_types = (arith.NegfOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.NegfOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        e.finish(e.emit(llvm.FNegOp(e.value(op.operand))))


class MaxMinFToLLVM(RewritePattern):
    """maximumf/minimumf -> fcmp + select, as np.maximum/np.minimum: NaN propagates;
    on equal operands the second is returned (the first for f16)."""

    op_types = (arith.MaximumfOp, arith.MinimumfOp)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.MaximumfOp | arith.MinimumfOp,
                          rewriter: PatternRewriter) -> None:
        if isinstance(op.result.type, VectorType):
            return  # a register block's row: patterns_vector.VectorMaxMinFToLLVM
        e = Emitter(rewriter, op)
        a, b = e.values(op.operands)
        is_max = isinstance(op, arith.MaximumfOp)
        if isinstance(op.result.type, Float16Type):
            predicate = "oge" if is_max else "ole"
        else:
            predicate = "ogt" if is_max else "olt"
        keep_a = e.binop(llvm.OrOp, e.fcmp(predicate, a, b), e.fcmp("uno", a, a))
        e.finish(e.select(keep_a, a, b))


class MaxMinNumFToLLVM(RewritePattern):
    """maxnumf/minnumf -> llvm.maxnum/llvm.minnum (a NaN operand is ignored)."""

    op_types = (arith.MaxnumfOp, arith.MinnumfOp)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.MaxnumfOp | arith.MinnumfOp,
                          rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        a, b = e.values(op.operands)
        name = "maxnum" if isinstance(op, arith.MaxnumfOp) else "minnum"
        t = a.type
        suffix = {f16: "f16", f32: "f32", f64: "f64"}[t]
        e.finish(e.intrinsic(f"llvm.{name}.{suffix}", [a, b], t))


class CmpfToLLVM(RewritePattern):
    """cmpf -> fcmp (same predicate numbering); `false`/`true` become constants."""

    op_types = (arith.CmpfOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpfOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        predicate = op.predicate.value.data
        if predicate in (0, 15):
            e.finish(e.bool_const(predicate == 15))
            return
        a, b = e.values(op.operands)
        flag = list(llvm.FCmpPredicateFlag)[predicate]
        e.finish(e.fcmp(flag.value, a, b))


# --------------------------------------------------------------------------- integers

INT_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
}


class IntBinaryToLLVM(RewritePattern):
    """addi subi muli andi ori xori -> add sub mul and or xor (wrapping, as numpy)."""

    op_types = tuple(INT_BINARY)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        new = INT_BINARY.get(type(op))
        if new is None:
            return
        e = Emitter(rewriter, op)
        e.finish(e.binop(new, *e.values(op.operands)))


SHIFTS: dict[type[Operation], type[Operation]] = {
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRUIOp: llvm.LShrOp,
    arith.ShRSIOp: llvm.AShrOp,
}


class ShiftToLLVM(RewritePattern):
    """shli shrui shrsi -> shl lshr ashr; a shift by >= the width gives what numpy gives
    (0, or -1 for a negative value shifted right arithmetically)."""

    op_types = tuple(SHIFTS)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        new = SHIFTS.get(type(op))
        if new is None:
            return
        e = Emitter(rewriter, op)
        a, b = e.values(op.operands)
        width = int_width(a.type)
        zero = e.int_const(0, a.type)
        inside = e.icmp("ult", b, e.int_const(width, a.type))
        shifted = e.binop(new, a, e.select(inside, b, zero))
        if new is llvm.AShrOp:
            outside = e.binop(llvm.AShrOp, a, e.int_const(width - 1, a.type))
        else:
            outside = zero
        e.finish(e.select(inside, shifted, outside))


INT_MAX_MIN: dict[type[Operation], str] = {
    arith.MaxSIOp: "sgt",
    arith.MinSIOp: "slt",
    arith.MaxUIOp: "ugt",
    arith.MinUIOp: "ult",
}


class IntMaxMinToLLVM(RewritePattern):
    """maxsi minsi maxui minui -> icmp + select."""

    op_types = tuple(INT_MAX_MIN)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        predicate = INT_MAX_MIN.get(type(op))
        if predicate is None:
            return
        e = Emitter(rewriter, op)
        a, b = e.values(op.operands)
        e.finish(e.select(e.icmp(predicate, a, b), a, b))


SIGNED_DIVISIONS = (arith.DivSIOp, arith.FloorDivSIOp, arith.CeilDivSIOp, arith.RemSIOp)


class SignedDivisionToLLVM(RewritePattern):
    """divsi floordivsi ceildivsi remsi -> sdiv/srem with the adjustments; b == 0 gives 0
    and b == -1 is computed without dividing (`INT_MIN / -1` wraps)."""

    op_types = SIGNED_DIVISIONS

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, SIGNED_DIVISIONS):
            return
        e = Emitter(rewriter, op)
        a, b = e.values(op.operands)
        t = a.type
        if (divisor := constant_index(op.operands[1])) is not None and divisor > 0:
            e.finish(_divide_by_positive(e, op, a, b))
            return
        zero, one = e.int_const(0, t), e.int_const(1, t)
        by_zero = e.icmp("eq", b, zero)
        by_minus_one = e.icmp("eq", b, e.int_const(-1, t))
        safe = e.select(e.binop(llvm.OrOp, by_zero, by_minus_one), one, b)
        remainder = e.binop(llvm.SRemOp, a, safe)  # 0 when b is 0 or -1
        if isinstance(op, arith.RemSIOp):
            e.finish(remainder)
            return
        quotient = e.binop(llvm.SDivOp, a, safe)
        inexact = e.icmp("ne", remainder, zero)
        signs_differ = e.icmp("slt", e.binop(llvm.XOrOp, remainder, safe), zero)
        if isinstance(op, arith.FloorDivSIOp):  # round toward -inf
            down = e.binop(llvm.AndOp, inexact, signs_differ)
            quotient = e.binop(llvm.SubOp, quotient, e.zext(down, t))
        elif isinstance(op, arith.CeilDivSIOp):  # round toward +inf
            up = e.binop(llvm.AndOp, inexact, e.binop(llvm.XOrOp, signs_differ,
                                                      e.bool_const(True)))
            quotient = e.binop(llvm.AddOp, quotient, e.zext(up, t))
        quotient = e.select(by_minus_one, e.binop(llvm.SubOp, zero, a), quotient)
        e.finish(e.select(by_zero, zero, quotient))


def _divide_by_positive(e: Emitter, op: Operation, a: SSAValue, b: SSAValue) -> SSAValue:
    """`op` by a divisor known positive (an index's `floordiv 16`): no zero or -1 to
    guard, and the remainder's sign alone says which way to round (4 ops against 17; a
    conv kernel's indices hold dozens)."""
    zero = e.int_const(0, a.type)
    if isinstance(op, arith.RemSIOp):
        return e.binop(llvm.SRemOp, a, b)
    quotient = e.binop(llvm.SDivOp, a, b)
    if isinstance(op, arith.DivSIOp):
        return quotient
    remainder = e.binop(llvm.SRemOp, a, b)
    if isinstance(op, arith.FloorDivSIOp):
        return e.binop(llvm.SubOp, quotient, e.zext(e.icmp("slt", remainder, zero), a.type))
    return e.binop(llvm.AddOp, quotient, e.zext(e.icmp("sgt", remainder, zero), a.type))


class UnsignedDivisionToLLVM(RewritePattern):
    """divui remui -> udiv urem; b == 0 gives 0."""

    op_types = (arith.DivUIOp, arith.RemUIOp)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.DivUIOp | arith.RemUIOp,
                          rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        a, b = e.values(op.operands)
        zero = e.int_const(0, a.type)
        by_zero = e.icmp("eq", b, zero)
        safe = e.select(by_zero, e.int_const(1, a.type), b)
        if isinstance(op, arith.RemUIOp):
            e.finish(e.binop(llvm.URemOp, a, safe))
        else:
            e.finish(e.select(by_zero, zero, e.binop(llvm.UDivOp, a, safe)))


class CmpiToLLVM(RewritePattern):
    """cmpi -> icmp (arith and llvm number the predicates alike)."""

    op_types = (arith.CmpiOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpiOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        a, b = e.values(op.operands)
        flag = list(llvm.ICmpPredicateFlag)[op.predicate.value.data]
        e.finish(e.icmp(flag.value, a, b))


class SelectToLLVM(RewritePattern):
    """select -> llvm.select."""

    op_types = (arith.SelectOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        cond, a, b = e.values(op.operands)
        e.finish(e.select(cond, a, b))


# --------------------------------------------------------------------------- casts


class FloatCastToLLVM(RewritePattern):
    """extf truncf -> fpext fptrunc, or the bf16 rounding, or f64 -> f16 through f32
    rounded to odd."""

    op_types = (arith.ExtFOp, arith.TruncFOp)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ExtFOp | arith.TruncFOp,
                          rewriter: PatternRewriter) -> None:
        if isinstance(op.input.type, VectorType):
            return  # a register block's row: patterns_vector.VectorExtFToLLVM
        e = Emitter(rewriter, op)
        e.finish(convert_float(e, e.value(op.input), op.input.type, op.result.type))


class IntToFloatToLLVM(RewritePattern):
    """sitofp uitofp -> sitofp (to f32 or f64, then rounded to f16/bf16); unsigned
    values zero-extend first (an i64 is halved and doubled)."""

    op_types = (arith.SIToFPOp, arith.UIToFPOp)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SIToFPOp | arith.UIToFPOp,
                          rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        signed = isinstance(op, arith.SIToFPOp)
        e.finish(int_to_float(e, e.value(op.input), op.result.type, signed))


class FloatToIntToLLVM(RewritePattern):
    """fptosi fptoui -> llvm.fptosi.sat / llvm.fptoui.sat (+ numpy's INT_MIN for
    NaN and out-of-range values in fptosi)."""

    op_types = (arith.FPToSIOp, arith.FPToUIOp)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.FPToSIOp | arith.FPToUIOp,
                          rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        signed = isinstance(op, arith.FPToSIOp)
        result = float_to_int(e, e.value(op.input), op.input.type, op.result.type, signed)
        e.finish(result)


INT_CASTS = (arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp, arith.IndexCastOp)


class IntCastToLLVM(RewritePattern):
    """extsi extui trunci index_cast -> sext zext trunc (index is i64)."""

    op_types = INT_CASTS

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, INT_CASTS):
            return
        e = Emitter(rewriter, op)
        v = e.value(op.operands[0])
        target = llvm_type(op.results[0].type)
        src, dst = int_width(v.type), int_width(target)
        if src == dst:
            e.finish(v)
        elif src > dst:
            e.finish(e.trunc(v, target))
        elif isinstance(op, arith.ExtUIOp):
            e.finish(e.zext(v, target))
        else:
            e.finish(e.sext(v, target))


class BitcastToLLVM(RewritePattern):
    """arith.bitcast -> llvm.bitcast (bf16 <-> i16 through the bf16 bits)."""

    op_types = (arith.BitcastOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.BitcastOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        v = e.value(op.input)
        src, dst = op.input.type, op.result.type
        if isinstance(src, BFloat16Type):
            e.finish(e.bf16_to_i16(v) if dst == i16 else e.bitcast(e.bf16_to_i16(v), dst))
        elif isinstance(dst, BFloat16Type):
            bits = v if src == i16 else e.bitcast(v, i16)
            e.finish(e.bf16_from_i16(bits))
        else:
            e.finish(e.bitcast(v, llvm_type(dst)))


def arith_patterns(contract: bool = False) -> list[RewritePattern]:
    return [
        ConstantToLLVM(), FloatBinaryToLLVM(contract), NegfToLLVM(), MaxMinFToLLVM(),
        MaxMinNumFToLLVM(), CmpfToLLVM(), IntBinaryToLLVM(), ShiftToLLVM(),
        IntMaxMinToLLVM(), SignedDivisionToLLVM(), UnsignedDivisionToLLVM(), CmpiToLLVM(),
        SelectToLLVM(), FloatCastToLLVM(), IntToFloatToLLVM(), FloatToIntToLLVM(),
        IntCastToLLVM(), BitcastToLLVM(),
    ]


__all__ = ["arith_patterns", "convert_float", "from_compute", "to_compute"]
