"""Indexing by tensors (gather, scatter, masked_select, nonzero) and the movement
helpers built on views (diag, diagonal, roll, unfold, meshgrid, repeat_interleave).

`ll` has no indexed load or store, so a tensor index becomes a comparison with an
arange (tinygrad's one-hot trick): gather compares each index with every position of
the gathered axis and sums the one match, work |index| * n. Out-of-range indices
select nothing (0), as in tinygrad; torch raises. masked_select and nonzero have
shapes that depend on the data, so they realize the mask (nonzero: the tensor) first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from irtensor.frontend.movement import (
    TENSOR_INDEX_HINT,
    Box,
    argfix,
    basic_items,
    index_box,
    index_items,
    normalize_axis,
)
from irtensor.frontend.ops import lowest, prod_last

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor

Scalar = int | float | bool
REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _check_index(x: Tensor, index: Tensor, dim: int, name: str) -> int:
    d = normalize_axis(dim, max(x.ndim, 1))
    if not index.dtype.is_int:
        raise TypeError(f"{name}: index must be an integer tensor, got {index.dtype.name}")
    if index.ndim != x.ndim:
        raise ValueError(f"{name}: index of rank {index.ndim} for a tensor of rank {x.ndim}")
    for i, (a, b) in enumerate(zip(index.shape, x.shape, strict=True)):
        if i != d and a > b:
            raise ValueError(f"{name}: index shape {index.shape} exceeds {x.shape} on axis {i}")
    return d


def _last(x: Tensor, d: int) -> Tensor:
    return x.permute([i for i in range(x.ndim) if i != d] + [d])


def _unlast(x: Tensor, d: int) -> Tensor:
    order = list(range(x.ndim - 1))
    order.insert(d, x.ndim - 1)
    return x.permute(order)


def place(x: Tensor, box: Box, full: tuple[int, ...]) -> Tensor:
    """`x` (the box's counts per axis) laid out where the box picks in a tensor of shape
    `full`, zeros (False) elsewhere: strides spread by padding, then padded into place,
    then the flipped axes flipped back."""
    for axis, step in enumerate(box.steps):
        count = x.shape[axis]
        if step > 1 and count > 1:
            spread = x.unsqueeze(axis + 1).pad([None] * (axis + 1) + [(0, step - 1)]
                                               + [None] * (x.ndim - axis - 1))
            grown = [*x.shape[:axis], count * step, *x.shape[axis + 1:]]
            x = spread.reshape(grown).shrink([None] * axis + [(0, (count - 1) * step + 1)]
                                             + [None] * (x.ndim - axis - 1))
    pads = [(s, d - s - e) for s, e, d in zip(box.starts, x.shape, full, strict=True)]
    x = x.pad(pads)
    return x.flip(box.flips) if box.flips else x


class IndexingMixin:
    def __setitem__(self: Tensor, index: Any, value: Tensor | Scalar) -> None:
        """`t[index] = value` for any index `t[index]` takes: assign semantics (t takes
        the new value, lazily; tensors computed from the old value keep it). `value`
        broadcasts to `t[index]`'s shape and is cast to t's dtype. With tensor indices
        the positions are `t[index]` of the flat positions and the value is scattered
        there (where one repeats, the last value wins, as numpy); a whole-shape bool
        mask with a scalar value is a `where`."""
        cls = type(self)
        listed = index_items(index)
        if any(isinstance(item, cls | list | np.ndarray) for item in listed):
            self.assign(self._set_by_tensors(listed, value))
            return
        items = basic_items(listed, self.ndim, TENSOR_INDEX_HINT)
        box = index_box(self.shape, items)
        picked = tuple(box.out_shape)
        v = value.cast(self.dtype) if isinstance(value, cls) else self._const(value, self.dtype)
        try:
            v = v.expand(*picked) if v.shape != picked else v
        except ValueError:
            raise ValueError(f"t[index] = value: a value of shape {v.shape} does not broadcast "
                             f"to the indexed shape {picked}") from None
        counts = [-(-(e - s) // st) for s, e, st in zip(box.starts, box.limits, box.steps,
                                                        strict=True)]
        v = v.reshape(counts)  # None axes gone, int axes back as 1
        mask = place(cls.full(tuple(counts), True, device=self.device), box, self.shape)
        self.assign(mask.where(place(v, box, self.shape), self))

    def _set_by_tensors(self: Tensor, items: list[Any], value: Tensor | Scalar) -> Tensor:
        """The new value of `self` after `self[items] = value` with tensor indices."""
        cls = type(self)
        if not isinstance(value, cls):
            value = self._const(value, self.dtype)
        value = value.cast(self.dtype)
        only = items[0] if len(items) == 1 else None
        mask = only if isinstance(only, cls) else None
        if mask is not None and mask.dtype.is_bool and mask.shape == self.shape \
                and value.numel() == 1:  # t[t < 0] = 0: no positions needed
            return mask.where(value.reshape(()), self)
        n = self.numel()
        wide = "int64" if n >= 2**31 else "int32"
        positions = cls.arange(n, dtype=wide, device=self.device).reshape(self.shape)
        at = positions[tuple(items)]
        try:
            value = value.expand(*at.shape) if value.shape != at.shape else value
        except ValueError:
            raise ValueError(f"t[index] = value: a value of shape {value.shape} does not "
                             f"broadcast to the indexed shape {at.shape}") from None
        flat = self.reshape(n).scatter(0, at.reshape(-1), value.reshape(-1))
        return flat.reshape(self.shape)

    def gather(self: Tensor, dim: int, index: Tensor) -> Tensor:
        """out[..., i, ...] = self[..., index[..., i, ...], ...] along `dim` (torch.gather);
        index may be smaller than self on the other axes.

        >>> Tensor([[1, 2], [3, 4]]).gather(1, Tensor([[1, 0], [0, 0]])).tolist()
        [[2, 1], [3, 3]]
        """
        d = _check_index(self, index, dim, "gather")
        n = self.shape[d]
        x = self.shrink([None if i == d else (0, s) for i, s in enumerate(index.shape)])
        x = x.unsqueeze(-1).transpose(-1, d)  # the gathered axis last, size 1 at d
        positions = type(self).arange(n, device=self.device)
        hit = index.unsqueeze(-1) == positions.cast(index.dtype)
        return hit.where(x, self._const(0, self.dtype))._sum_same(-1) if not self.dtype.is_bool \
            else hit.where(x, False).max(-1)

    def _scatter_parts(self: Tensor, dim: int, index: Tensor, src: Tensor | Scalar,
                       name: str) -> tuple[int, Tensor, Tensor, Tensor]:
        """With the scattered axis last: src (..., 1, m), the hits (..., n, m) of each
        source element j at target position i, and where they fall in the target."""
        d = _check_index(self, index, dim, name)
        if isinstance(src, type(self)):
            src = src.cast(self.dtype).shrink([(0, s) for s in index.shape])
        else:
            src = self._const(src, self.dtype).expand(index.shape)
        n = self.shape[d]
        idx = _last(index, d).unsqueeze(-2)  # (..., 1, m)
        positions = type(self).arange(n, device=self.device).cast(index.dtype).reshape(n, 1)
        hits = idx == positions  # (..., n, m)
        return d, _last(src, d).unsqueeze(-2), hits, _last(self, d)

    def _into_target(self: Tensor, d: int, values: Tensor, written: Tensor) -> Tensor:
        """values (..., n) where written, else self; the index may cover less of self."""
        values, written = _unlast(values, d), _unlast(written, d)
        pads = [(0, s - v) for s, v in zip(self.shape, values.shape, strict=True)]
        values, written = values.pad(pads), written.pad(pads)
        return written.where(values, self)

    def scatter(self: Tensor, dim: int, index: Tensor, src: Tensor | Scalar,
                reduce: str | None = None) -> Tensor:
        """self with src[j] written at index[j] along `dim` (torch.scatter); where an
        index repeats, the last source element wins (torch leaves it unspecified).
        `reduce='add'` or `'multiply'` combines instead, as torch's."""
        if reduce is not None:
            kinds = {"add": "sum", "multiply": "prod"}
            if reduce not in kinds:
                raise ValueError(f"scatter: reduce {reduce!r}: expected 'add' or 'multiply'")
            return self.scatter_reduce(dim, index, src, kinds[reduce])
        d, src_l, hits, _ = self._scatter_parts(dim, index, src, "scatter")
        m = hits.shape[-1]
        order = type(self).arange(m, device=self.device)
        last = hits.where(order, -1).max(-1, keepdim=True)  # the last source that hits
        chosen = hits & (order == last)
        zero = self._const(False if self.dtype.is_bool else 0, self.dtype)
        picked = chosen.where(src_l, zero)
        values = picked.max(-1) if self.dtype.is_bool else picked._sum_same(-1)
        return self._into_target(d, values, last.squeeze(-1) >= 0)

    def scatter_reduce(self: Tensor, dim: int, index: Tensor, src: Tensor | Scalar,
                       reduce: str, include_self: bool = True) -> Tensor:
        """torch.scatter_reduce: 'sum', 'prod', 'mean', 'amax' or 'amin' of the source
        elements sent to each position (and of self there, with `include_self`); a
        mean of ints rounds down, as torch's."""
        if reduce not in REDUCTIONS:
            raise ValueError(f"scatter_reduce: reduce {reduce!r}: expected one of "
                             f"{', '.join(REDUCTIONS)}")
        d, src_l, hits, target = self._scatter_parts(dim, index, src, "scatter_reduce")
        target = target.shrink([(0, s) for s in hits.shape[:-1]])
        count = hits.sum(-1)
        touched = count > 0
        if reduce in ("sum", "mean"):
            total = hits.where(src_l, self._const(0, self.dtype))._sum_same(-1)
            if include_self:
                total, count = total + target, count + 1
            if reduce == "mean":
                total = total // count.maximum(1).cast(self.dtype) if self.dtype.is_int \
                    else total / count.maximum(1).cast(self.dtype)
            values = total
        elif reduce == "prod":
            values = prod_last(hits.where(src_l, self._const(1, self.dtype))).squeeze(-1)
            values = values * target if include_self else values
        else:
            big = reduce == "amax"
            fill = lowest(src_l, highest=not big)  # selects nothing
            chosen = hits.where(src_l, fill)
            values = chosen.max(-1) if big else chosen.min(-1)
            if include_self:
                values = values.maximum(target) if big else values.minimum(target)
        return self._into_target(d, values, touched)

    def masked_select(self: Tensor, mask: Tensor) -> Tensor:
        """The elements where `mask` (broadcast to self) is true, flattened. The mask is
        realized first: the result's length depends on it; the values stay lazy."""
        m = mask.expand(*np.broadcast_shapes(mask.shape, self.shape))
        picks = np.flatnonzero(m.numpy())
        flat = self.expand(*m.shape).flatten()
        index = type(self)(picks.astype(np.int32), device=self.device)
        return flat.gather(0, index) if picks.size else flat.shrink([(0, 0)])

    def nonzero(self: Tensor) -> Tensor:
        """The indices (count, ndim) of the nonzero elements, in row-major order, as
        int32. Realizes the tensor: the count depends on the data."""
        where = np.argwhere(self.numpy()).astype(np.int32)
        return type(self)(where.reshape(-1, self.ndim), device=self.device)

    # ------------------------------------------------------------------ views

    def repeat_interleave(self: Tensor, repeats: int, dim: int | None = None) -> Tensor:
        """Each element repeated `repeats` times along `dim` (the flattened tensor when
        None), as torch with an int count."""
        if not isinstance(repeats, int) or repeats < 0:
            raise ValueError(f"repeat_interleave needs a non-negative int count, got {repeats!r}")
        x = self.flatten() if dim is None else self
        d = 0 if dim is None else normalize_axis(dim, x.ndim)
        shape = list(x.shape)
        grown = x.unsqueeze(d + 1).expand(*shape[:d + 1], repeats, *shape[d + 1:])
        return grown.reshape(*shape[:d], shape[d] * repeats, *shape[d + 1:])

    def unfold(self: Tensor, dim: int, size: int, step: int) -> Tensor:
        """Windows of `size` every `step` along `dim`, as a new last axis (torch.unfold)."""
        if self.ndim == 0:
            raise ValueError("unfold needs a tensor of at least one axis")
        d = normalize_axis(dim, self.ndim)
        n = self.shape[d]
        if size < 0 or size > n or step < 1:
            raise ValueError(f"unfold: size {size} and step {step} do not fit an axis of {n}")
        count = (n - size) // step + 1
        windows = [self[(slice(None),) * d + (slice(k, k + (count - 1) * step + 1, step),)]
                   for k in range(size)]
        if not windows:
            shape = list(self.shape)
            shape[d] = count
            return type(self).zeros(*shape, 0, dtype=self.dtype, device=self.device)
        return windows[0].stack(*windows[1:], dim=-1)

    def meshgrid(self: Tensor, *others: Tensor, indexing: str = "ij") -> tuple[Tensor, ...]:
        """Coordinate grids of 1-D tensors; `indexing='xy'` swaps the first two axes."""
        if indexing not in ("ij", "xy"):
            raise ValueError(f"meshgrid: indexing {indexing!r}: expected 'ij' or 'xy'")
        tensors = [self, *others]
        sizes = [t.numel() for t in tensors]
        if indexing == "xy" and len(tensors) > 1:
            sizes[0], sizes[1] = sizes[1], sizes[0]
        out = []
        for i, t in enumerate(tensors):
            axis = i if indexing == "ij" or len(tensors) < 2 else (1 - i if i < 2 else i)
            shape = [1] * len(tensors)
            shape[axis] = -1
            out.append(t.reshape(shape).expand(sizes))
        return tuple(out)

    def diag(self: Tensor, diagonal: int = 0) -> Tensor:
        """A 1-D tensor as the diagonal of a square matrix (offset by `diagonal`), a 2-D
        tensor's diagonal as a vector (torch.diag)."""
        if self.ndim == 2:
            return self.diagonal(diagonal)
        if self.ndim != 1:
            raise ValueError(f"diag needs a 1-D or 2-D tensor, got shape {self.shape}")
        n = self.shape[0]
        flat = self.unsqueeze(-1).pad([None, (0, n)]).flatten().shrink([(0, n * n)])
        square = flat.reshape(n, n)
        k = abs(diagonal)
        return square.pad([(0, k), (k, 0)] if diagonal > 0 else [(k, 0), (0, k)])

    def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        """The diagonal of axes dim1, dim2 as a new last axis (torch.diagonal)."""
        a, b = normalize_axis(dim1, self.ndim), normalize_axis(dim2, self.ndim)
        if a == b:
            raise ValueError(f"diagonal: dim1 and dim2 are both axis {a}")
        x = self.permute([i for i in range(self.ndim) if i not in (a, b)] + [a, b])
        rows, cols = x.shape[-2:]
        lead: list[tuple[int, int] | None] = [None] * (x.ndim - 2)
        r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
        m = max(min(rows - r0, cols - c0), 0)
        r0, c0 = min(r0, rows), min(c0, cols)
        x = x.shrink([*lead, (r0, r0 + m), (c0, c0 + m)])
        if m == 0:
            return x.reshape(*x.shape[:-2], 0)
        return x.flatten(-2)[(Ellipsis, slice(0, m * m, m + 1))]

    def roll(self: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None
             ) -> Tensor:
        """Elements shifted by `shifts` along `dims`, wrapping around (torch.roll); with
        no dims, the flattened tensor rolls."""
        if dims is None:
            return self.flatten().roll(shifts, 0).reshape(self.shape)
        s, ds = argfix(shifts), argfix(dims)
        if len(s) != len(ds):
            raise ValueError(f"roll: {len(s)} shifts for {len(ds)} dims")
        x = self
        for shift, dim in zip(s, ds, strict=True):
            d = normalize_axis(dim, x.ndim)
            n = x.shape[d]
            k = shift % n if n else 0
            if k:
                lead = (slice(None),) * d
                x = x[(*lead, slice(n - k, n))].cat(x[(*lead, slice(0, n - k))], dim=d)
        return x

