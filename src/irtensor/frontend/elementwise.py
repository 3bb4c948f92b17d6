"""Elementwise math of the Tensor beyond the `hl` ops: compositions of existing ops.

Each method is a short composition of `hl` ops (tinygrad's HLOP style), so every device
runs it as fused elementwise code. The compositions keep numpy's special values (NaN,
+-inf, the sign of zero where it shows) and stay close to numpy's accuracy: the inverse
trigonometric functions and erf use Cephes' rational approximations (the single- or
double-precision set by dtype), small arguments of sinh/asinh/atanh go through a series
or an accurate log1p instead of cancelling. float16 and bfloat16 compute in float32 and
round once, as numpy's half-precision loops do.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from irtensor import dtypes

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor

Scalar = int | float | bool
F = TypeVar("F", bound=Callable[..., Any])
# every float of the dtype at least this large is an integer (2**mantissa bits)
INTEGRAL_FROM = {"float16": 2.0**10, "bfloat16": 2.0**7, "float32": 2.0**23,
                 "float64": 2.0**52}
LOG10_2 = math.log10(2.0)

# Cephes atanf (single) and atan (double); erf: Eigen's single-precision rational fit on
# [-4, 4], Cephes' double set (x * T/U below 1, 1 - exp(-x*x) P/Q above).
ATAN_F32 = (8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1)
ATAN_P = (-8.750608600031904122785e-1, -1.615753718733365076637e1, -7.500855792314704667340e1,
          -1.228866684490136173410e2, -6.485021904942025371773e1)
ATAN_Q = (1.0, 2.485846490142306297962e1, 1.650270098316988542046e2, 4.328810604912902668951e2,
          4.853903996359136964868e2, 1.945506571482613964425e2)
ERF_F32_ALPHA = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                 -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                 -1.60960333262415e-02)
ERF_F32_BETA = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                -7.37332916720468e-03, -1.42647390514189e-02)
ERF_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
         7.00332514112805075473e3, 5.55923013010394962768e4)
ERF_U = (1.0, 3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
         2.26290000613890934246e4, 4.92673942608635921086e4)
ERFC_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
          4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
          9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
ERFC_Q = (1.0, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
          9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
          1.65666309194161350182e3, 5.57535340817727675546e2)
SINH_TERMS = 9  # x + x**3/3! + ... + x**17/17!: below 1 the next term is under 2**-60


def poly(x: Tensor, coefficients: Sequence[float]) -> Tensor:
    """Horner's rule, highest power first."""
    out = x.full_like(coefficients[0])
    for c in coefficients[1:]:
        out = out * x + c
    return out


