"""Element types: the IR's builtin types and their numpy counterparts.

irtensor's tensors hold one of seven element types. In the IR they are xDSL's
builtin types (`f32`, `i1`, ...); in the reference interpreter and at the
boundary to the user they are numpy dtypes (bfloat16 comes from `ml_dtypes`).
"""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute

FLOAT_TYPES: tuple[Attribute, ...] = (f16, bf16, f32, f64)
INT_TYPES: tuple[Attribute, ...] = (i32, i64)
BOOL_TYPE: Attribute = i1
ELEMENT_TYPES: tuple[Attribute, ...] = (*FLOAT_TYPES, *INT_TYPES, BOOL_TYPE)

_TO_NUMPY: dict[Attribute, np.dtype] = {
    f16: np.dtype(np.float16),
    bf16: np.dtype(ml_dtypes.bfloat16),
    f32: np.dtype(np.float32),
    f64: np.dtype(np.float64),
    i32: np.dtype(np.int32),
    i64: np.dtype(np.int64),
    i1: np.dtype(np.bool_),
}
_FROM_NUMPY: dict[np.dtype, Attribute] = {v: k for k, v in _TO_NUMPY.items()}


def is_float(t: Attribute) -> bool:
    return isinstance(t, Float16Type | BFloat16Type | Float32Type | Float64Type)


def is_int(t: Attribute) -> bool:
    """A signed integer type other than i1 (bool)."""
    return isinstance(t, IntegerType) and t.width.data > 1


def is_bool(t: Attribute) -> bool:
    return t == i1


def is_supported(t: Attribute) -> bool:
    return t in _TO_NUMPY


def to_numpy(t: Attribute) -> np.dtype:
    """The numpy dtype of an element type (`f32` -> float32)."""
    if t not in _TO_NUMPY:
        raise TypeError(f"unsupported element type {t}")
    return _TO_NUMPY[t]


def from_numpy(dtype: np.dtype | type) -> Attribute:
    """The element type of a numpy dtype (float32 -> `f32`)."""
    dt = np.dtype(dtype)
    if dt not in _FROM_NUMPY:
        names = ", ".join(str(d) for d in _FROM_NUMPY)
        raise TypeError(f"unsupported dtype {dt}; irtensor supports {names}")
    return _FROM_NUMPY[dt]


_BF16_NUMPY = np.dtype(ml_dtypes.bfloat16)


