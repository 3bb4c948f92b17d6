"""Reductions (Reduce*, ArgMax/ArgMin) with axes as attribute or input, by opset."""

from __future__ import annotations

import numpy as np

from irtensor.frontend.tensor import Tensor
from irtensor.onnx.registry import Node, Value, fold, op

REDUCES = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
           "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp")


def reduce_axes(node: Node, rank: int) -> tuple[int, ...] | None:
    """The axes to reduce; None: the node is the identity (noop_with_empty_axes)."""
    axes_as_input = node.opset >= (13 if node.op_type == "ReduceSum" else 18)
    if axes_as_input:
        axes = node.ints(1, "axes") if node.has(1) else []
    else:
        axes = list(node.attr("axes", []))
    if not axes:
        if axes_as_input and node.attr("noop_with_empty_axes", 0):
            return None
        return tuple(range(rank))
    return tuple(sorted(a % rank for a in axes)) if rank else ()


@op(*REDUCES)
def reduce_op(node: Node) -> list[Value]:
    x = node.tensor(0)
    axes = reduce_axes(node, x.ndim)
    if axes is None:
        return [x]
    keep = bool(node.attr("keepdims", 1))
    return [_reduce(node.op_type, x, axes, keep)]


def _reduce(kind: str, x: Tensor, axes: tuple[int, ...], keep: bool) -> Tensor:
    if kind == "ReduceSum":
        return x.sum(axes, keepdim=keep)
    if kind == "ReduceMean":
        return x.mean(axes, keepdim=keep)
    if kind == "ReduceMax":
        return x.max(axes, keepdim=keep)
    if kind == "ReduceMin":
        return x.min(axes, keepdim=keep)
    if kind == "ReduceProd":
        return x.prod(axes, keepdim=keep)
    if kind == "ReduceL1":
        return x.abs().sum(axes, keepdim=keep)
    if kind == "ReduceL2":
        return (x * x).sum(axes, keepdim=keep).sqrt()
    if kind == "ReduceSumSquare":
        return (x * x).sum(axes, keepdim=keep)
    if kind == "ReduceLogSum":
        return x.sum(axes, keepdim=keep).log()
    return x.logsumexp(axes, keepdim=keep)


@fold("ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin")
def reduce_np(node: Node) -> list[Value] | None:
    x = node.const(0, "data")
    if x.dtype.kind not in "iu":
        return None  # float reductions run compiled: their rounding is irtensor's
    axes = reduce_axes(node, x.ndim)
    if axes is None:
        return [x]
    fn = {"ReduceProd": np.prod, "ReduceSum": np.sum, "ReduceMax": np.max,
          "ReduceMin": np.min}[node.op_type]
    return [np.asarray(fn(x, axis=axes, keepdims=bool(node.attr("keepdims", 1)))
                       ).astype(x.dtype)]


@op("ArgMax", "ArgMin")
def arg_reduce(node: Node) -> list[Value]:
    x = node.tensor(0)
    axis = node.attr("axis", 0) % max(x.ndim, 1)
    keep = bool(node.attr("keepdims", 1))
    if node.attr("select_last_index", 0):
        flipped = x.flip(axis)
        i = flipped.argmax(axis, keep) if node.op_type == "ArgMax" else flipped.argmin(axis, keep)
        return [(x.shape[axis] - 1 - i.cast("int64")).cast("int64")]
    i = x.argmax(axis, keep) if node.op_type == "ArgMax" else x.argmin(axis, keep)
    return [i.cast("int64")]
