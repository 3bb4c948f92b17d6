"""The light models onnx ships, side by side in one run: irtensor (llvm) against
onnxruntime (CPU), with the shipped constant weights and the runner's input.

    python bench/onnx_models.py [MODEL ...] [--batch N]

Prints, per model: whether irtensor matches the shipped output (onnx's rtol 1e-3,
atol 1e-7), the max abs error, import + first run (compile) time, and the warm times
(best of 3) of irtensor and onnxruntime with their ratio.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

import irtensor.onnx as ionnx

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MODELS = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
          "shufflenet", "squeezenet", "vgg19", "zfnet512")


def best(run: object, times: int = 3) -> float:
    out = []
    for _ in range(times):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        out.append(time.perf_counter() - start)
    return min(out)


def batched(model: onnx.ModelProto) -> onnx.ModelProto:
    """The light models fix batch 1 in their input and Reshape shapes: a free batch size
    and -1 there instead (for both runtimes), so that a batch of 8 goes through."""
    for info in ionnx.importer.declared_inputs(model):
        info.type.tensor_type.shape.dim[0].dim_param = "batch"
    shapes = {n.input[1] for n in model.graph.node if n.op_type == "Reshape"}
    for init in model.graph.initializer:
        if init.name in shapes:
            value = numpy_helper.to_array(init).copy()
            if value.size and value[0] == 1:
                value[0] = -1
                init.CopyFrom(numpy_helper.from_array(value, init.name))
    return model


def measure(name: str, batch: int) -> str:
    model = onnx.load(str(LIGHT / f"light_{name}.onnx"))
    if batch > 1:
        model = batched(model)
    expected = numpy_helper.to_array(onnx.load_tensor(str(LIGHT / f"light_{name}_output_0.pb")))
    (info,) = ionnx.program.input_specs(model, {name: (1, *shape[1:]) for name, shape in
                                                 _declared(model)})
    shape = (batch, *info[1][1:])
    size = int(np.prod(info[1]))
    one = (np.arange(size).reshape(info[1]) / size).astype(np.float32)
    x = np.concatenate([one] * batch)
    start = time.perf_counter()
    program = ionnx.Program(model, "llvm", {info[0]: shape})
    (y,) = program.run([x])
    first = time.perf_counter() - start
    warm = best(lambda: program.run([x]))
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    feeds = {info[0]: x}
    session.run(None, feeds)
    ort_warm = best(lambda: session.run(None, feeds))
    err = float(np.abs(y[:1] - expected).max())
    ok = np.allclose(y[:1], expected, rtol=1e-3, atol=1e-7)
    return (f"| {name} | {batch} | {'yes' if ok else 'NO'} | {err:.2g} | {first:.1f} | "
            f"{1000 * warm:.0f} | {1000 * ort_warm:.0f} | {ort_warm / warm:.2f}x |")


def _declared(model: onnx.ModelProto) -> list[tuple[str, tuple[int, ...]]]:
    return [(i.name, tuple(d.dim_value for d in i.type.tensor_type.shape.dim))
            for i in ionnx.importer.declared_inputs(model)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", default=list(MODELS))
    p.add_argument("--batch", type=int, default=1)
    args = p.parse_args(argv)
    print("| model | batch | matches | max abs error | import + first run s | irtensor warm ms "
          "| onnxruntime warm ms | speed vs onnxruntime |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.models:
        print(measure(name, args.batch), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
