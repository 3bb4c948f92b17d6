"""Element types: the IR's builtin types and their numpy counterparts.

irtensor's tensors hold one of thirteen element types. In the IR they are xDSL's
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
    Signedness,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute

ui8 = IntegerType(8, Signedness.UNSIGNED)
ui16 = IntegerType(16, Signedness.UNSIGNED)
ui32 = IntegerType(32, Signedness.UNSIGNED)
ui64 = IntegerType(64, Signedness.UNSIGNED)

FLOAT_TYPES: tuple[Attribute, ...] = (f16, bf16, f32, f64)
SIGNED_TYPES: tuple[Attribute, ...] = (i8, i16, i32, i64)
UNSIGNED_TYPES: tuple[Attribute, ...] = (ui8, ui16, ui32, ui64)
INT_TYPES: tuple[Attribute, ...] = (*SIGNED_TYPES, *UNSIGNED_TYPES)
BOOL_TYPE: Attribute = i1
ELEMENT_TYPES: tuple[Attribute, ...] = (*FLOAT_TYPES, *INT_TYPES, BOOL_TYPE)
SUPPORTED_NAMES = ", ".join(map(str, ELEMENT_TYPES))  # for messages: "f16, bf16, ..., i1"

_TO_NUMPY: dict[Attribute, np.dtype] = {
    f16: np.dtype(np.float16),
    bf16: np.dtype(ml_dtypes.bfloat16),
    f32: np.dtype(np.float32),
    f64: np.dtype(np.float64),
    i8: np.dtype(np.int8),
    i16: np.dtype(np.int16),
    i32: np.dtype(np.int32),
    i64: np.dtype(np.int64),
    ui8: np.dtype(np.uint8),
    ui16: np.dtype(np.uint16),
    ui32: np.dtype(np.uint32),
    ui64: np.dtype(np.uint64),
    i1: np.dtype(np.bool_),
}
_FROM_NUMPY: dict[np.dtype, Attribute] = {v: k for k, v in _TO_NUMPY.items()}


def is_float(t: Attribute) -> bool:
    return isinstance(t, Float16Type | BFloat16Type | Float32Type | Float64Type)


def is_int(t: Attribute) -> bool:
    """An integer type other than i1 (bool): signed (i8 ... i64, signless in the IR, read
    as two's complement) or unsigned (ui8 ... ui64)."""
    return isinstance(t, IntegerType) and t.width.data > 1


def is_unsigned(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def signless(t: Attribute) -> Attribute:
    """The type arith computes in: an unsigned type's signless twin (ui8 -> i8), as MLIR
    has it (the unsigned meaning moves into the op: `divui`, `cmpi ult`, `extui`)."""
    return IntegerType(t.width.data) if is_unsigned(t) else t  # type: ignore[attr-defined]


def as_signless_value(value: int, t: Attribute) -> int:
    """An integer of type `t` as the two's-complement value its signless twin holds."""
    width = int_width(t)
    return value - (1 << width) if is_unsigned(t) and value >= 1 << (width - 1) else value


def int_width(t: Attribute) -> int:
    assert isinstance(t, IntegerType)
    return t.width.data


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
        if x.dtype.kind == "f" and dtype.kind in "iu":
            return float_to_int(x, dtype)
        return x.astype(dtype)


def float_to_int(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Floats to `dtype` as x86 converts them, whatever numpy's build does out of range.

    In range every way truncates toward zero. Outside (and NaN), C leaves it undefined
    and numpy gives what its loops compile to, which depends on the SIMD they use; this
    is the x86 sequence, the same on every device: int32 and int64 get INT_MIN
    (`cvttss2si`); narrower types the int32's low bits; uint32 and uint64 the signed
    conversion of x, or of x - 2**(w-1) with the top bit flipped where x >= 2**(w-1).
    """
    if dtype.itemsize < 4:
        return x.astype(np.int32).astype(dtype)
    if dtype.kind == "i":
        return x.astype(dtype)
    signed = np.dtype(f"int{dtype.itemsize * 8}")
    top = x.dtype.type(2.0 ** (dtype.itemsize * 8 - 1))
    high = x >= top
    low_part = np.where(high, x.dtype.type(0), x).astype(signed)
    high_part = np.where(high, x - top, x.dtype.type(0)).astype(signed) ^ np.iinfo(signed).min
    return np.where(high, high_part, low_part).astype(signed).view(dtype)


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

    __slots__ = ("element", "is_bool", "is_float", "is_int", "is_unsigned", "name", "np",
                 "priority")

    def __init__(self, name: str, element: Attribute, priority: int):
        self.name, self.element, self.priority = name, element, priority
        self.np = _TO_NUMPY[element]
        # asked several times per recorded op: kept, not recomputed from the element type
        self.is_float, self.is_int = is_float(element), is_int(element)
        self.is_bool = is_bool(element)
        self.is_unsigned = is_unsigned(element)

    def __repr__(self) -> str:
        return f"dtypes.{self.name}"


bool_ = DType("bool", i1, 0)
int8 = DType("int8", i8, 1)
uint8 = DType("uint8", ui8, 1)
int16 = DType("int16", i16, 1)
uint16 = DType("uint16", ui16, 1)
int32 = DType("int32", i32, 1)
uint32 = DType("uint32", ui32, 1)
int64 = DType("int64", i64, 2)
uint64 = DType("uint64", ui64, 2)
float16 = DType("float16", f16, 3)
bfloat16 = DType("bfloat16", bf16, 3)
float32 = DType("float32", f32, 4)
float64 = DType("float64", f64, 5)
ALL = (bool_, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, bfloat16,
       float32, float64)
default_float = float32
default_int = int32
_BY_NAME = {d.name: d for d in ALL} | {"bool_": bool_, "half": float16, "float": float32,
                                       "double": float64, "int": int32, "long": int64,
                                       "short": int16, "char": int8, "byte": uint8}


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


def sum_dtype(d: DType) -> DType:
    """What a sum or product of `d` accumulates in, as tinygrad: bool and the narrow ints
    in int32 (uint32 when unsigned); wider types keep theirs (numpy and torch widen every
    integer sum to int64)."""
    if d.is_bool:
        return int32
    if d.is_int and d.np.itemsize < 4:
        return uint32 if d.is_unsigned else int32
    return d


def promote(a: DType, b: DType) -> DType:
    """The dtype of a binary op's result on `a` and `b`.

    Between integers numpy's rule: the smallest type that holds both ranges (uint8 with
    int8 is int16, uint32 with int32 int64; uint64 with a signed type float64, as numpy).
    An integer with a float is the float, and float16 with bfloat16 float32 (neither
    holds the other), as in torch and tinygrad (numpy would widen int32 + float16 to
    float64). Bool gives way to anything.
    """
    if a is b:
        return a
    if a.is_bool or b.is_bool:
        return b if a.is_bool else a
    if a.is_int and b.is_int:
        return as_dtype(np.promote_types(a.np, b.np))
    if {a, b} == {float16, bfloat16}:
        return float32
    return a if a.priority > b.priority else b
