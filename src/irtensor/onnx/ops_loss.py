"""The loss operators (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss), CumSum,
CumProd, Shrink and Einsum: each a line or two of the Tensor API, with ONNX's inputs and
attributes checked; the Hann, Hamming and Blackman windows, computed at import."""

from __future__ import annotations

import numpy as np
import onnx

from irtensor.frontend.tensor import Tensor
from irtensor.onnx.registry import Node, Value, elem_dtype, fold, op

REDUCTIONS = ("none", "sum", "mean")


def _loss_attrs(node: Node) -> tuple[str, int | None]:
    reduction = node.attr("reduction", "mean")
    if reduction not in REDUCTIONS:
        raise node.error(f"attribute reduction={reduction!r} is not one of {REDUCTIONS}")
    ignore = node.attr("ignore_index")
    return reduction, None if ignore is None else int(ignore)


def _class_indices(node: Node, i: int, x: Tensor) -> Tensor:
    """The targets, (N, d1, ...) class indices for x of (N, C, d1, ...)."""
    target = node.tensor(i)
    if target.dtype.is_float or target.dtype.is_bool:
        raise node.error(f"input {i} (target) must hold class indices (an integer type), "
                         f"got {target.dtype}")
    if x.ndim < 2 or target.shape != (x.shape[0], *x.shape[2:]):
        raise node.error(f"input {i} (target) has shape {target.shape}; expected "
                         f"{(x.shape[0], *x.shape[2:]) if x.ndim >= 2 else '(N, ...)'} for "
                         f"input 0 of shape {x.shape}")
    return target


def _weight(node: Node, i: int, classes: int) -> Tensor | None:
    if not node.has(i):
        return None
    weight = node.tensor(i)
    if weight.shape != (classes,):
        raise node.error(f"input {i} (weight) has shape {weight.shape}; expected "
                         f"({classes},), one per class")
    return weight


@op("NegativeLogLikelihoodLoss")
def negative_log_likelihood(node: Node) -> list[Value]:
    x = node.tensor(0)
    reduction, ignore = _loss_attrs(node)
    target = _class_indices(node, 1, x)
    return [x.nll_loss(target, _weight(node, 2, x.shape[1]), ignore, reduction)]


@op("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy(node: Node) -> list[Value]:
    scores = node.tensor(0)
    reduction, ignore = _loss_attrs(node)
    target = _class_indices(node, 1, scores)
    log_prob = scores.log_softmax(1)
    loss = log_prob.nll_loss(target, _weight(node, 2, scores.shape[1]), ignore, reduction)
    return [loss, log_prob][:max(1, node.n_outputs)]


@op("CumSum", "CumProd")
def cumulative(node: Node) -> list[Value]:
    x = node.tensor(0)
    (axis,) = node.ints(1, "axis") if node.has(1) else [None]
    if axis is None or not -x.ndim <= axis < max(x.ndim, 1):
        raise node.error(f"input 1 (axis) is {axis}; expected one of the {x.ndim} axes")
    axis %= x.ndim
    reverse, exclusive = bool(node.attr("reverse", 0)), bool(node.attr("exclusive", 0))
    product = node.op_type == "CumProd"
    y = x.flip(axis) if reverse else x
    if exclusive:  # shifted one place along the axis: the first is of nothing (0 or 1)
        y = y.pad([(1, 0) if a == axis else None for a in range(y.ndim)], value=int(product))
        y = y.shrink([(0, s - 1) if a == axis else None for a, s in enumerate(y.shape)])
    y = (y.cumprod(axis) if product else y.cumsum(axis)).cast(x.dtype)
    return [y.flip(axis) if reverse else y]


@op("Shrink")
def shrink(node: Node) -> list[Value]:
    x = node.tensor(0)
    bias, lambd = float(node.attr("bias", 0.0)), float(node.attr("lambd", 0.5))
    zero = x.zeros_like()
    return [(x < -lambd).where(x + bias, (x > lambd).where(x - bias, zero)).cast(x.dtype)]


@op("Einsum")
def einsum(node: Node) -> list[Value]:
    equation = node.attr("equation")
    if equation is None:
        raise node.error("attribute equation is missing")
    operands = [node.tensor(i) for i in range(len(node.inputs))]
    try:
        return [Tensor.einsum(equation.replace(" ", ""), *operands)]
    except ValueError as e:
        raise node.error(str(e)) from None


# Each window as cosine terms: w[n] = sum_k a_k cos(2 pi k n / N), onnx's coefficients.
WINDOWS = {"HannWindow": (0.5, -0.5), "HammingWindow": (25 / 46, -21 / 46),
           "BlackmanWindow": (0.42, -0.5, 0.08)}


@fold(*WINDOWS)
def window(node: Node) -> list[Value]:
    """Computed at import: the size must be known there (as any shape)."""
    (size,) = node.ints(0, "size")
    if size < 0:
        raise node.error(f"input 0 (size) is {size}; expected a size >= 0")
    period = size if node.attr("periodic", 1) else size - 1
    n = np.arange(size, dtype=np.float64)
    w = sum(a * np.cos(2 * np.pi * k * n / max(period, 1))
            for k, a in enumerate(WINDOWS[node.op_type]))
    dtype = elem_dtype(node.attr("output_datatype", onnx.TensorProto.FLOAT), "output_datatype")
    return [np.asarray(w, np.float64).astype(dtype)]
