"""More reductions of the Tensor (prod, any, all, argmax, logsumexp, ...), triangles and
comparisons within a tolerance: each a short composition of `hl` ops.

`ll` reduces by sum and max only, so a product is a tree of multiplies: the axis padded
with ones to a power of two and halved log2(n) times (exact for ints, pairwise rounding
for floats, as numpy's own pairwise loops).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from irtensor import dtypes
from irtensor.frontend.movement import normalize_axis

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor

Axis = int | Sequence[int] | None
Scalar = int | float | bool


def axes_of(axis: Axis, rank: int) -> tuple[int, ...]:
    """Sorted, non-negative axes; axis 0 or -1 of a 0-d tensor is no axis (as torch)."""
    if axis is None:
        return tuple(range(rank))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    normalized = {normalize_axis(a, rank) for a in axes}  # rank 0: only 0 and -1
    return tuple(sorted(normalized)) if rank else ()


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdim: bool
                  ) -> tuple[int, ...]:
    return tuple(1 if i in axes else d for i, d in enumerate(shape) if keepdim or i not in axes)


def axis_last(x: Tensor, axes: tuple[int, ...]) -> Tensor:
    """`axes` moved to the end and merged into one (of size 1 when there are none)."""
    keep = [i for i in range(x.ndim) if i not in axes]
    moved = x.permute(*keep, *axes)
    n = 1
    for a in axes:
        n *= x.shape[a]
    return moved.reshape(*[x.shape[i] for i in keep], n)


def lowest(x: Tensor, highest: bool = False) -> Tensor:
    """The identity of max (of min, `highest`) in x's dtype: -inf, the int minimum, False."""
    d = x.dtype
    if d.is_float:
        value: float | int | bool = math.inf if highest else -math.inf
    elif d.is_bool:
        value = highest
    else:
        info = np.iinfo(d.np)
        value = int(info.max if highest else info.min)
    return x._const(value, d)


def tree(x: Tensor, combine: str, identity: Scalar) -> Tensor:
    """Combine the last axis pairwise, halving it until one element is left: (..., 1)."""
    n = x.shape[-1]
    size = 1 << max(n - 1, 0).bit_length()
    if size != n:
        x = x.pad([None] * (x.ndim - 1) + [(0, size - n)], value=identity)
    lead: list[tuple[int, int] | None] = [None] * (x.ndim - 1)
    while x.shape[-1] > 1:
        h = x.shape[-1] // 2
        a, b = x.shrink([*lead, (0, h)]), x.shrink([*lead, (h, 2 * h)])
        x = a * b if combine == "mul" else a.maximum(b)
    return x


def prod_last(x: Tensor) -> Tensor:
    """The product over the last axis, kept as size 1."""
    return tree(x, "mul", 1)


