"""Reductions, linear algebra and nn ops of the Tensor."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from irtensor import dtypes, shapes
from irtensor.dialects import hl
from irtensor.frontend import conv_nd, pool_indices
from irtensor.frontend.movement import normalize_axis
from irtensor.frontend.ops import axes_of

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor

Axis = int | Sequence[int] | None
Pair = tuple[int, int]
PoolGeometry = tuple[Pair, Pair, Pair, tuple[int, int, int, int], tuple[int, int, int, int]]


def _pair(x: int | Sequence[int]) -> tuple[int, int]:
    return (x, x) if isinstance(x, int) else (int(x[0]), int(x[1]))


def _conv_padding(padding: int | Sequence[int]) -> tuple[int, int, int, int]:
    """tinygrad's padding: an int, (pad_h, pad_w), or (left, right, top, bottom);
    returned as hl's [top, left, bottom, right]."""
    if isinstance(padding, int):
        return (padding,) * 4
    if len(padding) == 2:
        return (padding[0], padding[1], padding[0], padding[1])
    if len(padding) == 4:
        left, right, top, bottom = padding
        return (top, left, bottom, right)
    raise ValueError(f"padding {padding!r}: expected an int, 2 or 4 values")


def _ceil_extra(size: int, kernel: int, stride: int, dilation: int, before: int,
                after: int) -> int:
    """The padding torch's ceil_mode adds after an axis: the output length rounds up
    (the last window may hang over the end), but a window must start inside the input
    or the padding before it."""
    span = dilation * (kernel - 1) + 1
    padded = size + before + after
    out = -(-(padded - span) // stride) + 1
    if (out - 1) * stride >= size + before:
        out -= 1
    return max((out - 1) * stride + span - padded, 0)


def _window_pool(x: Tensor, op: type[hl.Pool2dOp], k: tuple[int, int], s: tuple[int, int],
                 d: tuple[int, int], pads: tuple[int, int, int, int]) -> Tensor:
    """hl's pool of `x` with [top, left, bottom, right] `pads`: max with -inf padding or
    mean over KH * KW with zero padding. A dilated window is taken axis by axis (a box
    is separable): the max or sum of KH strided row slices of the padded input shifted by
    i * dilation, then of KW column slices of that; KH + KW taps, not KH * KW, each fold
    a balanced tree (a 60 x 80 window was a chain of 4800 maxima, deeper than Python's
    recursion limit)."""
    if d == (1, 1):
        return x._new(op, x, args=(k, s, pads))
    is_max = op is hl.MaxPool2dOp
    top, left, bottom, right = pads
    oh, ow = (shapes.window(x.shape[a - 2], k[a], s[a], d[a], pads[a], pads[a + 2])
              for a in (0, 1))
    xp = x.pad([None] * (x.ndim - 2) + [(top, bottom), (left, right)],
               value=-math.inf if is_max else 0.0)
    fold = (lambda a, b: a.maximum(b)) if is_max else operator.add
    rows = _tree(fold, [xp[..., i * d[0]:i * d[0] + (oh - 1) * s[0] + 1:s[0], :]
                        for i in range(k[0])])
    out = _tree(fold, [rows[..., j * d[1]:j * d[1] + (ow - 1) * s[1] + 1:s[1]]
                       for j in range(k[1])])
    return out if is_max else out / float(k[0] * k[1])


def _tree(fold: Any, values: list[Tensor]) -> Tensor:
    """fold(fold(v0, v1), fold(v2, v3))...: pairs, then pairs of those."""
    while len(values) > 1:
        values = [fold(a, b) for a, b in zip(values[::2], values[1::2], strict=False)] + \
            ([values[-1]] if len(values) % 2 else [])
    return values[0]


def _window_counts(size: Sequence[int], k: Sequence[int], s: Sequence[int], d: Sequence[int],
                 low: Sequence[int], high: Sequence[int],
                 counted: Sequence[tuple[int, int]]) -> np.ndarray:
    """The (OH, OW) count of each 2-D window's taps that fall in the `counted` ranges (one
    per axis, input positions), in f32: what an average that counts only those cells
    divides its sum by. `low`/`high`: the padding before and after each axis."""
    rows, cols = (shapes.window_cells(size[a], k[a], s[a], d[a], low[a], high[a], counted[a])
                  for a in (0, 1))
    return np.outer(rows, cols).astype(np.float32)


class ReduceMixin:
    def _reduce(self: Tensor, op: type[hl.ReductionOp], axis: Axis, keepdim: bool) -> Tensor:
        return self._new(op, self, args=(axes_of(axis, self.ndim), keepdim))

    def sum(self: Tensor, axis: Axis = None, keepdim: bool = False, dtype: Any = None
            ) -> Tensor:
        """Bools and the narrow ints sum in 32 bits (`dtypes.sum_dtype`, as tinygrad);
        int32 and wider keep their dtype (numpy and torch widen to int64); `dtype`: the
        input is cast to it first (torch's and numpy's `dtype=`)."""
        if dtype is not None:
            return self.cast(dtype).sum(axis, keepdim)
        x = self.cast(dtypes.sum_dtype(self.dtype))
        return x._reduce(hl.SumOp, axis, keepdim)

    def _sum_same(self: Tensor, axis: Axis = None, keepdim: bool = False) -> Tensor:
        """A sum in the input's own dtype: compositions that pick one term (gathers,
        one-hot selects) or follow matmul's rule (einsum) keep the dtype they add."""
        return self._reduce(hl.SumOp, axis, keepdim)

    def max(self: Tensor, axis: Axis = None, keepdim: bool = False) -> Tensor:
        return self._reduce(hl.MaxOp, axis, keepdim)

    def min(self: Tensor, axis: Axis = None, keepdim: bool = False) -> Tensor:
        return self._reduce(hl.MinOp, axis, keepdim)

    def mean(self: Tensor, axis: Axis = None, keepdim: bool = False, dtype: Any = None
             ) -> Tensor:
        """Integers average as the default float (as tinygrad); `dtype` casts first."""
        x = self.cast(dtype) if dtype is not None else self
        return x._float()._reduce(hl.MeanOp, axis, keepdim)

    def var(self: Tensor, axis: Axis = None, keepdim: bool = False, correction: int = 1
            ) -> Tensor:
        """correction=1 by default, as tinygrad and torch (numpy's ddof defaults to 0)."""
        x = self._float()
        return x._new(hl.VarOp, x, args=(axes_of(axis, self.ndim), keepdim, correction))

    def std(self: Tensor, axis: Axis = None, keepdim: bool = False, correction: int = 1
            ) -> Tensor:
        return self.var(axis, keepdim, correction).sqrt()

    # ------------------------------------------------------------------ linear algebra

    def matmul(self: Tensor, x: Tensor) -> Tensor:
        """numpy.matmul: batch axes broadcast, 1-D operands are vectors."""
        a, b = self._pair(x)
        if a.dtype.is_bool:
            a, b = a.cast(dtypes.int32), b.cast(dtypes.int32)
        return a._new(hl.MatmulOp, a, b)

    dot = matmul

    def __matmul__(self: Tensor, x: Tensor) -> Tensor:
        return self.matmul(x)

    def __rmatmul__(self: Tensor, x: Tensor) -> Tensor:
        return x.matmul(self)

    def linear(self: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
        """x @ weight (+ bias), weight (in, out) as in tinygrad; a 1-D weight scales."""
        out = self * weight if weight.ndim == 1 else self.matmul(weight)
        return out + bias if bias is not None else out


class NNMixin:
    def conv2d(self: Tensor, weight: Tensor, bias: Tensor | None = None, groups: int = 1,
               stride: int | Sequence[int] = 1, dilation: int | Sequence[int] = 1,
               padding: int | Sequence[int] = 0) -> Tensor:
        """NCHW input, (O, C/groups, KH, KW) weight; 4-value padding is tinygrad's
        (left, right, top, bottom). As tinygrad's, any spatial rank: NCL with an
        (O, C/groups, K) weight is a 1-D convolution, NCDHW with (O, C/groups, KD, KH, KW)
        a 3-D one (`frontend/conv_nd.py`; padding an int, one per dim, or tinygrad's
        2 per dim, the innermost first)."""
        x, w = self._float()._pair(weight._float())
        if x.ndim in (3, 5) and w.ndim == x.ndim:
            conv = conv_nd.conv1d if x.ndim == 3 else conv_nd.conv3d
            out = conv(x, w, groups, stride, dilation, padding)
            return out if bias is None else out + bias.reshape(1, -1, *[1] * (x.ndim - 2))
        out = x._new(hl.Conv2dOp, x, w, args=(_pair(stride), _conv_padding(padding),
                                              _pair(dilation), groups))
        return out if bias is None else out + bias.reshape(1, -1, 1, 1)

    def _pool_geometry(self: Tensor, kernel_size: int | Sequence[int],
                       stride: int | Sequence[int] | None, dilation: int | Sequence[int],
                       padding: int | Sequence[int], ceil_mode: bool) -> PoolGeometry:
        """Kernel, stride, dilation, the [top, left, bottom, right] padding asked for and
        that padding with what ceil_mode adds after it."""
        k, d = _pair(kernel_size), _pair(dilation)
        s = _pair(stride) if stride is not None else k
        pads = _conv_padding(padding)
        top, left, bottom, right = pads
        full = pads
        if ceil_mode:
            h, w = self.shape[-2:]
            full = (top, left, bottom + _ceil_extra(h, k[0], s[0], d[0], top, bottom),
                    right + _ceil_extra(w, k[1], s[1], d[1], left, right))
        return k, s, d, pads, full

    def _pool(self: Tensor, op: type[hl.Pool2dOp], kernel_size: int | Sequence[int],
              stride: int | Sequence[int] | None, dilation: int | Sequence[int],
              padding: int | Sequence[int], ceil_mode: bool, count_include_pad: bool = True
              ) -> Tensor:
        x = self._float()
        k, s, d, pads, full = x._pool_geometry(kernel_size, stride, dilation, padding,
                                               ceil_mode)
        top, left, bottom, right = pads
        out = _window_pool(x, op, k, s, d, full)
        if op is hl.MaxPool2dOp or (count_include_pad and full == pads):
            return out
        # out / the mean of a ones mask pooled alike: the mean over the cells that count,
        # the padding when count_include_pad, never what ceil_mode adds after it. The
        # shape alone fixes it: a constant, not a pool of ones at every channel
        h, w = x.shape[-2:]
        counted = ((-top, h + bottom), (-left, w + right)) if count_include_pad else \
            ((0, h), (0, w))
        counts = _window_counts((h, w), k, s, d, (top, left), full[2:], counted)
        # the pool's mean times KH * KW is its sum again (exactly, but for an ulp where
        # the mean rounded), divided once by the count as torch's and numpy's averages
        return out * float(k[0] * k[1]) / type(x)(counts, device=x.device).cast(x.dtype)

    @overload
    def max_pool2d(self: Tensor, kernel_size: int | Sequence[int] = ...,
                   stride: int | Sequence[int] | None = ..., dilation: int | Sequence[int] = ...,
                   padding: int | Sequence[int] = ..., ceil_mode: bool = ...,
                   return_indices: Literal[False] = ...) -> Tensor: ...

    @overload
    def max_pool2d(self: Tensor, kernel_size: int | Sequence[int] = ...,
                   stride: int | Sequence[int] | None = ..., dilation: int | Sequence[int] = ...,
                   padding: int | Sequence[int] = ..., ceil_mode: bool = ..., *,
                   return_indices: Literal[True]) -> tuple[Tensor, Tensor]: ...

    def max_pool2d(self: Tensor, kernel_size: int | Sequence[int] = (2, 2),
                   stride: int | Sequence[int] | None = None, dilation: int | Sequence[int] = 1,
                   padding: int | Sequence[int] = 0, ceil_mode: bool = False,
                   return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        """Padding is -inf (it never wins). `ceil_mode` and `dilation` as torch and
        tinygrad: the output length rounds up, the last window may hang over the end
        but starts inside the input or the padding before it. `return_indices=True`
        gives (values, indices) as torch: int64 flat indices into each H * W input plane
        (the first maximum in scan order; the last NaN, as torch's CPU kernel), what
        `max_unpool2d` takes (`frontend/pool_indices.py`)."""
        values = self._pool(hl.MaxPool2dOp, kernel_size, stride, dilation, padding,
                            ceil_mode)
        if not return_indices:
            return values
        x = self._float()
        k, s, d, _, full = x._pool_geometry(kernel_size, stride, dilation, padding, ceil_mode)
        return values, pool_indices.max_pool2d_indices(x, k, s, d, full)

    def avg_pool2d(self: Tensor, kernel_size: int | Sequence[int] = (2, 2),
                   stride: int | Sequence[int] | None = None, dilation: int | Sequence[int] = 1,
                   padding: int | Sequence[int] = 0, ceil_mode: bool = False,
                   count_include_pad: bool = True) -> Tensor:
        """Padding counts in the average by default; `count_include_pad=False` divides by
        each window's in-bounds cells. With `ceil_mode`, what a window hangs over past the
        padding never counts (torch's divisor). `dilation` is tinygrad's (torch's
        avg_pool2d has none)."""
        return self._pool(hl.AvgPool2dOp, kernel_size, stride, dilation, padding, ceil_mode,
                          count_include_pad)

    def softmax(self: Tensor, axis: int = -1) -> Tensor:
        x = self._float()
        if x.ndim == 0:  # over axis 0 (or -1) of a 0-d tensor, as torch: 1
            normalize_axis(axis, 0)
            return x.reshape(1).softmax(0).reshape(())
        return x._new(hl.SoftmaxOp, x, args=(normalize_axis(axis, x.ndim),))

    def log_softmax(self: Tensor, axis: int = -1) -> Tensor:
        x = self._float()
        if x.ndim == 0:
            normalize_axis(axis, 0)
            return x.reshape(1).log_softmax(0).reshape(())
        return x._new(hl.LogSoftmaxOp, x, args=(normalize_axis(axis, x.ndim),))

    def layernorm(self: Tensor, axis: int | Sequence[int] = -1, eps: float = 1e-5) -> Tensor:
        x = self._float()
        return x._new(hl.LayerNormOp, x, args=(axes_of(axis, x.ndim), eps))

    def batchnorm(self: Tensor, weight: Tensor | None, bias: Tensor | None, mean: Tensor,
                  invstd: Tensor, axis: int = 1) -> Tensor:
        """Inference form, as tinygrad: (x - mean) * weight * invstd + bias along `axis`."""
        shape = [1] * self.ndim
        shape[normalize_axis(axis, self.ndim)] = -1
        x = self._float() - mean.reshape(shape)
        if weight is not None:
            x = x * weight.reshape(shape)
        out = x * (invstd.reshape(shape) if invstd.ndim == 1 else invstd)
        return out + bias.reshape(shape) if bias is not None else out

    def one_hot(self: Tensor, num_classes: int) -> Tensor:
        """int32 (N..., num_classes); the class count is given (torch's -1, inferred from
        the data, would need the values: refused)."""
        if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 0:
            raise ValueError(f"one_hot: num_classes must be a non-negative int, got "
                             f"{num_classes!r} (-1, torch's 'from the data', is not supported)")
        classes = type(self).arange(num_classes, device=self.device)
        return (self.unsqueeze(-1) == classes).cast(dtypes.int32)

    def cross_entropy(self: Tensor, Y: Tensor, reduction: str = "mean",
                      label_smoothing: float = 0.0) -> Tensor:
        """Logits (N, C) against class indices Y (N,), as tinygrad, or against class
        probabilities Y (N, C) of a float dtype, as torch."""
        if reduction not in ("none", "sum", "mean"):
            raise ValueError(f"reduction {reduction!r}: expected 'none', 'sum' or 'mean'")
        classes = self.shape[-1]
        if Y.dtype.is_float:
            if Y.shape != self.shape:
                raise ValueError(f"cross_entropy: probability targets of shape {Y.shape} "
                                 f"for logits of shape {self.shape}")
            target = Y.cast(self._float().dtype)
        else:
            target = Y.one_hot(classes).cast(self._float().dtype)
        target = target * (1 - label_smoothing) + label_smoothing / classes
        loss = -(self.log_softmax(-1) * target).sum(-1)
        return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]