def float_math(define: F) -> F:
    """The method on floats: ints become the default float, float16 and bfloat16
    compute in float32 and round once."""

    @functools.wraps(define)
    def wrapped(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        x = self._float()
        if x.dtype in (dtypes.float16, dtypes.bfloat16):
            return define(x.cast(dtypes.float32), *args, **kwargs).cast(x.dtype)
        return define(x, *args, **kwargs)

    return wrapped  # type: ignore[return-value]


def _split(a: Tensor) -> tuple[Tensor, Tensor]:
    """Veltkamp's split of a double into two halves of 26 bits."""
    c = a * 134217729.0  # 2**27 + 1
    high = c - (c - a)
    return high, a - high


def _product(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """a * b as high + low exactly (Dekker), for doubles that do not overflow."""
    p = a * b
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    low = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    return p, low


def _is_f64(x: Tensor) -> bool:
    return x.dtype is dtypes.float64


class ElementwiseMixin:
    # ------------------------------------------------------------------ rounding

    def trunc(self: Tensor) -> Tensor:
        """Toward zero; ints are returned as they are. -0.5 gives -0.0, as numpy."""
        if not self.dtype.is_float:
            return self
        whole = self.abs() < INTEGRAL_FROM[self.dtype.name]
        t = whole.where(whole.where(self, 0.0).cast(dtypes.int64).cast(self.dtype), self)
        return (t == 0).where(self * 0, t)  # x * 0 keeps the sign of zero

    def floor(self: Tensor) -> Tensor:
        if not self.dtype.is_float:
            return self
        t = self.trunc()
        return (self < t).where(t - 1, t)

    def ceil(self: Tensor) -> Tensor:
        if not self.dtype.is_float:
            return self
        t = self.trunc()
        return (self > t).where(t + 1, t)

    def round(self: Tensor) -> Tensor:
        """Half to even, as numpy and torch.

        >>> Tensor([0.5, 1.5, 2.5, -2.5, 2.7]).round().tolist()
        [0.0, 2.0, 2.0, -2.0, 3.0]
        """
        if not self.dtype.is_float:
            return self
        t = self.trunc()
        frac = (self - t).abs()  # exact: t and x share their leading bits
        step = (self < 0).where(-1.0, 1.0).cast(self.dtype)
        odd = (t - (t * 0.5).trunc() * 2) != 0
        up = (frac > 0.5) | ((frac == 0.5) & odd)
        return up.where(t + step, t)

    # ------------------------------------------------------------------ classification

    def isnan(self: Tensor) -> Tensor:
        return self != self if self.dtype.is_float else self.full_like(False, dtypes.bool_)

    def isinf(self: Tensor, detect_positive: bool = True, detect_negative: bool = True
              ) -> Tensor:
        """tinygrad's flags pick which infinity counts; ints are never infinite."""
        if not self.dtype.is_float:
            return self.full_like(False, dtypes.bool_)
        pos = (self == math.inf) if detect_positive else self.full_like(False, dtypes.bool_)
        return pos | (self == -math.inf) if detect_negative else pos

    def isfinite(self: Tensor) -> Tensor:
        if not self.dtype.is_float:
            return self.full_like(True, dtypes.bool_)
        return (self - self) == 0  # inf - inf and NaN - NaN are NaN

    def sign(self: Tensor) -> Tensor:
        """-1, 0 or 1 in the input's dtype; NaN stays NaN (numpy.sign)."""
        if self.dtype.is_bool:
            return self
        out = (self < 0).where(-1, (self > 0).where(1, 0)).cast(self.dtype)
        return self.isnan().where(self, out) if self.dtype.is_float else out

    def copysign(self: Tensor, other: Tensor | Scalar) -> Tensor:
        """|self| with the sign of `other`, -0.0 included (numpy.copysign)."""
        x, y = self._float()._pair(other)
        y = y._float()
        negative = (y < 0) | ((y == 0) & (1 / y < 0))
        return negative.where(-x.abs(), x.abs())

    # ------------------------------------------------------------------ arithmetic

    def square(self: Tensor) -> Tensor:
        return self * self

    def lerp(self: Tensor, end: Tensor | Scalar, weight: Tensor | Scalar) -> Tensor:
        """self + (end - self) * weight."""
        return self + (end - self) * weight

    def clamp(self: Tensor, min_: Tensor | Scalar | None = None,
              max_: Tensor | Scalar | None = None) -> Tensor:
        """tinygrad's spelling (torch's `min`, `max` are `min_`, `max_` here)."""
        if min_ is None and max_ is None:
            raise ValueError("clamp needs at least one of min_ and max_")
        out = self if min_ is None else self.maximum(min_)
        return out if max_ is None else out.minimum(max_)

    def fmod(self: Tensor, other: Tensor | Scalar) -> Tensor:
        """C's fmod: the remainder has the sign of `self` (torch.fmod, numpy.fmod);
        ints truncate, x fmod 0 is 0 for ints and NaN for floats. Floats compute in
        float64, x - q y with q y split exactly (Dekker's product): exact while the
        quotient is below 2**53."""
        a, b = self._pair(other)
        if a.dtype.is_bool:
            raise TypeError("fmod needs numeric tensors, got bool")
        if a.dtype.is_int:
            r = a % b
            fix = (r != 0) & ((r < 0) != (a < 0))
            return fix.where(r - b, r)
        x, y = a.cast(dtypes.float64), b.cast(dtypes.float64)
        ay = y.abs()
        q = (x.abs() / ay).trunc()
        high, low = _product(q, ay)
        r = (x.abs() - high) - low  # exact: the remainder is a double and x - high is
        r = (r < 0).where(r + ay, (r >= ay).where(r - ay, r))  # q off by one either way
        r = (x < 0).where(-r, r)
        r = (y.isinf() & x.isfinite()).where(x, r)
        return (r == 0).where(x * 0, r).cast(a.dtype)

    def mod(self: Tensor, other: Tensor | Scalar) -> Tensor:
        """Python's and numpy's %: the remainder has the sign of the divisor; floats
        too (`%` itself is for ints). x mod 0 is 0 for ints (numpy), NaN for floats.

        >>> Tensor([7.5, -7.5]).mod(2).tolist(), Tensor([7.5, -7.5]).fmod(2).tolist()
        ([1.5, 0.5], [1.5, -1.5])
        """
        a, b = self._pair(other)
        if a.dtype.is_int:
            return a % b
        r = a.fmod(b)
        return ((r != 0) & ((r < 0) != (b < 0))).where(r + b, r)

    # ------------------------------------------------------------------ exp, log

    @float_math
    def log10(self: Tensor) -> Tensor:
        return self.log2() * LOG10_2

    @float_math
    def log1p(self: Tensor) -> Tensor:
        """log(1 + x), accurate near 0: log(u) * x / (u - 1) with u = 1 + x cancels the
        rounding of u (Goldberg's trick)."""
        u = self + 1
        tiny = u == 1
        big = u.isinf()
        ratio = self / (tiny | big).where(1.0, u - 1).cast(self.dtype)
        return tiny.where(self, big.where(u.log(), u.log() * ratio))

    @float_math
    def expm1(self: Tensor) -> Tensor:
        """exp(x) - 1, accurate near 0: (u - 1) * x / log(u) with u = exp(x)."""
        u = self.exp()
        one = u == 1
        edge = (u - 1 == -1) | u.isinf()
        log_u = (one | edge).where(1.0, u.log()).cast(self.dtype)
        return one.where(self, edge.where(u - 1, (u - 1) * (self / log_u)))

    def logaddexp(self: Tensor, other: Tensor | Scalar) -> Tensor:
        """log(exp(a) + exp(b)) without overflow (numpy.logaddexp)."""
        a, b = self._float()._pair(other)
        b = b._float()
        m = a.maximum(b)
        both_inf = (a == b) & a.isinf()
        out = m + (-(a - b).abs()).exp().log1p()
        return both_inf.where(a, out)

    @float_math
    def logsigmoid(self: Tensor) -> Tensor:
        """min(x, 0) - log1p(exp(-|x|)): stable for large |x|, as torch."""
        return self.minimum(0) - (-self.abs()).exp().log1p()

    # ------------------------------------------------------------------ trigonometric

    def tan(self: Tensor) -> Tensor:
        return self.sin() / self.cos()

    @float_math
    def atan(self: Tensor) -> Tensor:
        """Cephes' atan: |x| reduced below tan(pi/8) (single) or 0.66 (double)."""
        ax = self.abs()
        big = ax > 2.414213562373095
        mid = (ax > (0.66 if _is_f64(self) else 0.4142135623730950)) & ~big
        safe = big.where(ax, 1.0).cast(self.dtype)
        r = big.where(-1 / safe, mid.where((ax - 1) / (ax + 1), ax))
        quarter = self._const(math.pi / 4, self.dtype)  # in the input's precision
        base = big.where(quarter * 2, mid.where(quarter, quarter * 0))
        z = r * r
        if _is_f64(self):
            small = r + r * z * poly(z, ATAN_P) / poly(z, ATAN_Q)
        else:
            small = poly(z, ATAN_F32) * z * r + r
        out = base + small
        return self.isnan().where(self, (self < 0).where(-out, out))

    @float_math
    def asin(self: Tensor) -> Tensor:
        """atan(x / sqrt((1 - x)(1 + x))): (1 - x) is exact near 1."""
        root = ((1 - self) * (1 + self)).sqrt()
        return (root == 0).where(self.sign() * (math.pi / 2), (self / root).atan())

    @float_math
    def acos(self: Tensor) -> Tensor:
        """2 atan(sqrt((1 - x) / (1 + x))), accurate at both ends."""
        return ((1 - self) / (1 + self)).sqrt().atan() * 2

    # ------------------------------------------------------------------ hyperbolic

    @float_math
    def sinh(self: Tensor) -> Tensor:
        """A Taylor series below 1 (no cancellation), (e**x - e**-x) / 2 above."""
        z = self * self
        terms = [1 / math.factorial(2 * k + 1) for k in reversed(range(SINH_TERMS))]
        series = poly(z, terms) * self
        e = self.exp()
        return (self.abs() < 1).where(series, (e - 1 / e) * 0.5)

    @float_math
    def cosh(self: Tensor) -> Tensor:
        e = self.abs().exp()
        return (e + 1 / e) * 0.5

    @float_math
    def asinh(self: Tensor) -> Tensor:
        """sign(x) log1p(|x| + x**2 / (1 + sqrt(1 + x**2))); log|x| + ln 2 where x**2
        would overflow."""
        ax = self.abs()
        huge = ax > 2.0**28
        safe = huge.where(1.0, ax).cast(self.dtype)
        small = (safe + safe * safe / (1 + (1 + safe * safe).sqrt())).log1p()
        out = huge.where(ax.log() + math.log(2.0), small)
        return (self < 0).where(-out, out)

    @float_math
    def acosh(self: Tensor) -> Tensor:
        """log1p(t + sqrt(2t + t**2)) with t = x - 1; log x + ln 2 for huge x."""
        huge = self > 2.0**28
        t = huge.where(1.0, self - 1).cast(self.dtype)
        out = (t + (2 * t + t * t).sqrt()).log1p()
        return huge.where(self.log() + math.log(2.0), out)

    @float_math
    def atanh(self: Tensor) -> Tensor:
        """log1p(2x / (1 - x)) / 2."""
        return (2 * self / (1 - self)).log1p() * 0.5

    # ------------------------------------------------------------------ erf

    @float_math
    def erf(self: Tensor) -> Tensor:
        """The error function, to a few ulp: in float32 a rational fit on [-4, 4]
        (outside, erf is +-1 in float32); in float64 Cephes' erf/erfc pair."""
        if not _is_f64(self):
            x = self.clip(-4.0, 4.0)
            z = x * x
            return x * poly(z, ERF_F32_ALPHA) / poly(z, ERF_F32_BETA)
        ax = self.abs()
        low = ax < 1
        z = low.where(self, 0.0).cast(self.dtype)
        zz = z * z
        inner = z * poly(zz, ERF_T) / poly(zz, ERF_U)
        t = low.where(1.0, ax.minimum(6.0)).cast(self.dtype)
        tail = 1 - (-t * t).exp() * poly(t, ERFC_P) / poly(t, ERFC_Q)
        outer = (self < 0).where(-tail, tail)
        return self.isnan().where(self, low.where(inner, outer))

    # ------------------------------------------------------------------ activations

    def relu6(self: Tensor) -> Tensor:
        return self.relu() - (self - 6).relu()

    def hardsigmoid(self: Tensor, alpha: float = 1 / 6, beta: float = 0.5) -> Tensor:
        """relu(alpha x + beta) - relu(alpha x + beta - 1): torch's with the defaults."""
        y = self._float() * alpha + beta
        return y.relu() - (y - 1).relu()

    def hardswish(self: Tensor) -> Tensor:
        return self._float() * (self._float() + 3).relu6() * (1 / 6)

    def hardtanh(self: Tensor, min_val: float = -1, max_val: float = 1) -> Tensor:
        return self.clip(min_val, max_val)

    def elu(self: Tensor, alpha: float = 1.0) -> Tensor:
        x = self._float()
        return x.relu() - alpha * (1 - x.exp()).relu()

    def celu(self: Tensor, alpha: float = 1.0) -> Tensor:
        x = self._float()
        return x.maximum(0) + ((x / alpha).exp() - 1).minimum(0) * alpha

    def selu(self: Tensor, alpha: float = 1.67326, gamma: float = 1.0507) -> Tensor:
        """tinygrad's constants (torch's are the same to 5 digits)."""
        x = self._float()
        return gamma * (x >= 0).where(x, alpha * (x.exp() - 1))

    def swish(self: Tensor) -> Tensor:
        return self.silu()

    def quick_gelu(self: Tensor) -> Tensor:
        x = self._float()
        return x * (x * 1.702).sigmoid()

    def leaky_relu(self: Tensor, neg_slope: float = 0.01) -> Tensor:
        """torch's `negative_slope` is `neg_slope` here (tinygrad's name)."""
        x = self._float()
        return (x < 0).where(x * neg_slope, x)

    def mish(self: Tensor) -> Tensor:
        x = self._float()
        return x * x.softplus().tanh()

    def softsign(self: Tensor) -> Tensor:
        x = self._float()
        return x / (1 + x.abs())