class MoreReduceMixin:
    def prod(self: Tensor, axis: Axis = None, keepdim: bool = False, dtype: Any = None
             ) -> Tensor:
        """Product over `axis`; 1 over no elements; bools and narrow ints multiply as
        `sum` adds (`dtypes.sum_dtype`); `dtype`: the input is cast to it first (torch's
        and numpy's `dtype=`)."""
        if dtype is not None:
            return self.cast(dtype).prod(axis, keepdim)
        x = self.cast(dtypes.sum_dtype(self.dtype))
        axes = axes_of(axis, x.ndim)
        out = prod_last(axis_last(x, axes))
        return out.reshape(reduced_shape(x.shape, axes, keepdim))

    def any(self: Tensor, axis: Axis = None, keepdim: bool = False) -> Tensor:
        """Whether any element is nonzero; False over no elements."""
        return (self != 0).max(axis, keepdim) if not self.dtype.is_bool \
            else self.max(axis, keepdim)

    def all(self: Tensor, axis: Axis = None, keepdim: bool = False) -> Tensor:
        """Whether every element is nonzero; True over no elements."""
        return (self != 0).min(axis, keepdim) if not self.dtype.is_bool \
            else self.min(axis, keepdim)

    def isclose(self: Tensor, other: Tensor | Scalar, rtol: float = 1e-05, atol: float = 1e-08,
                equal_nan: bool = False) -> Tensor:
        """|a - b| <= atol + rtol |b| (numpy.isclose, torch.isclose); equal infinities
        are close, NaN only with `equal_nan`."""
        a, b = self._pair(other)
        if not a.dtype.is_float:
            a, b = a._float(), b._float()
        near = a.isfinite() & b.isfinite() & ((a - b).abs() <= atol + rtol * b.abs())
        close = (a == b) | near
        return close | (a.isnan() & b.isnan()) if equal_nan else close

    def allclose(self: Tensor, other: Tensor | Scalar, rtol: float = 1e-05, atol: float = 1e-08,
                 equal_nan: bool = False) -> bool:
        """Realizes: a Python bool, as torch.allclose."""
        return bool(self.isclose(other, rtol, atol, equal_nan).all().item())

    def var_mean(self: Tensor, axis: Axis = None, keepdim: bool = False, correction: int = 1
                 ) -> tuple[Tensor, Tensor]:
        return self.var(axis, keepdim, correction), self.mean(axis, keepdim)

    def std_mean(self: Tensor, axis: Axis = None, keepdim: bool = False, correction: int = 1
                 ) -> tuple[Tensor, Tensor]:
        return self.std(axis, keepdim, correction), self.mean(axis, keepdim)

    def logsumexp(self: Tensor, axis: Axis = None, keepdim: bool = False) -> Tensor:
        """log(sum(exp(x))) shifted by the max, so it neither overflows nor underflows;
        -inf over no elements or only -inf, +inf with any +inf."""
        x = self._float()
        axes = axes_of(axis, x.ndim)
        m = x.max(axes, keepdim=True)
        shift = m.isfinite().where(m, 0.0).cast(x.dtype)
        out = (x - shift).exp().sum(axes, keepdim=True).log() + shift
        return out.reshape(reduced_shape(x.shape, axes, keepdim))

    def _arg_extreme(self: Tensor, axis: int | None, keepdim: bool, name: str) -> Tensor:
        if axis is None:
            out = self.flatten()._arg_extreme(0, False, name)
            return out.reshape((1,) * self.ndim) if keepdim else out
        ax = normalize_axis(axis, self.ndim)
        x = self.reshape(1) if self.ndim == 0 else self
        n = x.shape[ax]
        if n == 0:
            raise ValueError(f"{name} of an empty axis (axis {ax} of shape {self.shape})")
        best = x.max(ax, keepdim=True) if name == "argmax" else x.min(ax, keepdim=True)
        hit = (x == best) | x.isnan()  # NaN wins, as in numpy
        countdown = type(self).arange(n, 0, -1, device=self.device)
        countdown = countdown.reshape([n if i == ax else 1 for i in range(x.ndim)])
        out = n - hit.where(countdown, 0).max(ax, keepdim=True)  # the first hit
        return out.reshape(reduced_shape(self.shape, axes_of(ax, self.ndim), keepdim))

    def argmax(self: Tensor, axis: int | None = None, keepdim: bool = False) -> Tensor:
        """The index of the first maximum (int32, as tinygrad; torch: int64); a NaN is
        the maximum, as numpy; `axis=None` indexes the flattened tensor."""
        return self._arg_extreme(axis, keepdim, "argmax")

    def argmin(self: Tensor, axis: int | None = None, keepdim: bool = False) -> Tensor:
        """The index of the first minimum, as argmax."""
        return self._arg_extreme(axis, keepdim, "argmin")

    # ------------------------------------------------------------------ triangles, masks

    def _triangle(self: Tensor, diagonal: int, upper: bool) -> Tensor:
        if self.ndim < 2:
            raise ValueError(f"{'triu' if upper else 'tril'} needs at least 2 dimensions, "
                             f"got shape {self.shape}")
        rows, cols = self.shape[-2:]
        new = type(self)
        r = new.arange(rows, device=self.device).reshape(rows, 1)
        c = new.arange(cols, device=self.device).reshape(1, cols)
        keep = (c - r >= diagonal) if upper else (c - r <= diagonal)
        return keep.where(self, self._const(0, self.dtype))

    def triu(self: Tensor, diagonal: int = 0) -> Tensor:
        """The upper triangle of the last two axes: j - i >= diagonal kept, the rest 0."""
        return self._triangle(diagonal, upper=True)

    def tril(self: Tensor, diagonal: int = 0) -> Tensor:
        """The lower triangle of the last two axes: j - i <= diagonal kept, the rest 0."""
        return self._triangle(diagonal, upper=False)

    def masked_fill(self: Tensor, mask: Tensor, value: Tensor | Scalar) -> Tensor:
        """`value` where `mask` is true; the value is cast to this dtype (as torch)."""
        fill = value.cast(self.dtype) if isinstance(value, type(self)) \
            else self._const(value, self.dtype)
        return mask.where(fill, self)
