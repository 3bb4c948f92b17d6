"""TopK, OneHot, ScatterElements (and opset 9's Scatter), ScatterND, GatherND,
LpNormalization, BitShift and BitCast:
each a line or two of the Tensor API, with ONNX's inputs and attributes checked."""

from __future__ import annotations

import math

import numpy as np

from irtensor import dtypes
from irtensor.frontend.tensor import Tensor
from irtensor.onnx.registry import Node, Value, elem_dtype, op


def _axis(node: Node, rank: int, default: int) -> int:
    axis = int(node.attr("axis", default))
    if not -rank <= axis < max(rank, 1):
        raise node.error(f"attribute axis={axis} is not an axis of a {rank}-d input")
    return axis % max(rank, 1)


def _wrapped(index: Tensor, size: int) -> Tensor:
    """Indices in [-size, size) as [0, size): ONNX counts negative ones from the end."""
    index = index.cast(dtypes.int64) if index.dtype.is_float else index
    return (index < 0).where(index + size, index)


@op("TopK")
def top_k(node: Node) -> list[Value]:
    x = node.tensor(0)
    axis = _axis(node, x.ndim, -1)
    (k,) = node.ints(1, "K") if node.opset >= 10 else [int(node.attr("k", -1))]
    if not 0 <= k <= x.shape[axis]:
        raise node.error(f"K is {k}; expected 0 to {x.shape[axis]}, the size of axis {axis}")
    values, indices = x.topk(k, axis, largest=bool(node.attr("largest", 1)))
    return [values, indices.cast(dtypes.int64)]


@op("OneHot")
def one_hot(node: Node) -> list[Value]:
    indices, values = node.tensor(0), node.tensor(2)
    depth = node.const(1, "depth").reshape(-1)
    if depth.size != 1 or depth[0] < 1:
        raise node.error(f"input 1 (depth) is {depth.tolist()}; expected one count >= 1")
    if values.shape != (2,):
        raise node.error(f"input 2 (values) has shape {values.shape}; expected (2,): "
                         "[off_value, on_value]")
    size = int(depth[0])
    axis = _axis(node, indices.ndim + 1, -1)
    classes = Tensor.arange(size, device=indices.device).reshape(
        [size if a == axis else 1 for a in range(indices.ndim + 1)])
    hot = _wrapped(indices, size).unsqueeze(axis) == classes.cast(dtypes.int64)
    return [hot.where(values[1], values[0])]


SCATTER_REDUCTIONS = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}


@op("ScatterElements", "Scatter")
def scatter_elements(node: Node) -> list[Value]:
    data, indices, updates = node.tensor(0), node.tensor(1), node.tensor(2)
    axis = _axis(node, data.ndim, 0)
    if indices.shape != updates.shape or indices.ndim != data.ndim:
        raise node.error(f"inputs 1 (indices) and 2 (updates) have shapes {indices.shape} "
                         f"and {updates.shape}; expected one shape of rank {data.ndim}")
    index = _wrapped(indices, data.shape[axis])
    if (reduction := _scatter_reduction(node)) is None:
        return [data.scatter(axis, index, updates)]
    return [data.scatter_reduce(axis, index, updates, reduction)]


def _scatter_reduction(node: Node) -> str | None:
    """The Tensor.scatter_reduce kind of the node's reduction; None for `none`."""
    reduction = node.attr("reduction", "none")
    if reduction != "none" and reduction not in SCATTER_REDUCTIONS:
        raise node.error(f"attribute reduction={reduction!r} is not one of none, "
                         f"{', '.join(SCATTER_REDUCTIONS)}")
    return SCATTER_REDUCTIONS.get(reduction)


