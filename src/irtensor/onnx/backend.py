"""onnx's Backend API over irtensor: `prepare`, `run_model`, `run_node`, `supports_device`.

    from irtensor.onnx.backend import IrtensorBackend
    rep = IrtensorBackend.prepare(model)          # imported once
    outputs = rep.run([x])                        # compiled on the first run of each shape

onnx's device "CPU" runs on irtensor's device `IrtensorBackend.device` ("llvm" unless
set; "interp" and "opencl" too), or the one `prepare(..., irtensor_device=...)` names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep

from irtensor.onnx.importer import declared_inputs, read_model
from irtensor.onnx.program import Program, input_specs

SMALL_INTS = 64  # integer inputs up to this size are bound: shapes, axes, pads, repeats


class IrtensorRep(BackendRep):
    """A prepared model: one compiled Program per set of input shapes (and values of the
    small integer inputs and of Resize's scales, sizes and roi, which the program is
    specialized for: irtensor's shapes are static, so an axes or shape input must be
    known when the model is imported)."""

    def __init__(self, model: onnx.ModelProto, device: str):
        self.model = model
        self.device = device
        self.names = [info.name for info in declared_inputs(model)]
        input_specs(model, {n: () for n in self.names})  # refuses what is not a tensor
        self.geometry = geometry_inputs(model)
        self.programs: dict[tuple[tuple[int, ...], ...], Program] = {}

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        if isinstance(inputs, Mapping):
            arrays = [np.asarray(inputs[n]) for n in self.names]
        else:
            arrays = [np.asarray(v) for v in inputs]
        bound = {n: a for n, a in zip(self.names, arrays, strict=False)
                 if (a.dtype.kind in "iu" and a.size <= SMALL_INTS) or n in self.geometry}
        key = (tuple(a.shape for a in arrays),
               tuple((n, a.dtype.str, a.tobytes()) for n, a in bound.items()))
        program = self.programs.get(key)
        if program is None:
            shapes = dict(zip(self.names, key[0], strict=False))
            program = self.programs[key] = Program(self.model, self.device, shapes, bound)
        return tuple(program.run(arrays))


class IrtensorBackend(Backend):
    device = "llvm"

    @classmethod
    def prepare(cls, model: onnx.ModelProto | str | bytes, device: str = "CPU",
                **kwargs: Any) -> IrtensorRep:
        proto = read_model(model)
        chosen = kwargs.get("irtensor_device", cls.device)
        rep = IrtensorRep(proto, chosen)
        declared = declared_inputs(proto)
        if not rep.geometry and all(_static(info) and _float(info) for info in declared):
            key = (tuple(_dims(info) for info in declared), ())
            rep.programs[key] = Program(proto, chosen)  # a model irtensor cannot take fails now
        return rep

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU",
                  **kwargs: Any) -> tuple[np.ndarray, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Any, device: str = "CPU",
                 outputs_info: Sequence[tuple[np.dtype, tuple[int, ...]]] | None = None,
                 **kwargs: Any) -> tuple[np.ndarray, ...]:
        """One node as a model of its own; its inputs are the arrays given."""
        arrays = [np.asarray(v) for v in inputs]
        ins = [onnx.helper.make_tensor_value_info(
            name, onnx.helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for name, a in zip(node.input, arrays, strict=False)]
        outs = [onnx.helper.make_empty_tensor_value_info(name) for name in node.output]
        opset = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
        graph = onnx.helper.make_graph([node], "node", ins, outs)
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("",
                                                                                     opset)])
        return cls.prepare(model, device, **kwargs).run(arrays)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device.split(":")[0] == "CPU"


# The inputs of these ops that decide the output's shape, or (If, Loop) which ops run: a
# graph input feeding one is bound too, whatever its element type (Resize's float scales
# and roi, OneHot's depth, Range's bounds, Compress's condition, If's condition, Loop's
# trip count and condition).
GEOMETRY = {"Resize": (1, 2, 3), "Upsample": (1,), "OneHot": (1,), "Range": (0, 1, 2),
            "If": (0,), "Loop": (0, 1), "Compress": (1,)}


def geometry_inputs(model: onnx.ModelProto) -> set[str]:
    return {node.input[i] for node in model.graph.node if node.op_type in GEOMETRY
            for i in GEOMETRY[node.op_type] if i < len(node.input) and node.input[i]}


def _static(info: onnx.ValueInfoProto) -> bool:
    return all(d.HasField("dim_value") for d in info.type.tensor_type.shape.dim)


def _float(info: onnx.ValueInfoProto) -> bool:
    return info.type.tensor_type.elem_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE,
                                               onnx.TensorProto.FLOAT16)


def _dims(info: onnx.ValueInfoProto) -> tuple[int, ...]:
    return tuple(int(d.dim_value) for d in info.type.tensor_type.shape.dim)


prepare = IrtensorBackend.prepare
run_model = IrtensorBackend.run_model
run_node = IrtensorBackend.run_node
supports_device = IrtensorBackend.supports_device
