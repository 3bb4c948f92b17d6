"""max_pool2d(return_indices=True) (frontend/pool_indices.py): values and int64 flat
indices into each input plane against a numpy reference written after torch's CPU
kernel, against torch when it is installed, and round trips through max_unpool2d."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from conftest import F32, I64, check
from irtensor import Tensor

RNG = np.random.default_rng(0)
Pads = tuple[int, int, int, int]  # [top, left, bottom, right]


def _out_len(n: int, k: int, s: int, d: int, before: int, after: int, ceil: bool) -> int:
    """torch's pooled length: rounded up with ceil_mode, but the last window must start
    inside the input or the padding before it."""
    span = d * (k - 1) + 1
    num = n + before + after - span
    out = (-(-num // s) if ceil else num // s) + 1
    if ceil and (out - 1) * s >= n + before:
        out -= 1
    return out


def _window_max(plane: np.ndarray, rows: Sequence[int], cols: Sequence[int]
                ) -> tuple[float, int]:
    """torch's scan over one window's in-bounds cells: a strictly greater value or any
    NaN takes over; the first in-bounds cell when nothing does."""
    w = plane.shape[1]
    rows = [r for r in rows if 0 <= r < plane.shape[0]]
    cols = [c for c in cols if 0 <= c < w]
    best, where = -math.inf, rows[0] * w + cols[0]
    for r in rows:
        for c in cols:
            v = float(plane[r, c])
            if v > best or math.isnan(v):
                best, where = v, r * w + c
    return best, where


def pool_ref(x: np.ndarray, k: tuple[int, int], s: tuple[int, int], d: tuple[int, int],
             pads: Pads, ceil: bool = False) -> tuple[np.ndarray, np.ndarray]:
    top, left, bottom, right = pads
    h, w = x.shape[-2:]
    oh = _out_len(h, k[0], s[0], d[0], top, bottom, ceil)
    ow = _out_len(w, k[1], s[1], d[1], left, right, ceil)
    planes = x.reshape(-1, h, w)
    values = np.empty((len(planes), oh, ow), x.dtype)
    indices = np.empty((len(planes), oh, ow), I64)
    for p, i, j in np.ndindex(len(planes), oh, ow):
        rows = [i * s[0] - top + a * d[0] for a in range(k[0])]
        cols = [j * s[1] - left + b * d[1] for b in range(k[1])]
        values[p, i, j], indices[p, i, j] = _window_max(planes[p], rows, cols)
    return values.reshape(*x.shape[:-2], oh, ow), indices.reshape(*x.shape[:-2], oh, ow)


def unpool_ref(values: np.ndarray, indices: np.ndarray, out_hw: tuple[int, int]
               ) -> np.ndarray:
    n, c = values.shape[:2]
    out = np.zeros((n, c, out_hw[0] * out_hw[1]), values.dtype)
    for a, b in np.ndindex(n, c):
        out[a, b, indices[a, b].ravel()] = values[a, b].ravel()
    return out.reshape(n, c, *out_hw)


def _pair(v: int | tuple[int, int]) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else v


# kernel, stride, padding, dilation, ceil_mode
CASES = [
    (2, None, 0, 1, False),
    (3, 1, 1, 1, False),
    (3, 2, 1, 1, True),
    ((2, 3), (2, 1), (1, 0), 1, False),
    (2, 2, 0, 1, True),
    (3, 2, 1, 2, False),
    ((3, 2), (1, 2), (1, 1), (2, 1), True),
    (2, 3, 1, 2, True),
]


def _run_case(x: np.ndarray, k: int | tuple[int, int], stride: int | tuple[int, int] | None,
              padding: int | tuple[int, int], dilation: int | tuple[int, int], ceil: bool
              ) -> None:
    values, indices = Tensor(x).max_pool2d(k, stride, dilation, padding, ceil,
                                           return_indices=True)
    ph, pw = _pair(padding)
    want_v, want_i = pool_ref(x, _pair(k), _pair(stride if stride is not None else k),
                              _pair(dilation), (ph, pw, ph, pw), ceil)
    assert indices.dtype.name == "int64"
    check(values.numpy(), want_v)
    check(indices.numpy(), want_i)


@pytest.mark.parametrize(("k", "stride", "padding", "dilation", "ceil"), CASES)
def test_indices_match_the_reference(k: int | tuple[int, int],
                                     stride: int | tuple[int, int] | None,
                                     padding: int | tuple[int, int],
                                     dilation: int | tuple[int, int], ceil: bool) -> None:
    _run_case(RNG.uniform(-1, 1, (2, 3, 7, 6)).astype(F32), k, stride, padding, dilation,
              ceil)


@pytest.mark.parametrize(("k", "stride", "padding", "dilation", "ceil"), CASES[:4])
def test_ties_give_the_first_maximum_in_scan_order(k: int | tuple[int, int],
                                                   stride: int | tuple[int, int] | None,
                                                   padding: int | tuple[int, int],
                                                   dilation: int | tuple[int, int],
                                                   ceil: bool) -> None:
    _run_case(RNG.integers(0, 3, (1, 2, 6, 7)).astype(F32), k, stride, padding, dilation,
              ceil)
    _run_case(np.ones((1, 1, 5, 5), F32), k, stride, padding, dilation, ceil)


def test_nan_and_minus_inf_windows_follow_torch() -> None:
    """A window with NaNs points at its last NaN; an all -inf window (padding is -inf
    too) at its first cell inside the input, never at the padding."""
    row = np.array([1.0, math.nan, 3.0, math.nan, 5.0, 2.0], F32).reshape(1, 1, 1, 6)
    _, indices = Tensor(row).max_pool2d((1, 3), 1, return_indices=True)
    assert indices.numpy().ravel().tolist() == [1, 3, 3, 3]
    _run_case(np.full((1, 1, 3, 3), -np.inf, F32), 2, 1, 1, 1, False)
    x = RNG.uniform(-1, 1, (1, 2, 5, 5)).astype(F32)
    x[0, 0, 1:3, 1:3] = -np.inf
    _run_case(x, 3, 2, 1, 1, True)


def test_tinygrad_four_value_padding_and_unbatched_input() -> None:
    x = RNG.uniform(-1, 1, (3, 6, 5)).astype(F32)  # (C, H, W), as torch allows
    values, indices = Tensor(x).max_pool2d(2, 2, padding=(1, 0, 0, 1), return_indices=True)
    want_v, want_i = pool_ref(x, (2, 2), (2, 2), (1, 1), (0, 1, 1, 0))
    check(values.numpy(), want_v)
    check(indices.numpy(), want_i)


def test_one_dimensional_pool_as_a_1_by_k_window() -> None:
    x = RNG.integers(0, 4, (2, 3, 1, 9)).astype(F32)
    values, indices = Tensor(x).max_pool2d((1, 3), (1, 2), padding=(0, 1),
                                           return_indices=True)
    want_v, want_i = pool_ref(x, (1, 3), (1, 2), (1, 1), (0, 1, 0, 1))
    check(values.numpy(), want_v)
    check(indices.numpy(), want_i)


def test_without_return_indices_a_tensor_comes_back() -> None:
    out = Tensor(np.ones((1, 1, 4, 4), F32)).max_pool2d(2)
    assert isinstance(out, Tensor) and out.shape == (1, 1, 2, 2)


@pytest.mark.parametrize(("k", "stride", "padding"), [(2, None, 0), (3, 2, 1), (2, 1, 0)])
def test_round_trip_through_max_unpool2d(k: int, stride: int | None, padding: int) -> None:
    x = RNG.uniform(-1, 1, (2, 2, 6, 6)).astype(F32)
    values, indices = Tensor(x).max_pool2d(k, stride, padding=padding, return_indices=True)
    out = values.max_unpool2d(indices, k, stride, padding=padding, output_size=(6, 6))
    want_v, want_i = pool_ref(x, (k, k), _pair(stride or k), (1, 1), (padding,) * 4)
    want = unpool_ref(want_v, want_i, (6, 6))
    check(out.numpy(), want)
    kept = want != 0  # every kept value is the input's own, in its own place
    np.testing.assert_array_equal(out.numpy()[kept], x[kept])


def test_indices_match_torch() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (numpy is the "
                                "reference)")
    F = torch.nn.functional
    x = RNG.integers(-2, 3, (2, 3, 7, 6)).astype(F32)  # small ints: many ties
    x[0, 0, 2, 2] = np.nan
    for k, stride, padding, dilation, ceil in CASES:
        values, indices = Tensor(x).max_pool2d(k, stride, dilation, padding, ceil,
                                               return_indices=True)
        want_v, want_i = F.max_pool2d(torch.from_numpy(x), k, stride, padding, dilation,
                                      ceil_mode=ceil, return_indices=True)
        check(values.numpy(), want_v.numpy())
        check(indices.numpy(), want_i.numpy())


def test_unpool_matches_torch() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (numpy is the "
                                "reference)")
    F = torch.nn.functional
    x = RNG.uniform(-1, 1, (1, 2, 7, 7)).astype(F32)
    values, indices = Tensor(x).max_pool2d(3, 2, padding=1, return_indices=True)
    tv, ti = F.max_pool2d(torch.from_numpy(x), 3, 2, 1, return_indices=True)
    out = values.max_unpool2d(indices, 3, 2, padding=1, output_size=(7, 7))
    check(out.numpy(), F.max_unpool2d(tv, ti, 3, 2, 1, output_size=(7, 7)).numpy())
