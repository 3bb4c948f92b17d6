"""Losses, attention, dropout, conv_transpose2d, max_unpool2d and interpolate
(frontend/nn_ops.py) against numpy definitions, and torch when it is installed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import F32, F64, I32, check
from irtensor import Tensor

RNG = np.random.default_rng(0)


def T(x: np.ndarray) -> Tensor:
    return Tensor(x, dtype=x.dtype)


def realize_all(outs: dict[str, Tensor]) -> dict[str, np.ndarray]:
    ts = list(outs.values())
    ts[0].realize(*ts[1:])
    return {k: t.numpy() for k, t in outs.items()}


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = x.astype(F64)
    return x - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)) - \
        x.max(-1, keepdims=True)


def test_binary_crossentropies() -> None:
    p = np.array([0.1, 0.5, 0.9, 0.0, 1.0], F32)
    y = np.array([0.0, 1.0, 1.0, 1.0, 1.0], F32)
    logits = np.array([-30.0, -1.0, 0.0, 2.0, 40.0], F32)
    outs = realize_all({"bce": T(p).binary_crossentropy(T(y), "none"),
                        "bce_mean": T(p).binary_crossentropy(T(y)),
                        "logits": T(logits).binary_crossentropy_logits(T(y), "none"),
                        "pos": T(logits).binary_crossentropy_logits(T(y), "sum",
                                                                    pos_weight=T(p * 0 + 2))})
    lp = np.maximum(np.log(p.astype(F64), where=p > 0, out=np.full(5, -np.inf)), -100)
    lq = np.maximum(np.log(1 - p.astype(F64), where=p < 1, out=np.full(5, -np.inf)), -100)
    want = -(y * lp + (1 - y) * lq)
    check(outs["bce"], want.astype(F32))
    check(outs["bce_mean"], np.array(want.mean(), F32))
    log_sig = -np.logaddexp(0, -logits.astype(F64))
    check(outs["logits"], (-(y * log_sig + (1 - y) * (log_sig - logits))).astype(F32))
    check(outs["pos"], np.array((-(2 * y * log_sig + (1 - y) * (log_sig - logits))).sum(), F32))


def test_sparse_categorical_crossentropy_and_nll_loss() -> None:
    x = RNG.uniform(-3, 3, (4, 5)).astype(F32)
    y = np.array([1, 0, 4, -1], I32)  # the last is ignored
    w = np.array([1.0, 2.0, 0.5, 1.0, 3.0], F32)
    lsm = _log_softmax(x)
    outs = realize_all({
        "scc": T(x).sparse_categorical_crossentropy(T(y)),
        "scc_none": T(x).sparse_categorical_crossentropy(T(y), reduction="none"),
        "scc_smooth": T(x).sparse_categorical_crossentropy(T(y), label_smoothing=0.1),
        "nll": T(lsm.astype(F32)).nll_loss(T(y[:3].copy())),
        "nll_w": T(lsm.astype(F32)).nll_loss(T(np.array([1, 0, 4, 2], I32)), weight=T(w)),
        "nll_ign": T(lsm.astype(F32)).nll_loss(T(np.array([1, 0, 4, 2], I32)), ignore_index=4,
                                               reduction="sum")})
    picked = np.array([lsm[i, c] for i, c in enumerate(y[:3])])
    check(outs["scc"], np.array(-picked.mean(), F32))
    check(outs["scc_none"], np.array([*-picked, 0.0], F32))
    smooth = -(0.9 * picked + 0.1 * lsm[:3].mean(-1)).sum() / 3
    check(outs["scc_smooth"], np.array(smooth, F32))
    check(outs["nll"], np.array(-lsm[np.arange(3), y[:3]].mean(), F32))
    y2 = np.array([1, 0, 4, 2])
    chosen = lsm[np.arange(4), y2]
    check(outs["nll_w"], np.array(-(chosen * w[y2]).sum() / w[y2].sum(), F32))
    check(outs["nll_ign"], np.array(-(chosen * (y2 != 4)).sum(), F32))
    with pytest.raises(ValueError, match="reduction 'avg'"):
        T(x).nll_loss(T(y), reduction="avg")


def _attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    s = q.astype(F64) @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


def test_scaled_dot_product_attention_masks() -> None:
    q, k, v = (RNG.uniform(-1, 1, (2, 3, 4, 8)).astype(F32) for _ in range(3))
    causal = np.tril(np.ones((4, 4), bool))
    add = RNG.uniform(-1, 0, (4, 4)).astype(F32)
    outs = realize_all({"plain": T(q).scaled_dot_product_attention(T(k), T(v)),
                        "causal": T(q).scaled_dot_product_attention(T(k), T(v), is_causal=True),
                        "bool": T(q).scaled_dot_product_attention(T(k), T(v), T(causal)),
                        "add": T(q).scaled_dot_product_attention(T(k), T(v), T(add))})
    check(outs["plain"], _attention(q, k, v, None).astype(F32), 4)
    check(outs["causal"], _attention(q, k, v, causal).astype(F32), 4)
    check(outs["bool"], outs["causal"])
    check(outs["add"], _attention(q, k, v, add).astype(F32), 4)
    with pytest.raises(ValueError, match="attn_mask and is_causal"):
        T(q).scaled_dot_product_attention(T(k), T(v), T(causal), is_causal=True)


def test_dropout_only_while_training_and_sequential() -> None:
    x = Tensor.ones(1000)
    assert x.dropout(0.5) is x
    Tensor.training = True
    try:
        Tensor.manual_seed(3)
        kept = x.dropout(0.25).numpy()
        assert set(np.unique(kept).tolist()) <= {0.0, float(np.float32(1 / 0.75))}
        assert 0.65 < (kept > 0).mean() < 0.85
        assert x.dropout(1.0).tolist() == [0.0] * 1000
        with pytest.raises(ValueError, match="dropout probability must be in"):
            x.dropout(1.5)
    finally:
        Tensor.training = False
    out = Tensor([1.0, -2.0]).sequential([lambda t: t * 3, Tensor.relu, lambda t: t + 1])
    assert out.tolist() == [4.0, 1.0]


def _conv_transpose_ref(x: np.ndarray, w: np.ndarray, stride: int, padding: int,
                        output_padding: int, groups: int, dilation: int) -> np.ndarray:
    n, c, h, wd = x.shape
    _, cout_g, kh, kw = w.shape
    oh = (h - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1
    ow = (wd - 1) * stride - 2 * padding + dilation * (kw - 1) + output_padding + 1
    full = np.zeros((n, cout_g * groups, oh + 2 * padding, ow + 2 * padding))
    cin_g = c // groups
    for b, ci, i, j in np.ndindex(n, c, h, wd):
        g = ci // cin_g
        for co, a, e in np.ndindex(cout_g, kh, kw):
            full[b, g * cout_g + co, i * stride + a * dilation, j * stride + e * dilation] += \
                x[b, ci, i, j] * w[ci, co, a, e]
    return full[:, :, padding:padding + oh, padding:padding + ow]


@pytest.mark.parametrize("stride,padding,output_padding,groups,dilation",
                         [(1, 0, 0, 1, 1), (2, 1, 1, 1, 1), (2, 0, 0, 2, 2)], ids=str)
def test_conv_transpose2d(stride: int, padding: int, output_padding: int, groups: int,
                          dilation: int) -> None:
    x = RNG.uniform(-1, 1, (2, 4, 3, 3)).astype(F32)
    w = RNG.uniform(-1, 1, (4, 3, 2, 3)).astype(F32)
    b = RNG.uniform(-1, 1, (3 * groups,)).astype(F32)
    out = T(x).conv_transpose2d(T(w), T(b), groups, stride, dilation, padding, output_padding)
    want = _conv_transpose_ref(x, w, stride, padding, output_padding, groups, dilation)
    check(out.numpy(), (want + b.reshape(1, -1, 1, 1)).astype(F32), 4)


def test_max_unpool2d_puts_values_back_at_their_indices() -> None:
    x = RNG.uniform(-1, 1, (1, 2, 4, 4)).astype(F32)
    windows = x.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 2, 2, 2, 4)
    arg = windows.argmax(-1)
    rows = np.arange(2).reshape(1, 1, 2, 1) * 2 + arg // 2
    cols = np.arange(2).reshape(1, 1, 1, 2) * 2 + arg % 2
    indices = (rows * 4 + cols).astype(I32)
    pooled = windows.max(-1)
    out = T(pooled).max_unpool2d(T(indices), 2).numpy()
    want = np.zeros_like(x)
    for c, i, j in np.ndindex(2, 2, 2):
        want[0, c, rows[0, c, i, j], cols[0, c, i, j]] = pooled[0, c, i, j]
    check(out, want)
    assert T(pooled).max_unpool2d(T(indices), 2, output_size=(5, 5)).shape == (1, 2, 5, 5)


def _interp_ref(x: np.ndarray, n_out: int, align: bool) -> np.ndarray:
    """torch's linear interpolation along the last axis."""
    n_in = x.shape[-1]
    out = np.empty((*x.shape[:-1], n_out))
    for o in range(n_out):
        if align:
            src = o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        else:
            src = max((o + 0.5) * n_in / n_out - 0.5, 0.0)
        lo = min(int(np.floor(src)), n_in - 1)
        hi = min(lo + 1, n_in - 1)
        f = src - lo
        out[..., o] = x[..., lo] * (1 - f) + x[..., hi] * f
    return out


