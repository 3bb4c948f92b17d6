"""Convolution of spatial rank 1 and 3 (composed of conv2d) and cross_entropy with class
probabilities, against numpy (and torch when it imports), on every device."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from irtensor import Tensor


def conv_ref(x: np.ndarray, w: np.ndarray, stride: tuple[int, ...], dilation: tuple[int, ...],
             pads: list[tuple[int, int]], groups: int) -> np.ndarray:
    """A direct N-d convolution in float64 (cross-correlation, as torch and tinygrad)."""
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0), *pads])
    n = x.shape[0]
    o, cg = w.shape[:2]
    k = w.shape[2:]
    spatial = x.shape[2:]
    out_sizes = [(s - d * (kk - 1) - 1) // st + 1
                 for s, d, kk, st in zip(spatial, dilation, k, stride, strict=True)]
    out = np.zeros((n, o, *out_sizes))
    per_group = o // groups
    for pos in itertools.product(*[range(s) for s in out_sizes]):
        for tap in itertools.product(*[range(kk) for kk in k]):
            at = tuple(p * st + t * d for p, st, t, d in zip(pos, stride, tap, dilation,
                                                              strict=True))
            for g in range(groups):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg), *at)]  # (N, C/g)
                ws = w[(slice(g * per_group, (g + 1) * per_group), slice(None), *tap)]
                out[(slice(None), slice(g * per_group, (g + 1) * per_group), *pos)] += \
                    xs @ ws.T.astype(np.float64)
    return out


CASES_1D = [  # (x shape, w shape, stride, dilation, padding, groups)
    ((2, 3, 9), (4, 3, 3), 1, 1, 0, 1),
    ((1, 4, 10), (6, 2, 2), 2, 1, (1, 2), 2),
    ((2, 2, 8), (3, 2, 3), 1, 2, 1, 1),
]
CASES_3D = [
    ((1, 2, 4, 5, 5), (3, 2, 2, 3, 3), 1, 1, 0, 1),
    ((2, 2, 5, 4, 6), (4, 1, 3, 2, 3), (2, 1, 2), 1, (1, 0, 1), 2),
    ((1, 1, 6, 5, 5), (2, 1, 2, 2, 2), 1, (2, 1, 1), (0, 1, 1, 0, 2, 1), 1),
]


def check_conv(case: tuple, rank: int) -> None:
    xs, ws, stride, dilation, padding, groups = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    bias = rng.standard_normal(ws[0]).astype(np.float32)
    s = (stride,) * rank if isinstance(stride, int) else stride
    d = (dilation,) * rank if isinstance(dilation, int) else dilation
    if isinstance(padding, int):
        pads = [(padding, padding)] * rank
    elif len(padding) == rank:
        pads = [(p, p) for p in padding]
    else:  # tinygrad's order: the innermost dim first
        pads = [(padding[i], padding[i + 1]) for i in range(0, 2 * rank, 2)][::-1]
    got = Tensor(x).conv2d(Tensor(w), Tensor(bias), groups=groups, stride=stride,
                           dilation=dilation, padding=padding).numpy()
    want = conv_ref(x, w, s, d, pads, groups) + bias.reshape(1, -1, *[1] * rank)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", CASES_1D, ids=str)
def test_conv1d_is_numpys(case: tuple) -> None:
    check_conv(case, 1)


@pytest.mark.parametrize("case", CASES_3D, ids=str)
def test_conv3d_is_numpys(case: tuple) -> None:
    check_conv(case, 3)


def test_torch_agrees_on_conv1d_and_conv3d() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (numpy is the reference)")
    rng = np.random.default_rng(1)
    x1, w1 = rng.standard_normal((2, 4, 11)).astype(np.float32), \
        rng.standard_normal((6, 2, 3)).astype(np.float32)
    want1 = torch.nn.functional.conv1d(torch.from_numpy(x1), torch.from_numpy(w1), stride=2,
                                       padding=1, dilation=2, groups=2).numpy()
    got1 = Tensor(x1).conv2d(Tensor(w1), stride=2, padding=1, dilation=2, groups=2).numpy()
    np.testing.assert_allclose(got1, want1, rtol=1e-4, atol=1e-4)
    x3, w3 = rng.standard_normal((1, 2, 5, 6, 4)).astype(np.float32), \
        rng.standard_normal((3, 2, 2, 3, 2)).astype(np.float32)
    want3 = torch.nn.functional.conv3d(torch.from_numpy(x3), torch.from_numpy(w3),
                                       stride=(1, 2, 1), padding=(1, 1, 0)).numpy()
    got3 = Tensor(x3).conv2d(Tensor(w3), stride=(1, 2, 1), padding=(1, 1, 0)).numpy()
    np.testing.assert_allclose(got3, want3, rtol=1e-4, atol=1e-4)


def test_bad_conv_arguments_say_what_is_wrong() -> None:
    x = Tensor.ones(1, 1, 3, 3, 3)
    with pytest.raises(ValueError, match="stride \\(1, 2\\): expected an int or 3 values"):
        x.conv2d(Tensor.ones(1, 1, 2, 2, 2), stride=(1, 2))
    with pytest.raises(ValueError, match="depth 3 \\(padded\\) is less than the kernel's reach 4"):
        x.conv2d(Tensor.ones(1, 1, 4, 1, 1))


def test_cross_entropy_takes_class_probabilities() -> None:
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((4, 5)).astype(np.float32)
    probs = rng.random((4, 5)).astype(np.float32)
    probs /= probs.sum(-1, keepdims=True)
    shifted = logits - logits.max(-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    for smoothing in (0.0, 0.2):
        target = probs * (1 - smoothing) + smoothing / 5
        want = -(target * logp).sum(-1)
        got = Tensor(logits).cross_entropy(Tensor(probs), reduction="none",
                                           label_smoothing=smoothing).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="probability targets of shape \\(4,\\)"):
        Tensor(logits).cross_entropy(Tensor(np.zeros(4, np.float32)))


def test_torch_agrees_on_probability_targets() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (numpy is the reference)")
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((3, 4)).astype(np.float32)
    probs = rng.dirichlet(np.ones(4), 3).astype(np.float32)
    want = torch.nn.functional.cross_entropy(torch.from_numpy(logits), torch.from_numpy(probs),
                                             label_smoothing=0.1).item()
    got = Tensor(logits).cross_entropy(Tensor(probs), label_smoothing=0.1).item()
    assert got == pytest.approx(want, rel=1e-5)
