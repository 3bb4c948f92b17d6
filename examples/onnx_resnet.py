"""Load the ResNet-50 that onnx ships (onnx/backend/test/data/light/light_resnet50.onnx,
with its expected output), run it on irtensor's llvm device, and compare: the input is
the one onnx's backend runner feeds it (arange / size), the tolerance its own.

The first run compiles about a hundred kernels (minutes on two cores with a cold kernel
cache; they are cached on disk for the next run), then a warm run is timed.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

import irtensor.onnx

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def main() -> None:
    model = onnx.load(str(LIGHT / "light_resnet50.onnx"))
    expected = numpy_helper.to_array(onnx.load_tensor(str(LIGHT /
                                                         "light_resnet50_output_0.pb")))
    start = time.perf_counter()
    program = irtensor.onnx.Program(model, device="llvm")
    imported = time.perf_counter()
    shape = program.specs[0][1]
    x = (np.arange(np.prod(shape)).reshape(shape) / np.prod(shape)).astype(np.float32)
    (y,) = program.run([x])
    first = time.perf_counter()
    (y,) = program.run([x])
    warm = time.perf_counter()
    error = float(np.abs(y - expected).max())
    print(f"ResNet-50: import {imported - start:.1f} s, first run {first - imported:.1f} s, "
          f"warm run {1000 * (warm - first):.0f} ms; output {y.shape}, max abs error {error:.2g}")
    np.testing.assert_allclose(y, expected, rtol=1e-3, atol=1e-7)
    print("matches the shipped output")


if __name__ == "__main__":
    main()
