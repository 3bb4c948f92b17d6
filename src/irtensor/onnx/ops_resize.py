"""ONNX Resize (opsets 10 to 19) and Upsample: one small matrix per resized axis.

Resize is separable: each resized axis maps its `n_in` input positions to `n_out`
outputs by fixed weights that depend only on the sizes and the attributes, never on
the data. So each axis is a weight matrix made here in float64 (the coordinate
transform, the taps of nearest/linear/cubic, antialiasing, `exclude_outside`, edge
clamping, as the ONNX spec defines them) and applied as a matmul over that axis;
nearest picks with a gather instead (a matmul would turn 0 * inf into NaN). Rows of
`tf_crop_and_resize` that fall outside the input take `extrapolation_value`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from irtensor.frontend.movement import take
from irtensor.frontend.tensor import Tensor
from irtensor.onnx.registry import Node, Value, op

Taps = Callable[[np.ndarray, float], np.ndarray]  # ratios (n_out,), scale -> (n_out, taps)

TRANSFORMS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
              "asymmetric", "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


@dataclass(frozen=True)
class ResizeAttrs:
    mode: str
    transform: str
    nearest_mode: str
    cubic_a: float
    exclude_outside: bool
    extrapolation: float
    antialias: bool


def nearest_taps(mode: str) -> Taps:
    def taps(ratio: np.ndarray, scale: float) -> np.ndarray:
        right = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5,
                 "floor": np.zeros_like(ratio, bool), "ceil": np.ones_like(ratio, bool)}[mode]
        right = right | (ratio == 1.0)  # an exact position is the right tap (ratio 1)
        return np.stack([~right, right], axis=-1).astype(np.float64)
    return taps


def linear_taps(antialias: bool) -> Taps:
    def taps(ratio: np.ndarray, scale: float) -> np.ndarray:
        if not antialias:
            return np.stack([1 - ratio, ratio], axis=-1)
        s = min(scale, 1.0)
        start = math.floor(-1 / s) + 1
        offsets = np.arange(start, 2 - start)
        w = np.clip(1 - np.abs((offsets[None, :] - ratio[:, None]) * s), 0, 1)
        return w / w.sum(axis=-1, keepdims=True)
    return taps


def cubic_weight(x: np.ndarray, a: float) -> np.ndarray:
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x <= 1, near, np.where(x < 2, far, 0.0))


def cubic_taps(a: float, antialias: bool) -> Taps:
    def taps(ratio: np.ndarray, scale: float) -> np.ndarray:
        s = min(scale, 1.0) if antialias else 1.0
        start = math.floor(-2 / s) + 1
        offsets = np.arange(start, 2 - start)
        w = cubic_weight((offsets[None, :] - ratio[:, None]) * s, a)
        return w / w.sum(axis=-1, keepdims=True) if antialias else w
    return taps


def source_positions(attrs: ResizeAttrs, n_in: int, n_out: int, scale: float,
                     roi: tuple[float, float]) -> np.ndarray:
    """Where each output position samples the input (ONNX's coordinate transforms)."""
    y = np.arange(n_out, dtype=np.float64)
    width = scale * n_in  # the output width before rounding
    t = attrs.transform
    if t == "align_corners":
        return np.zeros(n_out) if width == 1 else y * (n_in - 1) / (width - 1)
    if t == "asymmetric":
        return y / scale
    if t == "tf_crop_and_resize":
        lo, hi = roi
        x = (np.full(n_out, (hi - lo) * (n_in - 1) / 2) if width == 1
             else y * (hi - lo) * (n_in - 1) / (width - 1))
        return x + lo * (n_in - 1)
    if t == "pytorch_half_pixel" and width == 1:
        return np.full(n_out, -0.5)
    offset = n_in / 2 * (1 - n_out / width) if t == "half_pixel_symmetric" else 0.0
    return offset + (y + 0.5) / scale - 0.5


def axis_weights(attrs: ResizeAttrs, taps: Taps, n_in: int, n_out: int, scale: float,
                 roi: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """The (n_out, n_in) weights of one axis, and which output rows extrapolate."""
    x = source_positions(attrs, n_in, n_out, scale, roi)
    floor = np.floor(x)
    exact = x == floor
    ratio = np.where(exact, 1.0, x - floor)  # in (0, 1]: the left tap is preferred
    base = np.where(exact, floor - 1, floor).astype(np.int64)
    w = taps(ratio, scale) if n_out else np.zeros((0, 2))
    n = w.shape[-1]
    index = base[:, None] + (1 - n // 2) + np.arange(n)[None, :]
    if attrs.exclude_outside:
        w = np.where((index < 0) | (index >= n_in), 0.0, w)
        total = w.sum(axis=-1, keepdims=True)
        w = w / np.where(total == 0, 1.0, total)
    weights = np.zeros((n_out, n_in))
    rows = np.repeat(np.arange(n_out), n)
    np.add.at(weights, (rows, np.clip(index, 0, n_in - 1).reshape(-1)), w.reshape(-1))
    outside = ((x < 0) | (x > n_in - 1)) if attrs.transform == "tf_crop_and_resize" \
        else np.zeros(n_out, bool)
    return weights, outside


def resize_axis(x: Tensor, axis: int, weights: np.ndarray, outside: np.ndarray,
                attrs: ResizeAttrs) -> Tensor:
    if attrs.mode == "nearest":
        picked = take(x, axis, Tensor(weights.argmax(axis=1).astype(np.int32),
                                      device=x.device))
    else:
        moved = x.transpose(axis, -1)
        w = Tensor(weights.T.astype(x.dtype.np), device=x.device)
        picked = (moved @ w).transpose(axis, -1)
    if outside.any():
        shape = [1] * x.ndim
        shape[axis] = len(outside)
        mask = Tensor(outside.reshape(shape), device=x.device)
        picked = mask.where(picked._const(attrs.extrapolation, picked.dtype), picked)
    return picked


def read_attrs(node: Node) -> ResizeAttrs:
    old = node.op_type == "Upsample" or node.opset < 11  # Upsample and Resize-10
    mode = node.attr("mode", "nearest")
    transform = "asymmetric" if old else node.attr("coordinate_transformation_mode",
                                                   "half_pixel")
    nearest_mode = "floor" if old else node.attr("nearest_mode", "round_prefer_floor")
    if mode not in ("nearest", "linear", "bilinear", "cubic"):
        raise node.error(f"mode {mode!r} is not one of nearest, linear, cubic")
    if transform not in TRANSFORMS:
        raise node.error(f"coordinate_transformation_mode {transform!r} is not supported")
    if nearest_mode not in NEAREST_MODES:
        raise node.error(f"nearest_mode {nearest_mode!r} is not supported")
    antialias = bool(node.attr("antialias", 0))
    if antialias and mode == "nearest":
        raise node.error("antialias is not defined for mode nearest")
    return ResizeAttrs("linear" if mode == "bilinear" else mode, transform, nearest_mode,
                       float(node.attr("cubic_coeff_a", -0.75)),
                       bool(node.attr("exclude_outside", 0)),
                       float(node.attr("extrapolation_value", 0.0)), antialias)


def target(node: Node, x: Tensor) -> tuple[list[float], list[int], list[float]]:
    """Per axis of x: the scale, the output size and the roi (starts, then ends); the
    scales, sizes and roi inputs must be known at import (irtensor's shapes are static)."""
    r = x.ndim
    axes = [a % r for a in node.attr("axes", list(range(r)))]
    sizes_given: Sequence[int] | None = None
    roi_given: Sequence[float] | None = None
    if node.op_type == "Upsample" and node.opset < 9:
        scales_given: Sequence[float] = node.attr("scales", [])
    elif node.op_type == "Upsample" or node.opset < 11:  # Upsample-9, Resize-10: (X, scales)
        scales_given = node.const(1, "scales").tolist()
    else:
        roi_given = node.const(1, "roi").tolist() if node.has(1) else None
        scales_given = node.const(2, "scales").tolist() if node.has(2) else []
        sizes_given = node.ints(3, "sizes") if node.has(3) else None
    scales, sizes = [1.0] * r, list(x.shape)
    if sizes_given:
        for a, n in zip(axes, sizes_given, strict=True):
            sizes[a] = n
        scales = [sizes[a] / x.shape[a] if x.shape[a] else 1.0 for a in range(r)]
        policy = node.attr("keep_aspect_ratio_policy", "stretch")
        if policy != "stretch":
            pick = min if policy == "not_larger" else max
            s = pick(scales[a] for a in axes)
            scales = [s if a in axes else 1.0 for a in range(r)]
            sizes = [int(s * x.shape[a] + 0.5) if a in axes else x.shape[a] for a in range(r)]
    elif scales_given:
        for a, s in zip(axes, scales_given, strict=True):
            scales[a] = float(s)
        sizes = [int(s * n) for s, n in zip(scales, x.shape, strict=True)]
    else:
        raise node.error("neither scales nor sizes is given")
    roi = [0.0] * r + [1.0] * r
    if roi_given:
        for i, a in enumerate(axes):
            roi[a], roi[r + a] = roi_given[i], roi_given[len(axes) + i]
    return scales, sizes, roi


@op("Resize", "Upsample")
def resize(node: Node) -> list[Value]:
    attrs = read_attrs(node)
    x = node.tensor(0)
    if not x.dtype.is_float:
        raise node.error(f"element type {x.dtype.name}: irtensor resizes floats")
    taps = {"nearest": nearest_taps(attrs.nearest_mode), "linear": linear_taps(attrs.antialias),
            "cubic": cubic_taps(attrs.cubic_a, attrs.antialias)}[attrs.mode]
    scales, sizes, roi = target(node, x)
    r = x.ndim
    for axis in range(r):
        window = (roi[axis], roi[r + axis])
        if sizes[axis] == x.shape[axis] and math.isclose(scales[axis], 1.0) and (
                attrs.transform != "tf_crop_and_resize" or window == (0.0, 1.0)):
            continue  # the identity on this axis
        weights, outside = axis_weights(attrs, taps, x.shape[axis], sizes[axis],
                                        scales[axis], window)
        x = resize_axis(x, axis, weights, outside, attrs)
    return [x]

