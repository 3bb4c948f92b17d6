"""Reading an ONNX model and walking its graph: each node becomes calls on the lazy
`Tensor` (recording hl ops), or is computed in numpy when its inputs are known at import
(initializers, constants, shapes: what shape-computing subgraphs fold to)."""

from __future__ import annotations

import re
from collections import ChainMap
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import onnx
from onnx import numpy_helper

from irtensor.context import Context
from irtensor.frontend import graph as recorded
from irtensor.frontend.tensor import Tensor
from irtensor.onnx import (  # noqa: F401  (they register the ops)
    functions,
    ops_attention,
    ops_control,
    ops_index,
    ops_loss,
    ops_math,
    ops_nn,
    ops_quant,
    ops_reduce,
    ops_resize,
    ops_rnn,
    ops_sample,
    ops_shape,
)
from irtensor.onnx.errors import OnnxImportError, node_error
from irtensor.onnx.registry import FOLDS, OPS, Node, Tensors, Value

ModelLike = str | Path | bytes | onnx.ModelProto
DEFAULT_DOMAINS = ("", "ai.onnx")
_NAME = re.compile(r"[^A-Za-z0-9_.$-]")


def read_model(model: ModelLike) -> onnx.ModelProto:
    """The ModelProto of a path, the bytes of a file, or a ModelProto."""
    if isinstance(model, onnx.ModelProto):
        return model
    try:
        proto = (onnx.load_model_from_string(model) if isinstance(model, bytes)
                 else onnx.load(str(model)))
    except FileNotFoundError:
        raise OnnxImportError(f"{model}: no such file") from None
    except Exception as e:  # protobuf's DecodeError and its kin: a malformed file
        what = "the bytes" if isinstance(model, bytes) else str(model)
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise OnnxImportError(f"{what}: not a readable ONNX model ({first})") from None
    if not proto.HasField("graph") or not proto.graph.output:
        what = "the bytes" if isinstance(model, bytes) else str(model)
        raise OnnxImportError(f"{what}: not an ONNX model (no graph with outputs; a "
                              "truncated or foreign file?)")
    return proto


def opset_of(proto: onnx.ModelProto) -> int:
    for entry in proto.opset_import:
        if entry.domain in DEFAULT_DOMAINS:
            return int(entry.version)
    return 1 if not proto.opset_import else 7


def declared_inputs(proto: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """The graph's run-time inputs: old models list their initializers as inputs too."""
    inits = {i.name for i in proto.graph.initializer}
    return [v for v in proto.graph.input if v.name not in inits]


def declared_shape(info: onnx.ValueInfoProto) -> tuple[int, ...]:
    dims = []
    for d in info.type.tensor_type.shape.dim:
        if not d.HasField("dim_value"):
            name = d.dim_param or "?"
            raise OnnxImportError(f"graph input {info.name!r}: dimension {name!r} is not "
                                  "known; pass input shapes (load(..., shapes={...}))")
        dims.append(int(d.dim_value))
    return tuple(dims)


def attributes(node: onnx.NodeProto) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPHS:
            raise node_error(node.name, node.op_type, f"attribute {a.name} holds a list of "
                             "subgraphs, which is not supported")
        if a.type == onnx.AttributeProto.GRAPH:  # If, Loop, Scan: ops_control runs it
            out[a.name] = a.g
            continue
        v = onnx.helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, onnx.TensorProto):
            v = numpy_helper.to_array(v)
        elif isinstance(v, list):
            v = [x.decode() if isinstance(x, bytes) else x for x in v]
        out[a.name] = v
    return out


def hint(name: str) -> str:
    """An ONNX name as an SSA name: [A-Za-z0-9_$.-], not starting with a digit."""
    clean = _NAME.sub("_", name)
    return clean if clean and not clean[0].isdigit() else f"v{clean}"


def _name_output(value: Value | None, name: str) -> None:
    """The op's result takes the ONNX name (an input or weight passed through keeps its)."""
    if isinstance(value, Tensor) and not value._value.is_buffer \
            and value._value not in recorded.NAMES:
        recorded.NAMES[value._value] = hint(name)


