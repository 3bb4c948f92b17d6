"""torch's and tinygrad's keyword arguments of the pools, div and gelu.

Each is checked against a numpy reference written here (naive loops over output
positions for the pools, in float64) and, where torch is installed, against torch.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from conftest import F32, F64, I32, check, data, ident
from irtensor import Tensor, dtypes


def _two(x: int | tuple[int, int]) -> tuple[int, int]:
    return (x, x) if isinstance(x, int) else x


def _out_len(size: int, k: int, s: int, d: int, p: int, ceil_mode: bool) -> int:
    """torch's pooling output length (symmetric padding p)."""
    span = d * (k - 1) + 1
    if not ceil_mode:
        return (size + 2 * p - span) // s + 1
    out = -(-(size + 2 * p - span) // s) + 1
    return out - 1 if (out - 1) * s >= size + p else out


def pool_ref(x: np.ndarray, kind: str, kernel_size: int | tuple[int, int] = 2,
             stride: int | tuple[int, int] | None = None, padding: int | tuple[int, int] = 0,
             dilation: int | tuple[int, int] = 1, ceil_mode: bool = False,
             count_include_pad: bool = True) -> np.ndarray:
    """Window by window: max over the in-bounds cells, or their sum divided by the
    cells counted (those inside the padded extent, or only the input's)."""
    (kh, kw), (dh, dw), (ph, pw) = _two(kernel_size), _two(dilation), _two(padding)
    sh, sw = _two(stride) if stride is not None else (kh, kw)
    *lead, h, w = x.shape
    oh = _out_len(h, kh, sh, dh, ph, ceil_mode)
    ow = _out_len(w, kw, sw, dw, pw, ceil_mode)
    out = np.zeros((*lead, oh, ow))
    for i in range(oh):
        for j in range(ow):
            rows = [i * sh - ph + a * dh for a in range(kh)]
            cols = [j * sw - pw + b * dw for b in range(kw)]
            cells = [x[..., r, c].astype(F64) for r in rows for c in cols
                     if 0 <= r < h and 0 <= c < w]
            if kind == "max":
                out[..., i, j] = np.max(cells, axis=0)
                continue
            padded = sum(1 for r in rows for c in cols if -ph <= r < h + ph and -pw <= c < w + pw)
            out[..., i, j] = np.sum(cells, axis=0) / (padded if count_include_pad else len(cells))
    return out.astype(F32)


def torch_pool(x: np.ndarray, kind: str, **kw: Any) -> np.ndarray:
    torch = pytest.importorskip("torch", reason="torch is not installed (numpy is the reference)")
    fn = torch.nn.functional.max_pool2d if kind == "max" else torch.nn.functional.avg_pool2d
    return fn(torch.from_numpy(x), **kw).numpy()


def check_pool(kind: str, kw: dict, shape: tuple[int, ...] = (1, 2, 5, 7),
               torch_too: bool = True) -> np.ndarray:
    x = data(shape, F32, seed=3)
    want = pool_ref(x, kind, **kw)
    got = getattr(Tensor(x), f"{kind}_pool2d")(**kw)
    assert got.dtype is dtypes.float32
    check(got.numpy(), want, 4)
    if torch_too:
        check(torch_pool(x, kind, **kw), want, 4)
    return want


# --------------------------------------------------------------------------- pools

CEIL_CASES = [  # (arguments, input H x W, whether ceil_mode changes the output size)
    (dict(kernel_size=2), (5, 7), True),  # 2 x 3 windows, 3 x 4 with ceil
    (dict(kernel_size=3, stride=2, padding=1), (6, 8), True),  # 3 x 4, 4 x 5
    (dict(kernel_size=(2, 3), stride=(2, 2)), (5, 8), True),  # 2 x 3, 3 x 4
    # rounding up would add a window starting in the padding after: torch drops it
    (dict(kernel_size=2, stride=2, padding=1), (5, 7), False),
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize(("kw", "hw", "changes"), CEIL_CASES, ids=ident)
def test_ceil_mode(kind: str, kw: dict, hw: tuple[int, int], changes: bool) -> None:
    want = check_pool(kind, {**kw, "ceil_mode": True}, shape=(1, 2, *hw))
    floor = getattr(Tensor.ones(1, 2, *hw), f"{kind}_pool2d")(**kw)
    assert (want.shape != floor.shape) == changes


def test_ceil_mode_window_starts_inside_input_or_padding_before() -> None:
    x = Tensor.ones(1, 1, 5, 5)  # padded to 7: a 4th window of 2 would start at 6, after
    assert x.max_pool2d(2, 2, padding=1, ceil_mode=True).shape == (1, 1, 3, 3)
    assert x.avg_pool2d(2, 2, padding=1, ceil_mode=True).shape == (1, 1, 3, 3)


@pytest.mark.parametrize("kw", [
    dict(kernel_size=3, stride=1, padding=1),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1)),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
], ids=ident)
def test_avg_pool_count_include_pad_false(kw: dict) -> None:
    want = check_pool("avg", {**kw, "count_include_pad": False})
    with_pad = pool_ref(data((1, 2, 5, 7), F32, seed=3), "avg", **kw)
    assert not np.allclose(want, with_pad), "padding should change the average"


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("kw", [
    dict(kernel_size=2, dilation=2),
    dict(kernel_size=3, dilation=2, stride=1),
    dict(kernel_size=3, dilation=2, stride=2, padding=1),
    dict(kernel_size=(2, 3), dilation=(2, 1), stride=(1, 2), padding=(1, 1)),
    dict(kernel_size=2, dilation=2, stride=2, padding=1, ceil_mode=True),
], ids=ident)
def test_pool_dilation(kind: str, kw: dict) -> None:
    check_pool(kind, kw, shape=(2, 6, 7), torch_too=kind == "max")  # torch's avg: no dilation


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_wide_dilated_pools_fold_axis_by_axis(kind: str) -> None:
    """A 40 x 41 dilated window: 81 taps in two kernels, not a chain of 1640 (which
    overflowed Python's recursion in fuse)."""
    check_pool(kind, dict(kernel_size=(40, 41), dilation=(3, 2), stride=(5, 7), padding=(2, 3)),
               shape=(1, 2, 130, 100), torch_too=kind == "max")


