"""Reductions and movement ops of the Tensor against numpy: values, shape and dtype.

Movement ops are checked on `np.arange` data, so every element says where it
came from; `__getitem__` is compared with numpy's basic indexing on many index
tuples, listed and drawn by hypothesis.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import BF16, F16, F32, F64, I1, I32, I64, check, data, ident
from irtensor import Tensor, dtypes

NP_OF = {dtypes.float32: F32, dtypes.float16: F16, dtypes.bfloat16: BF16, dtypes.float64: F64,
         dtypes.int32: I32, dtypes.int64: I64, dtypes.bool_: I1}


def T(x: np.ndarray) -> Tensor:
    return Tensor(x, dtype=x.dtype)


def expect(t: Tensor, want: np.ndarray, scale: float = 1.0) -> None:
    assert t.shape == want.shape, f"shape {t.shape}, expected {want.shape}"
    assert NP_OF[t.dtype] == want.dtype, f"dtype {t.dtype}, expected {want.dtype}"
    check(t.numpy(), want, scale)


def ar(*shape: int, dtype: np.dtype = I32) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


# --------------------------------------------------------------------------- reductions

AXES: list[Any] = [None, 0, 1, -1, (0, 2), (-1, 0), (0, 1, 2), ()]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=ident)
@pytest.mark.parametrize("name", ["sum", "max", "min", "mean"])
def test_reduce_float(name: str, axis: Any, keepdim: bool) -> None:
    x = data((2, 3, 4), F32, seed=20)
    np_axis = tuple(axis) if isinstance(axis, tuple) else axis
    want = getattr(np, name)(x.astype(F64), axis=np_axis, keepdims=keepdim).astype(F32)
    expect(getattr(T(x), name)(axis=axis, keepdim=keepdim), np.asarray(want), 4)


@pytest.mark.parametrize("dtype", [I32, I64], ids=str)
def test_reduce_int(dtype: np.dtype) -> None:
    x = data((3, 5), dtype, seed=21, low=-9, high=9)
    expect(T(x).sum(axis=1), x.sum(axis=1).astype(dtype))  # numpy widens int32, we keep it
    expect(T(x).max(axis=0, keepdim=True), x.max(axis=0, keepdims=True))
    expect(T(x).min(), np.asarray(x.min()))
    expect(T(x).mean(axis=1), x.mean(axis=1).astype(F32))  # ints average as float32


def test_reduce_bool() -> None:
    b = np.array([[True, False, True], [False, False, True]])
    expect(T(b).sum(), np.asarray(3, I32))  # bools count as int32
    expect(T(b).sum(axis=0), b.sum(axis=0).astype(I32))
    expect(T(b).max(axis=1), b.max(axis=1))
    expect(T(b).min(axis=1), b.min(axis=1))


def test_reduce_half_dtypes_kept() -> None:
    for dtype in (F16, BF16, F64):
        x = data((4, 6), dtype, seed=22)
        expect(T(x).sum(axis=1), x.astype(F64).sum(axis=1).astype(dtype), 4)
        expect(T(x).mean(axis=0), x.astype(F64).mean(axis=0).astype(dtype), 4)


@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=ident)
def test_var_std_correction(axis: Any, correction: int) -> None:
    x = data((4, 5), F32, seed=23)
    var = np.var(x.astype(F64), axis=axis, ddof=correction)
    expect(T(x).var(axis=axis, correction=correction), np.asarray(var).astype(F32), 4)
    expect(T(x).std(axis=axis, correction=correction),
           np.asarray(np.sqrt(var)).astype(F32), 4)


def test_var_std_default_correction_is_one() -> None:
    """tinygrad/torch: correction=1 by default (numpy's ddof defaults to 0)."""
    x = np.array([[1.0, 2.0, 4.0], [0.0, 0.0, 3.0]], F32)
    expect(T(x).var(), np.asarray(np.var(x.astype(F64), ddof=1), F32))
    expect(T(x).std(axis=1, keepdim=True),
           np.std(x.astype(F64), axis=1, ddof=1, keepdims=True).astype(F32))
    expect(Tensor([1, 2, 3, 4]).var(), np.asarray(np.var([1, 2, 3, 4], ddof=1), F32))


def test_reduce_zero_size() -> None:
    x = np.zeros((0, 3), F32)
    expect(T(x).sum(axis=0), np.zeros(3, F32))
    expect(T(x).sum(), np.asarray(0, F32))
    expect(T(x).max(axis=0), np.full(3, -np.inf, F32))


def test_reduce_bad_axis_raises() -> None:
    with pytest.raises(ValueError, match="axis 3 is out of range for rank 2"):
        Tensor.ones(2, 3).sum(axis=3)
    with pytest.raises(ValueError, match="axis -3"):
        Tensor.ones(2, 3).max(axis=(0, -3))


@given(hnp.arrays(F32, hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4),
                  elements=st.floats(-10, 10, width=32)),
       st.data(), st.sampled_from(["sum", "max", "min", "mean"]), st.booleans())
