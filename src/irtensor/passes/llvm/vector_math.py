"""Vector math for `convert-to-llvm`: exp2, exp, log2, log, sin and cos on f32, and
exp2, exp, log2, log on f64, as plain LLVM arithmetic.

LLVM's own `llvm.exp2.f32` & co. vectorize to `llvm.exp2.v16f32`, which the x86
backend scalarizes into one libm call per lane: slow to compile and about 3 ns
per element. The functions here are polynomials with branch-free special cases
(selects) and integer bit tricks through bitcasts, so the loop vectorizer turns
them into AVX-512 (or whatever the host has) like any other arithmetic.

Largest error from the exact result, f32 over all 2^32 inputs: exp2 0.88 ulp,
exp 0.90, log2 0.95, log 0.82, sin 0.502, cos 0.501; f64 (sampled, against long
double): exp2 0.88, exp 0.87, log2 0.69, log 0.64.

- `exp2`, `exp`: reduce to `2^n * p(r)`, `|r| <= 1/2` (exp: Cody-Waite with a
  two-part ln 2, the first FMA step exact), a polynomial in FMA Horner form
  (f32: degree-6 minimax; f64: Taylor to r^13), then scale by 2^n in two steps,
  the first exact, so a subnormal result is rounded once. Overflow gives inf,
  underflow 0, NaN stays NaN.
- `log2`, `log`: scale subnormals into the normals, split `x = 2^e * m` with `m`
  in [sqrt(1/2), sqrt(2)), `f = m - 1` (exact). f32: `log(1+f) = f*C + f^2 q(f)`
  with a degree-9 minimax `q`; f64: fdlibm's `s = f/(2+f)` form. Leading
  products are kept with their exact rounding error (FMA) and the sum with `e`
  is a Fast2Sum, so the result rounds about once. log(0) = -inf,
  log(x < 0) = NaN, log(inf) = inf.
- `sin`, `cos` (f32): computed in f64 and rounded once. `k = round(x * 2/pi)`
  and `r = x - k*pi/2` by Cody-Waite with a three-part f64 pi/2 (exact products
  in FMA), then Taylor polynomials of sin and cos on [-pi/4, pi/4] picked and
  signed by `k mod 4`. The reduction is accurate while `|x| < 2^50`; beyond it
  (and the f32 range goes to 2^128) an exact table-free Payne-Hanek reduction
  takes over: `x * 2/pi mod 4` summed from the five 24-bit pieces of 2/pi that
  matter for x's exponent (picked by selects), every product exact, the sum
  exact or double-double. inf and NaN give NaN.

The f32 polynomial coefficients are minimax fits (Lawson's iteration) rounded to
f32 one coefficient at a time, the later ones refitted after each rounding.

Everything uses `llvm.fma` where a fused multiply-add keeps the result exact or
more accurate; a host without FMA would call libm's `fma` per lane (still
correct, not fast). f64 sin and cos keep LLVM's intrinsics (libm, scalar): a
vector f64 reduction needs more than f64 products can hold exactly.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import llvm, math
from xdsl.dialects.builtin import f32, f64, i32, i64
from xdsl.ir import Attribute, Block, Operation, SSAValue

from irtensor.passes.llvm.lowering import Emitter

V = SSAValue

# 2^r = 1 + r*q(r) on [-1/2, 1/2]; relative error 2^-28.3 with these f32 coefficients
EXP2_Q = (0.6931471824645996, 0.24022647738456726, 0.05550359562039375,
          0.009618496522307396, 0.001339097274467349, 0.0001533075701445341)
# e^r = 1 + r*q(r) on [-ln2/2, ln2/2] (1% wider); relative error 2^-28.1
EXP_Q = (1.0, 0.4999999403953552, 0.16666516661643982, 0.041668280959129333,
         0.008369247429072857, 0.0013820824678987265)
# log2(1+f) = f/ln2 + f^2 q(f), f in [sqrt(1/2)-1, sqrt(2)-1]; relative error 2^-30.2
LOG2_Q = (-0.7213475108146667, 0.48089808225631714, -0.36067456007003784,
          0.28856807947158813, -0.2404514104127884, 0.20516027510166168,
          -0.17916910350322723, 0.17155613005161285, -0.16760939359664917,
          0.09641316533088684)
# log(1+f) = f + f^2 q(f) on the same interval; relative error 2^-30.3
LOG_Q = (-0.5, 0.3333331346511841, -0.25000008940696716, 0.2000207155942917,
         -0.16667994856834412, 0.14220371842384338, -0.12406095117330551,
         0.11883232742547989, -0.11670876294374466, 0.06751080602407455)

# 2^r and e^r on the same intervals in f64: Taylor to r^13 (relative error 2^-57.8)
EXP2_Q64 = (0.6931471805599453, 0.24022650695910072, 0.05550410866482158,
            0.009618129107628477, 0.0013333558146428443, 0.0001540353039338161,
            1.5252733804059841e-05, 1.321548679014431e-06, 1.01780860092397e-07,
            7.054911620801123e-09, 4.4455382718708116e-10, 2.5678435993488206e-11,
            1.3691488853904128e-12)
EXP_Q64 = (1.0, 0.5, 0.16666666666666666, 0.041666666666666664, 0.008333333333333333,
           0.001388888888888889, 0.0001984126984126984, 2.48015873015873e-05,
           2.7557319223985893e-06, 2.755731922398589e-07, 2.505210838544172e-08,
           2.08767569878681e-09, 1.6059043836821613e-10)
LN2_HI64, LN2_LO64 = 0.6931471805599453, 2.3190468138462996e-17  # ln 2 = hi + lo (f64)

# fdlibm's log: R(z) = z (Lg1 + w (Lg3 + w (Lg5 + w Lg7))) + w (Lg2 + w (Lg4 + w Lg6)),
# w = z^2, a minimax fit for s^2 = z <= 0.0295 with error under 2^-58.45
LG_ODD = (6.666666666666735130e-01, 2.857142874366239149e-01, 1.818357216161805012e-01,
          1.479819860511658591e-01)
LG_EVEN = (3.999999999940941908e-01, 2.222219843214978396e-01, 1.531383769920937332e-01)
LN2_HI_FDLIBM, LN2_LO_FDLIBM = 6.93147180369123816490e-01, 1.90821492927058770002e-10
INV_LN2_HI64, INV_LN2_LO64 = 1.4426950408889634, 2.0355273740931033e-17  # 1/ln2 (f64)

INV_LN2_HI, INV_LN2_LO = 1.4426950216293335, 1.925963033500011e-08  # 1/ln 2 = hi + lo
LN2_HI, LN2_LO = 0.6931471824645996, -1.9046542121259336e-09  # ln 2 = hi + lo (f32)
LN2_HI16, LN2_LO16 = 0.693145751953125, 1.428606765330187e-06  # hi has 16 bits: e*hi exact
LOG2_E = 1.4426950408889634

ROUND_F32 = 12582912.0  # 1.5 * 2^23: x + this rounds x to an integer (|x| < 2^22)
ROUND_F64 = 6755399441055744.0  # 1.5 * 2^52
SQRT_HALF_BITS = 0x3F3504F3  # the f32 bits of sqrt(1/2)
MIN_NORMAL = 1.1754943508222875e-38  # 2^-126

TWO_OVER_PI = 0.6366197723675814
PIO2 = (1.5707963267948966, 6.123233995736766e-17, -1.4973849048591698e-33)  # pi/2 in f64 parts
CODY_WAITE_LIMIT = 2.0**50  # |x| below this: the three-part reduction is accurate
# 2/pi = sum of TWO_OVER_PI_24[j] * 2^(-24 (j + 1)): enough pieces for x < 2^128
TWO_OVER_PI_24 = (0xA2F983, 0x6E4E44, 0x1529FC, 0x2757D1, 0xF534DD, 0xC0DB62, 0x95993C,
                  0x439041, 0xFE5163)
# sin r = r + r^3 S(r^2), cos r = 1 + r^2 C(r^2) on [-pi/4, pi/4]: Taylor to r^11 and
# r^12, relative error under 2^-36 (the f32 result needs 2^-30)
SIN_S = tuple((-1) ** (k + 1) / _f for k, _f in enumerate(
    (6.0, 120.0, 5040.0, 362880.0, 39916800.0)))
COS_C = tuple((-1) ** (k + 1) / _f for k, _f in enumerate(
    (2.0, 24.0, 720.0, 40320.0, 3628800.0, 479001600.0)))


class QuietEmitter(Emitter):
    """An `Emitter` that puts its ops straight into the block, without telling the
    rewriter. They are all llvm ops, which no pattern rewrites; told, the rewrite
    walker would try every pattern on each of them (a sin is some 150 ops): about a
    sixth of the lowering time of a kernel with sin."""

    def emit(self, new: Operation) -> SSAValue:
        return self.insert(new).results[0]

    def insert(self, new: Operation) -> Operation:
        block = self.op.parent_block()
        assert block is not None
        block.insert_op_before(new, self.op)
        return new


# Constants of each function, made once at the start of its entry block: every math op
# of a kernel shares them, so xDSL builds fewer ops.
_POOLS: weakref.WeakKeyDictionary[Block, dict[tuple[str, object, float | int], V]] = (
    weakref.WeakKeyDictionary())


def _entry_block(op: Operation) -> Block | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, llvm.FuncOp):
        parent = parent.parent_op()
    return parent.body.blocks[0] if parent is not None and parent.body.blocks else None


class Floats:
    """Float arithmetic of one type on an `Emitter`, so the algorithms read as formulas."""

    def __init__(self, e: Emitter, t: Attribute):
        self.e, self.t = e, t
        self.int_t = i32 if t == f32 else i64
        self.entry = _entry_block(e.op)
        self.pool = _POOLS.setdefault(self.entry, {}) if self.entry is not None else {}

    def _constant(self, key: tuple[str, object, float | int], make: Callable[[], V]) -> V:
        known = self.pool.get(key)
        if known is not None and known.owner.parent is self.entry:  # type: ignore[union-attr]
            return known
        value = make()
        if self.entry is not None:  # made before the matched op, moved to the top
            constant = value.owner
            assert isinstance(constant, Operation)
            constant.detach()
            first = self.entry.first_op
            if first is None:
                self.entry.add_op(constant)
            else:
                self.entry.insert_op_before(constant, first)
        self.pool[key] = value
        return value

    def c(self, value: float) -> V:
        return self._constant(("f", self.t, value), lambda: self.e.float_const(value, self.t))

    def i(self, value: int) -> V:
        return self._constant(("i", self.int_t, value),
                              lambda: self.e.int_const(value, self.int_t))

    def add(self, a: V, b: V) -> V:
        return self.e.emit(llvm.FAddOp(a, b))

    def sub(self, a: V, b: V) -> V:
        return self.e.emit(llvm.FSubOp(a, b))

    def mul(self, a: V, b: V) -> V:
        return self.e.emit(llvm.FMulOp(a, b))

    def fma(self, a: V, b: V, c: V) -> V:
        return self.e.emit(llvm.FMAOp(a, b, c))

    def neg(self, a: V) -> V:
        return self.e.emit(llvm.FNegOp(a))

    def horner(self, x: V, coefficients: tuple[float, ...]) -> V:
        """c0 + x*(c1 + x*(c2 + ...)) with one FMA per step."""
        acc = self.c(coefficients[-1])
        for coefficient in reversed(coefficients[:-1]):
            acc = self.fma(acc, x, self.c(coefficient))
        return acc

    def select_gt(self, x: V, bound: float, value: float) -> V:
        return self.e.select(self.e.fcmp("ogt", x, self.c(bound)), self.c(value), x)

    def round_int(self, x: V) -> tuple[V, V]:
        """(round(x) as a float, as an integer), ties to even, by the 1.5 * 2^p trick."""
        magic = ROUND_F32 if self.t == f32 else ROUND_F64
        shifted = self.add(x, self.c(magic))
        rounded = self.sub(shifted, self.c(magic))
        bits = self.e.bitcast(shifted, self.int_t)
        magic_bits = 0x4B400000 if self.t == f32 else 0x4338000000000000
        return rounded, self.e.binop(llvm.SubOp, bits, self.i(magic_bits))

    def fast_two_sum(self, a: V, b: V) -> tuple[V, V]:
        """(s, err) with s + err == a + b exactly, when |a| >= |b| (or a == 0)."""
        s = self.add(a, b)
        return s, self.sub(b, self.sub(s, a))

    def two_sum(self, a: V, b: V) -> tuple[V, V]:
        """(s, err) with s + err == a + b exactly, for any a and b (Knuth)."""
        s = self.add(a, b)
        bb = self.sub(s, a)
        err = self.add(self.sub(a, self.sub(s, bb)), self.sub(b, bb))
        return s, err


# --------------------------------------------------------------------------- exp


@dataclass(frozen=True)
class ExpKind:
    """What exp2 and exp need to know about a float type."""

    bias: int  # exponent bias
    mantissa: int  # stored mantissa bits
    exp2_range: tuple[float, float]  # below: 2^x rounds to 0; above: to inf
    exp_range: tuple[float, float]
    exp2_q: tuple[float, ...]
    exp_q: tuple[float, ...]
    ln2: tuple[float, float]  # ln 2 = hi + lo


EXP_KINDS = {
    "f32": ExpKind(127, 23, (-151.0, 129.0), (-104.0, 89.0), EXP2_Q, EXP_Q,
                   (LN2_HI, LN2_LO)),
    "f64": ExpKind(1023, 52, (-1076.0, 1025.0), (-746.0, 710.0), EXP2_Q64, EXP_Q64,
                   (LN2_HI64, LN2_LO64)),
}


def _pow2(fl: Floats, kind: ExpKind, n: V) -> V:
    """2^n for an integer n in the normal exponent range: the exponent field."""
    biased = fl.e.binop(llvm.AddOp, n, fl.i(kind.bias))
    return fl.e.bitcast(fl.e.binop(llvm.ShlOp, biased, fl.i(kind.mantissa)), fl.t)


def ldexp(fl: Floats, kind: ExpKind, p: V, n: V) -> V:
    """p * 2^n for p in [1/2, 2) and n from just below the subnormals to just above the
    largest exponent: two scalings by 2^(n/2), the first exact, so a subnormal (or
    infinite) result is rounded once."""
    e = fl.e
    half = e.binop(llvm.AShrOp, n, fl.i(1))
    rest = e.binop(llvm.SubOp, n, half)
    return fl.mul(fl.mul(p, _pow2(fl, kind, half)), _pow2(fl, kind, rest))


def _clamp(fl: Floats, x: V, bounds: tuple[float, float]) -> V:
    """x clamped to the bounds, NaN left as it is (both compares are false for it): one
    max and one min on x86, and no select at the end."""
    e = fl.e
    low = e.select(e.fcmp("olt", x, fl.c(bounds[0])), fl.c(bounds[0]), x)
    return fl.select_gt(low, bounds[1], bounds[1])


def exp2(e: Emitter, x: V) -> V:
    """2^x (f32 or f64): x = n + r, |r| <= 1/2 (exact), 2^r = 1 + r q(r), then ldexp."""
    fl = Floats(e, x.type)
    kind = EXP_KINDS[str(x.type)]
    xc = _clamp(fl, x, kind.exp2_range)
    nf, n = fl.round_int(xc)
    r = fl.sub(xc, nf)
    p = fl.fma(r, fl.horner(r, kind.exp2_q), fl.c(1.0))
    return ldexp(fl, kind, p, n)  # NaN: r and p are NaN, and so is p times any scale


def exp(e: Emitter, x: V) -> V:
    """e^x (f32 or f64): n = round(x / ln 2), r = x - n ln2 (Cody-Waite: the first FMA
    step is exact), e^r = 1 + r q(r), then ldexp."""
    fl = Floats(e, x.type)
    kind = EXP_KINDS[str(x.type)]
    xc = _clamp(fl, x, kind.exp_range)
    nf, n = fl.round_int(fl.mul(xc, fl.c(LOG2_E)))
    r = fl.fma(fl.neg(nf), fl.c(kind.ln2[0]), xc)
    r = fl.fma(fl.neg(nf), fl.c(kind.ln2[1]), r)
    p = fl.fma(r, fl.horner(r, kind.exp_q), fl.c(1.0))
    return ldexp(fl, kind, p, n)  # NaN: r and p are NaN, and so is p times any scale


# --------------------------------------------------------------------------- log


@dataclass(frozen=True)
class LogKind:
    """What log2 and log need to know about a float type."""

    mantissa: int  # stored mantissa bits
    min_normal: float
    sqrt_half_bits: int  # the bits of sqrt(1/2)


LOG_KINDS = {
    "f32": LogKind(23, MIN_NORMAL, 0x3F3504F3),
    "f64": LogKind(52, 2.0**-1022, 0x3FE6A09E667F3BCD),
}


def _log_split(fl: Floats, x: V) -> tuple[V, V]:
    """(e as a float, f) with x = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt(2)); a
    subnormal x is scaled into the normals first. Only meaningful for finite x > 0."""
    e, kind = fl.e, LOG_KINDS[str(fl.t)]
    tiny = e.fcmp("olt", x, fl.c(kind.min_normal))
    scaled = e.select(tiny, fl.mul(x, fl.c(2.0**kind.mantissa)), x)
    bits = e.bitcast(scaled, fl.int_t)
    exponent = e.binop(llvm.AShrOp, e.binop(llvm.SubOp, bits, fl.i(kind.sqrt_half_bits)),
                       fl.i(kind.mantissa))
    shifted = e.binop(llvm.ShlOp, exponent, fl.i(kind.mantissa))
    mantissa = e.bitcast(e.binop(llvm.SubOp, bits, shifted), fl.t)
    exponent = e.binop(llvm.SubOp, exponent, e.select(tiny, fl.i(kind.mantissa), fl.i(0)))
    f = fl.sub(mantissa, fl.c(1.0))  # exact (Sterbenz)
    return e.emit(llvm.SIToFPOp(exponent, fl.t)), f


def _log_specials(fl: Floats, x: V, result: V) -> V:
    """log of 0 is -inf, of x < 0 NaN, of inf inf, of NaN NaN; others keep `result`."""
    e = fl.e
    inside = e.binop(llvm.AndOp, e.fcmp("ogt", x, fl.c(0.0)),
                     e.fcmp("olt", x, fl.c(float("inf"))))
    special = e.select(e.fcmp("olt", x, fl.c(0.0)), fl.c(float("nan")), fl.add(x, x))
    special = e.select(e.fcmp("oeq", x, fl.c(0.0)), fl.c(float("-inf")), special)
    return e.select(inside, result, special)


def log2_f32(e: Emitter, x: V) -> V:
    """log2 x = e + f/ln2 + f^2 q(f): f*hi(1/ln2) with its FMA rounding error, the
    sum with e by Fast2Sum (|e| >= 1 > |f/ln2| unless e == 0)."""
    fl = Floats(e, f32)
    ef, f = _log_split(fl, x)
    t = fl.mul(f, fl.c(INV_LN2_HI))
    t_err = fl.fma(f, fl.c(INV_LN2_HI), fl.neg(t))
    tail = fl.fma(fl.mul(f, f), fl.horner(f, LOG2_Q), fl.fma(f, fl.c(INV_LN2_LO), t_err))
    hi, lo = fl.fast_two_sum(ef, t)
    return _log_specials(fl, x, fl.add(hi, fl.add(lo, tail)))


def log_f32(e: Emitter, x: V) -> V:
    """log x = e ln2 + f + f^2 q(f), with e*ln2 = e*hi (exact, 16-bit hi) + e*lo."""
    fl = Floats(e, f32)
    ef, f = _log_split(fl, x)
    a = fl.mul(ef, fl.c(LN2_HI16))
    tail = fl.fma(fl.mul(f, f), fl.horner(f, LOG_Q), fl.mul(ef, fl.c(LN2_LO16)))
    hi, lo = fl.fast_two_sum(a, f)
    return _log_specials(fl, x, fl.add(hi, fl.add(lo, tail)))


def _log1p_f64(fl: Floats, f: V) -> tuple[V, V]:
    """log(1 + f) = hi + lo for f in [sqrt(1/2) - 1, sqrt(2) - 1], as fdlibm: with
    s = f / (2 + f), log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)); hi = f - f^2/2, and
    lo gathers hi's rounding error (exact: Sterbenz), f^2/2's (FMA) and the rest."""
    half_f = fl.mul(f, fl.c(0.5))
    hfsq = fl.mul(half_f, f)
    hfsq_err = fl.fma(half_f, f, fl.neg(hfsq))
    s = fl.e.emit(llvm.FDivOp(f, fl.add(fl.c(2.0), f)))
    z = fl.mul(s, s)
    w = fl.mul(z, z)
    r = fl.add(fl.mul(w, fl.horner(w, LG_EVEN)), fl.mul(z, fl.horner(w, LG_ODD)))
    hi = fl.sub(f, hfsq)
    lo = fl.sub(fl.sub(fl.sub(f, hi), hfsq), hfsq_err)
    return hi, fl.fma(s, fl.add(hfsq, r), lo)


def log2_f64(e: Emitter, x: V) -> V:
    """log2 x = e + (hi + lo)/ln2: hi*(1/ln2) kept with its FMA rounding error, the sum
    with e by Fast2Sum."""
    fl = Floats(e, f64)
    ef, f = _log_split(fl, x)
    hi, lo = _log1p_f64(fl, f)
    t = fl.mul(hi, fl.c(INV_LN2_HI64))
    t_err = fl.fma(hi, fl.c(INV_LN2_HI64), fl.neg(t))
    tail = fl.fma(lo, fl.c(INV_LN2_HI64), fl.fma(hi, fl.c(INV_LN2_LO64), t_err))
    top, low = fl.fast_two_sum(ef, t)
    return _log_specials(fl, x, fl.add(top, fl.add(low, tail)))


def log_f64(e: Emitter, x: V) -> V:
    """log x = e ln2 + hi + lo, e*ln2 = e*hi (exact: fdlibm's hi has 32 bits) + e*lo."""
    fl = Floats(e, f64)
    ef, f = _log_split(fl, x)
    hi, lo = _log1p_f64(fl, f)
    top, low = fl.fast_two_sum(fl.mul(ef, fl.c(LN2_HI_FDLIBM)), hi)
    tail = fl.fma(ef, fl.c(LN2_LO_FDLIBM), lo)
    return _log_specials(fl, x, fl.add(top, fl.add(low, tail)))


# --------------------------------------------------------------------------- sin, cos


def _reduce_cody_waite(fl: Floats, x: V) -> tuple[V, V]:
    """(k as i64, r) with x = k pi/2 + r, |r| <~ pi/4, for |x| < 2^50 (x an f64)."""
    kf, k = fl.round_int(fl.mul(x, fl.c(TWO_OVER_PI)))
    minus_k = fl.neg(kf)
    r = x
    for part in PIO2:  # each product is exact inside the FMA
        r = fl.fma(minus_k, fl.c(part), r)
    return k, r


def _two_over_pi_pieces(fl: Floats, x: V, count: int) -> list[V]:
    """The `count` pieces of 2/pi (24 bits each) from the first one whose product with
    x is not a multiple of 4: piece j0 with j0 = floor((E - 2) / 24), x = M 2^E,
    M a 24-bit integer; for 2^50 <= |x| < 2^128, j0 is 1 to 4, told apart by |x|."""
    e = fl.e
    magnitude = e.intrinsic("llvm.fabs.f64", [x], f64)
    steps = [e.fcmp("oge", magnitude, fl.c(2.0 ** (24 * n + 49))) for n in (1, 2, 3)]
    pieces = []
    for i in range(count):
        piece = fl.c(_piece(1 + i))
        for n, step in enumerate(steps, start=2):
            piece = e.select(step, fl.c(_piece(n + i)), piece)
        pieces.append(piece)
    return pieces


def _piece(j: int) -> float:
    return TWO_OVER_PI_24[j] * 2.0 ** (-24 * (j + 1))


def _mod4(fl: Floats, t: V) -> V:
    """t mod 4, in [0, 4): exact for any f64."""
    floor = fl.e.intrinsic("llvm.floor.f64", [fl.mul(t, fl.c(0.25))], f64)
    return fl.fma(floor, fl.c(-4.0), t)


def _reduce_payne_hanek(fl: Floats, x: V) -> tuple[V, V]:
    """(k as i64, r) with x = k pi/2 + r for an f32 x (as an f64) with 2^50 <= |x| <
    2^128, or x == 0: x * 2/pi mod 4 from the five pieces of 2/pi that matter, each
    product x * piece exact (24 x 24 bits). The first two products are reduced mod 4
    exactly and their sum is exact; the third is added by TwoSum, the last two are
    below 2^-23 and add to the low part. The pieces left out weigh under 2^-70."""
    t = [fl.mul(x, piece) for piece in _two_over_pi_pieces(fl, x, 5)]
    head = fl.add(_mod4(fl, t[0]), _mod4(fl, t[1]))  # < 8, bits down to 2^-46: exact
    hi, lo = fl.two_sum(head, t[2])
    lo = fl.add(lo, fl.add(t[3], t[4]))
    kf, k = fl.round_int(hi)
    frac = fl.add(fl.sub(hi, kf), lo)  # in about [-1/2, 1/2], a fraction of pi/2
    return k, fl.fma(frac, fl.c(PIO2[0]), fl.mul(frac, fl.c(PIO2[1])))


def _sin_cos_f32(e: Emitter, x: V, quarter_turns: int) -> V:
    """sin(x + quarter_turns * pi/2) of an f32, computed in f64 and rounded once."""
    fl = Floats(e, f64)
    xd = e.emit(llvm.FPExtOp(x, f64))
    # by its mangled name: xDSL's export of llvm.intr.fabs declares an unmangled
    # `llvm.fabs`, which clashes with an f32 fabs in the same module
    magnitude = e.intrinsic("llvm.fabs.f64", [xd], f64)
    small = e.fcmp("olt", magnitude, fl.c(CODY_WAITE_LIMIT))
    # big inputs are zeroed for the Cody-Waite path and vice versa: no stray inf/NaN
    k_small, r_small = _reduce_cody_waite(fl, e.select(small, xd, fl.c(0.0)))
    k_big, r_big = _reduce_payne_hanek(fl, e.select(small, fl.c(0.0), xd))
    k = e.select(small, k_small, k_big)
    r = e.select(small, r_small, r_big)
    r2 = fl.mul(r, r)
    sin_r = fl.fma(fl.mul(r, r2), fl.horner(r2, SIN_S), r)
    cos_r = fl.fma(r2, fl.horner(r2, COS_C), fl.c(1.0))
    quadrant = e.binop(llvm.AddOp, k, fl.i(quarter_turns))
    odd = e.icmp("ne", e.binop(llvm.AndOp, quadrant, fl.i(1)), fl.i(0))
    negative = e.icmp("ne", e.binop(llvm.AndOp, quadrant, fl.i(2)), fl.i(0))
    value = e.select(odd, cos_r, sin_r)
    value = e.select(negative, fl.neg(value), value)
    finite = e.fcmp("ord", fl.sub(xd, xd), fl.c(0.0))  # false for inf and NaN
    value = e.select(finite, value, fl.c(float("nan")))
    if quarter_turns == 0:  # sin(-0.0) is -0.0; the polynomial's sum gives +0.0
        value = e.select(e.fcmp("oeq", xd, fl.c(0.0)), xd, value)
    return e.emit(llvm.FPTruncOp(value, f32))


def sin_f32(e: Emitter, x: V) -> V:
    return _sin_cos_f32(e, x, 0)


def cos_f32(e: Emitter, x: V) -> V:
    return _sin_cos_f32(e, x, 1)


# math op -> its f32 vector-math emitter (f16 and bf16 compute in f32 too)
F32_VECTOR_MATH: dict[type[Operation], Callable[[Emitter, V], V]] = {
    math.Exp2Op: exp2,
    math.ExpOp: exp,
    math.Log2Op: log2_f32,
    math.LogOp: log_f32,
    math.SinOp: sin_f32,
    math.CosOp: cos_f32,
}
# ... and on f64 (the others keep LLVM's intrinsics)
F64_VECTOR_MATH: dict[type[Operation], Callable[[Emitter, V], V]] = {
    math.Exp2Op: exp2,
    math.ExpOp: exp,
    math.Log2Op: log2_f64,
    math.LogOp: log_f64,
}

__all__ = ["F32_VECTOR_MATH", "F64_VECTOR_MATH", "QuietEmitter", "cos_f32", "exp", "exp2",
           "log2_f32", "log2_f64", "log_f32", "log_f64", "sin_f32"]
