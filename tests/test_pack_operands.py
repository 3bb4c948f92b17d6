"""pack-operands keeps the meaning of programs, and packs the operands it promises to:
a contraction's operand that its columns read with a stride (`x @ w.T`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, f32, f64, i32

from conftest import DEVICES, device_param
from irtensor import Tensor, ir
from irtensor.dialects import kernel
from irtensor.pipeline import Pipeline, PipelineError
from irtensor.testing import Program, assert_preserves_semantics, assert_reads_in_bounds, programs
from irtensor.testing.programs import random_input

HL_TO_KERNEL = "decompose-hlops,conv-to-mul-sum,fold-constants,cse,dce,fuse,split-reductions"
# A threshold small enough that the generated programs' tiny matmuls are packed.
EAGER = "pack-operands{min-reuse=2}"


def kernels(module: ModuleOp) -> list[kernel.KernelOp]:
    return [op for op in module.walk() if isinstance(op, kernel.KernelOp)]


def packs(module: ModuleOp) -> list[kernel.KernelOp]:
    return [k for k in kernels(module) if k.sym_name.data.startswith("pack_")]


@given(programs(dialect="hl", dtypes=(f32, f64, i32), max_ops=6, max_dim=6,
                ops=("linalg", "movement", "elementwise"), containing="hl.matmul"))
def test_pack_operands_keeps_the_meaning_of_programs(program: Program) -> None:
    fused = program.module.clone()
    Pipeline(HL_TO_KERNEL).run(fused)
    after = assert_preserves_semantics(EAGER, fused, program.inputs, rtol=1e-5, atol=1e-5)
    assert_reads_in_bounds(after)
    Pipeline("cse,reorder-loops").run(after)  # the copies take a schedule
    after.verify()


@st.composite
def transposed_matmuls(draw: st.DrawFn) -> tuple[Program, bool]:
    """`x @ permute(w)` with a bias, batch axes and any element type; and whether the
    pass should pack w (a strided column read reused across at least 2 rows)."""
    element = draw(st.sampled_from(["f32", "f64", "i32"]))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    m, k, n = (draw(st.integers(1, 9)) for _ in range(3))
    lead = "".join(f"{b}x" for b in batch)
    rank = len(batch) + 2
    flip = [*range(len(batch)), rank - 1, rank - 2]
    x, w, wt, y = (f"tensor<{lead}{a}x{c}x{element}>" for a, c in ((m, k), (n, k), (k, n), (m, n)))
    b = f"tensor<{n}x{element}>"
    text = f"""
func.func @main(%x: {x}, %w: {w}, %b: {b}) -> {y} {{
  %t = hl.permute %w {flip} : {w} -> {wt}
  %y = hl.matmul %x, %t : {x}, {wt} -> {y}
  %c = hl.broadcast_to %b : {b} -> {y}
  %z = hl.add %y, %c : {y}, {y} -> {y}
  func.return %z : {y}
}}
"""
    module = ir.parse(text)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    inputs = [random_input(rng, a.type) for a in module.ops.first.body.block.args]
    return Program(module, inputs), m >= 2 and n >= 2 and k >= 2


@given(transposed_matmuls())
def test_packing_a_transposed_operand_keeps_the_result(case: tuple[Program, bool]) -> None:
    program, packable = case
    fused = program.module.clone()
    Pipeline(HL_TO_KERNEL).run(fused)
    after = assert_preserves_semantics(EAGER, fused, program.inputs, rtol=1e-5, atol=1e-5)
    assert_reads_in_bounds(after)
    assert len(packs(after)) == packable
    Pipeline("cse,reorder-loops").run(after)
    after.verify()


LINEAR = """
func.func @main(%x: tensor<16x24xf32>, %w: tensor<12x24xf32>) -> tensor<16x12xf32> {
  %t = hl.permute %w [1, 0] : tensor<12x24xf32> -> tensor<24x12xf32>
  %y = hl.matmul %x, %t : tensor<16x24xf32>, tensor<24x12xf32> -> tensor<16x12xf32>
  func.return %y : tensor<16x12xf32>
}
"""


def test_a_transposed_weight_is_packed_once_and_read_contiguously() -> None:
    module = ir.parse(LINEAR)
    Pipeline(f"{HL_TO_KERNEL},pack-operands").run(module)
    [copy] = packs(module)
    assert copy.sizes == (24, 12)
    [matmul] = [k for k in kernels(module) if k is not copy]
    assert matmul.inputs[1] is copy.res
    assert str(matmul.accesses[1].affine_map) == "(d0, d1, d2) -> (d1, d2)"


def test_a_matrix_vector_product_is_not_packed() -> None:
    module = ir.parse(LINEAR.replace("16x", "1x"))
    Pipeline(f"{HL_TO_KERNEL},pack-operands").run(module)
    assert packs(module) == []


def test_min_reuse_must_not_be_negative() -> None:
    with pytest.raises(PipelineError, match="min-reuse must not be negative"):
        Pipeline("pack-operands{min-reuse=-1}").run(ir.parse(LINEAR))


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
@pytest.mark.parametrize("shape", [(64, 96, 80), (3, 17, 33), (1, 40, 24)])
def test_x_at_w_transposed_matches_numpy(device: str, shape: tuple[int, int, int]) -> None:
    m, k, n = shape
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    out = (Tensor(x, device=device) @ Tensor(w, device=device).T + Tensor(b, device=device))
    packed = [k for k in out.schedule() if k.kernel.sym_name.data.startswith("pack_")]
    assert len(packed) == (1 if m >= 8 else 0)
    np.testing.assert_allclose(out.numpy(), x @ w.T + b, rtol=2e-5, atol=2e-5)
