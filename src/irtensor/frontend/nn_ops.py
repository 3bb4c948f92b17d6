"""nn functions as compositions: losses, attention, dropout, transposed convolution,
unpooling and interpolation (tinygrad's definitions; torch's keyword arguments)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from irtensor import dtypes
from irtensor.frontend.movement import normalize_axis

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor

REDUCTIONS = ("none", "sum", "mean")
LOG_FLOOR = -100.0  # torch's BCELoss clamps log(p) here, so p = 0 or 1 gives no inf


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction {reduction!r}: expected 'none', 'sum' or 'mean'")
    return {"none": lambda: loss, "sum": loss.sum, "mean": loss.mean}[reduction]()


def _pair(x: int | Sequence[int]) -> tuple[int, int]:
    return (x, x) if isinstance(x, int) else (int(x[0]), int(x[1]))


def _interp_matrix(n_in: int, n_out: int, mode: str, align_corners: bool) -> np.ndarray:
    """(n_out, n_in) weights: out = w @ in along one axis (torch's source coordinates)."""
    w = np.zeros((n_out, n_in))
    if n_in == 0 or n_out == 0:
        return w
    rows = np.arange(n_out)
    scale = n_in / n_out
    if mode == "nearest":
        w[rows, np.minimum(np.floor(rows * scale).astype(int), n_in - 1)] = 1
    elif mode == "nearest-exact":
        w[rows, np.minimum(np.floor((rows + 0.5) * scale).astype(int), n_in - 1)] = 1
    else:
        if align_corners:
            src = rows * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
        else:
            src = np.maximum((rows + 0.5) * scale - 0.5, 0)
        lo = np.minimum(np.floor(src).astype(int), n_in - 1)
        hi = np.minimum(lo + 1, n_in - 1)
        frac = src - lo
        np.add.at(w, (rows, lo), 1 - frac)
        np.add.at(w, (rows, hi), frac)
    return w


class NNOpsMixin:
    training: bool = False  # dropout acts only while true (tinygrad's Tensor.training)

    def sequential(self: Tensor, ll: Sequence[Callable[[Tensor], Tensor]]) -> Tensor:
        """Apply the callables in order: x.sequential([f, g]) is g(f(x))."""
        return functools.reduce(lambda x, f: f(x), ll, self)

    def dropout(self: Tensor, p: float = 0.5) -> Tensor:
        """While `Tensor.training`, zero each element with probability p and scale the
        rest by 1 / (1 - p); otherwise the tensor as it is. The mask comes from the
        `manual_seed` generator."""
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability must be in [0, 1], got {p}")
        if not type(self).training or p == 0:
            return self
        if p == 1:
            return self.zeros_like()
        keep = type(self).rand(*self.shape, device=self.device) >= p
        return keep.where(self._float() * (1 / (1 - p)), 0.0)

    def scaled_dot_product_attention(self: Tensor, key: Tensor, value: Tensor,
                                     attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                     is_causal: bool = False) -> Tensor:
        """softmax(q k^T / sqrt(d) + mask) v over the last two axes (torch's); a bool
        mask keeps where true, a float mask adds; `is_causal` masks j > i."""
        q = self._float()
        scores = q.matmul(key.transpose(-2, -1)) * (1 / math.sqrt(max(q.shape[-1], 1)))
        if is_causal:
            if attn_mask is not None:
                raise ValueError("scaled_dot_product_attention: attn_mask and is_causal "
                                 "exclude each other")
            rows, cols = scores.shape[-2:]
            attn_mask = type(self).ones(rows, cols, dtype=dtypes.bool_,
                                        device=self.device).tril()
        if attn_mask is not None:
            scores = attn_mask.where(scores, -math.inf) if attn_mask.dtype.is_bool \
                else scores + attn_mask
        return scores.softmax(-1).dropout(dropout_p).matmul(value)

    # ------------------------------------------------------------------ losses

    def binary_crossentropy(self: Tensor, Y: Tensor, reduction: str = "mean") -> Tensor:
        """-(y log p + (1 - y) log(1 - p)) for probabilities p; each log is clamped at
        -100, as torch's BCELoss (tinygrad does not clamp)."""
        p = self._float()
        log_p = p.log().maximum(LOG_FLOOR)
        log_q = (1 - p).log().maximum(LOG_FLOOR)
        return _reduce(-(Y * log_p + (1 - Y) * log_q), reduction)

    def binary_crossentropy_logits(self: Tensor, Y: Tensor, reduction: str = "mean",
                                   pos_weight: Tensor | None = None) -> Tensor:
        """binary_crossentropy of sigmoid(x), from logits without overflow."""
        log_p = self._float().logsigmoid()
        log_q = log_p - self._float()
        weight = 1 if pos_weight is None else pos_weight
        return _reduce(-(weight * Y * log_p + (1 - Y) * log_q), reduction)

    def sparse_categorical_crossentropy(self: Tensor, Y: Tensor, ignore_index: int = -1,
                                        label_smoothing: float = 0.0,
                                        reduction: str = "mean") -> Tensor:
        """Cross entropy of logits (..., C) against class indices Y (...); targets equal
        to `ignore_index` count nowhere (the mean is over the others), as tinygrad."""
        if reduction not in REDUCTIONS:
            raise ValueError(f"reduction {reduction!r}: expected 'none', 'sum' or 'mean'")
        log_probs = self.log_softmax(-1)
        counted = ignore_index != Y
        target = Y.one_hot(self.shape[-1]).cast(log_probs.dtype) * counted.unsqueeze(-1)
        smooth = label_smoothing * log_probs.mean(-1) * counted
        loss = -((1 - label_smoothing) * (log_probs * target).sum(-1) + smooth)
        if reduction == "mean":
            return loss.sum() / counted.sum().cast(loss.dtype)
        return loss.sum() if reduction == "sum" else loss

    def nll_loss(self: Tensor, Y: Tensor, weight: Tensor | None = None,
                 ignore_index: int | None = None, reduction: str = "mean") -> Tensor:
        """Negative log likelihood of log-probabilities (N, C, ...) at class indices Y
        (N, ...), per-class `weight`; the mean divides by the summed weights (torch)."""
        if reduction not in REDUCTIONS:
            raise ValueError(f"reduction {reduction!r}: expected 'none', 'sum' or 'mean'")
        x = self._float()
        chosen = x.gather(1, Y.unsqueeze(1)).squeeze(1)
        w = x._const(1, x.dtype) if weight is None \
            else weight.cast(x.dtype).gather(0, Y.flatten()).reshape(Y.shape)
        if ignore_index is not None:
            w = w * (ignore_index != Y)
        w = w.expand(*Y.shape) if w.ndim == 0 else w
        loss = -chosen * w
        if reduction == "mean":
            return loss.sum() / w.sum()
        return _reduce(loss, reduction)

    # ------------------------------------------------------------------ convolution-like

    def conv_transpose2d(self: Tensor, weight: Tensor, bias: Tensor | None = None,
                         groups: int = 1, stride: int | Sequence[int] = 1,
                         dilation: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
                         output_padding: int | Sequence[int] = 0) -> Tensor:
        """The transpose of conv2d (torch's): weight (C_in, C_out/groups, KH, KW). The
        input is spread by `stride` (zeros between), padded, and convolved with the
        flipped, transposed kernel."""
        if self.ndim != 4 or weight.ndim != 4:
            raise ValueError(f"conv_transpose2d needs NCHW input and a 4-D weight, got "
                             f"{self.shape} and {weight.shape}")
        (sh, sw), (dh, dw) = _pair(stride), _pair(dilation)
        (ph, pw), (oh, ow) = _pair(padding), _pair(output_padding)
        n, c, h, w_ = self.shape
        cin, cout_g, kh, kw = weight.shape
        if cin != c or c % groups:
            raise ValueError(f"conv_transpose2d: input has {c} channels, weight {cin} "
                             f"(groups {groups})")
        x = self._float()
        if sh > 1 or sw > 1:  # spread: a zero row after each row but the last
            x = x.reshape(n, c, h, 1, w_, 1).pad([None, None, None, (0, sh - 1), None,
                                                 (0, sw - 1)])
            x = x.reshape(n, c, h * sh, w_ * sw).shrink([None, None, (0, (h - 1) * sh + 1),
                                                         (0, (w_ - 1) * sw + 1)])
        k = weight._float().reshape(groups, cin // groups, cout_g, kh, kw)
        k = k.transpose(1, 2).reshape(groups * cout_g, cin // groups, kh, kw).flip((2, 3))
        top, left = dh * (kh - 1) - ph, dw * (kw - 1) - pw
        x = x.pad([None, None, (top, top + oh), (left, left + ow)])
        return x.conv2d(k, bias, groups=groups, dilation=(dh, dw))

    def max_unpool2d(self: Tensor, indices: Tensor, kernel_size: int | Sequence[int] = (2, 2),
                     stride: int | Sequence[int] | None = None,
                     dilation: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
                     output_size: Sequence[int] | None = None) -> Tensor:
        """The inverse of max_pool2d with indices (torch's): each value goes to its flat
        index in the output plane, zeros elsewhere."""
        if self.ndim != 4 or indices.shape != self.shape:
            raise ValueError(f"max_unpool2d needs NCHW values and indices of one shape, got "
                             f"{self.shape} and {indices.shape}")
        (kh, kw), (dh, dw), (ph, pw) = _pair(kernel_size), _pair(dilation), _pair(padding)
        sh, sw = _pair(stride) if stride is not None else (kh, kw)
        n, c, h, w = self.shape
        out_h, out_w = ((h - 1) * sh - 2 * ph + dh * (kh - 1) + 1,
                        (w - 1) * sw - 2 * pw + dw * (kw - 1) + 1)
        if output_size is not None:
            out_h, out_w = (int(v) for v in tuple(output_size)[-2:])
        target = type(self).zeros(n, c, out_h * out_w, dtype=self.dtype, device=self.device)
        flat_i = indices.reshape(n, c, h * w).cast(dtypes.int32)
        out = target.scatter(2, flat_i, self.reshape(n, c, h * w))
        return out.reshape(n, c, out_h, out_w)

    def interpolate(self: Tensor, size: Sequence[int], mode: str = "linear",
                    align_corners: bool = False) -> Tensor:
        """Resize the trailing len(size) axes (torch's interpolate; 'linear' covers
        bilinear and trilinear, plus 'nearest' and 'nearest-exact'). Each axis is a
        matmul with a small weight matrix made on the host."""
        if mode not in ("linear", "nearest", "nearest-exact"):
            raise ValueError(f"interpolate: mode {mode!r}: expected 'linear', 'nearest' or "
                             "'nearest-exact'")
        size = tuple(size)
        if len(size) > self.ndim:
            raise ValueError(f"interpolate: size {size} has more axes than shape {self.shape}")
        x = self._float()
        for i, n_out in enumerate(size):
            axis = normalize_axis(self.ndim - len(size) + i, self.ndim)
            n_in = x.shape[axis]
            if n_in == n_out:
                continue
            w = type(self)(_interp_matrix(n_in, n_out, mode, align_corners), dtype=x.dtype,
                           device=self.device)
            x = (x.transpose(axis, -1) @ w.T).transpose(axis, -1)
        return x
