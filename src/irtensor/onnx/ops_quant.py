"""Linear quantization to and from the 8- and 16-bit integers: QuantizeLinear,
DequantizeLinear (per tensor, per axis and blocked), DynamicQuantizeLinear, and the
integer products MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv (exact, as
the spec asks: int32 products, and convolutions of 8-bit values in f64, whose 53 bits
hold any such sum exactly).
Rounding is half to even, as ONNX's; the 4-bit and float8 types irtensor lacks are
refused with the node named."""

from __future__ import annotations

import numpy as np

from irtensor.frontend.tensor import Tensor
from irtensor.onnx.ops_nn import convolve
from irtensor.onnx.registry import Node, Value, elem_dtype, op

RANGES = {np.dtype(np.uint8): (0, 255), np.dtype(np.int8): (-128, 127),
          np.dtype(np.uint16): (0, 65535), np.dtype(np.int16): (-32768, 32767)}


def _per(node: Node, value: Tensor, shape: tuple[int, ...], i: int) -> Tensor:
    """A scale or zero point shaped to broadcast against x: one value, one per element of
    `axis`, or (with block_size) one per block along `axis`."""
    if value.ndim == 0 or value.numel() == 1:
        return value.reshape(())
    axis = node.attr("axis", 1) % len(shape)
    block = node.attr("block_size", 0)
    if not block:
        if value.shape != (shape[axis],):
            raise node.error(f"input {i} of shape {value.shape} is neither one value nor one "
                             f"per element of axis {axis} ({shape[axis]})")
        dims = [1] * len(shape)
        dims[axis] = shape[axis]
        return value.reshape(dims)
    grown = value.repeat_interleave(block, dim=axis)
    grown = grown.shrink([None] * axis + [(0, shape[axis])] + [None] * (len(shape) - axis - 1)) \
        if grown.shape[axis] >= shape[axis] else grown
    if grown.shape != shape:
        raise node.error(f"input {i} of shape {value.shape} with block_size {block} does not "
                         f"cover input 0 of shape {shape} along axis {axis}")
    return grown


def _saturate(value: Tensor, dtype: np.dtype) -> Tensor:
    low, high = RANGES[dtype]
    return value.clip(low, high).cast(dtype)


def _target(node: Node) -> np.dtype:
    """QuantizeLinear's output type: the zero point's, else output_dtype, else uint8."""
    if node.has(2):
        dtype = np.dtype(node.tensor(2).dtype.np)
    elif node.attr("output_dtype"):
        dtype = elem_dtype(node.attr("output_dtype"), f"{node.op_type} output_dtype")
    else:
        dtype = np.dtype(np.uint8)
    if dtype not in RANGES:
        raise node.error(f"quantizing to {dtype} is not supported (uint8, int8, uint16 and "
                         "int16 are)")
    return dtype


@op("QuantizeLinear")
def quantize_linear(node: Node) -> list[Value]:
    x = node.tensor(0)
    dtype = _target(node)
    precision = node.attr("precision")
    wide = elem_dtype(precision, "precision") if precision else np.dtype(np.float32)
    scaled = x.cast(wide) / _per(node, node.tensor(1), x.shape, 1).cast(wide)
    q = scaled.round().cast("int32")
    if node.has(2):
        q = q + _per(node, node.tensor(2), x.shape, 2).cast("int32")
    return [_saturate(q, dtype)]


@op("DequantizeLinear")
def dequantize_linear(node: Node) -> list[Value]:
    x = node.tensor(0)
    if np.dtype(x.dtype.np) not in RANGES and x.dtype.np != np.int32:
        raise node.error(f"dequantizing {x.dtype.name} is not supported (the 8- and 16-bit "
                         "integers and int32 are)")
    scale = node.tensor(1)
    centred = x.cast("float32")
    if node.has(2):
        centred = centred - _per(node, node.tensor(2), x.shape, 2).cast("float32")
    out = node.attr("output_dtype")
    dtype = elem_dtype(out, "output_dtype") if out else scale.dtype.np
    return [(centred * _per(node, scale, x.shape, 1).cast("float32")).cast(dtype)]