def run_node(node: onnx.NodeProto, env: MutableMapping[str, Value], opset: int,
             tensors: Tensors) -> None:
    """Record one node; its outputs go into `env`."""
    if node.domain not in DEFAULT_DOMAINS:
        raise node_error(node.name, node.op_type, f"operators of domain {node.domain!r} "
                         "are not supported")
    for name in node.input:
        if name and name not in env:
            raise node_error(node.name, node.op_type, f"input {name!r} is not defined "
                             "(a malformed or truncated graph)")
    values = [env[n] if n else None for n in node.input]
    if node.op_type not in OPS and node.op_type not in FOLDS and \
            (body := functions.body_of(node, opset, values)) is not None:
        outputs = _run_function(node, body, values, opset, tensors)
        for name, value in zip(node.output, outputs, strict=False):
            if name:
                env[name] = value
        return
    view = Node(node.op_type, node.name, opset, attributes(node), values, len(node.output),
                tensors, lambda graph, inner: run_subgraph(graph, inner, env, opset, tensors))
    outputs = _dispatch(view)
    for i, name in enumerate(node.output):
        if not name:
            continue
        if i >= len(outputs) or outputs[i] is None:
            raise view.error(f"output {i} ({name!r}) is not supported")
        env[name] = outputs[i]  # type: ignore[assignment]
        _name_output(outputs[i], name)


def _run_function(node: onnx.NodeProto, body: onnx.FunctionProto,
                  values: Sequence[Value | None], opset: int, tensors: Tensors
                  ) -> list[Value]:
    """The node's outputs from its function body, run in a scope of its own (a function
    sees only its inputs); an input left out is an empty name inside."""
    scope: dict[str, Value | None] = dict(zip(body.input, values, strict=False))
    inner = functions.opset_of(body, opset)
    try:
        for step in functions.bound_nodes(body, node):
            run_node(step, scope, inner, tensors)  # type: ignore[arg-type]
    except OnnxImportError as e:
        raise node_error(node.name, node.op_type, f"in its function body: {e}") from None
    if missing := [name for name, wanted in zip(body.output, node.output, strict=False)
                   if wanted and scope.get(name) is None]:
        raise node_error(node.name, node.op_type, f"its function body computes no output "
                         f"{missing[0]!r}")
    return [scope.get(name) for name in body.output]  # type: ignore[misc]


def run_subgraph(graph: onnx.GraphProto, values: Sequence[Value], scope: Mapping[str, Value],
                 opset: int, tensors: Tensors) -> list[Value]:
    """A subgraph's outputs, its inputs bound to `values`: its nodes see its own names
    first, then those of the scopes around it (ONNX's outer-scope references)."""
    env: ChainMap[str, Value] = ChainMap({}, scope)  # type: ignore[arg-type]
    for init in graph.initializer:
        env[init.name] = numpy_helper.to_array(init)
    for info, value in zip(graph.input, values, strict=True):
        env[info.name] = value
    for node in graph.node:
        run_node(node, env, opset, tensors)  # type: ignore[arg-type]
    missing = [o.name for o in graph.output if o.name not in env]
    if missing:
        raise OnnxImportError(f"subgraph {graph.name!r}: output {missing[0]!r} is computed "
                              "by no node")
    return [env[o.name] for o in graph.output]


def _dispatch(view: Node) -> Sequence[Value | None]:
    handler = OPS.get(view.op_type)
    folder = FOLDS.get(view.op_type)
    if handler is None and folder is None:
        raise view.error(f"operator {view.op_type} (opset {view.opset}) is not supported")
    try:
        if folder is not None and (view.is_const() or handler is None):
            done = folder(view)
            if done is not None:
                return done
        if handler is None:
            raise view.error("its inputs must be known at import")
        return handler(view)
    except OnnxImportError:
        raise
    except (ValueError, TypeError, NotImplementedError, IndexError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise view.error(first) from None


def import_graph(proto: onnx.ModelProto, inputs: Mapping[str, Value], device: str
                 ) -> tuple[list[Value], Tensors]:
    """The graph's outputs, recorded on `device` from `inputs` (by graph input name)."""
    tensors = Tensors(device)
    env: dict[str, Value] = {}
    opset = opset_of(proto)
    for init in proto.graph.initializer:
        try:
            array = numpy_helper.to_array(init)
        except Exception as e:
            raise OnnxImportError(f"initializer {init.name!r}: unreadable ({e})") from None
        env[init.name] = array
        tensors.names[id(array)] = init.name
    env.update(inputs)
    with Context(device=device):
        for node in proto.graph.node:
            run_node(node, env, opset, tensors)
    missing = [o.name for o in proto.graph.output if o.name not in env]
    if missing:
        raise OnnxImportError(f"graph output {missing[0]!r} is computed by no node")
    return [env[o.name] for o in proto.graph.output], tensors
