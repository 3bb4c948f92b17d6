"""Small ONNX models built with onnx.helper, for the ONNX import tests: each is a list of
nodes over named inputs and random weights, at an opset."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(18)

Case = Callable[[], tuple[onnx.ModelProto, dict[str, np.ndarray]]]


def onnxruntime_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]
                        ) -> list[np.ndarray]:
    """What onnxruntime (a test dependency; its tests skip without it) computes."""
    import onnxruntime

    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def matches_onnxruntime(case: Case, device: str) -> None:
    """The case's model on `device` gives onnxruntime's outputs: shapes, dtypes, values."""
    import irtensor.onnx as ionnx

    model, feeds = case()
    want = onnxruntime_outputs(model, feeds)
    got = ionnx.run(model, feeds, device=device)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def rand(*shape: int, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return RNG.uniform(low, high, shape).astype(np.float32)


def make(nodes: Sequence[onnx.NodeProto], inputs: dict[str, Sequence[int]],
         weights: dict[str, np.ndarray], outputs: Sequence[str], opset: int = 13,
         weights_as_inputs: bool = False,
         output_types: dict[str, int] | None = None) -> onnx.ModelProto:
    """A model of `nodes`; `weights_as_inputs` lists the initializers among the graph's
    inputs too, as models of the old exporters do."""
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s))
           for n, s in inputs.items()]
    inits = [numpy_helper.from_array(a, n) for n, a in weights.items()]
    if weights_as_inputs:
        ins += [helper.make_tensor_value_info(
            n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape))
            for n, a in weights.items()]
    types = output_types or {}
    outs = [helper.make_tensor_value_info(n, types.get(n, TensorProto.FLOAT), None)
            for n in outputs]
    graph = helper.make_graph(list(nodes), "test", ins, outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 8)  # what onnxruntime reads
    return model


def n(op: str, inputs: Sequence[str], outputs: Sequence[str], **attrs: object
      ) -> onnx.NodeProto:
    return helper.make_node(op, list(inputs), list(outputs), name=f"{op}_{outputs[0]}",
                            **attrs)


def const(name: str, value: Sequence[int] | np.ndarray) -> onnx.NodeProto:
    array = np.asarray(value, dtype=np.int64) if not isinstance(value, np.ndarray) else value
    return helper.make_node("Constant", [], [name], name=f"const_{name}",
                            value=numpy_helper.from_array(array, name))


def conv_net(opset: int) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """conv + batchnorm + relu + max pool + conv (groups, dilation) + conv (auto_pad) + global
    average pool + flatten + gemm + softmax."""
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[1, 1]),
        n("BatchNormalization", ["c1", "g", "beta", "mean", "var"], ["bn"], epsilon=1e-3),
        n("Relu", ["bn"], ["r"]),
        n("MaxPool", ["r"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        n("Conv", ["p", "w2"], ["c2"], group=2, dilations=[2, 2], pads=[2, 1, 2, 3]),
        n("Conv", ["c2", "w3"], ["c3"], strides=[2, 2], auto_pad="SAME_LOWER"),
        n("LeakyRelu", ["c3"], ["l"], alpha=0.1),
        n("GlobalAveragePool", ["l"], ["gap"]),
        n("Flatten", ["gap"], ["f"], axis=1),
        n("Gemm", ["f", "wf", "bf"], ["logits"], transB=1, alpha=0.5, beta=2.0),
        n("Softmax", ["logits"], ["y"], axis=1),
    ]
    weights = {"w1": rand(8, 3, 3, 3), "b1": rand(8), "g": rand(8, low=0.5),
               "beta": rand(8), "mean": rand(8), "var": rand(8, low=0.1),
               "w2": rand(6, 4, 3, 3), "w3": rand(6, 6, 2, 2), "wf": rand(5, 6), "bf": rand(5)}
    model = make(nodes, {"x": (2, 3, 10, 10)}, weights, ["y"], opset)
    return model, {"x": rand(2, 3, 10, 10)}