def cast_array(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`x` as `dtype`, numpy's way for every pair of types, whatever ml_dtypes does.

    A float64 or an integer becomes a bf16 with one rounding, as numpy rounds to
    float16 (through an f32 rounded *to odd*, which a second rounding cannot spoil).
    A bf16 becomes an integer through the f32 that holds it exactly, so that NaN and
    out-of-range values give what numpy gives for f16 and f32 (INT_MIN on x86).
    """
    x = np.asarray(x)
    dtype = np.dtype(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        if x.dtype == _BF16_NUMPY and dtype.kind in "iu":
            x = x.astype(np.float32)
        elif dtype == _BF16_NUMPY and (x.dtype == np.float64 or x.dtype.kind in "iu"):
            x = f32_rounded_to_odd(exact_f64(x) if x.dtype.kind in "iu" else x)
        return x.astype(dtype)


def exact_f64(x: np.ndarray) -> np.ndarray:
    """Integers as float64s that round to 24 bits or fewer as the integers do: exact up
    to 2**53; beyond, the low 12 bits become one sticky bit (2048 if any was set)."""
    if x.dtype.kind == "u" and x.dtype.itemsize == 8:  # the top bit set: halve, keep sticky
        halves = ((x >> np.uint64(1)) | (x & np.uint64(1))).astype(np.int64)
        top = x >= np.uint64(2**63)
        low_half = np.where(top, np.uint64(0), x).astype(np.int64)
        return np.where(top, 2 * exact_f64(halves), exact_f64(low_half))
    x = x.astype(np.int64)
    low = x & 0xFFF
    compressed = (x - low).astype(np.float64) + np.where(low != 0, 2048.0, 0.0)
    small = (x >= -(2**53)) & (x <= 2**53)
    return np.where(small, x.astype(np.float64), compressed)


def f32_rounded_to_odd(d: np.ndarray) -> np.ndarray:
    """float64 -> float32, truncated, with the last bit set when inexact."""
    d = np.asarray(d, np.float64)
    f = d.astype(np.float32)
    back = f.astype(np.float64)
    bits = f.view(np.uint32)
    toward_zero = np.where(np.abs(back) > np.abs(d), bits - np.uint32(1), bits)
    inexact = (back != d) & ~np.isnan(d)
    return np.where(inexact, toward_zero | np.uint32(1), bits).astype(np.uint32).view(
        np.float32)


def rounded(q: Fraction, dtype: np.dtype) -> np.generic:
    """The float of `dtype` nearest the exact rational `q`, ties to even, overflow to inf.

    One rounding: numpy's own conversions go through float64 (and bfloat16's
    through float32), which rounds twice where the first lands on a tie.
    """
    if q == 0:
        return np.asarray(0.0, dtype)[()]
    info = ml_dtypes.finfo(dtype)
    a = abs(q)
    exponent = a.numerator.bit_length() - a.denominator.bit_length()
    if a < Fraction(2) ** exponent:
        exponent -= 1
    ulp = Fraction(2) ** (max(exponent, int(info.minexp)) - int(info.nmant))
    value = round(a / ulp) * ulp  # round() of a Fraction is to nearest, ties to even
    magnitude = float(value) if value <= Fraction(float(info.max)) else float("inf")
    return np.asarray(magnitude if q > 0 else -magnitude, dtype)[()]


def tensor_type(shape: tuple[int, ...] | list[int], element: Attribute) -> TensorType:
    return TensorType(element, list(shape))


def type_of(array: np.ndarray) -> TensorType:
    """The tensor type that describes a numpy array."""
    return tensor_type(array.shape, from_numpy(array.dtype))


# --------------------------------------------------------------------------- frontend dtypes


class DType:
    """A user-facing dtype (`irtensor.dtypes.float32`), tying the IR type to numpy's."""

    __slots__ = ("element", "is_bool", "is_float", "is_int", "name", "np", "priority")

    def __init__(self, name: str, element: Attribute, priority: int):
        self.name, self.element, self.priority = name, element, priority
        self.np = _TO_NUMPY[element]
        # asked several times per recorded op: kept, not recomputed from the element type
        self.is_float, self.is_int = is_float(element), is_int(element)
        self.is_bool = is_bool(element)

    def __repr__(self) -> str:
        return f"dtypes.{self.name}"


bool_ = DType("bool", i1, 0)
int32 = DType("int32", i32, 1)
int64 = DType("int64", i64, 2)
float16 = DType("float16", f16, 3)
bfloat16 = DType("bfloat16", bf16, 3)
float32 = DType("float32", f32, 4)
float64 = DType("float64", f64, 5)
ALL = (bool_, int32, int64, float16, bfloat16, float32, float64)
default_float = float32
default_int = int32
_BY_NAME = {d.name: d for d in ALL} | {"bool_": bool_, "half": float16, "float": float32,
                                       "double": float64, "int": int32, "long": int64}


def as_dtype(dtype: DType | str | np.dtype | type) -> DType:
    """Our dtype from a DType, a name ("int32"), a numpy dtype, or a numpy scalar type."""
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, str) and dtype in _BY_NAME:
        return _BY_NAME[dtype]
    try:
        element = from_numpy(np.dtype(dtype))
    except TypeError:
        names = ", ".join(d.name for d in ALL)
        raise TypeError(f"unknown dtype {dtype!r}; irtensor has {names}") from None
    return next(d for d in ALL if d.element == element)


def of_element(element: Attribute) -> DType:
    return next(d for d in ALL if d.element == element)


def promote(a: DType, b: DType) -> DType:
    """numpy-like promotion: bool < int32 < int64 < (float16, bfloat16) < float32 < float64.

    float16 with bfloat16 gives float32 (neither holds the other), as in torch.
    """
    if a is b:
        return a
    if {a, b} == {float16, bfloat16}:
        return float32
    return a if a.priority > b.priority else b
