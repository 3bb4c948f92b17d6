"""Sampling at computed positions and transforms made of constant matrices: GridSample
(nearest, linear and cubic, each padding mode, any spatial rank) as a gather of the taps
around each position weighted as onnx's reference weighs them; AffineGrid, the grid an
affine map makes (its base grid a constant of the sizes, times theta); DFT as products
with cos and sin matrices."""

from __future__ import annotations

import itertools

import numpy as np

from irtensor.frontend.tensor import Tensor
from irtensor.onnx.registry import Node, Value, op

MODES = {"bilinear": "linear", "bicubic": "cubic", "linear": "linear", "cubic": "cubic",
         "nearest": "nearest"}
CUBIC_A = -0.75  # Keys' kernel, as onnx (and torch) take it


def _reflect(x: Tensor, low: float, high: float) -> Tensor:
    """x folded back into [low, high] by its nearer bound, as often as it takes."""
    span = high - low

    def fold(beyond: Tensor, near: float, far: float, sign: float) -> Tensor:
        times = (beyond / span).trunc()
        rest = beyond - times * span
        even = times - (times * 0.5).floor() * 2 == 0
        return even.where(near + sign * rest, far - sign * rest)
    below = fold(low - x, low, high, 1.0)
    above = fold(x - high, high, low, -1.0)
    return (x < low).where(below, (x > high).where(above, x))


def _cubic(t: Tensor) -> list[Tensor]:
    """Keys' weights of the taps at -1, 0, 1, 2 for a position t in [0, 1) past tap 0."""
    a = CUBIC_A

    def far(d: Tensor) -> Tensor:
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    def near(d: Tensor) -> Tensor:
        return ((a + 2) * d - (a + 3)) * d * d + 1
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _taps(x: Tensor, size: int, mode: str, padding: str, low: float, high: float
          ) -> list[tuple[Tensor, Tensor]]:
    """(index, weight) of each tap along one axis, the padding mode applied to indices
    outside the axis (zeros: the weight becomes 0)."""
    if mode == "nearest":
        taps = [(x, None)]
    else:
        first = x.floor()
        t = x - first
        if mode == "linear":
            taps = [(first, 1 - t), (first + 1, t)]
        else:
            taps = [(first + k, w) for k, w in zip((-1, 0, 1, 2), _cubic(t), strict=True)]
    out = []
    for index, weight in taps:
        if padding == "zeros":
            inside = (index >= 0) & (index <= size - 1)
            weight = inside.where(1.0 if weight is None else weight, 0.0)
        elif padding == "reflection":
            index = _reflect(index, low, high).trunc()
        out.append((index.clip(0, size - 1).cast("int32"), weight))
    return out


@op("GridSample")
def grid_sample(node: Node) -> list[Value]:
    x, grid = node.tensor(0), node.tensor(1)
    dims = x.shape[2:]
    k = len(dims)
    if grid.ndim != k + 2 or grid.shape[0] != x.shape[0] or grid.shape[-1] != k:
        raise node.error(f"input 1 (grid) has shape {grid.shape}; expected ({x.shape[0]}, "
                         f"..., {k}) for input 0 of shape {x.shape}")
    mode = MODES.get(node.attr("mode", "linear" if node.opset >= 20 else "bilinear"))
    padding = node.attr("padding_mode", "zeros")
    if mode is None or padding not in ("zeros", "border", "reflection"):
        raise node.error(f"mode {node.attr('mode')!r} or padding_mode {padding!r} is not "
                         "supported")
    corners = bool(node.attr("align_corners", 0))
    n, c = x.shape[:2]
    out = grid.shape[1:-1]
    g = grid.float().reshape(n, -1, k)
    per_axis = []
    for i, size in enumerate(dims):
        coord = g[..., k - 1 - i]  # the grid lists x (the last axis) first
        pos = (coord + 1) * 0.5 * (size - 1) if corners else ((coord + 1) * size - 1) * 0.5
        pos = pos.round() if mode == "nearest" else pos
        low, high = (0.0, size - 1.0) if corners else (-0.5, size - 0.5)
        outside = (pos < low) | (pos > high)
        if padding == "border":
            pos = outside.where(pos.clip(0, size - 1), pos)
        elif padding == "reflection":
            pos = _reflect(pos, low, high)
        per_axis.append(_taps(pos, size, mode, padding, low, high))
    flat = x.float().reshape(n, c, -1)
    strides = [int(np.prod(dims[i + 1:])) for i in range(k)]
    # every tap of every position in one gather: (N, T, Q) indices, (N, T, Q) weights
    indices, weights = [], []
    for combo in itertools.product(*per_axis):
        index = combo[0][0] * strides[0]
        for (idx, _), stride in zip(combo[1:], strides[1:], strict=True):
            index = index + idx * stride
        indices.append(index)
        factors = [w for _, w in combo if w is not None]
        weight = factors[0] if factors else Tensor.ones(*index.shape)
        for w in factors[1:]:
            weight = weight * w
        weights.append(weight)
    taps, places = len(indices), indices[0].shape[1]
    index = indices[0].stack(*indices[1:], dim=1).reshape(n, 1, taps * places)
    picked = flat.gather(2, index.expand(n, c, taps * places)).reshape(n, c, taps, places)
    weight = weights[0].stack(*weights[1:], dim=1).reshape(n, 1, taps, places)
    total = (picked * weight).sum(2)
    return [total.reshape(n, c, *out).cast(x.dtype)]


