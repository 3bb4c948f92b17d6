"""An imported model as one hl module, compiled once for a device and run many times."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from xdsl.dialects.builtin import ModuleOp

from irtensor import dtypes
from irtensor.frontend import realize
from irtensor.frontend.graph import Node
from irtensor.frontend.tensor import Tensor
from irtensor.onnx.errors import OnnxImportError
from irtensor.onnx.importer import (
    ModelLike,
    declared_inputs,
    declared_shape,
    hint,
    import_graph,
    read_model,
)
from irtensor.onnx.registry import Tensors, Value, elem_dtype

Shapes = Mapping[str, Sequence[int]]


def input_specs(proto: onnx.ModelProto, shapes: Shapes | None = None
                ) -> list[tuple[str, tuple[int, ...], np.dtype]]:
    """(name, shape, dtype) of each run-time input; `shapes` overrides declared ones."""
    specs = []
    for info in declared_inputs(proto):
        if not info.type.HasField("tensor_type"):
            kind = info.type.WhichOneof("value") or "unknown"
            raise OnnxImportError(f"graph input {info.name!r}: a {kind} input is not "
                                  "supported (only tensors are)")
        dtype = elem_dtype(info.type.tensor_type.elem_type, f"graph input {info.name!r}")
        try:
            dtypes.from_numpy(dtype)
        except TypeError:
            raise OnnxImportError(f"graph input {info.name!r}: element type {dtype} is not "
                                  f"supported (irtensor has {dtypes.SUPPORTED_NAMES})"
                                  ) from None
        if shapes is not None and info.name in shapes:
            shape = tuple(int(d) for d in shapes[info.name])
        else:
            shape = declared_shape(info)
        specs.append((info.name, shape, dtype))
    return specs


class Program:
    """The model's hl `module` (`@main` of its run-time inputs and its weights) and, once
    `run` has been called, the same module lowered for `device`. Inputs named in `bound`
    are constants of the program (an axes, shape or pads input: specialized at import);
    `run` checks that they are given these values."""

    def __init__(self, model: ModelLike, device: str = "llvm", shapes: Shapes | None = None,
                 bound: Mapping[str, np.ndarray] | None = None):
        self.proto = read_model(model)
        self.device = realize.check_device(device)
        self.specs = input_specs(self.proto, shapes)
        self.bound = {k: np.asarray(v) for k, v in (bound or {}).items()}
        placeholders = {name: Tensor(np.zeros(shape, dtype), device=self.device)
                        for name, shape, dtype in self.specs if name not in self.bound}
        outputs, tensors = import_graph(self.proto, {**placeholders, **self.bound},
                                        self.device)
        self.outputs: list[Value] = outputs
        lazy = [v for v in outputs if isinstance(v, Tensor)]
        values = [v._value for v in lazy]
        graph = realize.collect(values)
        where = {id(v): i for i, v in enumerate(graph.inputs)}
        self.positions = {name: where.get(id(t._value)) for name, t in placeholders.items()}
        self.module, self.arrays = realize.build_module(values)
        _name_arguments(self.module, graph.inputs, placeholders, tensors)
        self.lowered = False
        # The weights are this program's own and never change: read-only, and what the
        # kernels compute from them alone is kept between runs (runtime.kept).
        runtime = {pos for pos in self.positions.values() if pos is not None}
        self.constant = frozenset(i for i in range(len(self.arrays)) if i not in runtime)
        for i in self.constant:
            self.arrays[i].flags.writeable = False

    def run(self, inputs: Sequence[Any] | Mapping[str, Any]) -> list[np.ndarray]:
        arrays = list(self.arrays)
        for (name, shape, dtype), value in zip(self.specs, self._ordered(inputs), strict=True):
            array = np.asarray(value, dtype=dtype, order="C")  # a 0-d array stays 0-d
            if array.shape != shape:
                raise OnnxImportError(f"input {name!r} has shape {array.shape}; the model was "
                                      f"imported for {shape}")
            if name in self.bound:
                if not np.array_equal(array, self.bound[name]):
                    raise OnnxImportError(f"input {name!r} differs from the value the "
                                          "program was specialized for")
            elif (pos := self.positions[name]) is not None:
                arrays[pos] = array
        results = iter(self._execute(arrays) if any(isinstance(v, Tensor)
                                                    for v in self.outputs) else [])
        return [np.array(v) if isinstance(v, np.ndarray) else np.array(next(results))
                for v in self.outputs]

    def _ordered(self, inputs: Sequence[Any] | Mapping[str, Any]) -> list[Any]:
        if isinstance(inputs, Mapping):
            missing = [n for n, _, _ in self.specs if n not in inputs]
            if missing:
                raise OnnxImportError(f"input {missing[0]!r} is not given")
            return [inputs[n] for n, _, _ in self.specs]
        if len(inputs) != len(self.specs):
            raise OnnxImportError(f"the model takes {len(self.specs)} inputs, "
                                  f"{len(inputs)} given")
        return list(inputs)

    def _execute(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        if not self.lowered:
            self.lowered = True
            return realize.execute(self.module, arrays, self.device, constant=self.constant)
        return realize.run_lowered(self.module, arrays, self.device, self.constant)


def _name_arguments(module: ModuleOp, inputs: Sequence[Node],
                    placeholders: Mapping[str, Tensor], tensors: Tensors) -> None:
    """The arguments of @main keep the ONNX names of the inputs and initializers."""
    names = {id(t._value): name for name, t in placeholders.items()}
    for array, t in tensors.made.values():
        if id(array) in tensors.names:
            names[id(t._value)] = tensors.names[id(array)]
    main = next(iter(module.ops))
    for arg, value in zip(main.body.block.args, inputs, strict=True):  # type: ignore[attr-defined]
        if id(value) in names:
            arg.name_hint = hint(names[id(value)])


def load(model: ModelLike, shapes: Shapes | None = None, device: str = "llvm") -> ModuleOp:
    """The hl module of an ONNX model (a path, its bytes or a ModelProto): `@main` takes
    the run-time inputs and the weights (in the order `Program(model).arrays` holds them,
    inputs placed among them) and returns the graph's outputs that are computed."""
    return Program(model, device, shapes).module


def run(model: ModelLike, inputs: Sequence[Any] | Mapping[str, Any], device: str = "llvm"
        ) -> list[np.ndarray]:
    """Run an ONNX model on `device` ("llvm", "opencl", "interp"): one array per output."""
    proto = read_model(model)
    names = [info.name for info in declared_inputs(proto)]
    given = inputs if isinstance(inputs, Mapping) else dict(zip(names, inputs, strict=False))
    shapes = {n: np.shape(v) for n, v in given.items()}
    return Program(proto, device, shapes).run(inputs)
