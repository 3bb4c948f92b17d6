"""Mutation tests: a deliberately broken version of a pass is caught by its property
test, with its default settings, in (nearly) every seeded run (so far for conv-to-mul-sum,
fuse and convert-to-llvm).

The property tests steer their programs to the code the pass changes
(`programs(containing=...)`), which is what makes them catch a bug there nearly always;
without steering, a program of eight random ops rarely holds the op a bug is in. Each
mutant is also checked not to be caught by chance: the same property passes on the real
pass first.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import f32, f64

from irtensor import interp
from irtensor.dialects import ll
from irtensor.passes.kernel import fuse, views
from irtensor.passes.llvm import patterns_arith
from irtensor.passes.rewrite import conv_to_mul_sum
from irtensor.pipeline import Pipeline
from irtensor.runtime import llvm_device
from irtensor.testing import Program, assert_preserves_semantics, assert_same_results, programs

# The bar is 99 of 100 seeded runs; the suite runs a few seeds so that it stays
# quick, IRTENSOR_MUTATION_SEEDS=100 runs the full table (every one of them must be caught
# but one in a hundred).
SEEDS = range(int(os.environ.get("IRTENSOR_MUTATION_SEEDS", "5")))
REQUIRED = len(SEEDS) - len(SEEDS) // 100


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


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.pass_name)
def test_the_broken_pass_is_caught_by_its_property_test(
        mutant: Mutant, monkeypatch: pytest.MonkeyPatch, fresh_kernels: None) -> None:
    assert not caught(mutant, 12345, max_examples=20), "the property fails on the real pass"
    mutant.install(monkeypatch)
    llvm_device._MEMORY.clear()
    runs = sum(caught(mutant, s) for s in SEEDS)
    assert runs >= REQUIRED, (f"{mutant.pass_name} ({mutant.bug}): caught in {runs} of "
                              f"{len(SEEDS)} runs")
