"""Elementwise ops, reductions, matrix products, softmax and casts."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import reduce

import numpy as np

from irtensor.frontend.tensor import Tensor
from irtensor.onnx.registry import Node, Value, elem_dtype, fold, op

UNARY: dict[str, Callable[[Tensor], Tensor]] = {
    "Relu": Tensor.relu, "Sigmoid": Tensor.sigmoid, "Tanh": lambda x: _tanh(x), "Exp": Tensor.exp,
    "Log": Tensor.log, "Sqrt": Tensor.sqrt, "Abs": Tensor.abs, "Neg": Tensor.neg,
    "Reciprocal": Tensor.reciprocal, "Floor": Tensor.floor, "Ceil": Tensor.ceil,
    "Round": Tensor.round, "Sin": Tensor.sin, "Cos": Tensor.cos, "Tan": Tensor.tan,
    "Asin": Tensor.asin, "Acos": Tensor.acos, "Atan": Tensor.atan, "Sinh": Tensor.sinh,
    "Cosh": Tensor.cosh, "Asinh": Tensor.asinh, "Acosh": Tensor.acosh, "Atanh": Tensor.atanh,
    "Erf": Tensor.erf, "Sign": Tensor.sign, "Softsign": Tensor.softsign,
    "Softplus": Tensor.softplus, "Not": Tensor.logical_not, "IsNaN": Tensor.isnan,
    "Mish": lambda x: _mish(x), "BitwiseNot": Tensor.bitwise_not,
}
NP_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "Neg": np.negative, "Abs": np.abs, "Sqrt": np.sqrt, "Floor": np.floor, "Ceil": np.ceil,
    "Not": np.logical_not, "Reciprocal": np.reciprocal, "Sign": np.sign,
}
BINARY: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "Add": Tensor.add, "Sub": Tensor.sub, "Mul": Tensor.mul,
    "Equal": Tensor.__eq__, "Less": Tensor.__lt__, "Greater": Tensor.__gt__,
    "LessOrEqual": Tensor.__le__, "GreaterOrEqual": Tensor.__ge__,
    "And": Tensor.__and__, "Or": Tensor.__or__, "Xor": Tensor.__xor__,
    "BitwiseAnd": Tensor.bitwise_and, "BitwiseOr": Tensor.bitwise_or,
    "BitwiseXor": Tensor.bitwise_xor,
}
NP_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Equal": np.equal,
    "Less": np.less, "Greater": np.greater, "LessOrEqual": np.less_equal,
    "GreaterOrEqual": np.greater_equal, "And": np.logical_and, "Or": np.logical_or,
    "Xor": np.logical_xor, "Pow": np.power, "BitwiseAnd": np.bitwise_and,
    "BitwiseOr": np.bitwise_or, "BitwiseXor": np.bitwise_xor,
}


def _tanh(x: Tensor) -> Tensor:
    """tanh through expm1: hl.tanh loses relative precision near 0 (7% at 1e-6)."""
    m = (x.abs() * -2).expm1()
    return -m / (m + 2) * x.sign()


def _mish(x: Tensor) -> Tensor:
    """x tanh(softplus(x)) = x n / (n + 2) with n = e^x (e^x + 2): no cancellation."""
    e = x.minimum(20.0).exp()
    n = e * (e + 2)
    return (x > 20).where(x, x * n / (n + 2))


@op(*UNARY)
def unary(node: Node) -> list[Value]:
    return [UNARY[node.op_type](node.tensor(0))]


@fold(*NP_UNARY)
def unary_np(node: Node) -> list[Value]:
    x = node.const(0, "x")
    return [NP_UNARY[node.op_type](x).astype(x.dtype)]


def legacy_broadcast(node: Node, a: Value, b: Value) -> Value:
    """Opset < 7: with broadcast=1, B lines up with A from `axis` (default: the end)."""
    if node.opset >= 7 or not node.attr("broadcast", 0) or "axis" not in node.attrs:
        return b
    axis = node.attr("axis") % max(a.ndim, 1)
    shape = (1,) * axis + tuple(b.shape) + (1,) * (a.ndim - axis - b.ndim)
    return b.reshape(shape)


@op(*BINARY)
def binary(node: Node) -> list[Value]:
    a, b = node.tensor(0), node.tensor(1)
    return [BINARY[node.op_type](a, legacy_broadcast(node, a, b))]


@fold(*NP_BINARY, "Div")
def binary_np(node: Node) -> list[Value]:
    a, b = node.const(0, "A"), node.const(1, "B")
    b = legacy_broadcast(node, a, b)
    if node.op_type == "Div":
        out = np.trunc(a / b) if a.dtype.kind in "iu" else a / b
    else:
        out = NP_BINARY[node.op_type](a, b)
    return [out if out.dtype == np.bool_ else out.astype(a.dtype)]


@op("Div")
def div(node: Node) -> list[Value]:
    a, b = node.tensor(0), node.tensor(1)
    b = legacy_broadcast(node, a, b)
    if a.dtype.is_int:
        return [(a.cast("float64") / b.cast("float64")).trunc().cast(a.dtype)]
    return [a / b]


@op("Pow")
def pow_(node: Node) -> list[Value]:
    a = node.tensor(0)
    if node.has(1) and isinstance(node.inputs[1], np.ndarray) and node.inputs[1].size == 1:
        e = node.inputs[1].reshape(()).item()
        if float(e).is_integer() and 0 <= e <= 16:
            return [a ** int(e)]
        return [a ** float(e)]
    b = legacy_broadcast(node, a, node.tensor(1))
    if not a.dtype.is_float:  # integer powers, as onnx: computed wide, cast back
        return [a.cast("float64").pow(b.cast("float64")).round().cast(a.dtype)]
    return [a.pow(b.cast(a.dtype))]


@op("Mod")
def mod(node: Node) -> list[Value]:
    a, b = node.tensor(0), node.tensor(1)
    # fmod=0: the remainder takes the divisor's sign (numpy's mod), floats too: opset 28's
    # cases have it, the older specs required fmod=1 for floats
    return [a.fmod(b) if node.attr("fmod", 0) else a.mod(b)]


@fold("Mod")
def mod_np(node: Node) -> list[Value]:
    """Mod of constants (shape arithmetic: a head count's remainder) at import."""
    a, b = node.const(0, "A"), node.const(1, "B")
    with np.errstate(divide="ignore", invalid="ignore"):
        return [(np.fmod(a, b) if node.attr("fmod", 0) else np.mod(a, b)).astype(a.dtype)]


@op("CastLike")
def cast_like(node: Node) -> list[Value]:
    return [node.tensor(0).cast(node.tensor(1).dtype)]


@op("LeakyRelu", "Elu", "Selu", "Celu", "HardSigmoid", "ThresholdedRelu", "HardSwish", "Gelu")
def unary_with_attributes(node: Node) -> list[Value]:
    x, alpha, t = node.tensor(0), node.attr("alpha"), node.op_type
    if t == "LeakyRelu":
        return [x.leaky_relu(0.01 if alpha is None else alpha)]
    if t == "Elu":
        return [x.elu(1.0 if alpha is None else alpha)]
    if t == "Celu":
        return [x.celu(1.0 if alpha is None else alpha)]
    if t == "Selu":
        a = 1.67326319217681884765625 if alpha is None else alpha
        g = node.attr("gamma", 1.05070102214813232421875)
        return [(x > 0).where(x, (x.exp() - 1) * a) * g]
    if t == "HardSigmoid":
        a = 0.2 if alpha is None else alpha
        return [(x * a + node.attr("beta", 0.5)).clip(0.0, 1.0)]
    if t == "ThresholdedRelu":
        return [(x > (1.0 if alpha is None else alpha)).where(x, 0.0)]
    if t == "HardSwish":
        return [x.hardswish()]
    node.only(approximate=("none", "tanh"))
    if node.attr("approximate", "none") == "tanh":
        return [x.gelu()]
    return [x * 0.5 * ((x * (1 / math.sqrt(2))).erf() + 1)]


@op("IsInf")
def is_inf(node: Node) -> list[Value]:
    return [node.tensor(0).isinf(bool(node.attr("detect_positive", 1)),
                                 bool(node.attr("detect_negative", 1)))]


@op("Swish")
def swish(node: Node) -> list[Value]:
    x = node.tensor(0)
    return [x * (x * node.attr("alpha", 1.0)).sigmoid()]


@op("PRelu")
def prelu(node: Node) -> list[Value]:
    x, slope = node.tensor(0), node.tensor(1)
    if slope.ndim == 1 and x.ndim > 2 and slope.shape[0] == x.shape[1] != x.shape[-1]:
        slope = slope.reshape(-1, *([1] * (x.ndim - 2)))
    return [(x < 0).where(x * slope, x)]


@op("Sum", "Max", "Min", "Mean")
def variadic(node: Node) -> list[Value]:
    xs = [node.tensor(i) for i in range(len(node.inputs)) if node.has(i)]
    combine = {"Sum": Tensor.add, "Mean": Tensor.add, "Max": Tensor.maximum,
               "Min": Tensor.minimum}[node.op_type]
    out = reduce(combine, xs)
    return [out / len(xs) if node.op_type == "Mean" else out]


@fold("Max", "Min", "Sum")
def variadic_np(node: Node) -> list[Value]:
    fn = {"Max": np.maximum, "Min": np.minimum, "Sum": np.add}[node.op_type]
    xs = [v for v in node.inputs if v is not None]
    return [reduce(fn, xs).astype(xs[0].dtype)]  # type: ignore[arg-type]


@op("Where")
def where(node: Node) -> list[Value]:
    return [node.tensor(0).where(node.tensor(1), node.tensor(2))]


@fold("Where")
def where_np(node: Node) -> list[Value]:
    return [np.where(node.const(0, "condition"), node.const(1, "X"), node.const(2, "Y"))]


@op("Clip")
def clip(node: Node) -> list[Value]:
    x = node.tensor(0)
    if node.opset < 11:
        return [x.clip(node.attr("min", -math.inf), node.attr("max", math.inf))]
    for i in (1, 2):
        if node.has(i):
            bound = node.inputs[i]
            b = bound.reshape(()).item() if isinstance(bound, np.ndarray) else node.tensor(i)
            x = x.maximum(b) if i == 1 else x.minimum(b)
    return [x]


@op("Cast")
def cast(node: Node) -> list[Value]:
    return [node.tensor(0).cast(elem_dtype(node.attr("to"), "Cast"))]


@fold("Cast")
def cast_np(node: Node) -> list[Value]:
    return [node.const(0, "input").astype(elem_dtype(node.attr("to"), "Cast"))]


@op("MatMul")
def matmul(node: Node) -> list[Value]:
    return [node.tensor(0).matmul(node.tensor(1))]


@op("Gemm")
def gemm(node: Node) -> list[Value]:
    a, b = node.tensor(0), node.tensor(1)
    if node.attr("transA", 0):
        a = a.transpose()
    if node.attr("transB", 0):
        b = b.transpose()
    y = a.matmul(b)
    if (alpha := node.attr("alpha", 1.0)) != 1.0:
        y = y * alpha
    if node.has(2):
        c = node.tensor(2)
        beta = node.attr("beta", 1.0)
        y = y + (c if beta == 1.0 else c * beta)
    return [y]


@op("Softmax", "LogSoftmax", "Hardmax")
def softmax(node: Node) -> list[Value]:
    x = node.tensor(0)
    if node.opset < 13:  # the input as a matrix: the axes from `axis` on are one
        axis = node.attr("axis", 1) % max(x.ndim, 1)
        flat = x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))
        return [_softmax(node.op_type, flat, 1).reshape(x.shape)]
    return [_softmax(node.op_type, x, node.attr("axis", -1))]


def _softmax(kind: str, x: Tensor, axis: int) -> Tensor:
    if kind == "Softmax":
        return x.softmax(axis)
    if kind == "LogSoftmax":
        return x.log_softmax(axis)
    return x.argmax(axis, keepdim=True).one_hot(x.shape[axis]).reshape(
        *x.shape[:axis % x.ndim], *x.shape[axis % x.ndim + 1:], x.shape[axis]
    ).permute(*_move_last_to(axis % x.ndim, x.ndim)).cast(x.dtype)


def _move_last_to(axis: int, rank: int) -> list[int]:
    order = list(range(rank - 1))
    order.insert(axis, rank - 1)
    return order
