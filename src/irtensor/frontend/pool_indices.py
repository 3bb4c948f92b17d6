"""max_pool2d's `return_indices`: where each window's maximum lies, as torch's indices.

A composition of Tensor ops: the KH * KW taps of each window (the strided slices the
dilated max pool takes) stacked on a last axis, the flat index into the H * W input
plane of each tap from arange arithmetic, and the first hit picked with a min.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from irtensor import dtypes, shapes

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor


def _taps(x: Tensor, k: tuple[int, int], s: tuple[int, int], d: tuple[int, int],
          pads: tuple[int, int, int, int], out: tuple[int, int]) -> Tensor:
    """(..., OH, OW, KH * KW): each window's cells in scan order, padding -inf."""
    top, left, bottom, right = pads
    xp = x.pad([None] * (x.ndim - 2) + [(top, bottom), (left, right)], value=-math.inf)
    taps = [xp[..., i * d[0]:i * d[0] + (out[0] - 1) * s[0] + 1:s[0],
               j * d[1]:j * d[1] + (out[1] - 1) * s[1] + 1:s[1]]
            for i in range(k[0]) for j in range(k[1])]
    return taps[0].stack(*taps[1:], dim=-1)


def _positions(x: Tensor, k: tuple[int, int], s: tuple[int, int], d: tuple[int, int],
               pads: tuple[int, int, int, int], out: tuple[int, int]
               ) -> tuple[Tensor, Tensor]:
    """(OH, OW, KH * KW) int64 flat input indices of each window's cells, and whether
    each cell is inside the input (not padding)."""
    new, i64 = type(x), dtypes.int64
    h, w = x.shape[-2:]
    (oh, ow), (kh, kw) = out, k

    def axis(n_out: int, n_k: int, stride: int, dil: int, before: int) -> Tensor:
        starts = new.arange(n_out, dtype=i64, device=x.device).reshape(n_out, 1) * stride
        return starts + new.arange(n_k, dtype=i64, device=x.device).reshape(1, n_k) * dil \
            - before

    rows = axis(oh, kh, s[0], d[0], pads[0]).reshape(oh, 1, kh, 1)
    cols = axis(ow, kw, s[1], d[1], pads[1]).reshape(1, ow, 1, kw)
    inside = (rows >= 0) & (rows < h) & (cols >= 0) & (cols < w)
    flat = rows * w + cols
    return flat.reshape(oh, ow, kh * kw), inside.reshape(oh, ow, kh * kw)


def max_pool2d_indices(x: Tensor, k: tuple[int, int], s: tuple[int, int],
                       d: tuple[int, int], pads: tuple[int, int, int, int]) -> Tensor:
    """int64 (..., OH, OW): the flat index into each H * W plane of the maximum of each
    window with [top, left, bottom, right] `pads` (ceil_mode's included). torch's rule
    (its CPU kernel): the first maximum in scan order; with a NaN, the last NaN; when all
    the window is -inf, its first cell inside the input."""
    out = tuple(shapes.window(x.shape[a - 2], k[a], s[a], d[a], pads[a], pads[a + 2])
                for a in (0, 1))
    win = _taps(x, k, s, d, pads, out)
    flat, inside = _positions(x, k, s, d, pads, out)
    h, w = x.shape[-2:]
    hit = (win == win.max(-1, keepdim=True)) & inside
    first = hit.where(flat, h * w).min(-1)
    last_nan = win.isnan().where(flat, -1).max(-1)
    return (last_nan >= 0).where(last_nan, first)
