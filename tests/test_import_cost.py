"""What `import irtensor` and a compiled realize load: not xDSL's interpreters (only the
reference interpreter needs them, and their package loads every one, riscv's included)."""

from __future__ import annotations

import subprocess
import sys

PROGRAM = """
import sys
import numpy as np
import irtensor as it
x = it.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3), device="llvm")
print(((x @ x.T).relu().sum() + 1).numpy())
print("xdsl.interpreters" in sys.modules)
"""


def test_a_compiled_realize_does_not_load_the_interpreters() -> None:
    out = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                         check=True, timeout=300).stdout.split()
    assert float(out[0]) == 84.0  # x @ x.T = [[5, 14], [14, 50]], summed, plus one
    assert out[1] == "False"


def test_the_interpreter_still_runs() -> None:
    import numpy as np

    from irtensor.interp import run
    from irtensor.ir import parse

    module = parse("""
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = hl.add %x, %x : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}""")
    (got,) = run(module, [np.array([1, 2, 3], np.float32)])
    np.testing.assert_array_equal(got, [2, 4, 6])
