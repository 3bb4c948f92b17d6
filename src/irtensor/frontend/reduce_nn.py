"""Reductions, linear algebra and nn ops of the Tensor."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from irtensor import dtypes
from irtensor.dialects import hl
from irtensor.frontend.movement import normalize_axis

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor

Axis = int | Sequence[int] | None


def _axes(axis: Axis, rank: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(rank))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(sorted({normalize_axis(a, rank) for a in axes}))


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


class ReduceMixin:
    def _reduce(self: Tensor, op: type[hl.ReductionOp], axis: Axis, keepdim: bool) -> Tensor:
        return self._new(op, self, args=(_axes(axis, self.ndim), keepdim))

    def sum(self: Tensor, axis: Axis = None, keepdim: bool = False) -> Tensor:
        """Bool sums count as int32; ints keep their dtype (numpy widens int32 to int64)."""
        x = self.cast(dtypes.int32) if self.dtype.is_bool else self
        return x._reduce(hl.SumOp, axis, keepdim)

    def max(self: Tensor, axis: Axis = None, keepdim: bool = False) -> Tensor:
        return self._reduce(hl.MaxOp, axis, keepdim)

    def min(self: Tensor, axis: Axis = None, keepdim: bool = False) -> Tensor:
        return self._reduce(hl.MinOp, axis, keepdim)

    def mean(self: Tensor, axis: Axis = None, keepdim: bool = False) -> Tensor:
        """Integers average as the default float (as tinygrad)."""
        return self._float()._reduce(hl.MeanOp, axis, keepdim)

    def var(self: Tensor, axis: Axis = None, keepdim: bool = False, correction: int = 1
            ) -> Tensor:
        """correction=1 by default, as tinygrad and torch (numpy's ddof defaults to 0)."""
        x = self._float()
        return x._new(hl.VarOp, x, args=(_axes(axis, self.ndim), keepdim, correction))

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
        (left, right, top, bottom)."""
        x, w = self._float()._pair(weight._float())
        out = x._new(hl.Conv2dOp, x, w, args=(_pair(stride), _conv_padding(padding),
                                              _pair(dilation), groups))
        return out if bias is None else out + bias.reshape(1, -1, 1, 1)

    def _pool(self: Tensor, op: type[hl.Pool2dOp], kernel_size: int | Sequence[int],
              stride: int | Sequence[int] | None, dilation: int | Sequence[int],
              padding: int | Sequence[int]) -> Tensor:
        if _pair(dilation) != (1, 1):
            raise NotImplementedError("pooling with dilation is not supported yet")
        x = self._float()
        k = _pair(kernel_size)
        s = _pair(stride) if stride is not None else k
        return x._new(op, x, args=(k, s, _conv_padding(padding)))

    def max_pool2d(self: Tensor, kernel_size: int | Sequence[int] = (2, 2),
                   stride: int | Sequence[int] | None = None, dilation: int | Sequence[int] = 1,
                   padding: int | Sequence[int] = 0) -> Tensor:
        return self._pool(hl.MaxPool2dOp, kernel_size, stride, dilation, padding)

    def avg_pool2d(self: Tensor, kernel_size: int | Sequence[int] = (2, 2),
                   stride: int | Sequence[int] | None = None, dilation: int | Sequence[int] = 1,
                   padding: int | Sequence[int] = 0) -> Tensor:
        """Padding counts in the average (torch's count_include_pad=True)."""
        return self._pool(hl.AvgPool2dOp, kernel_size, stride, dilation, padding)

    def softmax(self: Tensor, axis: int = -1) -> Tensor:
        x = self._float()
        return x._new(hl.SoftmaxOp, x, args=(normalize_axis(axis, x.ndim),))

    def log_softmax(self: Tensor, axis: int = -1) -> Tensor:
        x = self._float()
        return x._new(hl.LogSoftmaxOp, x, args=(normalize_axis(axis, x.ndim),))

    def layernorm(self: Tensor, axis: int | Sequence[int] = -1, eps: float = 1e-5) -> Tensor:
        x = self._float()
        return x._new(hl.LayerNormOp, x, args=(_axes(axis, x.ndim), eps))

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
        classes = type(self).arange(num_classes, device=self.device)
        return (self.unsqueeze(-1) == classes).cast(dtypes.int32)

    def cross_entropy(self: Tensor, Y: Tensor, reduction: str = "mean",
                      label_smoothing: float = 0.0) -> Tensor:
        """Logits (N, C) against class indices Y (N,), as tinygrad."""
        if reduction not in ("none", "sum", "mean"):
            raise ValueError(f"reduction {reduction!r}: expected 'none', 'sum' or 'mean'")
        classes = self.shape[-1]
        target = Y.one_hot(classes).cast(self._float().dtype)
        target = target * (1 - label_smoothing) + label_smoothing / classes
        loss = -(self.log_softmax(-1) * target).sum(-1)
        return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]
