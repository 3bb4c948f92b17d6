"""Operators irtensor has no handler for, taken through their ONNX function body: the
schemas of composite operators (SwiGLU, LinearAttention, CausalConvWithState, ...) define
them in other operators, some according to their inputs' types (a context-dependent
function). The importer runs the body's nodes in a scope of their own, the node's
attributes bound where the body refers to them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx

from irtensor.frontend.tensor import Tensor
from irtensor.onnx.registry import Value


def _type_of(value: Value | None) -> onnx.TypeProto:
    if value is None:
        return onnx.TypeProto()
    dtype = value.dtype.np if isinstance(value, Tensor) else value.dtype
    return onnx.helper.make_tensor_type_proto(onnx.helper.np_dtype_to_tensor_dtype(
        np.dtype(dtype)), list(value.shape))


def body_of(node: onnx.NodeProto, opset: int, inputs: Sequence[Value | None]
            ) -> onnx.FunctionProto | None:
    """The function that defines `node` at this opset, None where its schema has none."""
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, node.domain)
    except onnx.defs.SchemaError:
        return None
    plain = [v for v in schema.function_opset_versions if v <= opset]
    if plain:
        return onnx.FunctionProto.FromString(
            schema.get_function_with_opset_version(max(plain)))
    typed = [v for v in schema.context_dependent_function_opset_versions if v <= opset]
    if not typed:
        return None
    try:  # onnx's builder refuses types it has no body for: then no body
        types = [_type_of(v).SerializeToString() for v in inputs]
        made = schema.get_context_dependent_function_with_opset_version(
            max(typed), node.SerializeToString(), types)
    except Exception:
        return None
    return onnx.FunctionProto.FromString(made) if made else None


def bound_nodes(function: onnx.FunctionProto, node: onnx.NodeProto) -> list[onnx.NodeProto]:
    """The body's nodes, each attribute that refers to one of the node's (ref_attr_name)
    replaced by the node's value, or the function's default, or dropped."""
    given = {a.name: a for a in node.attribute}
    defaults = {a.name: a for a in function.attribute_proto}
    nodes = []
    for inner in function.node:
        copy = onnx.NodeProto()
        copy.CopyFrom(inner)
        del copy.attribute[:]
        for attribute in inner.attribute:
            if not attribute.ref_attr_name:
                copy.attribute.append(attribute)
                continue
            source = given.get(attribute.ref_attr_name) or defaults.get(attribute.ref_attr_name)
            if source is not None:
                bound = onnx.AttributeProto()
                bound.CopyFrom(source)
                bound.name = attribute.name
                copy.attribute.append(bound)
        nodes.append(copy)
    return nodes


def opset_of(function: onnx.FunctionProto, default: int) -> int:
    return next((entry.version for entry in function.opset_import
                 if entry.domain in ("", "ai.onnx")), default)


__all__ = ["body_of", "bound_nodes", "opset_of"]
