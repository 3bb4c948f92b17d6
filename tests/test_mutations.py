"""Mutation tests: a deliberately broken version of a pass is caught by its property
test, with its default settings, in (nearly) every seeded run: decompose-hlops,
conv-to-mul-sum, fold-constants, grad, fuse, split-reductions, reorder-loops,
lower-kernels-to-loops, convert-to-llvm and the OpenCL C printer.

The property tests steer their programs to the code the pass changes
(`programs(containing=...)`), which is what makes them catch a bug there nearly always;
without steering, a program of eight random ops rarely holds the op a bug is in. Each
mutant is also checked not to be caught by chance: the same property passes on the real
pass first.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import f32, f64

from irtensor import interp
from irtensor.dialects import hl, ll
from irtensor.passes.autodiff import vjp_rules
from irtensor.passes.kernel import fuse, reorder_loops, split_reductions, views
from irtensor.passes.llvm import patterns_arith
from irtensor.passes.loops import loop_builder
from irtensor.passes.opencl import c_printer
from irtensor.passes.rewrite import conv_to_mul_sum, decompose_hlops, fold_constants
from irtensor.pipeline import Pipeline
from irtensor.runtime import llvm_device, opencl_device
from irtensor.testing import Program, assert_preserves_semantics, assert_same_results, programs
from test_fold_constants import check_exact, constant_arithmetic
from test_grad import check_against_fd

# The bar is 99 of 100 seeded runs; the suite runs a few seeds so that it stays
# quick, IRTENSOR_MUTATION_SEEDS=100 runs the full table (every one of them must be caught
# but one in a hundred).
SEEDS = range(int(os.environ.get("IRTENSOR_MUTATION_SEEDS", "5")))
REQUIRED = len(SEEDS) - len(SEEDS) // 100
MUTANT_EXAMPLES = 150


@dataclass(frozen=True)
class Mutant:
    pass_name: str
    bug: str
    install: Callable[[pytest.MonkeyPatch], None]
    strategy: st.SearchStrategy[Program]
    check: Callable[[Program], None]


def keeps_meaning(pipeline: str) -> Callable[[Program], None]:
    def check(program: Program) -> None:
        assert_preserves_semantics(pipeline, program.module, program.inputs, rtol=1e-5,
                                   atol=1e-5)
    return check


def agrees_on_llvm(program: Program) -> None:
    module = program.module.clone()
    Pipeline("hl-to-kernel").run(module)
    got = llvm_device.run(module, program.inputs)
    assert_same_results(got, interp.run(program.module, program.inputs), rtol=2e-4, atol=2e-4)


def agrees_on_opencl(program: Program) -> None:
    module = program.module.clone()
    Pipeline("hl-to-kernel").run(module)
    got = opencl_device.run(module, program.inputs)
    assert_same_results(got, interp.run(program.module, program.inputs), rtol=2e-4, atol=2e-4)


def gradient_matches_finite_differences(program: Program) -> None:
    def skip_unless(condition: bool) -> None:  # a kink or a NaN: nothing to compare
        if not condition:
            raise Skip

    with contextlib.suppress(Skip):
        check_against_fd(program, np.random.default_rng(0), assume=skip_unless)


class Skip(Exception):
    pass


# --------------------------------------------------------------------------- the bugs


def avg_pool_miscounts(mp: pytest.MonkeyPatch) -> None:
    real = conv_to_mul_sum.math.prod
    mp.setattr(conv_to_mul_sum.math, "prod", lambda xs: real(xs) + 1)


def flip_forgotten(mp: pytest.MonkeyPatch) -> None:
    real = views.movement_map

    def movement_map(op):  # type: ignore[no-untyped-def]
        if isinstance(op, ll.FlipOp):
            return views.IndexMap(views.dims(len(op.results[0].type.get_shape())))
        return real(op)

    mp.setattr(fuse, "movement_map", movement_map)


def mul_as_add(mp: pytest.MonkeyPatch) -> None:
    table = dict(patterns_arith.FLOAT_BINARY)
    table[arith.MulfOp] = llvm.FAddOp
    mp.setattr(patterns_arith, "FLOAT_BINARY", table)


def sub_as_add(mp: pytest.MonkeyPatch) -> None:
    mp.setitem(decompose_hlops.ELEMENTWISE, hl.SubOp, lambda b, x, y: b.add(x, y))


def add_folded_as_sub(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(fold_constants, "LL_ELEMENTWISE",
               {**fold_constants.LL_ELEMENTWISE, ll.AddOp: np.subtract})


def mul_gradient_swapped(mp: pytest.MonkeyPatch) -> None:
    def wrong(op, g, b):  # type: ignore[no-untyped-def]
        x, y = op.operands
        return [b.mul(g, x), b.mul(g, y)]

    mp.setitem(vjp_rules.VJP_RULES, ll.MulOp, ("mul-vjp", wrong))


def last_partial_dropped(mp: pytest.MonkeyPatch) -> None:
    real = split_reductions._final

    def final(kernel, partial, extra):  # type: ignore[no-untyped-def]
        return real(kernel, partial, [*extra[:-1], max(1, extra[-1] - 1)])

    mp.setattr(split_reductions, "_final", final)


def sum_combined_as_max(mp: pytest.MonkeyPatch) -> None:
    real = loop_builder.KernelFunction.combine

    def combine(self, acc, value):  # type: ignore[no-untyped-def]
        if self.combiner() != "max" and "f" in str(acc.type):
            return self.emit(arith.MaximumfOp(acc, value))
        return real(self, acc, value)

    mp.setattr(loop_builder.KernelFunction, "combine", combine)


def reductions_split_across_threads(mp: pytest.MonkeyPatch) -> None:
    def choose_parallel(kernel, order, tiles, threads):  # type: ignore[no-untyped-def]
        model = reorder_loops.as_model(kernel)
        return tuple(d for d in order if model.sizes[d] > 1)  # reductions too, any size

    mp.setattr(reorder_loops, "choose_parallel", choose_parallel)


def schedules_keep_meaning_and_fit(program: Program) -> None:
    from test_reorder_loops import check_schedule, kernels, to_kernels

    after = assert_preserves_semantics("reorder-loops", to_kernels(program), program.inputs)
    for kernel in kernels(after):
        check_schedule(kernel)


def addf_printed_as_minus(mp: pytest.MonkeyPatch) -> None:
    mp.setitem(c_printer.PLAIN, arith.AddfOp, "-")


EAGER_SPLIT = "fuse,split-reductions{min-length=2 chunks=4 lanes=2 min-ratio=1}"
FLOATS = (f32, f64)
MUTANTS = [
    Mutant("conv-to-mul-sum", "avg_pool2d divides by one more than the window", avg_pool_miscounts,
           programs(dialect="hl", ops=("elementwise", "nn"), containing="hl.avg_pool2d"),
           keeps_meaning("conv-to-mul-sum")),
    Mutant("fuse", "a flip's index map forgotten", flip_forgotten,
           programs(dialect="ll", containing="ll.flip", max_dim=5),
           keeps_meaning("fuse")),
    Mutant("convert-to-llvm", "arith.mulf lowered as fadd", mul_as_add,
           programs(dialect="hl", dtypes=FLOATS, containing="hl.mul", max_ops=4),
           agrees_on_llvm),
    Mutant("decompose-hlops", "sub decomposed as add (the neg forgotten)", sub_as_add,
           programs(dialect="hl", containing="hl.sub"),
           keeps_meaning("decompose-hlops")),
    Mutant("fold-constants", "ll.add of constants folded as a difference", add_folded_as_sub,
           constant_arithmetic(),
           check_exact),
    Mutant("grad", "mul's cotangents swapped between its operands", mul_gradient_swapped,
           programs(dialect="ll", dtypes=(f64,), containing="ll.mul", max_ops=6),
           gradient_matches_finite_differences),
    Mutant("split-reductions", "the final kernel drops the last partial", last_partial_dropped,
           programs(dialect="ll", containing="ll.reduce", max_dim=8, weights={"reduce": 4}),
           keeps_meaning(EAGER_SPLIT)),
    Mutant("reorder-loops", "reduction loops split across threads", reductions_split_across_threads,
           programs(dialect="hl", containing="hl.sum", max_ops=6),
           schedules_keep_meaning_and_fit),
    Mutant("lower-kernels-to-loops", "a float sum accumulated with max", sum_combined_as_max,
           programs(dialect="hl", dtypes=FLOATS, containing="hl.sum", max_ops=4),
           agrees_on_llvm),
    Mutant("lower-to-opencl", "the C printer writes - for arith.addf", addf_printed_as_minus,
           programs(dialect="hl", dtypes=FLOATS, containing="hl.add", max_ops=4),
           agrees_on_opencl),
]


def caught(mutant: Mutant, seed_value: int, max_examples: int | None = None) -> bool:
    """Whether the property fails in the run seeded `seed_value` (no shrinking: only
    whether it is caught counts here)."""
    chosen = settings(database=None, deadline=None, phases=[Phase.generate],
                      suppress_health_check=list(HealthCheck),
                      **({"max_examples": max_examples} if max_examples else {}))

    @seed(seed_value)
    @chosen
    @given(mutant.strategy)
    def prop(program: Program) -> None:
        mutant.check(program)

    try:
        prop()
    except Exception:  # hypothesis raises the property's failure
        return True
    return False


@pytest.fixture
def fresh_kernels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No compiled kernel from before the mutant (in memory or on disk) may stand in for
    the mutant's own."""
    monkeypatch.setenv("IRTENSOR_CACHE_DIR", str(tmp_path))
    llvm_device._MEMORY.clear()
    opencl_device._MEMORY.clear()


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.pass_name)
def test_the_broken_pass_is_caught_by_its_property_test(
        mutant: Mutant, monkeypatch: pytest.MonkeyPatch, fresh_kernels: None) -> None:
    assert not caught(mutant, 12345, max_examples=20), "the property fails on the real pass"
    if mutant.check is agrees_on_opencl and (why := opencl_device.unavailable()):
        pytest.skip(f"no OpenCL device builds programs here: {why}")
    mutant.install(monkeypatch)
    llvm_device._MEMORY.clear()
    opencl_device._MEMORY.clear()
    # Each run stops at its first failure, so a generous budget costs time only where a
    # mutant goes uncaught; the profile's 50 examples missed one seed in five once.
    runs = sum(caught(mutant, s, max_examples=MUTANT_EXAMPLES) for s in SEEDS)
    assert runs >= REQUIRED, (f"{mutant.pass_name} ({mutant.bug}): caught in {runs} of "
                              f"{len(SEEDS)} runs")
