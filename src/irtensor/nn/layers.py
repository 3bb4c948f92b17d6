"""Layers with weights: Linear, the convolutions, Embedding; and Dropout.

Weights are drawn as torch draws them (kaiming-uniform with a = sqrt(5), which makes
the bound 1 / sqrt(fan_in), for weight and bias alike), from the `Tensor.manual_seed`
generator, and are realized buffers from the start. Their `requires_grad` is left
None, as tinygrad does: an optimizer given them sets it to True.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from irtensor import dtypes
from irtensor.frontend.tensor import Tensor

Size2 = int | Sequence[int]
Padding = int | Sequence[int] | str


def _tuple(x: int | Sequence[int], n: int, what: str) -> tuple[int, ...]:
    out = (int(x),) * n if isinstance(x, int) else tuple(int(v) for v in x)
    if len(out) != n:
        raise ValueError(f"{what}: expected an int or {n} values, got {x!r}")
    return out


def _uniform(shape: tuple[int, ...], fan_in: int) -> Tensor:
    """Uniform in +-1 / sqrt(fan_in): torch's default for weights and biases."""
    bound = 1 / math.sqrt(max(fan_in, 1))
    return Tensor.uniform(*shape, low=-bound, high=bound)


def _same_padding(kernel: tuple[int, ...], dilation: tuple[int, ...], stride: tuple[int, ...]
                  ) -> tuple[int, int, int, int]:
    """padding='same' as (left, right, top, bottom) for (kh, kw): the odd pixel goes to the
    right and bottom, as torch."""
    if any(s != 1 for s in stride):
        raise ValueError("padding='same' is not supported for strided convolutions")
    (th, tw) = (d * (k - 1) for d, k in zip(dilation, kernel, strict=True))
    return (tw // 2, tw - tw // 2, th // 2, th - th // 2)


def _check_padding(padding: Padding) -> Padding:
    if isinstance(padding, str) and padding.lower() not in ("same", "valid"):
        raise ValueError(f"padding {padding!r}: expected 'same', 'valid', an int or a tuple")
    return padding.lower() if isinstance(padding, str) else padding


class Linear:
    """y = x @ weight.T + bias; weight (out_features, in_features) as torch."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        self.weight = _uniform((out_features, in_features), in_features)
        self.bias: Tensor | None = _uniform((out_features,), in_features) if bias else None

    def __call__(self, x: Tensor) -> Tensor:
        return x.linear(self.weight.T, self.bias)


class Conv2d:
    """2-D convolution of NCHW input; weight (out, in / groups, kh, kw). `padding` is an
    int, (ph, pw), tinygrad's (left, right, top, bottom), 'valid' or 'same'."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size2,
                 stride: Size2 = 1, padding: Padding = 0, dilation: Size2 = 1,
                 groups: int = 1, bias: bool = True) -> None:
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"Conv2d: {in_channels} in and {out_channels} out channels do "
                             f"not split into {groups} groups")
        self.kernel_size = _tuple(kernel_size, 2, "kernel_size")
        self.stride, self.dilation = _tuple(stride, 2, "stride"), _tuple(dilation, 2, "dilation")
        self.groups, self.padding = groups, _check_padding(padding)
        fan_in = in_channels // groups * math.prod(self.kernel_size)
        self.weight = _uniform((out_channels, in_channels // groups, *self.kernel_size), fan_in)
        self.bias: Tensor | None = _uniform((out_channels,), fan_in) if bias else None

    def _padding(self) -> int | Sequence[int]:
        if self.padding == "same":
            return _same_padding(self.kernel_size, self.dilation, self.stride)
        return 0 if self.padding == "valid" else self.padding  # type: ignore[return-value]

    def __call__(self, x: Tensor) -> Tensor:
        return x.conv2d(self.weight, self.bias, self.groups, self.stride, self.dilation,
                        self._padding())


class Conv1d:
    """1-D convolution of (N, C, L) input; weight (out, in / groups, k), as torch. It runs
    as a conv2d of height 1."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int,
                 stride: int = 1, padding: int | str = 0, dilation: int = 1,
                 groups: int = 1, bias: bool = True) -> None:
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"Conv1d: {in_channels} in and {out_channels} out channels do "
                             f"not split into {groups} groups")
        self.kernel_size, self.stride, self.dilation = kernel_size, stride, dilation
        self.groups, self.padding = groups, _check_padding(padding)
        fan_in = in_channels // groups * kernel_size
        self.weight = _uniform((out_channels, in_channels // groups, kernel_size), fan_in)
        self.bias: Tensor | None = _uniform((out_channels,), fan_in) if bias else None

    def __call__(self, x: Tensor) -> Tensor:
        if x.ndim != 3:
            raise ValueError(f"Conv1d needs (N, C, L) input, got shape {x.shape}")
        if self.padding == "same":
            left, right, _, _ = _same_padding((1, self.kernel_size), (1, self.dilation),
                                              (1, self.stride))
        else:
            left = right = 0 if self.padding == "valid" else int(self.padding)  # type: ignore[arg-type]
        o, c, k = self.weight.shape
        out = x.unsqueeze(2).conv2d(self.weight.reshape(o, c, 1, k), self.bias, self.groups,
                                    (1, self.stride), (1, self.dilation), (left, right, 0, 0))
        return out.squeeze(2)


class ConvTranspose2d:
    """The transpose of Conv2d; weight (in, out / groups, kh, kw), as torch."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Size2,
                 stride: Size2 = 1, padding: Size2 = 0, output_padding: Size2 = 0,
                 dilation: Size2 = 1, groups: int = 1, bias: bool = True) -> None:
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"ConvTranspose2d: {in_channels} in and {out_channels} out "
                             f"channels do not split into {groups} groups")
        self.kernel_size = _tuple(kernel_size, 2, "kernel_size")
        self.stride, self.dilation = _tuple(stride, 2, "stride"), _tuple(dilation, 2, "dilation")
        self.padding = _tuple(padding, 2, "padding")
        self.output_padding = _tuple(output_padding, 2, "output_padding")
        self.groups = groups
        fan_in = out_channels // groups * math.prod(self.kernel_size)  # torch's: weight dim 1
        self.weight = _uniform((in_channels, out_channels // groups, *self.kernel_size), fan_in)
        self.bias: Tensor | None = _uniform((out_channels,), fan_in) if bias else None

    def __call__(self, x: Tensor) -> Tensor:
        return x.conv_transpose2d(self.weight, self.bias, self.groups, self.stride,
                                  self.dilation, self.padding, self.output_padding)


class Embedding:
    """Rows of `weight` (vocab_size, embed_size) at integer indices; the weight is
    glorot-uniform, as tinygrad's (torch draws N(0, 1)). An index outside the vocabulary
    gives a row of zeros (torch raises)."""

    def __init__(self, vocab_size: int, embed_size: int) -> None:
        self.vocab_sz, self.embed_sz = vocab_size, embed_size
        self.weight = Tensor.glorot_uniform(vocab_size, embed_size)

    def __call__(self, idx: Tensor) -> Tensor:
        if not idx.dtype.is_int:
            raise TypeError(f"Embedding needs integer indices, got {idx.dtype.name}")
        classes = Tensor.arange(self.vocab_sz, dtype=idx.dtype, device=idx.device)
        hot = (idx.unsqueeze(-1) == classes).cast(self.weight.dtype)
        return hot.matmul(self.weight)  # one-hot rows: a matmul, differentiable in weight


class Dropout:
    """x.dropout(p): zeros with probability p and scales by 1 / (1 - p) while
    `Tensor.training`; the identity otherwise. The mask comes from `Tensor.manual_seed`."""

    def __init__(self, p: float = 0.5) -> None:
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout probability must be in [0, 1], got {p}")
        self.p = p

    def __call__(self, x: Tensor) -> Tensor:
        return x.dropout(self.p)


def filled(shape: tuple[int, ...], value: float, dtype: dtypes.DType | None = None,
           device: str | None = None) -> Tensor:
    """A realized buffer holding `value` everywhere: parameters and optimizer states are
    buffers from the start (a constant would enter the first program as an op, so the
    first step's program would differ from the next ones')."""
    d = dtype or dtypes.default_float
    return Tensor(np.full(shape, value, d.np), dtype=d, device=device)
