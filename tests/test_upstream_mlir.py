"""The loops stage is upstream MLIR: lowered by upstream mlir-opt's own passes and
translated by mlir-translate, its kernels compute what irtensor's own lowering computes.

Needs Debian's mlir-19-tools (CI installs them and sets IRTENSOR_REQUIRE_MLIR=1, under
which their absence fails instead of skipping)."""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest
from xdsl.dialects import func

from irtensor.dialects.kernel import KernelOp
from irtensor.ir import parse, to_text
from irtensor.passes.kernel.kernel_facts import outer_extent
from irtensor.passes.llvm import jit as llvm_jit
from irtensor.passes.loops.loop_builder import KERNEL_ATTR
from irtensor.pipeline import Pipeline
from irtensor.tools.upstream import UPSTREAM_LOWERING, upstream_mlir_tool

MLIR_OPT, MLIR_TRANSLATE = upstream_mlir_tool("mlir-opt"), upstream_mlir_tool("mlir-translate")
if (MLIR_OPT is None or MLIR_TRANSLATE is None) and os.environ.get("IRTENSOR_REQUIRE_MLIR") == "1":
    raise RuntimeError("IRTENSOR_REQUIRE_MLIR=1 but mlir-opt/mlir-translate are not installed")
pytestmark = pytest.mark.skipif(MLIR_OPT is None or MLIR_TRANSLATE is None,
                                reason="upstream mlir-opt/mlir-translate are not installed")

PROGRAMS = {
    "matmul-bias-relu": ("""
func.func @main(%x: tensor<12x40xf32>, %w: tensor<40x48xf32>,
                %b: tensor<48xf32>) -> tensor<12x48xf32> {
  %h = hl.matmul %x, %w : tensor<12x40xf32>, tensor<40x48xf32> -> tensor<12x48xf32>
  %hb = hl.add %h, %b : tensor<12x48xf32>, tensor<48xf32> -> tensor<12x48xf32>
  %r = hl.relu %hb : tensor<12x48xf32>
  func.return %r : tensor<12x48xf32>
}""", lambda x, w, b: np.maximum(x @ w + b, 0)),
    "exp-row-sum": ("""
func.func @main(%x: tensor<7x300xf32>) -> tensor<7xf32> {
  %e = hl.exp %x : tensor<7x300xf32>
  %s = hl.sum %e axes [1] : tensor<7x300xf32> -> tensor<7xf32>
  func.return %s : tensor<7xf32>
}""", lambda x: np.exp(x).sum(axis=1)),
    "sqrt-sin-f64": ("""
func.func @main(%x: tensor<5x33xf64>) -> tensor<5x33xf64> {
  %a = hl.abs %x : tensor<5x33xf64>
  %s = hl.sqrt %a : tensor<5x33xf64>
  %r = hl.sin %s : tensor<5x33xf64>
  func.return %r : tensor<5x33xf64>
}""", lambda x: np.sin(np.sqrt(np.abs(x)))),
}


def upstream_llvm_ir(loops_text: str) -> str:
    lowered = subprocess.run([MLIR_OPT, *UPSTREAM_LOWERING], input=loops_text, text=True,
                             capture_output=True, check=True, timeout=120).stdout
    return subprocess.run([MLIR_TRANSLATE, "--mlir-to-llvmir"], input=lowered, text=True,
                          capture_output=True, check=True, timeout=120).stdout


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_upstream_lowering_of_the_loops_stage_computes_the_same_numbers(program: str) -> None:
    text, reference = PROGRAMS[program]
    kernels = parse(text)
    Pipeline("hl-to-kernel").run(kernels)
    (kernel,) = [op for op in kernels.walk() if isinstance(op, KernelOp)]
    loops = kernels.clone()
    Pipeline("lower-kernels-to-loops").run(loops)
    (name,) = [f.sym_name.data for f in loops.walk()
               if isinstance(f, func.FuncOp) and KERNEL_ATTR in f.attributes]
    jit = llvm_jit.compile_module(upstream_llvm_ir(to_text(loops)))
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(tuple(v.type.get_shape())).astype(
        np.float64 if "f64" in str(v.type) else np.float32) for v in kernel.inputs]
    out = np.zeros(tuple(kernel.res.type.get_shape()), args[0].dtype)
    jit.function(name)(*args, out, 0, outer_extent(kernel))
    ours = llvm_jit.compile_module(loops)
    expected = np.zeros_like(out)
    ours.function(name)(*args, expected, 0, outer_extent(kernel))
    np.testing.assert_allclose(out, reference(*args), rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(out, expected, rtol=2e-5, atol=2e-5)
