"""Constants, shapes and movement: what shape-computing subgraphs are made of. Each op
here takes numpy arrays (computed at import) as well as Tensors (recorded)."""

from __future__ import annotations

import math

import numpy as np

from irtensor.frontend.tensor import Tensor
from irtensor.onnx.registry import Node, Value, elem_dtype, fold, op

INT64 = np.dtype(np.int64)


@fold("Constant")
def constant(node: Node) -> list[Value]:
    for name, dtype in (("value_float", np.float32), ("value_floats", np.float32),
                        ("value_int", np.int64), ("value_ints", np.int64)):
        if name in node.attrs:
            return [np.array(node.attrs[name], dtype=dtype)]
    if "value" in node.attrs:
        return [np.asarray(node.attrs["value"])]
    raise node.error("only value, value_float(s) and value_int(s) are supported")


@fold("ConstantOfShape")
def constant_of_shape(node: Node) -> list[Value]:
    value = node.attr("value")
    fill = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)
    return [np.full(node.ints(0, "shape"), fill[0], dtype=fill.dtype)]


@fold("Shape", "Size")
@op("Shape", "Size")
def shape_of(node: Node) -> list[Value]:
    x = node.inputs[0]
    assert x is not None
    if node.op_type == "Size":
        return [np.array(math.prod(x.shape), INT64)]
    dims = list(x.shape)
    start, end = node.attr("start", 0), node.attr("end", len(dims))
    return [np.array(dims[start:end], INT64)]


@fold("Identity")
@op("Identity")
def identity(node: Node) -> list[Value]:
    x = node.inputs[0]
    assert x is not None
    return [x]


@fold("Dropout")
@op("Dropout")
def dropout(node: Node) -> list[Value]:
    """Inference: the identity (and a mask of all True)."""
    training = node.attr("is_test", 1) == 0 if node.opset < 7 else False
    if node.has(2):
        training = bool(node.const(2, "training_mode").reshape(()).item())
    if training and node.n_outputs > 1:
        raise node.error("training mode (a random mask) is not supported")
    x = node.inputs[0]
    assert x is not None
    return [x, np.ones(x.shape, np.bool_)]


def target_shape(node: Node, x: Value, shape: list[int]) -> tuple[int, ...]:
    """Reshape's shape: 0 copies the input's size (unless allowzero), -1 is inferred."""
    if not node.attr("allowzero", 0):
        shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        shape[shape.index(-1)] = math.prod(x.shape) // known if known else 0
    return tuple(shape)


@fold("Reshape", "Flatten", "Squeeze", "Unsqueeze")
@op("Reshape", "Flatten", "Squeeze", "Unsqueeze")
def reshape(node: Node) -> list[Value]:
    x = node.inputs[0]
    assert x is not None
    return [x.reshape(new_shape(node, x))]


def new_shape(node: Node, x: Value) -> tuple[int, ...]:
    if node.op_type == "Reshape":
        shape = node.ints(1, "shape") if node.opset >= 5 else list(node.attr("shape"))
        return target_shape(node, x, shape)
    if node.op_type == "Flatten":
        axis = node.attr("axis", 1)
        axis = axis + x.ndim if axis < 0 else axis
        return (math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))
    if node.opset >= 13:
        axes = node.ints(1, "axes") if node.has(1) else None
    else:
        axes = node.attr("axes")
    if node.op_type == "Squeeze":
        if axes is None:
            return tuple(d for d in x.shape if d != 1)
        drop = {a % x.ndim for a in axes}
        return tuple(d for i, d in enumerate(x.shape) if i not in drop)
    if axes is None:
        raise node.error("axes are missing")
    rank = x.ndim + len(axes)
    out = list(x.shape)
    for a in sorted(a % rank for a in axes):
        out.insert(a, 1)
    return tuple(out)


@fold("Transpose")
@op("Transpose")
def transpose(node: Node) -> list[Value]:
    x = node.inputs[0]
    assert x is not None
    perm = list(node.attr("perm", range(x.ndim - 1, -1, -1)))
    return [np.transpose(x, perm) if isinstance(x, np.ndarray) else x.permute(perm)]


@fold("Concat")
def concat_np(node: Node) -> list[Value]:
    xs = [v for v in node.inputs if v is not None]
    return [np.concatenate(xs, axis=node.attr("axis"))]  # type: ignore[arg-type]


