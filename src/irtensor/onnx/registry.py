"""The operator table and the view of one ONNX node its handlers get.

A value of the graph is a numpy array (known at import: an initializer, a constant, a
shape computed from static shapes) or a lazy `Tensor`. Handlers registered with
`@op("Relu", ...)` take a `Node` and return its outputs; `@fold(...)` handlers compute
a node whose inputs are all known in numpy at import.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np
import onnx

from irtensor import dtypes
from irtensor.frontend.tensor import Tensor
from irtensor.onnx.errors import OnnxImportError, node_error

Value = Union[np.ndarray, Tensor]  # noqa: UP007
Handler = Callable[["Node"], Sequence[Value | None]]

OPS: dict[str, Handler] = {}
FOLDS: dict[str, Handler] = {}


def op(*names: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for name in names:
            OPS[name] = fn
        return fn
    return register


def fold(*names: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for name in names:
            FOLDS[name] = fn
        return fn
    return register


def elem_dtype(elem_type: int, what: str) -> np.dtype:
    """The numpy dtype of an ONNX element type."""
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
    except Exception:
        raise OnnxImportError(f"{what}: element type {elem_type} is not supported") from None


@dataclass
class Tensors:
    """numpy constants as Tensors, one buffer per array, with the names they came by."""

    device: str
    made: dict[int, tuple[np.ndarray, Tensor]] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)

    def of(self, array: np.ndarray, where: Node | None = None) -> Tensor:
        found = self.made.get(id(array))
        if found is not None:
            return found[1]
        try:
            dtypes.from_numpy(array.dtype)
        except (TypeError, KeyError):
            what = f"element type {array.dtype} is not supported (irtensor has " \
                   f"{dtypes.SUPPORTED_NAMES})"
            raise where.error(what) if where else OnnxImportError(what) from None
        # not np.ascontiguousarray: it makes a 0-d array 1-d, and a scalar weight would
        # broadcast a scalar result to shape (1,)
        t = Tensor(np.require(array, requirements="C"), device=self.device)
        self.made[id(array)] = (array, t)  # the array is kept: its id stays its own
        return t


@dataclass
class Node:
    """One ONNX node: its op type, name, the opset of its domain, attributes, inputs."""

    op_type: str
    name: str
    opset: int
    attrs: dict[str, Any]
    inputs: list[Value | None]
    n_outputs: int
    tensors: Tensors
    # runs one of the node's subgraphs (If's branches, Loop's and Scan's body) on values
    # for its inputs, in the node's scope; None outside an importer
    subgraph: Callable[[onnx.GraphProto, Sequence[Value]], list[Value]] | None = None

    def error(self, what: str) -> OnnxImportError:
        return node_error(self.name, self.op_type, what)

    def run(self, graph: onnx.GraphProto, values: Sequence[Value]) -> list[Value]:
        """The outputs of `graph` (an attribute of this node) on `values`."""
        if self.subgraph is None:
            raise self.error("its subgraph cannot run here")
        if len(values) != len(graph.input):
            raise self.error(f"subgraph {graph.name!r} takes {len(graph.input)} inputs; "
                             f"given {len(values)}")
        return self.subgraph(graph, values)

    def as_tensor(self, value: Value) -> Tensor:
        return value if isinstance(value, Tensor) else self.tensors.of(value, self)

    def has(self, i: int) -> bool:
        return i < len(self.inputs) and self.inputs[i] is not None

    def tensor(self, i: int) -> Tensor:
        v = self.inputs[i]
        if v is None:
            raise self.error(f"input {i} is missing")
        return v if isinstance(v, Tensor) else self.tensors.of(v, self)

    def const(self, i: int, what: str) -> np.ndarray:
        """Input `i`, which must be known at import (a shape, axes, pads...)."""
        v = self.inputs[i] if i < len(self.inputs) else None
        if v is None:
            raise self.error(f"input {i} ({what}) is missing")
        if isinstance(v, Tensor):
            raise self.error(f"input {i} ({what}) is computed at run time; irtensor needs "
                             "it known at import (a dynamic shape)")
        return v

    def ints(self, i: int, what: str) -> list[int]:
        return [int(x) for x in self.const(i, what).reshape(-1)]

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)

    def only(self, **supported: Any) -> None:
        """Refuse attributes set to values other than the supported ones."""
        for name, ok in supported.items():
            if name in self.attrs and self.attrs[name] not in (ok if isinstance(ok, tuple)
                                                               else (ok,)):
                raise self.error(f"attribute {name}={self.attrs[name]!r} is not supported")

    def is_const(self) -> bool:
        return all(v is None or isinstance(v, np.ndarray) for v in self.inputs)
