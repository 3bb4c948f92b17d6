"""sort, argsort and topk as compositions.

Elements are ordered by (value, position): NaN after every number ascending and before
every number descending (numpy's and torch's places for it), ties by position, so the
sort is stable and every device gives the same indices. Up to RANK_LIMIT elements an
element's place is its rank, the count of elements ordered before it (one n**2
comparison reduction), and the output gathers by rank (a second one). Longer axes run a
bitonic network of compare-exchange steps on (value, position) pairs: log2(n)
(log2(n) + 1) / 2 steps of elementwise where/compare, n log2(n)**2 work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from irtensor import dtypes
from irtensor.frontend.movement import normalize_axis
from irtensor.frontend.ops import lowest

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor

RANK_LIMIT = 4096


def _before(a: Tensor, ia: Tensor, b: Tensor, ib: Tensor, descending: bool) -> Tensor:
    """Element (a, ia) is ordered before (b, ib)."""
    nan_a, nan_b = a.isnan(), b.isnan()
    less = (a < b) if not descending else (a > b)
    by_value = less | (nan_b & ~nan_a) if not descending else less | (nan_a & ~nan_b)
    same = (a == b) | (nan_a & nan_b)
    return by_value | (same & (ia < ib))


def _sort_by_rank(x: Tensor, descending: bool, k: int) -> tuple[Tensor, Tensor]:
    """The first k of x (..., n) in order, and their positions."""
    n = x.shape[-1]
    pos = type(x).arange(n, device=x.device)
    # [..., i, j]: element j (last axis) before element i
    before = _before(x.unsqueeze(-2), pos, x.unsqueeze(-1), pos.reshape(n, 1), descending)
    rank = before.cast(dtypes.int32).sum(-1)  # (..., n)
    places = type(x).arange(k, device=x.device).reshape(k, 1)
    hit = rank.unsqueeze(-2) == places  # (..., k, n): element j lands at place r
    values = hit.where(x.unsqueeze(-2), lowest(x)).max(-1)
    indices = hit.where(pos, -1).max(-1)
    return values, indices


def _directions(size: int, block: int, width: int) -> np.ndarray:
    """For the step comparing i with i + width inside blocks of `block`: whether the pair
    group g (i = g * 2 * width + r) sorts up."""
    groups = np.arange(size // (2 * width)) * 2 * width
    return ((groups & block) == 0).reshape(-1, 1, 1)


def _bitonic(x: Tensor, descending: bool) -> tuple[Tensor, Tensor]:
    """x (..., n) sorted, with positions, by a bitonic network on a power of two."""
    n = x.shape[-1]
    size = 1 << max(n - 1, 0).bit_length()
    lead = x.shape[:-1]
    pads: list[tuple[int, int] | None] = [None] * len(lead)
    v = x.pad([*pads, (0, size - n)])
    pos = type(x).arange(size, device=x.device).expand(*lead, size)
    block = 2
    while block <= size:
        width = block // 2
        while width >= 1:
            v, pos = _exchange(v, pos, n, block, width, descending)
            width //= 2
        block *= 2
    return v.shrink([*pads, (0, n)]), pos.shrink([*pads, (0, n)])


def _exchange(v: Tensor, pos: Tensor, n: int, block: int, width: int, descending: bool
              ) -> tuple[Tensor, Tensor]:
    lead, size = v.shape[:-1], v.shape[-1]
    groups = [*lead, size // (2 * width), 2, width]
    v, pos = v.reshape(groups), pos.reshape(groups)
    keep: list[tuple[int, int] | None] = [None] * (len(groups) - 2)
    a, b = v.shrink([*keep, (0, 1), None]), v.shrink([*keep, (1, 2), None])
    ia, ib = pos.shrink([*keep, (0, 1), None]), pos.shrink([*keep, (1, 2), None])
    pad_a, pad_b = ia >= n, ib >= n  # padding goes last whatever its value
    a_first = (~pad_a & pad_b) | ((pad_a == pad_b) & _before(a, ia, b, ib, descending))
    up = type(v)(_directions(size, block, width), device=v.device)
    swap = up.where(~a_first, a_first)
    v = swap.where(b, a).cat(swap.where(a, b), dim=-2)
    pos = swap.where(ib, ia).cat(swap.where(ia, ib), dim=-2)
    return v.reshape(*lead, size), pos.reshape(*lead, size)


def _along_last(x: Tensor, dim: int) -> tuple[Tensor, list[int]]:
    d = normalize_axis(dim, max(x.ndim, 1))
    x = x.reshape(1) if x.ndim == 0 else x
    order = [i for i in range(x.ndim) if i != d] + [d]
    return x.permute(order), sorted(range(x.ndim), key=order.__getitem__)


def _sorted(x: Tensor, dim: int, descending: bool, k: int | None) -> tuple[Tensor, Tensor]:
    shape = x.shape
    last, back = _along_last(x, dim)
    n = last.shape[-1]
    k = n if k is None else k
    if n <= RANK_LIMIT:
        values, indices = _sort_by_rank(last, descending, k)
    else:
        values, indices = _bitonic(last, descending)
        pads: list[tuple[int, int] | None] = [None] * (last.ndim - 1)
        values, indices = values.shrink([*pads, (0, k)]), indices.shrink([*pads, (0, k)])
    values, indices = values.permute(back), indices.permute(back)
    if not shape:
        return values.reshape(()), indices.reshape(())
    return values, indices


class SortMixin:
    def sort(self: Tensor, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
        """(values, indices) along `dim`, stable; NaN sorts last ascending and first
        descending. Indices are int32 (torch: int64).

        >>> values, indices = Tensor([3.0, float("nan"), 1.0, 3.0]).sort()
        >>> values.tolist(), indices.tolist()
        ([1.0, 3.0, 3.0, nan], [2, 0, 3, 1])
        """
        return _sorted(self, dim, descending, None)

    def argsort(self: Tensor, dim: int = -1, descending: bool = False) -> Tensor:
        """The indices that sort along `dim` (stable, as `sort`)."""
        return self.sort(dim, descending)[1]

    def topk(self: Tensor, k: int, dim: int = -1, largest: bool = True, sorted_: bool = True
             ) -> tuple[Tensor, Tensor]:
        """The k largest (smallest with largest=False) along `dim` and their indices,
        in order (tinygrad's `sorted_`; the result is always sorted); ties keep
        the first positions."""
        d = normalize_axis(dim, max(self.ndim, 1))
        n = self.shape[d] if self.ndim else 1
        if not 0 <= k <= n:
            raise ValueError(f"topk: k={k} is out of range for an axis of size {n}")
        return _sorted(self, dim, largest, k)