def test_interpolate_modes() -> None:
    x = RNG.uniform(-1, 1, (1, 2, 3, 4)).astype(F32)
    outs = realize_all({"lin": T(x).interpolate((5, 7)),
                        "align": T(x).interpolate((6, 2), align_corners=True),
                        "near": T(x).interpolate((6, 8), mode="nearest"),
                        "exact": T(x).interpolate((2, 3), mode="nearest-exact")})
    lin = _interp_ref(np.swapaxes(_interp_ref(x, 7, False), -1, -2), 5, False)
    check(outs["lin"], np.swapaxes(lin, -1, -2).astype(F32))
    align = _interp_ref(np.swapaxes(_interp_ref(x, 2, True), -1, -2), 6, True)
    check(outs["align"], np.swapaxes(align, -1, -2).astype(F32))
    check(outs["near"], x.repeat(2, 2).repeat(2, 3))
    rows = np.minimum(np.floor((np.arange(2) + 0.5) * 1.5).astype(int), 2)
    cols = np.minimum(np.floor((np.arange(3) + 0.5) * 4 / 3).astype(int), 3)
    check(outs["exact"], x[:, :, rows][:, :, :, cols])
    with pytest.raises(ValueError, match="mode 'cubic'"):
        T(x).interpolate((2, 2), mode="cubic")


def test_against_torch_when_installed() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed here")
    x = RNG.uniform(-1, 1, (1, 2, 3, 4)).astype(F32)
    w = RNG.uniform(-1, 1, (2, 3, 3, 3)).astype(F32)
    got = T(x).conv_transpose2d(T(w), stride=2, padding=1, output_padding=1).numpy()
    want = torch.nn.functional.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w),
                                                stride=2, padding=1, output_padding=1)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)
    got = T(x).interpolate((5, 7)).numpy()
    want = torch.nn.functional.interpolate(torch.from_numpy(x), (5, 7), mode="bilinear")
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-6)
