"""Linear algebra and nn ops of the Tensor against numpy written out here.

conv2d and the pools are compared with naive loops over output positions,
computed in float64; the two-layer MLP and the small conv net are whole
forwards written once with the API and once in numpy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

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


def f64(x: np.ndarray) -> np.ndarray:
    return x.astype(F64)


# --------------------------------------------------------------------------- numpy references


def conv2d_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None,
               stride: tuple[int, int] = (1, 1), pad: tuple[int, int, int, int] = (0, 0, 0, 0),
               dilation: tuple[int, int] = (1, 1), groups: int = 1) -> np.ndarray:
    """Naive NCHW convolution; pad is (top, left, bottom, right)."""
    x = np.pad(f64(x), ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    (sh, sw), (dh, dw) = stride, dilation
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (wd - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    per_group = o // groups
    for oc in range(o):
        g = oc // per_group
        for i in range(oh):
            for j in range(ow):
                patch = x[:, g * cg:(g + 1) * cg, i * sh:i * sh + dh * (kh - 1) + 1:dh,
                          j * sw:j * sw + dw * (kw - 1) + 1:dw]
                out[:, oc, i, j] = (patch * f64(w[oc])).sum(axis=(1, 2, 3))
    return out if b is None else out + f64(b).reshape(1, -1, 1, 1)


def pool_ref(x: np.ndarray, k: tuple[int, int], s: tuple[int, int],
             pad: tuple[int, int, int, int], kind: str) -> np.ndarray:
    fill = -np.inf if kind == "max" else 0.0
    x = np.pad(f64(x), ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])),
               constant_values=fill)
    oh, ow = (x.shape[2] - k[0]) // s[0] + 1, (x.shape[3] - k[1]) // s[1] + 1
    out = np.zeros((*x.shape[:2], oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = x[:, :, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]]
            out[:, :, i, j] = win.max(axis=(2, 3)) if kind == "max" else win.mean(axis=(2, 3))
    return out


def log_softmax_ref(x: np.ndarray, axis: int = -1) -> np.ndarray:
    z = f64(x) - f64(x).max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


# --------------------------------------------------------------------------- matmul


@pytest.mark.parametrize(("sa", "sb"), [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)),
                                        ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
                                        ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                                        ((2, 3, 4), (4,)), ((1, 0), (0, 3))], ids=ident)
def test_matmul_batched_and_vectors(sa: tuple, sb: tuple) -> None:
    a, b = data(sa, F32, seed=30), data(sb, F32, seed=31)
    want = np.asarray(f64(a) @ f64(b)).astype(F32)
    expect(T(a) @ T(b), want, 4)
    expect(T(a).matmul(T(b)), want, 4)
    expect(T(a).dot(T(b)), want, 4)


def test_matmul_dtypes() -> None:
    a, b = data((2, 3), I32, seed=32), data((3, 2), I32, seed=33)
    expect(T(a) @ T(b), a @ b)
    expect(T(a) @ T(b.astype(F32)), (a @ b).astype(F32))  # promotes to float32
    expect(T(a.astype(I64)) @ T(b), (a @ b).astype(I64))
    bools = np.array([[True, False], [True, True]])
    expect(T(bools) @ T(bools), bools.astype(I32) @ bools.astype(I32))  # counts as int32
    h = data((4, 8), F16, seed=34)
    expect(T(h) @ T(h.T.copy()), (f64(h) @ f64(h).T).astype(F16), 8)


def test_matmul_mismatch_names_both_shapes() -> None:
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 5\)"):
        Tensor.ones(2, 3) @ Tensor.ones(4, 5)
    with pytest.raises(ValueError, match=r"\(2, 3, 4\).*\(3, 4, 5\)"):
        Tensor.ones(2, 3, 4) @ Tensor.ones(3, 4, 5)  # batch axes 2 and 3 do not broadcast
    with pytest.raises(ValueError, match="rank"):
        Tensor.ones(3) @ Tensor(1.0)


def test_linear() -> None:
    x, w, b = data((5, 4), F32, seed=35), data((4, 3), F32, seed=36), data((3,), F32, seed=37)
    expect(T(x).linear(T(w), T(b)), (f64(x) @ f64(w) + f64(b)).astype(F32), 4)
    expect(T(x).linear(T(w)), (f64(x) @ f64(w)).astype(F32), 4)
    s = data((4,), F32, seed=38)
    expect(T(x).linear(T(s), T(s)), (f64(x) * f64(s) + f64(s)).astype(F32))  # 1-D weight scales


@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.integers(0, 2),
       st.integers(0, 3))
def test_hypothesis_matmul(m: int, k: int, n: int, batch: int, seed: int) -> None:
    lead = (2,) * batch
    a, b = data((*lead, m, k), F32, seed=seed), data((k, n), F32, seed=seed + 1)
    expect(T(a) @ T(b), (f64(a) @ f64(b)).astype(F32), 4)


# --------------------------------------------------------------------------- conv and pools

CONVS = [
    dict(),
    dict(stride=2),
    dict(padding=1),
    dict(padding=(1, 2)),
    dict(padding=(0, 1, 2, 1)),  # tinygrad: (left, right, top, bottom)
    dict(dilation=2),
    dict(stride=(2, 1), padding=2, dilation=(1, 2)),
    dict(groups=2),
    dict(groups=4, stride=2, padding=1),
]


def _hl_padding(p: int | Sequence[int]) -> tuple[int, int, int, int]:
    if isinstance(p, int):
        return (p, p, p, p)
    if len(p) == 2:
        return (p[0], p[1], p[0], p[1])
    left, right, top, bottom = p
    return (top, left, bottom, right)


def _two(v: int | Sequence[int]) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else (v[0], v[1])


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("kw", CONVS, ids=ident)
def test_conv2d(kw: dict, bias: bool) -> None:
    groups = kw.get("groups", 1)
    x = data((2, 4, 7, 8), F32, seed=40)
    w = data((4, 4 // groups, 3, 3), F32, seed=41)
    b = data((4,), F32, seed=42) if bias else None
    want = conv2d_ref(x, w, b, _two(kw.get("stride", 1)), _hl_padding(kw.get("padding", 0)),
                      _two(kw.get("dilation", 1)), groups)
    got = T(x).conv2d(T(w), T(b) if b is not None else None, **kw)
    expect(got, want.astype(F32), 8)


def test_conv2d_int_input_computes_in_float32() -> None:
    x, w = data((1, 2, 4, 4), I32, seed=43), data((3, 2, 2, 2), I32, seed=44)
    expect(T(x).conv2d(T(w)), conv2d_ref(x, w).astype(F32))


def test_conv2d_errors() -> None:
    with pytest.raises(ValueError, match=r"\(2, 2, 3, 3\).*\(1, 3, 5, 5\)"):
        Tensor.ones(1, 3, 5, 5).conv2d(Tensor.ones(2, 2, 3, 3))
    with pytest.raises(ValueError, match="groups=2"):
        Tensor.ones(1, 3, 5, 5).conv2d(Tensor.ones(2, 1, 3, 3), groups=2)
    with pytest.raises(ValueError, match="padding"):
        Tensor.ones(1, 1, 5, 5).conv2d(Tensor.ones(1, 1, 3, 3), padding=(1, 2, 3))


POOLS = [
    dict(),  # kernel 2, stride = kernel
    dict(kernel_size=3),
    dict(kernel_size=(2, 3), stride=1),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(3, 2), stride=(1, 2), padding=(1, 0)),
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("kw", POOLS, ids=ident)
def test_pools(kw: dict, kind: str) -> None:
    x = data((2, 3, 7, 6), F32, seed=45)
    k = _two(kw.get("kernel_size", 2))
    s = _two(kw["stride"]) if "stride" in kw else k
    want = pool_ref(x, k, s, _hl_padding(kw.get("padding", 0)), kind)
    got = getattr(T(x), f"{kind}_pool2d")(**kw)
    expect(got, want.astype(F32), 4)


def test_a_max_pool_feeding_a_pointwise_conv() -> None:
    """ResNet's stem: relu, a 3x3 stride-2 max pool with padding (an elementwise max of its
    taps' views), read by a 1x1 conv as (C, H * W) points (the pool computed in its own
    space)."""
    x = data((2, 8, 11, 11), F32, seed=47)
    w = data((16, 8, 1, 1), F32, seed=48)
    pooled = pool_ref(np.maximum(x, 0), (3, 3), (2, 2), (1, 1, 1, 1), "max")
    want = np.einsum("nchw,oc->nohw", pooled, w[:, :, 0, 0].astype(np.float64))
    got = T(x).relu().max_pool2d(3, stride=2, padding=1).conv2d(T(w))
    expect(got, want.astype(F32), 16)


# --------------------------------------------------------------------------- softmax and norms


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_log_softmax(axis: int) -> None:
    x = data((3, 4, 5), F32, seed=46, low=-5, high=5)
    ls = log_softmax_ref(x, axis)
    expect(T(x).log_softmax(axis), ls.astype(F32), 8)
    expect(T(x).softmax(axis), np.exp(ls).astype(F32), 8)
    assert np.allclose(T(x).softmax(axis).sum(axis).numpy(), 1, atol=1e-6)


def test_softmax_large_values_are_stable_and_ints_become_float() -> None:
    x = np.array([[1000.0, 1000.0], [-1000.0, 0.0]], F32)
    expect(T(x).softmax(), np.array([[0.5, 0.5], [0.0, 1.0]], F32))
    ints = np.array([[1, 2, 3]], I32)
    expect(T(ints).softmax(), np.exp(log_softmax_ref(ints)).astype(F32))


@pytest.mark.parametrize(("axis", "eps"), [(-1, 1e-5), ((1, 2), 1e-5), (1, 0.1)], ids=ident)
def test_layernorm(axis: int | tuple, eps: float) -> None:
    x = data((2, 3, 4), F32, seed=47)
    mean = f64(x).mean(axis=axis, keepdims=True)
    var = f64(x).var(axis=axis, keepdims=True)  # biased, as in torch's layer_norm
    expect(T(x).layernorm(axis, eps), ((f64(x) - mean) / np.sqrt(var + eps)).astype(F32), 8)


def test_batchnorm_inference() -> None:
    x = data((2, 3, 4, 4), F32, seed=48)
    w, b = data((3,), F32, seed=49), data((3,), F32, seed=50)
    mean, var = data((3,), F32, seed=51), data((3,), F32, seed=52, low=0.5, high=2)
    invstd = (1 / np.sqrt(f64(var) + 1e-5)).astype(F32)
    c = (1, 3, 1, 1)
    want = (f64(x) - f64(mean).reshape(c)) * f64(w).reshape(c) * f64(invstd).reshape(c) \
        + f64(b).reshape(c)
    expect(T(x).batchnorm(T(w), T(b), T(mean), T(invstd)), want.astype(F32), 4)
    want_plain = (f64(x) - f64(mean).reshape(c)) * f64(invstd).reshape(c)
    expect(T(x).batchnorm(None, None, T(mean), T(invstd)), want_plain.astype(F32), 4)
    y = data((5, 3), F32, seed=53)
    expect(T(y).batchnorm(T(w), T(b), T(mean), T(invstd), axis=-1),
           ((f64(y) - f64(mean)) * f64(w) * f64(invstd) + f64(b)).astype(F32), 4)


def test_one_hot() -> None:
    y = np.array([0, 2, 1, 2], I32)
    expect(T(y).one_hot(3), np.eye(3, dtype=I32)[y])


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy(reduction: str, smoothing: float) -> None:
    logits, y = data((6, 5), F32, seed=54), np.array([0, 4, 2, 2, 1, 3], I32)
    target = np.eye(5)[y] * (1 - smoothing) + smoothing / 5
    loss = -(log_softmax_ref(logits) * target).sum(-1)
    want = {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]
    expect(T(logits).cross_entropy(T(y), reduction, smoothing), np.asarray(want).astype(F32), 8)


def test_cross_entropy_bad_reduction() -> None:
    with pytest.raises(ValueError, match="reduction 'avg'"):
        Tensor.ones(2, 3).cross_entropy(Tensor([0, 1]), reduction="avg")


# --------------------------------------------------------------------------- whole models


def test_two_layer_mlp_forward() -> None:
    Tensor.manual_seed(0)
    x = data((8, 16), F32, seed=60)
    w1, b1 = data((16, 32), F32, seed=61, low=-0.3, high=0.3), data((32,), F32, seed=62)
    w2, b2 = data((32, 10), F32, seed=63, low=-0.3, high=0.3), data((10,), F32, seed=64)
    out = T(x).linear(T(w1), T(b1)).relu().linear(T(w2), T(b2)).softmax()
    h = np.maximum(f64(x) @ f64(w1) + f64(b1), 0) @ f64(w2) + f64(b2)
    want = np.exp(log_softmax_ref(h))
    assert out.shape == (8, 10)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    assert out.ir().count("func.func") == 1


def test_small_conv_net_forward() -> None:
    x = data((2, 3, 12, 12), F32, seed=70)
    cw, cb = data((4, 3, 3, 3), F32, seed=71, low=-0.5, high=0.5), data((4,), F32, seed=72)
    lw, lb = data((4 * 6 * 6, 10), F32, seed=73, low=-0.1, high=0.1), data((10,), F32, seed=74)
    out = (T(x).conv2d(T(cw), T(cb), padding=1).relu().max_pool2d(2).flatten(1)
           .linear(T(lw), T(lb)).log_softmax())
    h = np.maximum(conv2d_ref(x, cw, cb, pad=(1, 1, 1, 1)), 0)
    h = pool_ref(h, (2, 2), (2, 2), (0, 0, 0, 0), "max").reshape(2, -1)
    want = log_softmax_ref(h @ f64(lw) + f64(lb))
    assert out.shape == (2, 10) and out.dtype is dtypes.float32
    text = out.ir()
    for op in ("hl.conv2d", "hl.relu", "hl.max_pool2d", "hl.reshape", "hl.matmul",
               "hl.log_softmax"):
        assert op in text
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
    assert "hl.conv2d" not in out.ir()  # once realized, the program just returns its buffer