def test_hypothesis_reductions(x: np.ndarray, draw: st.DataObject, name: str,
                               keepdim: bool) -> None:
    axis = draw.draw(st.none() | st.sets(st.integers(0, x.ndim - 1)).map(tuple), label="axis")
    want = getattr(np, name)(x.astype(F64), axis=axis, keepdims=keepdim)
    expect(getattr(T(x), name)(axis=axis, keepdim=keepdim), np.asarray(want).astype(F32), 8)


@given(hnp.arrays(F32, hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=5),
                  elements=st.floats(-10, 10, width=32)),
       st.integers(0, 1))
def test_hypothesis_var(x: np.ndarray, correction: int) -> None:
    want = np.var(x.astype(F64), axis=-1, ddof=correction)
    check(T(x).var(axis=-1, correction=correction).numpy(), want.astype(F32), 50)


# --------------------------------------------------------------------------- movement


def test_reshape_and_view() -> None:
    x = ar(2, 3, 4)
    expect(T(x).reshape(6, 4), x.reshape(6, 4))
    expect(T(x).reshape((4, -1)), x.reshape(4, -1))
    expect(T(x).reshape(-1), x.reshape(-1))
    expect(T(x).view(2, 12), x.reshape(2, 12))
    expect(T(ar(1)).reshape(()), ar(1).reshape(()))
    expect(T(ar(0, 3)).reshape(3, 0), ar(0, 3).reshape(3, 0))
    assert T(x).reshape(2, 3, 4).ir().count("hl.reshape") == 0  # no-op records nothing
    expect(T(x).reshape(np.int64(4), np.int32(6)), x.reshape(4, 6))  # numpy ints are ints
    with pytest.raises(TypeError):
        T(x).reshape(4, 6.0)


def test_reshape_errors_name_both_shapes() -> None:
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 2\)"):
        Tensor.ones(2, 3).reshape(4, 2)
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, -1\)"):
        Tensor.ones(2, 3).reshape(4, -1)
    with pytest.raises(ValueError, match="only one size may be -1"):
        Tensor.ones(2, 3).reshape(-1, -1)


def test_permute_transpose_T() -> None:
    x = ar(2, 3, 4)
    expect(T(x).permute(2, 0, 1), x.transpose(2, 0, 1))
    expect(T(x).permute((1, 2, 0)), x.transpose(1, 2, 0))
    expect(T(x).permute(-1, -2, -3), x.transpose(2, 1, 0))
    expect(T(x).transpose(), x.swapaxes(1, 0))  # tinygrad: default dims 1 and 0
    expect(T(x).transpose(0, 2), x.swapaxes(0, 2))
    expect(T(x).transpose(-1, -2), x.swapaxes(-1, -2))
    expect(T(ar(3, 5)).T, ar(3, 5).T)
    with pytest.raises(ValueError, match="permutation"):
        T(x).permute(0, 0, 1)


def test_expand() -> None:
    x = ar(3, 1)
    expect(T(x).expand(3, 4), np.broadcast_to(x, (3, 4)))
    expect(T(x).expand((2, 3, 5)), np.broadcast_to(x, (2, 3, 5)))
    expect(T(x).expand(2, -1, 4), np.broadcast_to(x, (2, 3, 4)))
    expect(T(ar(1)).expand(0), np.broadcast_to(ar(1), (0,)))
    with pytest.raises(ValueError, match=r"\(3, 1\).*\(4, 4\)"):
        T(x).expand(4, 4)
    with pytest.raises(ValueError, match=r"\(3, 1\).*\(3,\)"):
        T(x).expand(3)


def test_flatten_unflatten_squeeze_unsqueeze() -> None:
    x = ar(2, 1, 3, 4)
    expect(T(x).flatten(), x.reshape(-1))
    expect(T(x).flatten(1), x.reshape(2, -1))
    expect(T(x).flatten(1, 2), x.reshape(2, 3, 4))
    expect(T(x).flatten(-2), x.reshape(2, 1, 12))
    expect(T(np.array(5, I32)).flatten(), np.array([5], I32))
    expect(T(x).unflatten(3, (2, 2)), x.reshape(2, 1, 3, 2, 2))
    expect(T(x).unflatten(-1, (-1, 2)), x.reshape(2, 1, 3, 2, 2))
    expect(T(x).squeeze(), x.squeeze())
    expect(T(x).squeeze(1), x.squeeze(1))
    expect(T(x).squeeze(0), x)  # a size-2 axis stays, as in torch/tinygrad
    expect(T(x).unsqueeze(0), x[None])
    expect(T(x).unsqueeze(-1), x[..., None])
    expect(T(x).unsqueeze(2), np.expand_dims(x, 2))


