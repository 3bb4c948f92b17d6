"""Convolutions, pooling and normalizations over NCHW (NCW as NCHW with H = 1; NCDHW
convolutions by the frontend, pools as a 2-D pool and a pool over depth)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from irtensor.frontend.tensor import Tensor
from irtensor.onnx.registry import Node, Value, op


def spatial(node: Node, x: Tensor, most: int = 3) -> int:
    """The number of spatial axes: 1 to `most` are supported."""
    n = x.ndim - 2
    if not 1 <= n <= most:
        raise node.error(f"{n}-D {node.op_type} is not supported (1-D to {most}-D are)")
    return n


def as_2d(values: Sequence[int], fill: int, n: int) -> list[int]:
    """Per-axis values of a 1-D op as those of a 2-D one (an axis of size 1 in front)."""
    return [fill, *values] if n == 1 else list(values)


def window_pads(node: Node, sizes: Sequence[int], kernel: Sequence[int],
                strides: Sequence[int], dilations: Sequence[int]) -> list[int]:
    """ONNX pads [begin..., end...] from `pads` or `auto_pad`."""
    auto = node.attr("auto_pad", "NOTSET")
    n = len(sizes)
    if auto in ("NOTSET", ""):
        return list(node.attr("pads", [0] * (2 * n)))
    if auto == "VALID":
        return [0] * (2 * n)
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise node.error(f"auto_pad={auto!r} is not supported")
    begin, end = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations, strict=True):
        total = max(0, (math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size)
        small = total // 2
        begin.append(small if auto == "SAME_UPPER" else total - small)
        end.append(total - begin[-1])
    return begin + end


def _tinygrad_padding(pads: Sequence[int]) -> tuple[int, int, int, int]:
    """ONNX [top, left, bottom, right] as tinygrad's (left, right, top, bottom)."""
    top, left, bottom, right = pads
    return (left, right, top, bottom)


def _lift(x: Tensor, n: int) -> Tensor:
    return x.unsqueeze(2) if n == 1 else x


@op("Conv")
def conv(node: Node) -> list[Value]:
    return [convolve(node, node.tensor(0), node.tensor(1),
                     node.tensor(2) if node.has(2) else None)]


def convolve(node: Node, x: Tensor, w: Tensor, bias: Tensor | None) -> Tensor:
    """x convolved with w as the node's kernel_shape, strides, dilations, pads or auto_pad
    and group say (Conv's attributes, and ConvInteger's and QLinearConv's)."""
    n = spatial(node, x)
    kernel = list(node.attr("kernel_shape", w.shape[2:]))
    strides = list(node.attr("strides", [1] * n))
    dilations = list(node.attr("dilations", [1] * n))
    pads = window_pads(node, x.shape[2:], kernel, strides, dilations)
    if n == 3:  # the frontend's 3-D conv takes tinygrad's padding, the innermost axis first
        order = [v for i in (2, 1, 0) for v in (pads[i], pads[3 + i])]
        return x.conv2d(w, bias, groups=node.attr("group", 1), stride=strides,
                        dilation=dilations, padding=order)
    pads2 = as_2d(pads[:n], 0, n) + as_2d(pads[n:], 0, n)
    y = _lift(x, n).conv2d(_lift(w, n), bias, groups=node.attr("group", 1),
                           stride=as_2d(strides, 1, n), dilation=as_2d(dilations, 1, n),
                           padding=_tinygrad_padding(pads2))
    return y.squeeze(2) if n == 1 else y


