"""Normalization layers: BatchNorm (running statistics), LayerNorm, GroupNorm, RMSNorm.

Scales start at ones and shifts at zeros (torch, tinygrad). BatchNorm normalizes by the
batch's statistics while `Tensor.training` (and always without running statistics) and
by the running ones otherwise; in training it gives the running mean and variance their
new values lazily (`assign`), so an optimizer that holds them (they are in
`get_parameters(model)`) computes them in its step's program.
"""

from __future__ import annotations

from collections.abc import Sequence

from irtensor import dtypes
from irtensor.frontend.tensor import Tensor
from irtensor.nn.layers import filled


def _channel_shape(ndim: int) -> list[int]:
    return [1, -1, *([1] * (ndim - 2))]


class BatchNorm:
    """torch's BatchNorm1d/2d/3d: statistics per channel (axis 1) over every other axis.
    `momentum` None is the cumulative average (torch); the running variance is the
    unbiased batch variance, the normalization uses the biased one (torch)."""

    def __init__(self, sz: int, eps: float = 1e-5, affine: bool = True,
                 track_running_stats: bool = True, momentum: float | None = 0.1) -> None:
        self.eps, self.track_running_stats, self.momentum = eps, track_running_stats, momentum
        self.num_features = sz
        self.weight: Tensor | None = filled((sz,), 1.0) if affine else None
        self.bias: Tensor | None = filled((sz,), 0.0) if affine else None
        if track_running_stats:
            self.running_mean = filled((sz,), 0.0).requires_grad_(False)
            self.running_var = filled((sz,), 1.0).requires_grad_(False)
            self.num_batches_tracked = filled((1,), 0, dtypes.int64).requires_grad_(False)

    def __call__(self, x: Tensor) -> Tensor:
        if x.ndim < 2 or x.shape[1] != self.num_features:
            raise ValueError(f"BatchNorm({self.num_features}) needs (N, {self.num_features}, "
                             f"...) input, got shape {x.shape}")
        if self.track_running_stats and not Tensor.training:
            mean, var = self.running_mean, self.running_var
        else:
            axes = tuple(i for i in range(x.ndim) if i != 1)
            count = x.numel() // x.shape[1]
            if Tensor.training and count < 2:
                raise ValueError(f"BatchNorm: training needs more than one value per channel, "
                                 f"got input of shape {x.shape}")
            mean, var = x.mean(axis=axes), x.var(axis=axes, correction=0)
            if Tensor.training and self.track_running_stats:
                self._track(mean, var * (count / (count - 1)))
        return x.batchnorm(self.weight, self.bias, mean, var.add(self.eps).rsqrt())

    def _track(self, mean: Tensor, unbiased_var: Tensor) -> None:
        """The running statistics' new values, lazily; read by nothing the loss needs."""
        tracked = self.num_batches_tracked + 1
        self.num_batches_tracked.assign(tracked)
        if self.momentum is None:  # cumulative: the factor is 1 / batches seen
            factor: Tensor | float = (1 / tracked.cast(self.running_mean.dtype)).reshape(())
        else:
            factor = self.momentum
        for running, batch in ((self.running_mean, mean), (self.running_var, unbiased_var)):
            running.assign((1 - factor) * running + factor * batch.cast(running.dtype))


BatchNorm1d = BatchNorm2d = BatchNorm3d = BatchNorm


class LayerNorm:
    """Normalize over the trailing `normalized_shape` axes, then scale and shift."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True) -> None:
        shape = (normalized_shape,) if isinstance(normalized_shape, int) \
            else tuple(normalized_shape)
        self.normalized_shape = tuple(int(s) for s in shape)
        self.axis = tuple(-1 - i for i in range(len(self.normalized_shape)))
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight: Tensor | None = filled(self.normalized_shape, 1.0) \
            if elementwise_affine else None
        self.bias: Tensor | None = filled(self.normalized_shape, 0.0) \
            if elementwise_affine else None

    def __call__(self, x: Tensor) -> Tensor:
        n = len(self.normalized_shape)
        if x.shape[x.ndim - n:] != self.normalized_shape:
            raise ValueError(f"LayerNorm({self.normalized_shape}) got input of shape "
                             f"{x.shape}")
        out = x.layernorm(axis=self.axis, eps=self.eps)
        if self.weight is None or self.bias is None:
            return out
        return out * self.weight + self.bias


class GroupNorm:
    """Channels (axis 1) in `num_groups` groups, each normalized over its channels and
    all the other axes but the batch; per-channel scale and shift."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True) -> None:
        if num_groups <= 0 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: {num_channels} channels do not split into "
                             f"{num_groups} groups")
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.weight: Tensor | None = filled((num_channels,), 1.0) if affine else None
        self.bias: Tensor | None = filled((num_channels,), 0.0) if affine else None

    def __call__(self, x: Tensor) -> Tensor:
        if x.ndim < 2 or x.shape[1] != self.num_channels:
            raise ValueError(f"GroupNorm: expected (N, {self.num_channels}, ...) input, got "
                             f"shape {x.shape}")
        grouped = x.reshape(x.shape[0], self.num_groups, -1)
        out = grouped.layernorm(axis=-1, eps=self.eps).reshape(x.shape)
        if self.weight is None or self.bias is None:
            return out
        shape = _channel_shape(x.ndim)
        return out * self.weight.reshape(shape) + self.bias.reshape(shape)


class RMSNorm:
    """x / sqrt(mean(x^2 over the last axis) + eps) * weight, computed in float32 at
    least (tinygrad's)."""

    def __init__(self, dim: int, eps: float = 1e-6, elementwise_affine: bool = True) -> None:
        self.eps = eps
        self.weight: Tensor | None = filled((dim,), 1.0) if elementwise_affine else None

    def __call__(self, x: Tensor) -> Tensor:
        wide = x if x.dtype.is_float and x.dtype.np.itemsize >= 4 else x.cast(dtypes.float32)
        out = (wide * (wide.square().mean(-1, keepdim=True) + self.eps).rsqrt()).cast(
            x.dtype if x.dtype.is_float else wide.dtype)
        return out if self.weight is None else out * self.weight


__all__ = ["BatchNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "LayerNorm",
           "RMSNorm"]