@op("Concat")
def concat(node: Node) -> list[Value]:
    xs = [node.tensor(i) for i in range(len(node.inputs)) if node.has(i)]
    axis = node.attr("axis")
    if axis is None:
        raise node.error("attribute axis is missing")
    kept = [x for x in xs if x.shape[axis] > 0] or xs[:1]
    return [kept[0].cat(*kept[1:], dim=axis)]


@fold("Split")
@op("Split")
def split(node: Node) -> list[Value]:
    x = node.inputs[0]
    assert x is not None
    axis = node.attr("axis", 0) % x.ndim
    if node.opset >= 13 and node.has(1):
        sizes = node.ints(1, "split")
    elif node.opset < 13 and node.attr("split"):
        sizes = list(node.attr("split"))
    elif node.opset < 2 and node.has(1):
        sizes = node.ints(1, "split")
    else:
        n = node.attr("num_outputs", node.n_outputs)
        each = -(-x.shape[axis] // n)
        sizes = [min(each, x.shape[axis] - i * each) for i in range(n)]
    out, start = [], 0
    for size in sizes:
        index = [slice(None)] * x.ndim
        index[axis] = slice(start, start + size)
        out.append(x[tuple(index)])
        start += size
    return out


@fold("Slice")
@op("Slice")
def slice_(node: Node) -> list[Value]:
    x = node.inputs[0]
    assert x is not None
    if node.opset < 10:
        starts, ends = list(node.attr("starts")), list(node.attr("ends"))
        axes = list(node.attr("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts, ends = node.ints(1, "starts"), node.ints(2, "ends")
        axes = node.ints(3, "axes") if node.has(3) else list(range(len(starts)))
        steps = node.ints(4, "steps") if node.has(4) else [1] * len(starts)
    index = [slice(None)] * x.ndim
    for a, s, e, st in zip(axes, starts, ends, steps, strict=True):
        if st == 0:
            raise node.error("a step of 0")
        index[a % x.ndim] = slice(s, e, st)
    return [x[tuple(index)]]


@op("SpaceToDepth", "DepthToSpace")
def space_depth(node: Node) -> list[Value]:
    """Blocks of `blocksize` x `blocksize` pixels to channels and back; DCR mode (the
    default) puts the block index outermost in the channels, CRD innermost."""
    x = node.tensor(0)
    b = node.attr("blocksize")
    n, c, h, w = x.shape
    if node.op_type == "SpaceToDepth":
        if h % b or w % b:
            raise node.error(f"input 0's height and width {(h, w)} must be multiples of "
                             f"blocksize {b}")
        y = x.reshape(n, c, h // b, b, w // b, b)
        y = y.permute(0, 3, 5, 1, 2, 4) if node.attr("mode", "DCR") == "DCR" else \
            y.permute(0, 1, 3, 5, 2, 4)
        return [y.reshape(n, c * b * b, h // b, w // b)]
    if c % (b * b):
        raise node.error(f"input 0's {c} channels must be a multiple of blocksize^2 = {b * b}")
    if node.attr("mode", "DCR") == "DCR":
        y = x.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, c // (b * b), b, b, h, w).permute(0, 1, 4, 2, 5, 3)
    return [y.reshape(n, c // (b * b), h * b, w * b)]


@op("ReverseSequence")
def reverse_sequence(node: Node) -> list[Value]:
    """The first sequence_lens[i] steps of each batch item reversed (the lengths known at
    import: each item's order is a gather along the time axis)."""
    x = node.tensor(0)
    lengths = node.ints(1, "sequence_lens")
    time, batch = node.attr("time_axis", 0), node.attr("batch_axis", 1)
    steps = x.shape[time]
    if len(lengths) != x.shape[batch] or any(not 0 <= n <= steps for n in lengths):
        raise node.error(f"input 1 (sequence_lens) {lengths} must give each of the "
                         f"{x.shape[batch]} batch items a length from 0 to {steps}")
    order = np.array([[n - 1 - t if t < n else t for t in range(steps)] for n in lengths])
    shape = [1] * x.ndim
    shape[time], shape[batch] = steps, len(lengths)
    index = node.tensors.of(np.ascontiguousarray(order.T if time < batch else order)
                            .reshape(shape).astype(np.int32))
    return [x.gather(time, index.expand(*x.shape))]


@op("Compress")
def compress(node: Node) -> list[Value]:
    """The slices along `axis` (of the flattened input without one) whose condition is
    true; the condition decides the output's shape, so it must be known at import."""
    x = node.tensor(0)
    keep = np.flatnonzero(node.const(1, "condition").reshape(-1).astype(bool))
    axis = node.attr("axis")
    flat = x.reshape(-1) if axis is None else x
    axis = 0 if axis is None else axis % x.ndim
    if keep.size and keep[-1] >= flat.shape[axis]:
        raise node.error(f"input 1 (condition) selects slice {keep[-1]} of an axis of "
                         f"{flat.shape[axis]}")
    shape = [1] * flat.ndim
    shape[axis] = keep.size
    index = node.tensors.of(keep.astype(np.int32).reshape(shape))
    out = list(flat.shape)
    out[axis] = keep.size
    return [flat.gather(axis, index.expand(*out))]


@op("CenterCropPad")
def center_crop_pad(node: Node) -> list[Value]:
    """Each listed axis cropped or zero-padded to its new size about its centre (the odd
    cell cropped or padded at the end)."""
    x = node.tensor(0)
    sizes = node.ints(1, "shape")
    axes = [a % x.ndim for a in node.attr("axes", range(x.ndim))]
    if len(sizes) != len(axes) or any(size < 0 for size in sizes):
        raise node.error(f"input 1 (shape) {sizes} must give a size (>= 0) for each of the "
                         f"{len(axes)} axes")
    crop: list[tuple[int, int] | None] = [None] * x.ndim
    pad: list[tuple[int, int] | None] = [None] * x.ndim
    for axis, size in zip(axes, sizes, strict=True):
        have = x.shape[axis]
        start = abs(have - size) // 2
        if size < have:
            crop[axis] = (start, start + size)
        elif size > have:
            pad[axis] = (start, size - have - start)
    return [x.shrink(crop).pad(pad)]


@fold("Gather")
def gather_np(node: Node) -> list[Value]:
    x, idx = node.const(0, "data"), node.const(1, "indices")
    axis = node.attr("axis", 0) % x.ndim
    return [np.take(x, np.where(idx < 0, idx + x.shape[axis], idx), axis=axis)]


@op("Gather")
def gather(node: Node) -> list[Value]:
    x = node.tensor(0)
    axis = node.attr("axis", 0) % x.ndim
    n = x.shape[axis]
    head, tail = x.shape[:axis], x.shape[axis + 1:]
    idx = node.inputs[1]
    if isinstance(idx, np.ndarray) and idx.size <= 64:
        flat = [int(i) % n for i in idx.reshape(-1)]
        index = [slice(None)] * x.ndim
        parts = []
        for i in flat:
            index[axis] = slice(i, i + 1)
            parts.append(x[tuple(index)])
        out = parts[0].cat(*parts[1:], dim=axis) if parts else x[tuple(index)]
        return [out.reshape(*head, *idx.shape, *tail)]
    ind = node.tensor(1)
    ind = (ind < 0).where(ind + n, ind).reshape(-1)
    k = ind.shape[0]
    expanded = ind.reshape(*([1] * axis), k, *([1] * len(tail))).expand(*head, k, *tail)
    return [x.gather(axis, expanded).reshape(*head, *node.inputs[1].shape, *tail)]


@fold("Expand", "Tile")
@op("Expand", "Tile")
def expand(node: Node) -> list[Value]:
    x = node.inputs[0]
    assert x is not None
    arg = node.ints(1, "shape" if node.op_type == "Expand" else "repeats")
    if node.op_type == "Tile":
        return [np.tile(x, arg) if isinstance(x, np.ndarray) else node.tensor(0).repeat(arg)]
    shape = np.broadcast_shapes(tuple(x.shape), tuple(arg))
    if isinstance(x, np.ndarray):
        return [np.broadcast_to(x, shape).copy()]
    return [x.reshape((1,) * (len(shape) - x.ndim) + x.shape).expand(shape)]


@fold("Range")
def range_(node: Node) -> list[Value]:
    start, limit, delta = (node.const(i, w) for i, w in enumerate(("start", "limit", "delta")))
    return [np.arange(start.item(), limit.item(), delta.item(), dtype=start.dtype)]


@fold("EyeLike")
@op("EyeLike")
def eye_like(node: Node) -> list[Value]:
    """Its shape is all it reads: computed at import either way."""
    x = node.inputs[0]
    assert x is not None
    dtype = elem_dtype(node.attr("dtype"), "EyeLike") if "dtype" in node.attrs else (
        x.dtype if isinstance(x, np.ndarray) else x.dtype.np)
    return [np.eye(*x.shape, k=node.attr("k", 0), dtype=dtype)]


@op("Pad")
def pad(node: Node) -> list[Value]:
    x = node.tensor(0)
    mode = node.attr("mode", "constant")
    given = None
    if node.opset < 11:
        pads = list(node.attr("pads", node.attr("paddings", [])))
        value = float(node.attr("value", 0.0))
    else:
        pads = node.ints(1, "pads")
        given = node.inputs[2] if node.has(2) else None
        value = float(given.reshape(-1)[0]) if isinstance(given, np.ndarray) else 0.0
    axes = node.ints(3, "axes") if node.has(3) else list(range(x.ndim))
    pairs: list[tuple[int, int]] = [(0, 0)] * x.ndim
    for i, a in enumerate(axes):
        pairs[a % x.ndim] = (pads[i], pads[i + len(axes)])
    if mode == "constant" and isinstance(given, Tensor):  # a value known at run time
        # chosen, not added: 0 * an infinite pad value (an attention mask's -inf) is NaN
        inside = Tensor.ones(*x.shape, dtype=x.dtype, device=x.device).pad(pairs) != 0
        return [inside.where(x.pad(pairs), given.reshape(()).cast(x.dtype))]
    if mode == "constant":
        return [x.pad(pairs, value)]
    if mode not in ("edge", "reflect", "wrap") or (mode == "wrap" and node.opset < 19):
        opset = f" at opset {node.opset} (wrap is opset 19's)" if mode == "wrap" else ""
        raise node.error(f"mode {mode!r} is not supported{opset}")
    if any(p < 0 for pair in pairs for p in pair):
        raise node.error(f"negative pads {pads} with mode {mode!r} are not supported (numpy's "
                         "pad, the reference, takes none)")
    for a, (before, after) in enumerate(pairs):
        x = _wrap_axis(x, a, before, after) if mode == "wrap" else \
            _pad_axis(x, a, before, after, mode)
    return [x]


def _wrap_axis(x: Tensor, axis: int, before: int, after: int) -> Tensor:
    """x continued periodically along `axis` (numpy's pad mode wrap, pads longer than the
    axis included): a window of x repeated end to end."""
    if before == after == 0:
        return x
    n = x.shape[axis]
    ahead = -(-before // n)
    tiled = x.cat(*[x] * (ahead + -(-after // n)), dim=axis)
    start = ahead * n - before
    window = [None] * axis + [(start, start + before + n + after)] + \
        [None] * (x.ndim - axis - 1)
    return tiled.shrink(window)


def _pad_axis(x: Tensor, axis: int, before: int, after: int, mode: str) -> Tensor:
    if before == after == 0:
        return x
    n = x.shape[axis]

    def part(start: int, stop: int) -> Tensor:
        index = [slice(None)] * x.ndim
        index[axis] = slice(start, stop)
        return x[tuple(index)]

    if mode == "edge":
        low, high = [part(0, 1)] * before, [part(n - 1, n)] * after
    else:
        low = [part(before - i, before - i + 1) for i in range(before)]
        high = [part(n - 2 - i, n - 1 - i) for i in range(after)]
    return x.cat(*[*low, x, *high][1:], dim=axis) if not low else \
        low[0].cat(*low[1:], x, *high, dim=axis)


@op("GatherElements")
def gather_elements(node: Node) -> list[Value]:
    x, idx = node.tensor(0), node.tensor(1)
    axis = node.attr("axis", 0) % x.ndim
    return [x.gather(axis, (idx < 0).where(idx + x.shape[axis], idx))]


@op("Trilu")
def trilu(node: Node) -> list[Value]:
    x = node.tensor(0)
    k = node.ints(1, "k")[0] if node.has(1) else 0
    return [x.triu(k) if node.attr("upper", 1) else x.tril(k)]