def transposed_pads(node: Node, sizes: Sequence[int], reach: Sequence[int],
                    strides: Sequence[int], extra: Sequence[int]) -> list[int]:
    """ConvTranspose's pads [begin..., end...]: `pads`, or those that give `output_shape`
    (or, with auto_pad SAME_*, the input's size times the stride), the odd one at the end
    for SAME_UPPER and at the beginning otherwise, as the spec says."""
    n = len(sizes)
    auto = node.attr("auto_pad", "NOTSET") or "NOTSET"
    if auto not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise node.error(f"auto_pad={auto!r} is not supported")
    wanted = node.attr("output_shape")
    if wanted is None and auto.startswith("SAME"):
        wanted = [size * s for size, s in zip(sizes, strides, strict=True)]
    if wanted is None:
        return [0] * (2 * n) if auto == "VALID" else list(node.attr("pads", [0] * (2 * n)))
    wanted = list(wanted)[-n:]
    total = [s * (size - 1) + e + r - want for size, s, e, r, want in
             zip(sizes, strides, extra, reach, wanted, strict=True)]
    small = [t // 2 for t in total]
    if auto == "SAME_UPPER":
        return small + [t - h for t, h in zip(total, small, strict=True)]
    return [t - h for t, h in zip(total, small, strict=True)] + small


@op("ConvTranspose")
def conv_transpose(node: Node) -> list[Value]:
    x, w = node.tensor(0), node.tensor(1)
    n = spatial(node, x, most=2)
    strides = list(node.attr("strides", [1] * n))
    dilations = list(node.attr("dilations", [1] * n))
    extra = list(node.attr("output_padding", [0] * n))
    reach = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], dilations, strict=True)]
    pads = transposed_pads(node, x.shape[2:], reach, strides, extra)
    y = _lift(x, n).conv_transpose2d(
        _lift(w, n), None, groups=node.attr("group", 1), stride=as_2d(strides, 1, n),
        dilation=as_2d(dilations, 1, n), padding=0, output_padding=0)
    # the full output, cropped by the pads (a negative pad adds zeros) and grown by
    # output_padding at the end
    begins, ends = as_2d(pads[:n], 0, n), as_2d(pads[n:], 0, n)
    grow = as_2d(extra, 0, n)
    y = y.pad([None, None] + [(max(0, -b), max(0, -e) + g)
                              for b, e, g in zip(begins, ends, grow, strict=True)])
    y = y.shrink([None, None] + [(max(0, b), y.shape[2 + i] - max(0, e))
                                 for i, (b, e) in enumerate(zip(begins, ends, strict=True))])
    if node.has(2):
        y = y + node.tensor(2).reshape(1, -1, 1, 1)
    return [y.squeeze(2) if n == 1 else y]


@dataclass(frozen=True)
class Windows:
    """A pool's windows per spatial axis: ONNX's pads [begin..., end...], and the end
    padding ceil_mode adds (`extra`)."""

    kernel: list[int]
    strides: list[int]
    dilations: list[int]
    pads: list[int]
    extra: list[int]

    def axes(self, picked: list[int | None]) -> Windows:
        """These windows over the `picked` axes; None: an axis of size 1 that no window
        spans (for a pool taken axis group by axis group)."""
        n = len(self.kernel)

        def take(values: list[int], fill: int, shift: int = 0) -> list[int]:
            return [fill if i is None else values[i + shift] for i in picked]
        return Windows(take(self.kernel, 1), take(self.strides, 1), take(self.dilations, 1),
                       take(self.pads, 0) + take(self.pads, 0, n), take(self.extra, 0))


