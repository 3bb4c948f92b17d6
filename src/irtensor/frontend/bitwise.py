"""Bitwise ops on integer tensors, shifts and the dtype shorthands (`half()`, `long()`).

`ll` has no bitwise instructions, so `bitwise_and` is composed bit by bit from exact
integer ops: bit i of x is (x // 2**i) % 2 (floor division and modulo see two's
complement), the sign bit is x < 0, and the bits are summed back with wrap-around
multiplication. That is about six ops per bit (32 or 64 bits), fused into the one
kernel of the expression: exact, but slow next to a native `and`. or and xor follow
from and: a | b = a + b - (a & b), a ^ b = a + b - 2 (a & b), both exact under
wrap-around. On bool tensors the three are the logical ops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from irtensor import dtypes

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor

Scalar = int | float | bool


def _bits(d: dtypes.DType) -> int:
    return d.np.itemsize * 8


def _int_pair(x: Tensor, other: Tensor | Scalar, name: str) -> tuple[Tensor, Tensor]:
    a, b = x._pair(other)
    if a.dtype.is_float:
        raise TypeError(f"{name} needs integer or bool tensors, got {a.dtype.name}")
    return a, b


def _and_ints(a: Tensor, b: Tensor) -> Tensor:
    bits = _bits(a.dtype)
    out = (a * 0 + b * 0)
    value_bits = bits if a.dtype.is_unsigned else bits - 1
    for i in range(value_bits):
        weight = 1 << i
        bit_a = (a // weight) % 2
        bit_b = (b // weight) % 2
        out = out + bit_a * bit_b * weight
    if a.dtype.is_unsigned:
        return out
    top = -(1 << (bits - 1))  # the sign bit's weight in two's complement
    return out + ((a < 0) & (b < 0)).where(a._const(top, a.dtype), a._const(0, a.dtype))


class BitwiseMixin:
    def bitwise_and(self: Tensor, other: Tensor | Scalar) -> Tensor:
        """Bitwise and of ints (composed bit by bit: see the module), logical and of bools."""
        a, b = _int_pair(self, other, "bitwise_and")
        return a & b if a.dtype.is_bool else _and_ints(a, b)

    def bitwise_or(self: Tensor, other: Tensor | Scalar) -> Tensor:
        a, b = _int_pair(self, other, "bitwise_or")
        return a | b if a.dtype.is_bool else a + b - _and_ints(a, b)

    def bitwise_xor(self: Tensor, other: Tensor | Scalar) -> Tensor:
        a, b = _int_pair(self, other, "bitwise_xor")
        return a ^ b if a.dtype.is_bool else a + b - _and_ints(a, b) * 2

    def bitwise_not(self: Tensor) -> Tensor:
        """~x = -x - 1 for ints (exact with wrap-around), logical not for bools."""
        if self.dtype.is_float:
            raise TypeError(f"bitwise_not needs an integer or bool tensor, got {self.dtype.name}")
        return self.logical_not() if self.dtype.is_bool else -self - 1

    def _shift_amount(self: Tensor, x: int, name: str) -> int:
        if not self.dtype.is_int:
            raise TypeError(f"{name} needs an integer tensor, got {self.dtype.name}")
        if not isinstance(x, int) or isinstance(x, bool) or x < 0:
            raise ValueError(f"{name} takes a non-negative int shift or an integer tensor "
                             f"of shifts, got {x!r}")
        return x

    def lshift(self: Tensor, x: int | Tensor) -> Tensor:
        """x * 2**n with wrap-around; a shift by the width or more gives 0. `n` is an int
        or an integer tensor of amounts (broadcast; an amount below 0 also gives 0)."""
        if isinstance(x, type(self)):
            return _shift_by_tensor(self, x, left=True)
        n = self._shift_amount(x, "lshift")
        if n >= _bits(self.dtype):
            return self.zeros_like()
        weight = 1 << n
        if n == _bits(self.dtype) - 1 and not self.dtype.is_unsigned:
            weight = -weight  # 2**31 wraps to the int32 minimum
        return self * weight

    def rshift(self: Tensor, x: int | Tensor) -> Tensor:
        """x // 2**n: an arithmetic shift of signed ints (floor, so negative values shift
        in ones), a logical one of unsigned ints. `n` is an int or an integer tensor of
        amounts (broadcast; an amount below 0 acts as one of the width or more)."""
        if isinstance(x, type(self)):
            return _shift_by_tensor(self, x, left=False)
        n = self._shift_amount(x, "rshift")
        if self.dtype.is_unsigned:
            return self.zeros_like() if n >= _bits(self.dtype) else self // (1 << n)
        if n >= _bits(self.dtype) - 1:
            return (self < 0).where(-1, 0).cast(self.dtype)
        return self // (1 << n)


def _shift_by_tensor(x: Tensor, amount: Tensor, left: bool) -> Tensor:
    """x shifted by each of `amount`, as numpy's shifts: 2**amount is built exactly in 64
    bits from the amount's bits, then x times or floor-divided by it. An amount below 0 or
    of the width or more gives 0 (-1 shifting a negative value right)."""
    name = "lshift" if left else "rshift"
    if not (x.dtype.is_int and amount.dtype.is_int):
        raise TypeError(f"{name} needs integer tensors, got {x.dtype.name} and "
                        f"{amount.dtype.name}")
    wide_type = dtypes.uint64 if x.dtype.is_unsigned else dtypes.int64
    bits = _bits(x.dtype)
    amount = amount.cast(dtypes.uint64 if amount.dtype.is_unsigned else dtypes.int64)
    in_range = (amount >= 0) & (amount < bits)
    amount = in_range.where(amount, amount.zeros_like())
    factor = amount.zeros_like().cast(wide_type) + 1
    for k in range(6):  # amounts below 64; 2**63 wraps to int64's minimum
        chosen = (amount // (1 << k)) % 2 == 1
        factor = chosen.where(factor * (1 << (1 << k)), factor)
    wide, zero = x.cast(wide_type), x.zeros_like()
    if left:
        return in_range.where((wide * factor).cast(x.dtype), zero)
    if x.dtype.is_unsigned:
        return in_range.where((wide // factor).cast(x.dtype), zero)
    sign = (x < 0).where(zero - 1, zero)  # also int64 by 63: 2**63 is negative as an int64
    return (in_range & (amount != 63)).where((wide // factor).cast(x.dtype), sign)


class CastMixin:
    """tinygrad's and torch's dtype shorthands."""

    def float(self: Tensor) -> Tensor:
        return self.cast(dtypes.float32)

    def half(self: Tensor) -> Tensor:
        return self.cast(dtypes.float16)

    def bfloat16(self: Tensor) -> Tensor:
        return self.cast(dtypes.bfloat16)

    def double(self: Tensor) -> Tensor:
        return self.cast(dtypes.float64)

    def int(self: Tensor) -> Tensor:
        return self.cast(dtypes.int32)

    def long(self: Tensor) -> Tensor:
        return self.cast(dtypes.int64)

    def bool(self: Tensor) -> Tensor:
        return self.cast(dtypes.bool_)

    def short(self: Tensor) -> Tensor:
        return self.cast(dtypes.int16)

    def char(self: Tensor) -> Tensor:
        return self.cast(dtypes.int8)

    def byte(self: Tensor) -> Tensor:
        return self.cast(dtypes.uint8)