@op("ScatterND")
def scatter_nd(node: Node) -> list[Value]:
    """data[indices[i]] = updates[i], each index the first k coordinates of a slice: the
    data as rows of those k axes flattened, scattered along the rows."""
    data, indices, updates = node.tensor(0), node.tensor(1), node.tensor(2)
    k = indices.shape[-1] if indices.ndim else 0
    rest = data.shape[k:]
    if not 1 <= k <= data.ndim or updates.shape != (*indices.shape[:-1], *rest):
        raise node.error(f"inputs 1 (indices) and 2 (updates) have shapes {indices.shape} "
                         f"and {updates.shape}; expected (..., k) with 1 <= k <= "
                         f"{data.ndim} and (..., *data.shape[k:])")
    rows = int(np.prod(data.shape[:k]))
    strides = [int(np.prod(data.shape[j + 1:k])) for j in range(k)]
    flat = sum((_wrapped(indices[..., j], data.shape[j]) * strides[j] for j in range(k)),
               start=Tensor.zeros(*indices.shape[:-1], dtype=dtypes.int64,
                                  device=indices.device))
    count = int(np.prod(indices.shape[:-1]))
    index = flat.reshape(count, *[1] * len(rest)).expand(count, *rest)
    table, sources = data.reshape(rows, *rest), updates.reshape(count, *rest)
    if (reduction := _scatter_reduction(node)) is None:
        return [table.scatter(0, index, sources).reshape(data.shape)]
    return [table.scatter_reduce(0, index, sources, reduction).reshape(data.shape)]


@op("LpNormalization")
def lp_normalization(node: Node) -> list[Value]:
    x = node.tensor(0)
    axis, p = _axis(node, x.ndim, -1), int(node.attr("p", 2))
    if p not in (1, 2):
        raise node.error(f"attribute p={p} is not supported (1 and 2 are, as ONNX's)")
    norm = x.abs().sum(axis, keepdim=True) if p == 1 else (x * x).sum(axis, keepdim=True).sqrt()
    return [(norm == 0).where(x.zeros_like(), x / norm)]  # 0 / 0 is 0, as onnx's reference


@op("BitShift")
def bit_shift(node: Node) -> list[Value]:
    """The frontend's shifts by a tensor of amounts: wrapping left shifts, arithmetic right
    shifts of signed ints (opset 28), 0 (or -1) for an amount below 0 or of the width or
    more, as numpy and opset 28's cases."""
    x, y = node.tensor(0), node.tensor(1)
    direction = node.attr("direction", "")
    if direction not in ("LEFT", "RIGHT"):
        raise node.error(f"attribute direction={direction!r} is not LEFT or RIGHT")
    try:
        return [x.lshift(y) if direction == "LEFT" else x.rshift(y)]
    except TypeError as e:  # not integers
        raise node.error(str(e)) from None


@op("BitCast")
def bit_cast(node: Node) -> list[Value]:
    x = node.tensor(0)
    target = elem_dtype(int(node.attr("to", 0)), "attribute to")
    if np.dtype(target).itemsize != np.dtype(x.dtype.np).itemsize:
        raise node.error(f"attribute to: {target} is not the size of the input's "
                         f"{x.dtype.name}")
    try:
        return [x.bitcast(target)]
    except (TypeError, ValueError) as e:
        raise node.error(str(e)) from None


@op("GatherND")
def gather_nd(node: Node) -> list[Value]:
    """data[indices[..., 0], ..., indices[..., k-1]] after `batch_dims` shared leading
    axes: the k indexed axes flattened into one, indexed by the row-major offset."""
    data, indices = node.tensor(0), node.tensor(1)
    b = node.attr("batch_dims", 0)
    k = indices.shape[-1]
    if not 0 <= b < min(data.ndim, indices.ndim) or b + k > data.ndim or \
            indices.shape[:b] != data.shape[:b]:
        raise node.error(f"input 1 (indices) of shape {indices.shape} does not index input 0 "
                         f"of shape {data.shape} with batch_dims={b}")
    sizes = data.shape[b:b + k]
    index = indices.cast("int64")
    offset = None
    for j, size in enumerate(sizes):
        part = index[..., j]
        part = (part < 0).where(part + size, part) * math.prod(sizes[j + 1:])
        offset = part if offset is None else offset + part
    batch = math.prod(data.shape[:b])
    per = math.prod(sizes)
    flat = data.reshape(batch * per, *data.shape[b + k:])
    if offset is None:  # k == 0: whole slices
        offset = Tensor.zeros(*indices.shape[:-1], dtype="int64")
    if b:
        first = np.arange(batch, dtype=np.int64).reshape(*data.shape[:b],
                                                         *[1] * (indices.ndim - 1 - b))
        offset = offset + node.tensors.of(first * per)
    return [flat[offset]]
