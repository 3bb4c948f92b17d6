"""The grad pass: its result agrees with central finite differences in float64 on the
reference interpreter, on generated programs and on each rule; bad uses say why."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f64

from irtensor import ir
from irtensor.dialects import ll
from irtensor.interp import run
from irtensor.passes.autodiff.grad import GradPass
from irtensor.passes.autodiff.vjp_rules import VJP_RULES
from irtensor.pipeline import Pipeline, PipelineError
from irtensor.testing import Program, programs


def with_gradient(module: ModuleOp) -> ModuleOp:
    module = module.clone()
    Pipeline("decompose-hlops,conv-to-mul-sum,grad{func=main seed=arg}").run(module)
    return module


def directional_fd(module: ModuleOp, inputs: list[np.ndarray], seed: np.ndarray,
                   direction: list[np.ndarray], h: float) -> float:
    """d/dt <seed, main(inputs + t*direction)> at t = 0, by central differences."""
    def at(t: float) -> float:
        moved = [x + t * d if d is not None else x for x, d in zip(inputs, direction,
                                                                     strict=True)]
        return float(np.sum(seed * run(module, moved)[0]))
    return (at(h) - at(-h)) / (2 * h)


def check_against_fd(program: Program, rng: np.random.Generator,
                     assume: Callable[[bool], object] = assume) -> None:
    """The gradient program's directional derivative along a random direction, for a
    random cotangent, against central differences (`assume` drops kinks and NaNs)."""
    # an empty tensor's max is -inf, and 0 * -inf is NaN in any chain rule (torch's too)
    assume(all(x.size for x in program.inputs))
    (result,) = run(program.module, program.inputs)
    assume(result.size and result.dtype == np.float64 and np.all(np.isfinite(result)))
    module = with_gradient(program.module)
    seed = rng.standard_normal(result.shape)
    floats = [x.dtype == np.float64 for x in program.inputs]
    direction = [rng.standard_normal(x.shape) if f else None
                 for x, f in zip(program.inputs, floats, strict=True)]
    outs = run(module, [*program.inputs, seed], "main_grad")
    np.testing.assert_allclose(outs[0], result, rtol=1e-12, atol=1e-12)
    grads = iter(outs[1:])
    analytic = sum(float(np.sum(next(grads) * d)) for d in direction if d is not None)
    coarse, fine = (directional_fd(program.module, program.inputs, seed, direction, h)
                    for h in (1e-4, 1e-6))
    # A kink (a max tie, a where that flips, a pole) within h: no derivative to compare.
    assume(np.isfinite(coarse) and np.isfinite(fine))
    assume(abs(coarse - fine) <= 1e-4 * (1 + abs(fine)))
    assert abs(analytic - fine) <= 1e-5 * (1 + abs(fine)), (analytic, fine, str(module))


@settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
          deadline=None)
@given(programs(dialect="ll", dtypes=(f64,), max_ops=6))
def test_ll_programs_gradient_matches_finite_differences(program: Program) -> None:
    check_against_fd(program, np.random.default_rng(0))


@settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
          deadline=None)
@given(programs(dialect="hl", dtypes=(f64,), max_ops=5,
                ops=("elementwise", "reduce", "movement", "linalg", "nn")))
def test_hl_programs_gradient_through_decomposition(program: Program) -> None:
    check_against_fd(program, np.random.default_rng(1))


RULE_PROGRAMS = {
    "ll.exp2": "%r = ll.exp2 %x : tensor<5xf64>",
    "ll.log2": "%a = ll.mul %x, %x : tensor<5xf64>\n%r = ll.log2 %a : tensor<5xf64>",
    "ll.sqrt": "%a = ll.mul %x, %x : tensor<5xf64>\n%r = ll.sqrt %a : tensor<5xf64>",
    "ll.reciprocal": "%r = ll.reciprocal %x : tensor<5xf64>",
    # both operands depend on x: the numerator's and the divisor's cotangents both count
    "ll.div": "%a = ll.exp2 %x : tensor<5xf64>\n%b = ll.add %a, %x : tensor<5xf64>\n"
              "%r = ll.div %x, %b : tensor<5xf64>",
    "ll.sin": "%r = ll.sin %x : tensor<5xf64>",
    "ll.neg": "%r = ll.neg %x : tensor<5xf64>",
    "ll.max": "%a = ll.neg %x : tensor<5xf64>\n%r = ll.max %x, %a : tensor<5xf64>",
    "ll.flip": "%r = ll.flip %x axes [0] : tensor<5xf64>",
    "ll.stride": "%a = ll.stride %x [2] : tensor<5xf64> -> tensor<3xf64>\n"
                 "%r = ll.mul %a, %a : tensor<3xf64>",
    "ll.reduce max": "%r = ll.reduce max %x axes [0] : tensor<5xf64> -> tensor<1xf64>",
}


@pytest.mark.parametrize("name", sorted(RULE_PROGRAMS))
def test_each_rule_matches_finite_differences(name: str) -> None:
    body = RULE_PROGRAMS[name]
    result = body.rsplit(":", 1)[1].strip().split("->")[-1].strip()
    text = (f"func.func @main(%x: tensor<5xf64>) -> {result} {{\n{body}\n"
            f"func.return %r : {result}\n}}")
    x = np.array([0.3, -1.7, 2.2, 0.9, -0.4])
    check_against_fd(Program(ir.parse(text), [x]), np.random.default_rng(2), must_hold)


def must_hold(condition: bool) -> None:
    assert condition, "a rule's test point must be smooth"


def test_cast_passes_the_cotangent_back_in_the_source_type() -> None:
    text = """func.func @main(%x: tensor<3xf64>) -> tensor<3xf32> {
      %r = ll.cast %x : tensor<3xf64> -> tensor<3xf32>
      func.return %r : tensor<3xf32>
    }"""
    module = ir.parse(text)
    Pipeline("grad{seed=arg}").run(module)
    seed = np.array([0.5, -2.0, 3.25], np.float32)
    _, dx = run(module, [np.zeros(3), seed], "main_grad")
    assert dx.dtype == np.float64
    np.testing.assert_array_equal(dx, seed.astype(np.float64))


def test_every_ll_op_has_a_rule() -> None:
    assert set(ll.LL.operations) <= set(VJP_RULES), set(ll.LL.operations) - set(VJP_RULES)


def test_max_ties_split_the_cotangent_evenly() -> None:
    text = """func.func @main(%x: tensor<4xf64>, %y: tensor<4xf64>) -> tensor<f64> {
      %m = ll.max %x, %y : tensor<4xf64>
      %s = ll.reduce max %m axes [0] : tensor<4xf64> -> tensor<1xf64>
      %r = ll.reshape %s : tensor<1xf64> -> tensor<f64>
      func.return %r : tensor<f64>
    }"""
    module = ir.parse(text)
    GradPass().apply(None, module)  # type: ignore[arg-type]
    x, y = np.array([1.0, 3.0, 3.0, 0.0]), np.array([2.0, 3.0, 1.0, 0.0])
    _, dx, dy = run(module, [x, y], "main_grad")
    # the max 3 is reached twice (half each): at m[1], from x[1] = y[1] (a tie: a quarter
    # each), and at m[2], from x[2] alone
    np.testing.assert_array_equal(dx, [0, 0.25, 0.5, 0])
    np.testing.assert_array_equal(dy, [0, 0.25, 0, 0])


@pytest.mark.parametrize(("spec", "text", "message"), [
    ("grad{wrt=3}", "func.func @main(%x: tensor<2xf64>) -> tensor<2xf64> {\n"
     "func.return %x : tensor<2xf64>\n}", "wrt=3 is not an argument index"),
    ("grad{wrt=0}", "func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {\n"
     "func.return %x : tensor<2xi32>\n}", "only float tensors have a gradient"),
    ("grad", "func.func @main(%x: tensor<2xf64>) -> tensor<2xf64> {\n"
     "%r = hl.neg %x : tensor<2xf64>\nfunc.return %r : tensor<2xf64>\n}",
     "no gradient rule for hl.neg"),
    ("grad{func=other}", "func.func @main(%x: tensor<2xf64>) -> tensor<2xf64> {\n"
     "func.return %x : tensor<2xf64>\n}", "no function @other"),
    ("grad{seed=zeros}", "func.func @main(%x: tensor<2xf64>) -> tensor<2xf64> {\n"
     "func.return %x : tensor<2xf64>\n}", "seed='zeros'"),
])
def test_bad_uses_say_why(spec: str, text: str, message: str) -> None:
    with pytest.raises(PipelineError, match=message):
        Pipeline(spec).run(ir.parse(text))


def test_gradient_function_is_plain_ll_and_fuses() -> None:
    text = """func.func @main(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>) -> tensor<f32> {
      %y = hl.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
      %r = hl.sum %y axes [0, 1] : tensor<8x3xf32> -> tensor<f32>
      func.return %r : tensor<f32>
    }"""
    module = ir.parse(text)
    Pipeline("decompose-hlops,grad{wrt=1},fold-constants,cse,dce").run(module)
    grad = next(f for f in module.body.block.ops
                if isinstance(f, func.FuncOp) and f.sym_name.data == "main_grad")
    assert all(op.dialect_name() in ("ll", "func") for op in grad.body.walk())
    x = np.arange(32, dtype=np.float32).reshape(8, 4) / 7
    w = np.ones((4, 3), np.float32)
    _, dw = run(module, [x, w], "main_grad")
    np.testing.assert_allclose(dw, np.repeat(x.sum(axis=0)[:, None], 3, axis=1), rtol=1e-6)
    Pipeline("fuse").run(module)
