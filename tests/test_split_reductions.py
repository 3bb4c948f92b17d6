"""split-reductions keeps the meaning of programs (exactly for max), and splits the
kernels it promises to: long reductions over small parallel spaces, and row reductions
whose contiguous axis can be cut into vector lanes."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, bf16, f16, f32, f64, i1, i32, i64

from irtensor import ir
from irtensor.dialects import kernel
from irtensor.interp import run
from irtensor.pipeline import Pipeline
from irtensor.testing import Program, assert_preserves_semantics, assert_reads_in_bounds, programs

HL_TO_LL = "decompose-hlops,conv-to-mul-sum,fold-constants,cse,dce"
# Thresholds small enough that the generated programs' tiny reductions are split.
EAGER = "split-reductions{min-length=2 chunks=4 lanes=2 min-ratio=1}"


def kernels(module: ModuleOp) -> list[kernel.KernelOp]:
    return [op for op in module.walk() if isinstance(op, kernel.KernelOp)]


@given(programs(dialect="ll", dtypes=(f16, bf16, f32, f64, i32, i64, i1), max_ops=8,
                max_dim=6, ops=("elementwise", "reduce", "movement")))
def test_split_reductions_keeps_the_meaning_of_programs(program: Program) -> None:
    fused = program.module.clone()
    Pipeline("fuse").run(fused)
    after = assert_preserves_semantics(EAGER, fused, program.inputs, rtol=2e-3, atol=2e-3)
    assert_reads_in_bounds(after)


@given(programs(dialect="hl", dtypes=(f32,), max_ops=6, max_dim=8, ops=("reduce", "movement")),
       st.sampled_from(["split-reductions{min-length=2 chunks=8 lanes=4 min-ratio=1}",
                        "split-reductions{min-length=2 chunks=0 lanes=2 min-ratio=1}",
                        "split-reductions{min-length=2 chunks=3 lanes=1 min-ratio=1}"]))
def test_any_options_keep_the_meaning(program: Program, spec: str) -> None:
    fused = program.module.clone()
    Pipeline(f"{HL_TO_LL},fuse").run(fused)
    after = assert_preserves_semantics(spec, fused, program.inputs, rtol=2e-3, atol=2e-3)
    assert_reads_in_bounds(after)
    Pipeline("reorder-loops").run(after)  # the new kernels take a schedule
    after.verify()


SUM_ALL = """
func.func @main(%x: tensor<512x256xf32>) -> tensor<f32> {
  %s = hl.sum %x axes [0, 1] : tensor<512x256xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}
"""

ROW_MAX = """
func.func @main(%x: tensor<64x4096xf32>) -> tensor<64x1xf32> {
  %m = hl.max %x axes [1] keepdim : tensor<64x4096xf32> -> tensor<64x1xf32>
  func.return %m : tensor<64x1xf32>
}
"""


def lowered(text: str, split: bool) -> ModuleOp:
    module = ir.parse(text)
    Pipeline(f"{HL_TO_LL},fuse" + (",split-reductions" if split else "")).run(module)
    return module


def test_a_whole_sum_becomes_chunks_and_lanes() -> None:
    module = lowered(SUM_ALL, split=True)
    partial, final = kernels(module)
    assert partial.parallel_dims and partial.sizes[-2:] == (64, 64)
    assert final.sizes == (1, 1, 64, 64) and final.reduction_dims == (0, 1, 2, 3)
    x = np.random.default_rng(0).standard_normal((512, 256)).astype(np.float32)
    (got,) = run(module, [x])
    np.testing.assert_allclose(got, x.astype(np.float64).sum(), rtol=1e-5, atol=1e-3)


def test_a_split_max_is_exact() -> None:
    x = np.random.default_rng(1).standard_normal((64, 4096)).astype(np.float32)
    x[3, 17] = np.nan
    (want,) = run(lowered(ROW_MAX, split=False), [x])
    module = lowered(ROW_MAX, split=True)
    assert len(kernels(module)) == 2
    (got,) = run(module, [x])
    np.testing.assert_array_equal(got, want)


def test_the_pipeline_splits_a_whole_sum() -> None:
    module = ir.parse(SUM_ALL)
    Pipeline("hl-to-kernel").run(module)
    partial, _ = kernels(module)
    assert partial.schedule is not None and partial.schedule.parallel_dims


def test_a_reduction_that_reads_nothing_is_split_too() -> None:
    """Tensor.ones(n).sum() and a kernel.index body read no buffer: still chunks (threads)
    and lanes, as if they walked their reduction row-major."""
    module = ir.parse("""
    func.func @main() -> (tensor<f32>, tensor<3xi64>) {
      %o = ll.const 1.0 : tensor<20000000xf32>
      %s = ll.reduce sum %o axes [0] : tensor<20000000xf32> -> tensor<1xf32>
      %r = ll.reshape %s : tensor<1xf32> -> tensor<f32>
      %c = ll.const 2 : tensor<3x65536xi64>
      %t = ll.reduce sum %c axes [1] : tensor<3x65536xi64> -> tensor<3x1xi64>
      %u = ll.reshape %t : tensor<3x1xi64> -> tensor<3xi64>
      func.return %r, %u : tensor<f32>, tensor<3xi64>
    }""")
    Pipeline("fuse,split-reductions").run(module)
    found = kernels(module)
    assert len(found) == 4 and not any(k.inputs for k in found[::2])
    assert found[0].sizes[-1] == 64 and found[2].sizes[-1] == 32  # 64-byte vectors x 4
    total, rows = run(module, [])
    assert float(total) == 20_000_000
    np.testing.assert_array_equal(rows, [131072] * 3)