@op("AffineGrid")
def affine_grid(node: Node) -> list[Value]:
    """The sampling grid of theta (N, 2, 3) or (N, 3, 4) over `size`'s 2-D or 3-D output:
    each output position's normalised coordinates (x first, in [-1, 1]: the corners with
    align_corners, else the cells' centres) times theta."""
    theta = node.tensor(0)
    size = node.ints(1, "size")
    spatial = size[2:]
    dims = len(spatial)
    if dims not in (2, 3) or theta.shape[1:] != (dims, dims + 1):
        raise node.error(f"input 0 (theta) has shape {theta.shape}; expected (N, {dims}, "
                         f"{dims + 1}) for size {size} (2-D or 3-D)")
    corners = node.attr("align_corners", 0)
    axes = [np.linspace(-1.0, 1.0, n) if corners else (2 * np.arange(n) + 1) / n - 1
            for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")  # D, H, W order
    base = np.stack([*(m.reshape(-1) for m in reversed(mesh)), np.ones(mesh[0].size)], 1)
    points = node.tensors.of(base.astype(theta.dtype.np))
    grid = points @ theta.transpose(1, 2)  # (N, points, dims)
    return [grid.reshape(theta.shape[0], *spatial, dims)]


@op("DFT")
def dft(node: Node) -> list[Value]:
    """The discrete Fourier transform along one axis as products with cos and sin
    matrices (made in f64 at import, applied in f64): forward, inverse, onesided (the
    inverse of a onesided spectrum is the real signal, numpy's irfft)."""
    x = node.tensor(0)
    length = node.ints(1, "dft_length")[0] if node.has(1) else None
    axis = node.ints(2, "axis")[0] if node.opset >= 20 and node.has(2) else \
        node.attr("axis", 1 if node.opset < 20 else -2)
    axis %= x.ndim
    if axis == x.ndim - 1 or x.shape[-1] not in (1, 2):
        raise node.error(f"input 0 of shape {x.shape} must end in 1 (real) or 2 (complex) "
                         f"values after the signal's axis {axis}")
    inverse, onesided = bool(node.attr("inverse", 0)), bool(node.attr("onesided", 0))
    have = x.shape[axis]
    n = length or (2 * (have - 1) if inverse and onesided else have)
    order = [d for d in range(x.ndim - 1) if d != axis] + [axis]
    moved = x.cast("float64").permute(*order, x.ndim - 1)  # (..., signal, 1 or 2)
    re = moved[..., 0]
    im = moved[..., 1] if x.shape[-1] == 2 else None
    used = min(have, n)
    re, im = re[..., :used], im[..., :used] if im is not None else None
    bins = n // 2 + 1 if onesided else n
    rows = bins if inverse and onesided else used
    k = np.arange(n // 2 + 1 if inverse and onesided else bins)
    t = np.arange(n if inverse else used)
    angle = 2 * np.pi * np.outer(np.arange(rows), t if inverse and onesided else k) / n
    if inverse and onesided:  # rows: the bins given; columns: the n samples
        weight = np.where((np.arange(rows) == 0) | (2 * np.arange(rows) == n), 1.0, 2.0)
        cos, sin = np.cos(angle) * weight[:, None] / n, -np.sin(angle) * weight[:, None] / n
    elif inverse:
        cos, sin = np.cos(angle) / n, -np.sin(angle) / n
    else:
        cos, sin = np.cos(angle), np.sin(angle)
    c, s = node.tensors.of(cos[:re.shape[-1]]), node.tensors.of(sin[:re.shape[-1]])
    real = re @ c + (im @ s if im is not None else 0)
    imag = (im @ c if im is not None else 0) - re @ s
    parts = [real] if inverse and onesided else [real, imag]
    out = parts[0].unsqueeze(-1) if len(parts) == 1 else parts[0].stack(parts[1], dim=-1)
    back = [order.index(d) for d in range(x.ndim - 1)]
    return [out.permute(*back, x.ndim - 1).cast(x.dtype)]


__all__ = ["affine_grid", "dft", "grid_sample"]