@pytest.mark.parametrize(("padding", "value"), [
    (((1, 2), (0, 1)), 0.0),
    (((0, 0), (3, 0)), -1.5),
    ((None, (1, 1)), 2.0),
    (((-1, 1), (0, -2)), 0.0),  # negative amounts crop
    (((0, 0), (0, 0)), 0.0),
], ids=ident)
def test_pad(padding: tuple, value: float) -> None:
    """tinygrad's pad: ((before, after), ...) per axis, None for none (numpy's np.pad layout,
    but negative amounts crop)."""
    x = ar(3, 4, dtype=F32)
    pairs = [p or (0, 0) for p in padding]
    crop = x[tuple(slice(max(-b, 0), x.shape[i] - max(-a, 0)) for i, (b, a) in enumerate(pairs))]
    want = np.pad(crop, [(max(b, 0), max(a, 0)) for b, a in pairs], constant_values=value)
    expect(T(x).pad(padding, value=value), want)


def test_pad_wrong_arity_raises() -> None:
    with pytest.raises(ValueError, match="pad needs 2"):
        Tensor.ones(2, 2).pad(((1, 1),))


@pytest.mark.parametrize("axis", [0, 1, -1, (0, 2), (0, 1, 2)], ids=ident)
def test_flip(axis: Any) -> None:
    x = ar(2, 3, 4)
    expect(T(x).flip(axis), np.flip(x, axis))


@pytest.mark.parametrize(("shape", "reps"), [((2, 3), (2, 1)), ((2, 3), (1, 3)),
                                             ((3,), (2, 2)), ((2, 1, 2), (2, 3, 1)),
                                             ((2, 2), (1, 1)), ((2,), (0,))], ids=ident)
def test_repeat_is_np_tile(shape: tuple, reps: tuple) -> None:
    """tinygrad's repeat is numpy's tile (not np.repeat)."""
    x = ar(*shape)
    expect(T(x).repeat(*reps), np.tile(x, reps))
    expect(T(x).repeat(reps), np.tile(x, reps))


def test_repeat_too_few_counts() -> None:
    with pytest.raises(ValueError, match="at least 2 counts"):
        Tensor.ones(2, 2).repeat(3)


def test_cat_stack() -> None:
    a, b, c = ar(2, 3), ar(1, 3) + 100, ar(4, 3, dtype=F32) / 2
    expect(T(a).cat(T(b), dim=0), np.concatenate([a, b]))
    expect(T(a).cat(T(b), T(a), dim=-2), np.concatenate([a, b, a], axis=-2))
    expect(T(a).cat(T(c)), np.concatenate([a, c]).astype(F32))  # dtypes promote
    expect(T(a).cat(T(a + 1), dim=1), np.concatenate([a, a + 1], axis=1))
    expect(T(a).cat(), a)
    expect(T(a).stack(T(a * 2)), np.stack([a, a * 2]))
    expect(T(a).stack(T(a * 2), T(a), dim=1), np.stack([a, a * 2, a], axis=1))
    expect(T(a).stack(T(a), dim=-1), np.stack([a, a], axis=-1))
    with pytest.raises(ValueError, match=r"\(1, 3\).*\(2, 3\)"):
        T(a).cat(T(b), dim=1)


@pytest.mark.parametrize(("n", "size", "sizes"), [(7, 3, [3, 3, 1]), (6, 2, [2, 2, 2]),
                                                  (4, 5, [4]), (5, 1, [1] * 5)])
def test_split_equal_size(n: int, size: int, sizes: list[int]) -> None:
    """split(int): pieces of that size, the last one smaller (torch/tinygrad)."""
    x = ar(2, n)
    pieces = T(x).split(size, dim=1)
    want = np.split(x, np.cumsum(sizes)[:-1], axis=1)
    assert [p.shape[1] for p in pieces] == sizes
    for p, w in zip(pieces, want, strict=True):
        expect(p, w)


def test_split_sizes_and_errors() -> None:
    x = ar(6, 2)
    parts = T(x).split([1, 3, 2])
    for p, w in zip(parts, np.split(x, [1, 4]), strict=True):
        expect(p, w)
    with pytest.raises(ValueError, match=r"\[1, 2\].*6"):
        T(x).split([1, 2])
    with pytest.raises(ValueError, match="at least 1"):
        T(x).split(0)


