"""The light models onnx ships (AlexNet ... ZFNet-512) match their shipped outputs on
llvm, and, with random weights in place of the shipped constant ones, onnxruntime;
three of them match on opencl too.

Compiling a whole network takes from 45 s (SqueezeNet) to 5 minutes (Inception v2) on
two cores with a cold kernel cache, so the default run takes SqueezeNet only; set
IRTENSOR_ONNX_ALL=1 for all nine and the opencl runs (docs/onnx.md has the table)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import irtensor.onnx as ionnx

ort = pytest.importorskip("onnxruntime")

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MODELS = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
          "shufflenet", "squeezenet", "vgg19", "zfnet512")
DEFAULT = ("squeezenet",)
ALL = os.environ.get("IRTENSOR_ONNX_ALL") == "1"


def selected(name: str) -> object:
    return pytest.param(name, marks=pytest.mark.skipif(
        not ALL and name not in DEFAULT,
        reason="compiling it takes minutes on two cores; IRTENSOR_ONNX_ALL=1 runs it"))


def dummy_input(model: onnx.ModelProto) -> np.ndarray:
    """The input onnx's backend runner feeds the light models: arange / size."""
    (spec,) = ionnx.program.input_specs(model)
    shape = spec[1]
    size = int(np.prod(shape))
    return (np.arange(size).reshape(shape) / size).astype(np.float32)


def random_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """The model with each constant weight (a ConstantOfShape of the shipped model)
    random: He-scaled for convolutions and matrices, in [0.5, 1.5] for vectors (batch
    norm's scale, mean and variance, biases)."""
    rng = np.random.default_rng(seed)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    shapes = {i.name: numpy_helper.to_array(i) for i in out.graph.initializer}
    keep, inits = [], []
    for node in out.graph.node:
        if node.op_type != "ConstantOfShape":
            keep.append(node)
            continue
        shape = tuple(int(d) for d in shapes[node.input[0]].reshape(-1))
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 0
        value = (rng.normal(0.0, np.sqrt(2.0 / fan_in), shape) if fan_in
                 else rng.uniform(0.5, 1.5, shape))
        inits.append(numpy_helper.from_array(value.astype(np.float32), node.output[0]))
    del out.graph.node[:]
    out.graph.node.extend(keep)
    out.graph.initializer.extend(inits)
    return out


@pytest.mark.parametrize("name", [selected(m) for m in MODELS])
def test_light_model_matches_shipped_output_and_onnxruntime(name: str) -> None:
    model = onnx.load(str(LIGHT / f"light_{name}.onnx"))
    expected = numpy_helper.to_array(onnx.load_tensor(str(LIGHT / f"light_{name}_output_0.pb")))
    x = dummy_input(model)
    program = ionnx.Program(model, "llvm")
    (got,) = program.run([x])
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-7)  # onnx's runner's
    rand = random_weights(model)
    options = ort.SessionOptions()
    options.log_severity_level = 3  # not the unused shape initializers of each weight
    session = ort.InferenceSession(rand.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    feeds = {session.get_inputs()[0].name: np.random.default_rng(1).random(x.shape,
                                                                           np.float32)}
    (want,) = session.run(None, feeds)
    (got,) = ionnx.Program(rand, "llvm").run(list(feeds.values()))
    assert want.std() > 1e-4  # random weights: an output that tells classes apart
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("name", [pytest.param(m, marks=pytest.mark.skipif(
    not ALL, reason="compiling it takes a minute on two cores; IRTENSOR_ONNX_ALL=1 runs it"))
    for m in ("resnet50", "shufflenet", "squeezenet")])
def test_light_model_matches_shipped_output_on_opencl(name: str) -> None:
    from conftest import opencl_unavailable

    if (why := opencl_unavailable()) is not None:
        pytest.skip(f"no OpenCL device builds programs here: {why}")
    model = onnx.load(str(LIGHT / f"light_{name}.onnx"))
    expected = numpy_helper.to_array(onnx.load_tensor(str(LIGHT / f"light_{name}_output_0.pb")))
    (got,) = ionnx.Program(model, "opencl").run([dummy_input(model)])
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-7)
