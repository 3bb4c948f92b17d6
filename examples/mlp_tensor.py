"""A two-layer MLP and a small conv net, forward only, with the lazy Tensor API.

Each model is written once with irtensor and once in numpy; the script prints
the hl program each one records, its output, and the largest difference from
numpy. Run: python examples/mlp_tensor.py
"""

from __future__ import annotations

import numpy as np

from irtensor import Tensor

rng = np.random.default_rng(0)


def randn(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def np_log_softmax(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def np_conv2d(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> np.ndarray:
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1))
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            patch = x[:, None, :, i:i + kh, j:j + kw]  # (n, 1, c, kh, kw)
            out[:, :, i, j] = (patch * w[None]).sum(axis=(2, 3, 4))
    return out + b.reshape(1, -1, 1, 1)


def np_max_pool2(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def report(name: str, out: Tensor, want: np.ndarray) -> None:
    print(f"=== {name}: the hl program")
    print(out.ir("hl"))
    got = out.numpy()
    print(f"{name} output {got.shape} {got.dtype}:\n{np.array2string(got, precision=4)}")
    err = float(np.abs(got - want).max())
    print(f"{name}: max |irtensor - numpy| = {err:.2e}\n")
    assert err < 1e-4, f"{name} differs from numpy by {err}"


def mlp() -> None:
    x = randn(4, 8)
    w1, b1 = randn(8, 16, scale=0.3), randn(16, scale=0.1)
    w2, b2 = randn(16, 3, scale=0.3), randn(3, scale=0.1)
    out = Tensor(x).linear(Tensor(w1), Tensor(b1)).relu().linear(Tensor(w2), Tensor(b2))
    out = out.softmax()
    h = np.maximum(x.astype(np.float64) @ w1 + b1, 0) @ w2 + b2
    report("mlp", out, np.exp(np_log_softmax(h)))


def conv_net() -> None:
    x = randn(2, 1, 8, 8)
    cw, cb = randn(4, 1, 3, 3, scale=0.5), randn(4, scale=0.1)
    lw, lb = randn(4 * 4 * 4, 5, scale=0.2), randn(5, scale=0.1)
    out = (Tensor(x).conv2d(Tensor(cw), Tensor(cb), padding=1).relu().max_pool2d(2)
           .flatten(1).linear(Tensor(lw), Tensor(lb)).log_softmax())
    h = np_max_pool2(np.maximum(np_conv2d(x.astype(np.float64), cw, cb, pad=1), 0))
    report("conv net", out, np_log_softmax(h.reshape(2, -1) @ lw + lb))


if __name__ == "__main__":
    mlp()
    conv_net()
    print("both match numpy")