def test_avg_pool_dilation_count_include_pad_false() -> None:
    check_pool("avg", dict(kernel_size=2, dilation=2, padding=1, count_include_pad=False),
               torch_too=False)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool_defaults_record_one_hl_op(kind: str) -> None:
    text = getattr(Tensor.ones(1, 1, 4, 4), f"{kind}_pool2d")(3, 1, padding=1).ir()
    assert f"hl.{kind}_pool2d" in text and "hl.div" not in text and "hl.pad" not in text


# --------------------------------------------------------------------------- div

A_F = np.array([-7.5, 7.5, -7.0, 7.0, -1.0, 1.0, 0.5, -0.5, 0.0, -3.0], F32)
B_F = np.array([2.0, -2.0, 2.0, -2.0, 0.3, 0.1, -4.0, 4.0, -1.0, 3.0], F32)
A_I = np.array([-7, 7, -7, 7, 6, -6, 0, 1, -1, 5], I32)
B_I = np.array([2, -2, -2, 2, 3, 3, -4, 4, 4, -5], I32)


def div_ref(a: np.ndarray, b: np.ndarray, mode: str | None) -> np.ndarray:
    if mode is None:
        return (a.astype(F64) / b.astype(F64)).astype(F32)
    if mode == "floor":
        return np.floor_divide(a, b)  # Python's rule, as torch: 1.0 // 0.1 is 9.0
    if a.dtype == I32:
        return (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(I32)
    return np.trunc(a / b)


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize(("a", "b"), [(A_F, B_F), (A_I, B_I)], ids=["float32", "int32"])
def test_div_rounding_mode(a: np.ndarray, b: np.ndarray, mode: str | None) -> None:
    got = Tensor(a).div(Tensor(b), rounding_mode=mode).numpy()
    want = div_ref(a, b, mode)
    check(got, want)
    if want.dtype == F32:
        assert np.array_equal(np.signbit(got), np.signbit(want)), "the sign of zero"
    torch = pytest.importorskip("torch", reason="torch is not installed (numpy is the reference)")
    ref = torch.div(torch.from_numpy(a), torch.from_numpy(b), rounding_mode=mode).numpy()
    check(got, ref)  # dtype too: float32 for None, the input's for trunc and floor


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_div_rounding_mode_scalars(mode: str) -> None:
    ints = Tensor(A_I).div(-4, rounding_mode=mode)
    assert ints.dtype is dtypes.int32
    check(ints.numpy(), div_ref(A_I, np.full_like(A_I, -4), mode))
    floats = Tensor(A_I).div(2.5, rounding_mode=mode)  # a float scalar: the default float
    assert floats.dtype is dtypes.float32
    check(floats.numpy(), div_ref(A_I.astype(F32), np.full(A_I.shape, 2.5, F32), mode))


def test_div_float_by_zero_and_infinity() -> None:
    a = np.array([1.0, -1.0, 0.0, 5.0, -5.0], F32)
    b = np.array([0.0, 0.0, 0.0, np.inf, np.inf], F32)
    want = np.array([np.inf, -np.inf, np.nan, 0.0, -1.0], F32)  # a / b where b is 0
    check(Tensor(a).div(Tensor(b), rounding_mode="floor").numpy(), want)


def test_div_bad_rounding_mode() -> None:
    with pytest.raises(ValueError, match="'trunc' or 'floor'"):
        Tensor([1.0]).div(2, rounding_mode="round")


# --------------------------------------------------------------------------- gelu

XS = np.linspace(-5, 5, 21).astype(F32)


def gelu_ref(x: np.ndarray, approximate: str) -> np.ndarray:
    x64 = x.astype(F64)
    if approximate == "none":
        erf = np.vectorize(math.erf)(x64 / math.sqrt(2))
        return (0.5 * x64 * (1 + erf)).astype(F32)
    inner = math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3)
    return (0.5 * x64 * (1 + np.tanh(inner))).astype(F32)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_approximate(approximate: str) -> None:
    got = Tensor(XS).gelu(approximate=approximate).numpy()
    want = gelu_ref(XS, approximate)
    check(got, want, 4)
    torch = pytest.importorskip("torch", reason="torch is not installed (numpy is the reference)")
    ref = torch.nn.functional.gelu(torch.from_numpy(XS), approximate=approximate).numpy()
    check(got, ref, 4)


def test_gelu_default_is_the_tanh_approximation() -> None:
    check(Tensor(XS).gelu().numpy(), gelu_ref(XS, "tanh"), 4)
    assert not np.allclose(gelu_ref(XS, "tanh"), gelu_ref(XS, "none"), rtol=1e-6, atol=1e-6)


def test_gelu_bad_approximate() -> None:
    with pytest.raises(ValueError, match="'none' or 'tanh'"):
        Tensor([1.0]).gelu(approximate="erf")