@pytest.mark.parametrize(("n", "chunks", "sizes"), [(7, 3, [3, 3, 1]), (6, 3, [2, 2, 2]),
                                                    (6, 4, [2, 2, 2]), (2, 5, [1, 1])])
def test_chunk(n: int, chunks: int, sizes: list[int]) -> None:
    """chunk(k): pieces of size ceil(n/k), so fewer than k when it does not divide (torch and
    tinygrad; np.array_split would give [3, 2, 2] for 7 in 3)."""
    x = ar(n, 3)
    pieces = T(x).chunk(chunks)
    assert [p.shape[0] for p in pieces] == sizes
    for p, w in zip(pieces, np.split(x, np.cumsum(sizes)[:-1]), strict=True):
        expect(p, w)
    with pytest.raises(ValueError, match="at least 1"):
        T(x).chunk(0)


def test_movement_is_copy_free() -> None:
    """Movement ops record hl movement ops on the input buffer; nothing is copied."""
    x = T(ar(4, 6, dtype=F32))
    y = x.reshape(2, 12).permute(1, 0)[::2].flip(0).pad(((1, 0), None)).expand(2, 7, 2)
    text = y.ir()
    for op in ("hl.reshape", "hl.permute", "hl.slice", "hl.flip", "hl.pad", "hl.broadcast_to"):
        assert op in text
    assert text.count("%in0") >= 2 and "ll.const" not in text
    ref = np.pad(ar(4, 6, dtype=F32).reshape(2, 12).T[::2][::-1], ((1, 0), (0, 0)))
    expect(y, np.broadcast_to(ref, (2, 7, 2)))


# --------------------------------------------------------------------------- getitem

INDICES: list[Any] = [
    0, -1, 2, slice(None), slice(1, 3), slice(-2, None), slice(None, None, 2),
    slice(None, None, -1), slice(3, 0, -2), slice(-1, -4, -1), slice(10, 20), slice(2, 2),
    slice(-100, 100, 3), None, Ellipsis,
    (0, 0), (1, -1, 2), (-1, slice(None), 0), (slice(None), 1), (slice(None), slice(1, None, 2)),
    (Ellipsis, 0), (Ellipsis, slice(None, None, -1)), (0, Ellipsis, 1), (None, 0), (0, None),
    (None, Ellipsis, None), (slice(None), None, slice(None, None, -2)),
    (slice(1, None), None, 2, Ellipsis), (None, None, 1, None), (1, 2, 3),
    (slice(None, None, -1), slice(None, None, -1), slice(None, None, -1)),
    (slice(None, 1), slice(3, None), slice(None, None, 3)), (Ellipsis,), (),
]


@pytest.mark.parametrize("index", INDICES, ids=ident)
def test_getitem_matches_numpy(index: Any) -> None:
    x = ar(3, 4, 5)
    expect(T(x)[index], np.asarray(x[index]))


def test_getitem_one_dim_and_scalar_result() -> None:
    x = ar(6, dtype=F32)
    expect(T(x)[::-1], x[::-1])
    expect(T(x)[4], np.asarray(x[4]))
    expect(T(x)[np.int64(-2)], np.asarray(x[-2]))  # numpy's ints index too
    assert T(x)[4].item() == 4.0


def test_getitem_errors() -> None:
    t = T(ar(3, 4))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 of size 3"):
        t[3]
    with pytest.raises(IndexError, match="-5"):
        t[0, -5]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        t[..., 0, ...]
    with pytest.raises(TypeError, match="beside another must hold integers"):
        t[Tensor([0, 1]), [0.5, 1.0]]
    with pytest.raises(TypeError, match=r"only ints, slices, None, \.\.\., and integer"):
        t[0, "a"]
    with pytest.raises(TypeError):
        t[0.5]


@st.composite
def index_case(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5))
    index = draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    return shape, index


@given(index_case())
def test_hypothesis_getitem(case: tuple[tuple[int, ...], Any]) -> None:
    shape, index = case
    x = ar(*shape)
    expect(T(x)[index], np.asarray(x[index]))


@given(hnp.array_shapes(min_dims=1, max_dims=4, max_side=4), st.data())
def test_hypothesis_permute_flip_reshape(shape: tuple[int, ...], draw: st.DataObject) -> None:
    x = ar(*shape)
    perm = draw.draw(st.permutations(range(len(shape))), label="perm")
    axes = draw.draw(st.sets(st.integers(0, len(shape) - 1)), label="flip")
    want = np.flip(x.transpose(perm), tuple(axes)).reshape(-1)
    expect(T(x).permute(perm).flip(tuple(axes)).flatten(), want)
