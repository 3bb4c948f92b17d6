"""The narrow and unsigned integer dtypes (int8, uint8, int16, uint16, uint32, uint64)
end to end, against numpy, on every device.

Arithmetic wraps as numpy's does; floor division and modulo by zero give 0 (the rule
every irtensor int has); casts between ints wrap, ints to floats round once, and floats
to ints truncate (out of range: `dtypes.float_to_int`, the x86 conversion, the same on
every device). Binary ops promote two ints by numpy's rule (uint8 with int8 is int16).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest

from irtensor import Tensor, dtypes

NEW = [np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.uint64)]
ALL_INTS = [*NEW, np.dtype(np.int32), np.dtype(np.int64)]
FLOATS = [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32),
          np.dtype(np.float64)]
RNG = np.random.default_rng(7)


def ints(dtype: np.dtype, shape: tuple[int, ...] = (5, 7)) -> np.ndarray:
    """Values over the whole range of `dtype`, its extremes and small values among them."""
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    flat = x.reshape(-1)
    edges = np.array([info.min, info.max, 0, 1, 2, info.max - 1], dtype)[: flat.size]
    flat[: len(edges)] = edges
    small = flat[len(edges): len(edges) + 6]
    small[...] = RNG.integers(0, 4, small.size).astype(dtype)
    return x


def T(x: np.ndarray) -> Tensor:
    return Tensor(x, dtype=x.dtype)


def same(got: Tensor, want: np.ndarray) -> None:
    value = got.numpy()
    assert value.dtype == want.dtype, (value.dtype, want.dtype)
    assert value.shape == want.shape
    np.testing.assert_array_equal(value, want)


def safe_floordiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.where(b == 0, 0, a // np.where(b == 0, 1, b)).astype(a.dtype)


def safe_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.where(b == 0, 0, a % np.where(b == 0, 1, b)).astype(a.dtype)


BINARY: dict[str, tuple[Callable, Callable]] = {
    "add": (operator.add, operator.add),
    "sub": (operator.sub, operator.sub),
    "mul": (operator.mul, operator.mul),
    "floordiv": (operator.floordiv, safe_floordiv),
    "mod": (operator.mod, safe_mod),
    "maximum": (Tensor.maximum, np.maximum),
    "minimum": (Tensor.minimum, np.minimum),
    "lt": (operator.lt, operator.lt),
    "le": (operator.le, operator.le),
    "gt": (operator.gt, operator.gt),
    "eq": (operator.eq, operator.eq),
    "ne": (operator.ne, operator.ne),
    "and": (operator.and_, operator.and_),
    "or": (operator.or_, operator.or_),
    "xor": (operator.xor, operator.xor),
}


@pytest.mark.parametrize("dtype", NEW, ids=str)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_ops_wrap_and_compare_as_numpy(dtype: np.dtype, name: str) -> None:
    a, b = ints(dtype), ints(dtype)
    b[0, :3] = 0  # division by zero is 0
    if dtype.kind == "i":
        b[1, :2] = -1  # INT_MIN // -1 wraps
    ours, theirs = BINARY[name]
    with np.errstate(all="ignore"):
        want = theirs(a, b)
    same(ours(T(a), T(b)), want)


@pytest.mark.parametrize("dtype", NEW, ids=str)
def test_unary_ops_and_scalars(dtype: np.dtype) -> None:
    a = ints(dtype)
    with np.errstate(all="ignore"):
        same(-T(a), (0 - a).astype(dtype))
        same(~T(a), ~a)
        same(T(a) + 1, (a + dtype.type(1)).astype(dtype))
        same(3 * T(a), (a * dtype.type(3)).astype(dtype))
        same(T(a) << 3, (a << dtype.type(3)).astype(dtype))
        same(T(a) >> 2, a >> dtype.type(2))
    same(T(a).abs(), np.abs(a) if dtype.kind == "i" else a)
    same((T(a) > 2).where(T(a), 7), np.where(a > 2, a, dtype.type(7)))


@pytest.mark.parametrize("dtype", NEW, ids=str)
def test_a_python_scalar_out_of_range_refuses(dtype: np.dtype) -> None:
    info = np.iinfo(dtype)
    with pytest.raises(OverflowError, match=f"does not fit {dtype.name}"):
        T(ints(dtype)) + (info.max + 1)
    if dtype.kind == "u":
        with pytest.raises(OverflowError, match="does not fit"):
            T(ints(dtype)) * -1


@pytest.mark.parametrize("dtype", NEW, ids=str)
def test_reductions(dtype: np.dtype) -> None:
    a = ints(dtype, (6, 9))
    acc = dtypes.sum_dtype(dtypes.as_dtype(dtype)).np
    with np.errstate(all="ignore"):
        same(T(a).sum(1), a.sum(1, dtype=acc))
        same(T(a).sum(), np.asarray(a.sum(dtype=acc)))
        same(T(a).prod(0), a.prod(0, dtype=acc))
        same(T(a).cumsum(1), a.cumsum(1, dtype=acc))
    same(T(a).max(1), a.max(1))
    same(T(a).min(0), a.min(0))
    same(T(a).max(), np.asarray(a.max()))
    same(T(a).argmax(1), a.argmax(1).astype(np.int32))
    same(T(a).argmin(0), a.argmin(0).astype(np.int32))
    # an epilogue on an unsigned max: the flipped sign bit comes back before the add
    with np.errstate(all="ignore"):
        same(T(a).max(1) + T(a[:, 0]), (a.max(1) + a[:, 0]).astype(dtype))


def test_sum_accumulates_narrow_ints_in_32_bits() -> None:
    """As tinygrad: int8/int16 sum into int32 and uint8/uint16 into uint32; wider keep."""
    expected = {"int8": "int32", "uint8": "uint32", "int16": "int32", "uint16": "uint32",
                "uint32": "uint32", "uint64": "uint64", "bool": "int32"}
    for name, acc in expected.items():
        value = {"bool": 1, "int8": 100}.get(name, 200)
        x = Tensor(np.full((300,), value, dtype=name))
        assert x.sum().dtype.name == acc
        assert x.sum().item() == 300 * value  # more than the input dtype holds


def test_promotion_between_ints_is_numpys() -> None:
    for a in ALL_INTS:
        for b in ALL_INTS:
            got = (T(np.zeros(2, a)) + T(np.zeros(2, b))).dtype
            assert got.np == np.promote_types(a, b), (a, b, got)
    for f in FLOATS:
        assert (T(np.zeros(2, np.uint64)) + T(np.zeros(2, f))).dtype.np == f
    assert (T(np.zeros(2, np.uint8)) + T(np.zeros(2, bool))).dtype is dtypes.uint8


@pytest.mark.parametrize("source", [*NEW, np.dtype(np.int32), np.dtype(np.int64),
                                    np.dtype(np.bool_)], ids=str)
def test_casts_from_ints(source: np.dtype) -> None:
    a = ints(source) if source.kind != "b" else RNG.random((5, 7)) < 0.5
    for target in [*ALL_INTS, *FLOATS, np.dtype(np.bool_)]:
        with np.errstate(all="ignore"):
            want = dtypes.cast_array(a, target)
        same(T(a).cast(target), want)
        if target.kind in "iu" and source.kind in "iu":
            np.testing.assert_array_equal(want, a.astype(target))  # numpy's wrap-around


@pytest.mark.parametrize("source", FLOATS, ids=str)
def test_casts_from_floats(source: np.dtype) -> None:
    """In range: numpy's truncation. Out of range and NaN: the x86 conversion (what
    numpy gives here for f32 and f64 sources), on every device."""
    inside = np.array([0.0, 0.7, 1.5, 2.9, 100.2, 127.9, 200.5, 255.0, 30000.5, 65535.0,
                       -0.5, -1.5, -100.7, -128.0], np.float64).astype(source)
    outside = np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, 3e9, 70000.0, -70000.0,
                        1.8e19, 1e30], np.float64).astype(source)
    for target in [*ALL_INTS]:
        info = np.iinfo(target)
        x = inside[(inside.astype(np.float64) > info.min - 1)
                   & (inside.astype(np.float64) < info.max + 1.0)]
        with np.errstate(all="ignore"):
            same(T(x).cast(target), x.astype(np.float32).astype(target)
                 if source == np.dtype(ml_dtypes.bfloat16) else x.astype(target))
            same(T(outside).cast(target), dtypes.float_to_int(
                outside.astype(np.float32) if source.itemsize == 2 else outside, target))


def test_float_to_int_is_numpys_on_f32_and_f64() -> None:
    x = np.array([-1.0, 300.0, np.nan, 1e10, -1e10, 3.7, -3.7, np.inf, 70000.0, 2.0**33,
                  3e9, 1e19], np.float32)
    for target in ALL_INTS:
        for y in (x, x.astype(np.float64)):
            with np.errstate(all="ignore"):
                np.testing.assert_array_equal(dtypes.float_to_int(y, target), y.astype(target))


@pytest.mark.parametrize("dtype", [np.dtype(np.uint8), np.dtype(np.int16),
                                   np.dtype(np.uint64)], ids=str)
def test_movement_and_pads(dtype: np.dtype) -> None:
    a, b = ints(dtype, (4, 6)), ints(dtype, (2, 6))
    same(T(a).cat(T(b), dim=0), np.concatenate([a, b]))
    same(T(a).pad(((1, 0), (0, 2))), np.pad(a, ((1, 0), (0, 2))))
    same(T(a).flip(1).permute(1, 0), a[:, ::-1].T)
    same(T(a)[1:3, ::2], a[1:3, ::2])
    same(T(a)[Tensor([0, 3, 3])], a[[0, 3, 3]])
    # -inf pads with the type's lowest value (0 for unsigned), which never wins a max
    padded = T(a).pad(((1, 1), (2, 0)), value=-math.inf)
    lowest = np.iinfo(dtype).min
    same(padded, np.pad(a, ((1, 1), (2, 0)), constant_values=lowest))
    same(padded.max(0), np.pad(a, ((1, 1), (2, 0)), constant_values=lowest).max(0))


def test_shorthands_and_names() -> None:
    x = Tensor([1.7, -2.2, 300.0])
    assert x.short().dtype is dtypes.int16 and x.short().tolist() == [1, -2, 300]
    assert x.char().dtype is dtypes.int8
    assert Tensor([1, 2, 255]).byte().dtype is dtypes.uint8
    for name in ("int8", "uint8", "int16", "uint16", "uint32", "uint64"):
        d = dtypes.as_dtype(name)
        assert d.name == name and d.np == np.dtype(name)
        assert Tensor.zeros(2, dtype=name).dtype is d
        assert Tensor.arange(4, dtype=name).tolist() == [0, 1, 2, 3]
    assert Tensor([1, 2], dtype="uint8").element_size() == 1
    assert Tensor([1, 2], dtype="uint16").nbytes() == 4
    assert not Tensor([1], dtype="uint8").is_floating_point()


def test_safetensors_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from irtensor.nn.state import safe_load, safe_save

    state = {name: T(ints(np.dtype(name), (3, 4)))
             for name in ("int8", "uint8", "int16", "uint16", "uint32", "uint64")}
    path = tmp_path / "ints.safetensors"
    safe_save(state, path)
    loaded = safe_load(path)
    for name, t in state.items():
        same(loaded[name], t.numpy())


@pytest.mark.parametrize("dtype", NEW, ids=str)
def test_zero_d_empty_and_broadcast_inputs(dtype: np.dtype) -> None:
    scalar = np.asarray(RNG.integers(0, 100), dtype)
    column, row = ints(dtype, (3, 1)), ints(dtype, (1, 4))
    with np.errstate(all="ignore"):
        same(T(scalar) * T(row), scalar * row)
        same(T(column) + T(row), column + row)
        same(T(column).maximum(T(row)), np.maximum(column, row))
        same(T(column) // T(scalar), safe_floordiv(*np.broadcast_arrays(column, scalar)))
    empty = np.zeros((0, 3), dtype)
    acc = dtypes.sum_dtype(dtypes.as_dtype(dtype)).np
    same(T(empty) + T(row[:, :3]), empty + row[:, :3])
    same(T(empty).sum(0), empty.sum(0, dtype=acc))
    same(T(empty).sum(1), empty.sum(1, dtype=acc))
    same(T(empty).cast(np.float32), empty.astype(np.float32))