def pool_geometry(node: Node, x: Tensor, n: int) -> Windows:
    kernel = list(node.attr("kernel_shape"))
    strides = list(node.attr("strides", [1] * n))
    dilations = list(node.attr("dilations", [1] * n))
    sizes = x.shape[2:]
    pads = window_pads(node, sizes, kernel, strides, dilations)
    extra = [0] * n
    if node.attr("ceil_mode", 0):
        for i in range(n):
            reach = (kernel[i] - 1) * dilations[i] + 1
            span = sizes[i] + pads[i] + pads[n + i] - reach
            out = -(-span // strides[i]) + 1
            if (out - 1) * strides[i] >= sizes[i] + pads[i]:  # a window starting in padding
                out -= 1
            extra[i] = max(0, (out - 1) * strides[i] + reach - (sizes[i] + pads[i]
                                                                  + pads[n + i]))
    return Windows(kernel, strides, dilations, pads, extra)


def _grown_padding(win: Windows) -> tuple[int, int, int, int]:
    """tinygrad's padding of a 1-D or 2-D pool: the pads, ceil_mode's overhang at the end."""
    n = len(win.kernel)
    ends = [p + e for p, e in zip(win.pads[n:], win.extra, strict=True)]
    return _tinygrad_padding(as_2d(win.pads[:n], 0, n) + as_2d(ends, 0, n))


def _window_reduce(node: Node, x: Tensor, win: Windows) -> Tensor:
    """The node's pool over the last one or two axes of x (NCW or NCHW): the windows' max,
    mean (LpPool: sum)."""
    n = len(win.kernel)
    pads, extra = win.pads, win.extra
    k2, s2, d2 = as_2d(win.kernel, 1, n), as_2d(win.strides, 1, n), as_2d(win.dilations, 1, n)
    x2 = _lift(x, n)
    grown = _grown_padding(win)
    if node.op_type == "MaxPool":
        y = x2.max_pool2d(k2, s2, d2, padding=grown)
    elif node.op_type == "LpPool":  # pads count as zeros
        y = x2.avg_pool2d(k2, s2, d2, padding=grown) * math.prod(win.kernel)
    else:  # the frontend's divisor: the cells (and pads) that count, never the overhang
        explicit = _tinygrad_padding(as_2d(pads[:n], 0, n) + as_2d(pads[n:], 0, n))
        y = x2.avg_pool2d(k2, s2, d2, padding=explicit, ceil_mode=any(extra),
                          count_include_pad=bool(node.attr("count_include_pad", 0))
                          or not any(pads))
    return y.squeeze(2) if n == 1 else y


def _window_reduce_3d(node: Node, x: Tensor, win: Windows) -> Tensor:
    """A 3-D pool as two: over (H, W) of every depth slice, then over depth. Max, sum and
    mean are separable over a box window (dilated or not), and so is the count of its
    in-bounds cells (the product of each axis's count): the mean's divisor is the 3-D one."""
    n, c, d, h, w = x.shape
    inner = _window_reduce(node, x.reshape(n, c * d, h, w), win.axes([1, 2]))
    h2, w2 = inner.shape[2:]
    outer = _window_reduce(node, inner.reshape(n, c, d, h2 * w2), win.axes([0, None]))
    return outer.reshape(n, c, outer.shape[2], h2, w2)


@op("MaxPool", "AveragePool", "LpPool")
def pool(node: Node) -> list[Value]:
    x = node.tensor(0)
    n = spatial(node, x)
    if node.n_outputs > 1 and n == 3:
        raise node.error("the Indices output of a 3-D MaxPool is not supported")
    if node.op_type == "MaxPool" and x.dtype.is_int and np.dtype(x.dtype.np).itemsize > 2:
        # the pool computes in f32, whose 24 bits hold every 8- and 16-bit integer
        raise node.error(f"MaxPool of {x.dtype.name} inputs is not supported (floats "
                         "and 8- and 16-bit integers are)")
    power = int(node.attr("p", 2))
    if node.op_type == "LpPool" and power < 1:
        raise node.error(f"attribute p={power} is not supported (p >= 1 is)")
    win = pool_geometry(node, x, n)
    if node.op_type == "MaxPool" and node.n_outputs > 1:
        return _max_with_indices(x, win, bool(node.attr("storage_order", 0)))
    reduce = _window_reduce_3d if n == 3 else _window_reduce
    y = reduce(node, x.abs() ** power if node.op_type == "LpPool" else x, win)
    if node.op_type == "LpPool":  # each window's p-norm
        return [y.sqrt() if power == 2 else y ** (1 / power)]
    return [y.cast(x.dtype) if node.op_type == "MaxPool" else y]


def _max_with_indices(x: Tensor, win: Windows, column_major: bool) -> list[Value]:
    """MaxPool's values and Indices from one pool: where each window's maximum is, flat
    over the whole input (its planes in order, each row-major, or column-major with
    `storage_order`), from the frontend's row-major index into each H * W plane."""
    n = len(win.kernel)
    values, plane = _lift(x, n).max_pool2d(
        as_2d(win.kernel, 1, n), as_2d(win.strides, 1, n), as_2d(win.dilations, 1, n),
        padding=_grown_padding(win), return_indices=True)
    values = values.squeeze(2) if n == 1 else values
    plane = plane.squeeze(2) if n == 1 else plane
    if column_major and n == 2:
        height, width = x.shape[2:]
        plane = plane // width + plane % width * height
    planes = math.prod(x.shape[:2])
    first = Tensor(np.arange(planes, dtype=np.int64).reshape(*x.shape[:2], *[1] * n)
                   * math.prod(x.shape[2:]), device=x.device)
    return [values.cast(x.dtype), plane + first]


@op("GlobalAveragePool", "GlobalMaxPool")
def global_pool(node: Node) -> list[Value]:
    x = node.tensor(0)
    axes = tuple(range(2, x.ndim))
    return [x.mean(axes, keepdim=True) if node.op_type == "GlobalAveragePool"
            else x.max(axes, keepdim=True)]


@op("BatchNormalization")
def batch_norm(node: Node) -> list[Value]:
    """Inference form; with the statistics known at import, one scale and one shift."""
    if node.opset < 7 and node.attr("is_test", 0) == 0 and node.n_outputs > 1:
        raise node.error("training mode (is_test=0 with statistics outputs) is not supported")
    if node.attr("training_mode", 0):
        raise node.error("training_mode=1 is not supported")
    x = node.tensor(0)
    eps = node.attr("epsilon", 1e-5)
    shape = [1, -1] + [1] * (x.ndim - 2)
    if all(isinstance(node.inputs[i], np.ndarray) for i in range(1, 5)):
        scale, bias, mean, var = (node.inputs[i].astype(np.float64) for i in range(1, 5))
        a = scale / np.sqrt(var + eps)
        b = bias - mean * a
        dtype = x.dtype.np
        return [x * node.tensors.of(a.astype(dtype).reshape(shape)) +
                node.tensors.of(b.astype(dtype).reshape(shape))]
    scale, bias, mean, var = (node.tensor(i).reshape(shape) for i in range(1, 5))
    return [(x - mean) * (scale * (var + eps).rsqrt()) + bias]


@op("InstanceNormalization")
def instance_norm(node: Node) -> list[Value]:
    x = node.tensor(0)
    shape = [1, -1] + [1] * (x.ndim - 2)
    axes = tuple(range(2, x.ndim))
    mean = x.mean(axes, keepdim=True)
    var = ((x - mean) * (x - mean)).mean(axes, keepdim=True)
    y = (x - mean) * (var + node.attr("epsilon", 1e-5)).rsqrt()
    return [y * node.tensor(1).reshape(shape) + node.tensor(2).reshape(shape)]


@op("GroupNormalization")
def group_norm(node: Node) -> list[Value]:
    """Each instance's groups of channels normalised (in f32 for narrower floats, with the
    default stash_type), then scaled and shifted per channel (opset 18: per group)."""
    x = node.tensor(0)
    groups = node.attr("num_groups")
    n, c = x.shape[:2]
    if groups is None or groups <= 0 or c % groups:
        raise node.error(f"attribute num_groups={groups} must divide the {c} channels")
    stash = x.float() if x.dtype.is_float and x.dtype.np.itemsize < 4 and \
        node.attr("stash_type", 1) == 1 else x
    grouped = stash.reshape(n, groups, -1)
    mean = grouped.mean(2, keepdim=True)
    centred = grouped - mean
    var = (centred * centred).mean(2, keepdim=True)
    y = (centred * (var + node.attr("epsilon", 1e-5)).rsqrt()).reshape(x.shape).cast(x.dtype)
    scale, bias = node.tensor(1), node.tensor(2)
    if scale.shape[0] == groups and groups != c:  # opset 18's per-group scale and bias
        scale, bias = scale.repeat_interleave(c // groups), bias.repeat_interleave(c // groups)
    shape = [1, c] + [1] * (x.ndim - 2)
    return [y * scale.reshape(shape) + bias.reshape(shape)]


@op("MeanVarianceNormalization")
def mean_variance_norm(node: Node) -> list[Value]:
    x = node.tensor(0)
    axes = tuple(a % x.ndim for a in node.attr("axes", [0, 2, 3]))
    centred = x - x.mean(axes, keepdim=True)
    return [centred / ((centred * centred).mean(axes, keepdim=True).sqrt() + 1e-9)]


@op("LRN")
def lrn(node: Node) -> list[Value]:
    """x / (bias + alpha / size * sum of squares over `size` channels) ** beta."""
    x = node.tensor(0)
    size = node.attr("size")
    alpha, beta, bias = node.attr("alpha", 1e-4), node.attr("beta", 0.75), node.attr("bias", 1.0)
    n, c = x.shape[0], x.shape[1]
    rest = math.prod(x.shape[2:])
    squares = (x * x).reshape(n, 1, c, rest)
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    sums = squares.avg_pool2d((size, 1), (1, 1), padding=(0, 0, before, after)) * size
    return [x / (sums.reshape(x.shape) * (alpha / size) + bias).pow(beta)]


@op("LayerNormalization", "RMSNormalization")
def layer_norm(node: Node) -> list[Value]:
    """Normalized over the axes from `axis` on (RMSNormalization: not centred), computed in
    f32 (stash_type 1, the default) for narrower floats; LayerNormalization's Mean and
    InvStdDev outputs are in that type too."""
    x = node.tensor(0)
    if not -x.ndim <= (axis := node.attr("axis", -1)) < x.ndim:
        raise node.error(f"attribute axis={axis} is not an axis of input 0 ({x.ndim}-d)")
    axes = tuple(range(axis % x.ndim, x.ndim))
    narrow = x.dtype.is_float and x.dtype.np.itemsize < 4
    stash = x.float() if narrow and node.attr("stash_type", 1) == 1 else x
    layer = node.op_type == "LayerNormalization"
    mean = stash.mean(axes, keepdim=True) if layer else None
    centred = stash - mean if mean is not None else stash
    inv_std = ((centred * centred).mean(axes, keepdim=True) + node.attr("epsilon", 1e-5)).rsqrt()
    y = (centred * inv_std).cast(x.dtype) * node.tensor(1)
    y = y + node.tensor(2) if layer and node.has(2) else y
    return [y, mean, inv_std][:max(1, node.n_outputs)] if layer else [y]
