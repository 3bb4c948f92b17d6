"""ONNX in: `load(model)` gives the hl module of an ONNX model, `run(model, inputs)` its
outputs, `Program` a model compiled once and run many times; `irtensor.onnx.backend` is
onnx's Backend API. docs/onnx.md says what is supported."""

from irtensor.onnx.errors import OnnxImportError
from irtensor.onnx.program import Program, load, run

__all__ = ["OnnxImportError", "Program", "load", "run"]
