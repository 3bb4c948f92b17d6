"""Convolution of spatial rank 1 and 3 as `hl.conv2d`s (tinygrad's `conv2d` takes any rank).

A 1-D convolution is a 2-D one over a height of 1. A 3-D one is a sum over the kernel's
depth: for each depth tap kd, the input's depth slices it meets (strided, dilated) become
a batch of 2-D images, convolved with that tap's 2-D kernel; the taps' results add up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor


def per_dim(x: int | Sequence[int], n: int, what: str) -> tuple[int, ...]:
    """An int for every spatial dim, or one value per dim."""
    if isinstance(x, int):
        return (x,) * n
    values = tuple(int(v) for v in x)
    if len(values) != n:
        raise ValueError(f"conv: {what} {tuple(x)!r}: expected an int or {n} values")
    return values


def pads_of(padding: int | Sequence[int], n: int) -> list[tuple[int, int]]:
    """(before, after) per spatial dim, outermost first, from an int, one value per dim
    (both sides, torch) or tinygrad's 2n values (innermost dim first: left, right, ...)."""
    if isinstance(padding, int):
        return [(padding, padding)] * n
    values = [int(v) for v in padding]
    if len(values) == n:
        return [(v, v) for v in values]
    if len(values) == 2 * n:
        pairs = [(values[i], values[i + 1]) for i in range(0, 2 * n, 2)]
        return pairs[::-1]
    raise ValueError(f"conv: padding {tuple(padding)!r}: expected an int, {n} or {2 * n} "
                     "values")


def conv1d(x: Tensor, w: Tensor, groups: int, stride: int | Sequence[int],
           dilation: int | Sequence[int], padding: int | Sequence[int]) -> Tensor:
    (s,), (d,) = per_dim(stride, 1, "stride"), per_dim(dilation, 1, "dilation")
    ((left, right),) = pads_of(padding, 1)
    out = x.unsqueeze(2).conv2d(w.unsqueeze(2), groups=groups, stride=(1, s), dilation=(1, d),
                                padding=(left, right, 0, 0))
    return out.squeeze(2)


def conv3d(x: Tensor, w: Tensor, groups: int, stride: int | Sequence[int],
           dilation: int | Sequence[int], padding: int | Sequence[int]) -> Tensor:
    sd, sh, sw = per_dim(stride, 3, "stride")
    dd, dh, dw = per_dim(dilation, 3, "dilation")
    (front, back), (top, bottom), (left, right) = pads_of(padding, 3)
    x = x.pad([None, None, (front, back), None, None])
    n, c, depth = x.shape[:3]
    kd = w.shape[2]
    d_out = (depth - dd * (kd - 1) - 1) // sd + 1
    if d_out <= 0:
        raise ValueError(f"conv: the input's depth {depth} (padded) is less than the "
                         f"kernel's reach {dd * (kd - 1) + 1}")
    total = None
    for tap in range(kd):
        start = tap * dd
        taps = x[:, :, start:start + (d_out - 1) * sd + 1:sd]  # (N, C, Dout, H, W)
        images = taps.permute(0, 2, 1, 3, 4).reshape(n * d_out, c, *x.shape[3:])
        out = images.conv2d(w[:, :, tap], groups=groups, stride=(sh, sw), dilation=(dh, dw),
                            padding=(left, right, top, bottom))
        total = out if total is None else total + out
    assert total is not None
    o, ho, wo = total.shape[1:]
    return total.reshape(n, d_out, o, ho, wo).permute(0, 2, 1, 3, 4)
