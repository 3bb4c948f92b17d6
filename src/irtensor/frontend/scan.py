"""Scans (cumulative sum, product, max, min, logsumexp) as compositions.

An inclusive scan of an axis of n <= BLOCK elements is one reduction: element i reduces
the masked row x[j <= i] (n**2 work, one kernel, no sequential dependence). A longer
axis is cut into blocks of BLOCK: each block is scanned so, the block totals are scanned
(recursively), and each block is combined with the total of the blocks before it
(tinygrad's split cumsum). Work per element is about BLOCK, the kernels about three per
level of blocks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from irtensor import dtypes
from irtensor.frontend.movement import normalize_axis
from irtensor.frontend.ops import lowest, prod_last

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor

BLOCK = 256
KINDS = ("sum", "prod", "max", "min", "logsumexp")


def _masked_rows(x: Tensor) -> tuple[Tensor, Tensor]:
    """x (..., n) as rows (..., n, n) of x[j] at [i, j], and the mask j <= i."""
    n = x.shape[-1]
    idx = type(x).arange(n, device=x.device)
    mask = idx.reshape(1, n) <= idx.reshape(n, 1)
    return x.unsqueeze(-2), mask


def _scan_direct(x: Tensor, kind: str) -> Tensor:
    rows, mask = _masked_rows(x)
    if kind == "sum":
        return mask.where(rows, x._const(0, x.dtype))._sum_same(-1)
    if kind == "prod":
        return prod_last(mask.where(rows, x._const(1, x.dtype))).squeeze(-1)
    if kind == "max":
        return mask.where(rows, lowest(x)).max(-1)
    if kind == "min":
        return mask.where(rows, lowest(x, highest=True)).min(-1)
    top = mask.where(rows, lowest(x)).max(-1, keepdim=True)
    shift = top.isfinite().where(top, 0.0).cast(x.dtype)
    total = mask.where((rows - shift).exp(), x._const(0, x.dtype)).sum(-1)
    return total.log() + shift.squeeze(-1)


def _combine(prefix: Tensor, x: Tensor, kind: str) -> Tensor:
    if kind == "sum":
        return prefix + x
    if kind == "prod":
        return prefix * x
    if kind == "max":
        return prefix.maximum(x)
    if kind == "min":
        return prefix.minimum(x)
    return prefix.logaddexp(x)


def scan_last(x: Tensor, kind: str) -> Tensor:
    """The inclusive scan of the last axis."""
    n = x.shape[-1]
    if n <= BLOCK:
        return _scan_direct(x, kind)
    k = -(-n // BLOCK)
    lead = x.shape[:-1]
    pad: list[tuple[int, int] | None] = [None] * (x.ndim - 1)
    # the padding comes after every real element, so it changes no prefix of them
    blocks = x.pad([*pad, (0, k * BLOCK - n)]).reshape(*lead, k, BLOCK)
    inner = _scan_direct(blocks, kind)
    totals = inner.shrink([*pad, None, (BLOCK - 1, BLOCK)]).reshape(*lead, k)
    before = scan_last(totals, kind).pad([*pad, (1, 0)]).shrink([*pad, (0, k)])
    first = type(x).arange(k, device=x.device).reshape(k, 1) == 0
    out = first.where(inner, _combine(before.unsqueeze(-1), inner, kind))
    return out.reshape(*lead, k * BLOCK).shrink([*pad, (0, n)])


def scan(x: Tensor, axis: int, kind: str) -> Tensor:
    if x.ndim == 0:
        return scan(x.reshape(1), 0, kind).reshape(())
    ax = normalize_axis(axis, x.ndim)
    order = [i for i in range(x.ndim) if i != ax] + [ax]
    back = sorted(range(x.ndim), key=order.__getitem__)
    return scan_last(x.permute(order), kind).permute(back)


class ScanMixin:
    def cumsum(self: Tensor, axis: int = 0) -> Tensor:
        """Running sum along `axis` (tinygrad's default axis 0; torch's `dim`); bools
        and narrow ints add as `sum` does (`dtypes.sum_dtype`).

        >>> Tensor([[1, 2, 3], [4, 5, 6]]).cumsum(1).tolist()
        [[1, 3, 6], [4, 9, 15]]
        """
        x = self.cast(dtypes.sum_dtype(self.dtype))
        return scan(x, axis, "sum")

    def cumprod(self: Tensor, axis: int = 0) -> Tensor:
        """Running product along `axis`; bools and narrow ints multiply as `sum` adds."""
        x = self.cast(dtypes.sum_dtype(self.dtype))
        return scan(x, axis, "prod")

    def cummax(self: Tensor, axis: int = 0) -> Tensor:
        """Running maximum along `axis` (NaN wins). The values only, as tinygrad; torch
        also returns their indices."""
        return scan(self, axis, "max")

    def cummin(self: Tensor, axis: int = 0) -> Tensor:
        """Running minimum along `axis`, as cummax."""
        return scan(self, axis, "min")

    def logcumsumexp(self: Tensor, axis: int = 0) -> Tensor:
        """log(cumsum(exp(x))) without overflow: each prefix shifted by its own max."""
        return scan(self._float(), axis, "logsumexp")
