"""More ways to make a tensor (random initialisers, linspace) and the Tensor's properties.

Random tensors are drawn on the host from the generator `Tensor.manual_seed` resets, as
`Tensor.rand` is, and enter the program as buffers. The initialisers follow tinygrad's
formulas (which are torch's with its default gains).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from irtensor import dtypes, shapes
from irtensor.frontend.movement import argfix

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor

Scalar = int | float | bool


def _fan_in(shape: tuple[int, ...], name: str) -> int:
    if not shape:
        raise ValueError(f"{name} needs a shape of at least one axis, got ()")
    return shapes.numel(shape[1:])


class CreationMixin:
    @classmethod
    def linspace(cls: type[Tensor], start: Scalar, stop: Scalar, steps: int, dtype: Any = None,
                 device: str | None = None) -> Tensor:
        """`steps` values from `start` to `stop`, both included (numpy.linspace)."""
        if not isinstance(steps, int) or steps < 0:
            raise ValueError(f"linspace needs a non-negative int number of steps, got {steps!r}")
        return cls(np.linspace(start, stop, steps), dtype or dtypes.default_float, device)

    @classmethod
    def randint(cls: type[Tensor], *shape: int, low: int = 0, high: int = 10, dtype: Any = None,
                device: str | None = None) -> Tensor:
        """Uniform integers in [low, high) (tinygrad's keywords and defaults)."""
        if high <= low:
            raise ValueError(f"randint needs low < high, got low={low}, high={high}")
        values = cls._rng.integers(low, high, argfix(*shape))
        return cls(values, dtype or dtypes.default_int, device)

    @classmethod
    def randperm(cls: type[Tensor], n: int, dtype: Any = None, device: str | None = None
                 ) -> Tensor:
        """A random permutation of 0..n-1 (int32 by default, as tinygrad; torch: int64)."""
        if n < 0:
            raise ValueError(f"randperm needs n >= 0, got {n}")
        return cls(cls._rng.permutation(n), dtype or dtypes.default_int, device)

    @classmethod
    def normal(cls: type[Tensor], *shape: int, mean: float = 0.0, std: float = 1.0,
               dtype: Any = None, device: str | None = None) -> Tensor:
        values = cls._rng.normal(mean, std, argfix(*shape))
        return cls(values, dtype or dtypes.default_float, device)

    @classmethod
    def _uniform_scaled(cls: type[Tensor], shape: tuple[int, ...], bound: float, dtype: Any,
                        device: str | None) -> Tensor:
        values = cls._rng.uniform(-bound, bound, shape)
        return cls(values, dtype or dtypes.default_float, device)

    @classmethod
    def scaled_uniform(cls: type[Tensor], *shape: int, dtype: Any = None,
                       device: str | None = None) -> Tensor:
        """Uniform in [-1, 1) scaled by numel ** -0.5 (tinygrad)."""
        s = argfix(*shape)
        return cls._uniform_scaled(s, max(shapes.numel(s), 1) ** -0.5, dtype, device)

    @classmethod
    def glorot_uniform(cls: type[Tensor], *shape: int, dtype: Any = None,
                       device: str | None = None) -> Tensor:
        """Uniform in +-sqrt(6 / (shape[0] + prod(shape[1:]))) (Xavier/Glorot)."""
        s = argfix(*shape)
        fan = s[0] + _fan_in(s, "glorot_uniform") if s else 0
        return cls._uniform_scaled(s, math.sqrt(6 / max(fan, 1)), dtype, device)

    @classmethod
    def kaiming_uniform(cls: type[Tensor], *shape: int, a: float = 0.01, dtype: Any = None,
                        device: str | None = None) -> Tensor:
        """Uniform in +-sqrt(3) gain / sqrt(fan_in), gain = sqrt(2 / (1 + a**2)),
        fan_in = prod(shape[1:]) (torch's leaky-relu gain; tinygrad's a = 0.01)."""
        s = argfix(*shape)
        gain = math.sqrt(2 / (1 + a * a))
        bound = math.sqrt(3.0) * gain / math.sqrt(max(_fan_in(s, "kaiming_uniform"), 1))
        return cls._uniform_scaled(s, bound, dtype, device)

    @classmethod
    def kaiming_normal(cls: type[Tensor], *shape: int, a: float = 0.01, dtype: Any = None,
                       device: str | None = None) -> Tensor:
        """Normal with std gain / sqrt(fan_in), as kaiming_uniform."""
        s = argfix(*shape)
        std = math.sqrt(2 / (1 + a * a)) / math.sqrt(max(_fan_in(s, "kaiming_normal"), 1))
        return cls.normal(*s, mean=0.0, std=std, dtype=dtype, device=device)


class PropertiesMixin:
    def element_size(self: Tensor) -> int:
        """Bytes per element."""
        return int(self.dtype.np.itemsize)

    def nbytes(self: Tensor) -> int:
        return self.numel() * self.element_size()

    def is_floating_point(self: Tensor) -> bool:
        return self.dtype.is_float

    def size(self: Tensor, dim: int | None = None) -> tuple[int, ...] | int:
        """The shape, or the size of axis `dim` (negative counts from the end)."""
        if dim is None:
            return self.shape
        if not -self.ndim <= dim < max(self.ndim, 1):
            raise IndexError(f"dim {dim} is out of range for a tensor of rank {self.ndim}")
        return self.shape[dim]

    def assign(self: Tensor, x: Tensor | Scalar | Sequence[Any]) -> Tensor:
        """Give this tensor the value of `x` (same shape; cast to this dtype); returns
        self. Other tensors that were computed from the old value keep it."""
        if not isinstance(x, type(self)):
            x = type(self)(x, dtype=self.dtype, device=self.device)
        if x.shape != self.shape:
            raise ValueError(f"assign: shape {x.shape} does not match the tensor's {self.shape}")
        self._value = x.cast(self.dtype)._value
        return self

    def clone(self: Tensor) -> Tensor:
        """A new tensor of the same value; `assign` on either leaves the other as it was."""
        return type(self)(self._value, device=self.device)

    def to(self: Tensor, device: str | None = None, dtype: Any = None) -> Tensor:
        """The same value on `device` (and in `dtype`): later ops on it run there."""
        out = type(self)(self._value, device=device or self.device)
        return out.cast(dtype) if dtype is not None else out

    def contiguous(self: Tensor) -> Tensor:
        """The same value. Views never copy in irtensor, and kernels read them through
        index maps, so there is no strided layout to make dense."""
        return type(self)(self._value, device=self.device)
