"""bitcast between float32 and int32, float64 and int64, composed from exact arithmetic.

`ll` has no bit reinterpretation, so the IEEE fields are computed: in float64, the
exponent is floor(log2 |x|) corrected by one either way against an exact power of two
(a product of squarings, never rounded), the mantissa is |x| / 2**e scaled to an
integer (exact: a division by a power of two), subnormals and the specials (+-0, inf,
NaN) are their own cases. The other way decodes the fields and multiplies them back.
NaN payloads are not kept: every NaN becomes the quiet NaN of the dtype.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from irtensor import dtypes

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor

# float dtype name: (its int dtype, exponent bits, mantissa bits)
FORMATS = {"float32": ("int32", 8, 23), "float64": ("int64", 11, 52)}
HALF_SUBNORMAL = 537  # 2**-1074 as two factors: 2**1074 is not a double


def _pow2(e: Tensor) -> Tensor:
    """2.0**e, exactly, for int64 e in [-1074, 1023] (a product of exact squarings)."""
    ae = e.abs()
    negative = e < 0
    out = e.full_like(1.0, dtypes.float64)
    for k in range(11):
        bit = (ae // (1 << k)) % 2 == 1
        up = 2.0 ** (1 << k) if k < 10 else math.inf  # 2**1024 is past the doubles
        down = 2.0 ** -(1 << k)
        factor = negative.where(e._const(down, dtypes.float64), e._const(up, dtypes.float64))
        out = out * bit.where(factor, 1.0)
    return out


def _scale_down(x: Tensor, bits: int) -> Tensor:
    """x * 2**-bits for bits up to 1074, in two exact steps."""
    first = min(bits, HALF_SUBNORMAL)
    return x * 2.0 ** -first * 2.0 ** -(bits - first)


def _float_to_bits(x: Tensor, exp_bits: int, man_bits: int) -> Tensor:
    bias = (1 << (exp_bits - 1)) - 1
    v = x.cast(dtypes.float64)
    ax = v.abs()
    ordinary = (ax > 0) & ax.isfinite()
    safe = ordinary.where(ax, 1.0)
    e = safe.log2().floor().cast(dtypes.int64)
    e = (_pow2(e) > safe).where(e - 1, e)
    e = (_pow2(e + 1) <= safe).where(e + 1, e)
    normal = e >= 1 - bias
    scaled = (safe / _pow2(e) - 1) * float(1 << man_bits)
    sub = safe * 2.0 ** (bias - 1) * float(1 << man_bits)  # two exact steps
    mant = normal.where(scaled, sub).cast(dtypes.int64)
    field = normal.where(e + bias, 0)
    top = (1 << exp_bits) - 1
    field = v.isnan().where(top, ax.isinf().where(top, ordinary.where(field, 0)))
    mant = v.isnan().where(1 << (man_bits - 1), ordinary.where(mant, 0))
    bits = field * (1 << man_bits) + mant
    negative = (v < 0) | ((v == 0) & (1 / v < 0))
    sign = -(1 << (exp_bits + man_bits))
    return (negative & ~v.isnan()).where(bits + sign, bits)


def _bits_to_float(b: Tensor, exp_bits: int, man_bits: int) -> Tensor:
    bias = (1 << (exp_bits - 1)) - 1
    width = exp_bits + man_bits + 1
    b = b.cast(dtypes.int64)
    negative = b < 0
    u = negative.where(b - (-(1 << (width - 1))), b) if width < 64 else \
        negative.where(b + b._const(-(1 << 63), dtypes.int64), b)  # wraps to b + 2**63
    field = u // (1 << man_bits)
    mant = (u % (1 << man_bits)).cast(dtypes.float64)
    sub = _scale_down(mant, bias - 1 + man_bits)
    normal = (1 + mant * 2.0 ** -man_bits) * _pow2((field - bias).maximum(-1074).minimum(1023))
    value = (field == 0).where(sub, normal)
    special = (mant == 0).where(float("inf"), float("nan"))
    value = (field == (1 << exp_bits) - 1).where(special, value)
    return negative.where(-value, value)


class BitcastMixin:
    def bitcast(self: Tensor, dtype: Any) -> Tensor:
        """The same bits as `dtype`: float32 <-> int32, float64 <-> int64 (the sizes must
        match; there are no 16-bit ints for float16). Composed from exact arithmetic;
        NaN becomes the quiet NaN."""
        d = dtypes.as_dtype(dtype)
        if d is self.dtype:
            return self
        if self.dtype.name in FORMATS and FORMATS[self.dtype.name][0] == d.name:
            _, e, m = FORMATS[self.dtype.name]
            return _float_to_bits(self, e, m).cast(d)
        if d.name in FORMATS and FORMATS[d.name][0] == self.dtype.name:
            _, e, m = FORMATS[d.name]
            return _bits_to_float(self, e, m).cast(d)
        raise TypeError(f"bitcast from {self.dtype.name} to {d.name}: irtensor bitcasts "
                        "float32 <-> int32 and float64 <-> int64")
