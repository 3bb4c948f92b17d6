"""numpy references for the nn layers and torch's optimizer updates, written out from
their definitions (float64), for the nn and optim tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def conv2d(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: Sequence[int] = (1, 1),
           padding: Sequence[int] = (0, 0, 0, 0), dilation: Sequence[int] = (1, 1),
           groups: int = 1) -> np.ndarray:
    """Cross-correlation; padding (top, bottom, left, right)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    top, bottom, left, right = padding
    x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    (sh, sw), (dh, dw) = stride, dilation
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (wd - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = x[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                           j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return out if b is None else out + b.reshape(1, -1, 1, 1)


def conv_transpose2d(x: np.ndarray, w: np.ndarray, b: np.ndarray | None,
                     stride: Sequence[int], padding: Sequence[int],
                     output_padding: Sequence[int], dilation: Sequence[int],
                     groups: int) -> np.ndarray:
    """Each input pixel scatters its kernel-weighted copy: the definition of the transpose."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    (sh, sw), (ph, pw), (oph, opw), (dh, dw) = stride, padding, output_padding, dilation
    full_h, full_w = (h - 1) * sh + dh * (kh - 1) + 1 + oph, (wd - 1) * sw + dw * (kw - 1) + 1 + opw
    out = np.zeros((n, og * groups, full_h, full_w))
    cg = c // groups
    for g in range(groups):
        xs = x[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                part = np.einsum("nchw,co->nohw", xs, w[g * cg:(g + 1) * cg, :, i, j])
                out[:, g * og:(g + 1) * og, i * dh:i * dh + sh * (h - 1) + 1:sh,
                    j * dw:j * dw + sw * (wd - 1) + 1:sw] += part
    out = out[:, :, ph:full_h - ph, pw:full_w - pw]
    return out if b is None else out + b.reshape(1, -1, 1, 1)


def normalize(x: np.ndarray, axes: tuple[int, ...], eps: float) -> np.ndarray:
    x = x.astype(np.float64)
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


# ---------------------------------------------------------------- optimizers (torch's)

def sgd(p: np.ndarray, g: np.ndarray, buf: np.ndarray | None, lr: float, momentum: float,
        weight_decay: float, nesterov: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """torch.optim.SGD's step (dampening 0): the new parameter and momentum buffer."""
    g = g + weight_decay * p
    if momentum:
        buf = g.copy() if buf is None else momentum * buf + g
        g = g + momentum * buf if nesterov else buf
    return p - lr * g, buf


def adam(p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, t: int, lr: float,
         b1: float, b2: float, eps: float, weight_decay: float = 0.0
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """torch.optim.Adam's step (AdamW's with weight_decay): parameter, m, v after step t."""
    p = p * (1 - lr * weight_decay)
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    bias1, bias2 = 1 - b1 ** t, 1 - b2 ** t
    denom = np.sqrt(v) / np.sqrt(bias2) + eps
    return p - (lr / bias1) * m / denom, m, v


def mse_grads(w: np.ndarray, b: np.ndarray, x: np.ndarray, y: np.ndarray
              ) -> tuple[float, np.ndarray, np.ndarray]:
    """mean((x w^T + b - y)^2) and its gradients in w and b."""
    err = x @ w.T + b - y
    scale = 2 / err.size
    return float(np.mean(err ** 2)), scale * err.T @ x, scale * err.sum(axis=0)