@op("DynamicQuantizeLinear")
def dynamic_quantize_linear(node: Node) -> list[Value]:
    """uint8 over [min(x, 0), max(x, 0)]: the scale, the rounded zero point, then y."""
    x = node.tensor(0).cast("float32")
    top, bottom = x.max().maximum(0.0), x.min().minimum(0.0)
    scale = (top == bottom).where(1.0, top - bottom) / 255.0
    zero = (0.0 - bottom / scale).clip(0.0, 255.0).round()
    y = (x / scale).round() + zero
    return [_saturate(y, np.dtype(np.uint8)), scale.cast(node.tensor(0).dtype),
            zero.cast("uint8")]


def _centred(node: Node, i: int, zero: int | None, rows: bool) -> Tensor:
    """Input i in int32 less its zero point (per row of A, per column of B)."""
    value = node.tensor(i).cast("int32")
    if zero is None or not node.has(zero):
        return value
    point = node.tensor(zero).cast("int32")
    if point.numel() > 1 and rows:
        point = point.reshape(-1, 1)
    return value - point


@op("MatMulInteger")
def matmul_integer(node: Node) -> list[Value]:
    return [_centred(node, 0, 2, True) @ _centred(node, 1, 3, False)]


@op("QLinearMatMul")
def qlinear_matmul(node: Node) -> list[Value]:
    product = _centred(node, 0, 2, True) @ _centred(node, 3, 5, False)
    # in f64 as the reference (int32 times float32 scales is float64 in numpy)
    rescale = node.tensor(1).cast("float64") * node.tensor(4).cast("float64") / \
        node.tensor(6).cast("float64")
    y = product.cast("float64") * rescale
    dtype = np.dtype(node.tensor(7).dtype.np) if node.has(7) else np.dtype(node.tensor(0)
                                                                          .dtype.np)
    if node.has(7):
        y = y + node.tensor(7).cast("float64")
    if dtype not in RANGES:
        raise node.error(f"QLinearMatMul to {dtype} is not supported")
    return [_saturate(y.round(), dtype)]


def _centred_conv(node: Node, i: int, zero: int) -> Tensor:
    """Input i (x or w) less its zero point (w's: one, or one per output channel), in f64."""
    value = node.tensor(i).cast("int32")
    if node.has(zero):
        point = node.tensor(zero).cast("int32")
        if point.numel() == 1:
            point = point.reshape(())
        elif i == 0 or point.shape != (value.shape[0],):
            raise node.error(f"input {zero} of shape {point.shape} is neither one zero point "
                             f"nor one per output channel ({value.shape[0]})")
        else:
            point = point.reshape(-1, *[1] * (value.ndim - 1))
        value = value - point
    return value.cast("float64")


@op("ConvInteger")
def conv_integer(node: Node) -> list[Value]:
    return [convolve(node, _centred_conv(node, 0, 2), _centred_conv(node, 1, 3), None)
            .cast("int32")]


@op("QLinearConv")
def qlinear_conv(node: Node) -> list[Value]:
    """The int32 convolution (plus the int32 bias) times x_scale * w_scale / y_scale (in
    f32, then applied in f64, as the reference's numpy promotes), plus y's zero point,
    saturated to y's type and rounded half to even."""
    bias = node.tensor(8).cast("float64") if node.has(8) else None
    y = convolve(node, _centred_conv(node, 0, 2), _centred_conv(node, 3, 5), bias)
    w_scale = node.tensor(4)
    if w_scale.numel() > 1:
        if w_scale.shape != (y.shape[1],):
            raise node.error(f"input 4 (w_scale) of shape {w_scale.shape} is neither one scale "
                             f"nor one per output channel ({y.shape[1]})")
        w_scale = w_scale.reshape(1, -1, *[1] * (y.ndim - 2))
    product = (node.tensor(1).cast("float64") * w_scale.cast("float64")).cast("float32")
    scale = product / node.tensor(6).cast("float32")
    y = y * scale.cast("float64")
    dtype = np.dtype(node.tensor(7 if node.has(7) else 0).dtype.np)
    if node.has(7):
        y = y + node.tensor(7).cast("float64")
    if dtype not in (np.dtype(np.uint8), np.dtype(np.int8)):
        raise node.error(f"QLinearConv to {dtype} is not supported (uint8 and int8 are)")
    return [_saturate(y.round(), dtype)]


__all__ = [
    "conv_integer",
    "dequantize_linear",
    "dynamic_quantize_linear",
    "matmul_integer",
    "qlinear_conv",
    "qlinear_matmul",
    "quantize_linear",
]
