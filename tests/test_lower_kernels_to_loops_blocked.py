"""lower-kernels-to-loops accumulates in blocks: the levels and fresh accumulators keep
every accumulator within BLOCK values, keep the results of any schedule in both
reduction schemes (with blocks of 2, so small programs have levels everywhere), and a
sum of 20M ones on LLVM comes out exact where one accumulator would stop at 2**24."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import f32, i1, i32

from irtensor import ir
from irtensor.dialects.kernel import KernelOp, ScheduleAttr
from irtensor.passes.loops import loop_parts
from irtensor.passes.loops.loop_parts import BLOCK, Level, Planned, fresh_after, levels_of
from irtensor.pipeline import Pipeline
from irtensor.testing import Program, programs
from test_lower_kernels_to_loops import check, functions, lower


@given(st.lists(st.integers(1, 5000), min_size=1, max_size=5))
def test_every_accumulator_adds_at_most_a_block(sizes: list[int]) -> None:
    """Levels cover each loop's trips (given the values each trip adds, the trips of the
    loops inside); between two fresh accumulators (and inside the innermost) the loops add
    at most BLOCK values, unless one loop alone has more."""
    loops: list[int] = []
    for i, size in enumerate(sizes):
        inner = math.prod(sizes[i + 1:])
        first = BLOCK // inner if 1 < inner <= BLOCK // 2 else BLOCK
        levels = levels_of(Planned(0), size, 1, inner)
        trips = [level.trips if isinstance(level, Level) else size for level in levels]
        assert (size <= first) == (levels == [Planned(0)])
        assert (max(trips) <= BLOCK or size <= BLOCK) and math.prod(trips) >= size
        loops.extend(trips)
    cuts = sorted(fresh_after(loops))
    for start, stop in zip([-1, *cuts], [*cuts, len(loops) - 1], strict=True):
        group = loops[start + 1: stop + 1]
        assert math.prod(group) <= BLOCK or len(group) == 1


def test_a_channel_loop_over_taps_keeps_one_accumulator_for_several_channels() -> None:
    """A 3 x 3 conv's 256 channels of 9 taps: 14 channels (126 values) per accumulator,
    in 19 blocks, not a fresh accumulator for each channel's 9 values."""
    levels = levels_of(Planned(3), 256, 1, 9)
    assert [(level.level, level.trips, level.step) for level in levels  # type: ignore[union-attr]
            ] == [(1, 19, 14), (0, 14, 1)]
    assert levels[1].span == 14 and levels[0].span == 14 * BLOCK  # type: ignore[union-attr]
    assert fresh_after([19, 14, 3, 3]) == {0}
    # a loop too short for a block of its own keeps a fresh accumulator per trip
    assert levels_of(Planned(3), 100, 1, 100) == [Planned(3)]
    assert fresh_after([100, 100]) == {0}


@pytest.fixture(params=[2, 8])
def tiny_blocks(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """Accumulators of at most 2 values: the small programs below get levels everywhere;
    of at most 8: a loop over at most 4 inner values gets levels of 8 // inner trips
    (lowered in this process: a compile worker has its own, unpatched, constants)."""
    monkeypatch.setenv("IRTENSOR_COMPILE_WORKERS", "0")
    monkeypatch.setattr(loop_parts, "BLOCK", request.param)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # same patch for all
@given(programs(dialect="hl", dtypes=(f32, i32, i1), max_ops=5, max_dim=4,
                ops=("reduce", "movement", "elementwise")), st.integers(0, 2**32 - 1))
def test_levels_in_any_schedule_keep_the_results(tiny_blocks: None, program: Program,
                                                 seed: int) -> None:
    """Blocked accumulation with random orders, tiles and register blocks, both schemes."""
    kernels = program.module.clone()
    Pipeline("hl-to-kernel").run(kernels)
    rng = np.random.default_rng(seed)
    for op in kernels.walk():
        if isinstance(op, KernelOp):
            order = [int(d) for d in rng.permutation(len(op.sizes))]
            tiles = [int(rng.integers(0, s + 1)) for s in op.sizes]
            op.schedule = ScheduleAttr(order, tiles, int(rng.integers(1, 3)),
                                       int(rng.integers(1, 3)), [])
    check(kernels, program.inputs)


CONSTANT_SUM = """
func.func @main() -> tensor<{cols}xf32> {{
  %r = kernel.kernel @ones() space [{rows}, {cols}] reduce [0] sum reads []
      writes affine_map<(d0, d1) -> (d1)>
      schedule <order {order}, tiles [0, 0], vector 1, unroll 1, parallel []>
      : () -> tensor<{cols}xf32> {{
    %c = arith.constant 1.0 : f32
    kernel.yield %c : f32
  }}
  func.return %r : tensor<{cols}xf32>
}}
"""


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("order", [[1, 0], [0, 1]])
def test_long_sums_on_llvm_keep_growing_past_two_to_the_24(fast: bool, order: list[int]
                                                          ) -> None:
    """20M f32 ones: an accumulator that adds them one by one stops at 2**24 = 16777216;
    blocked accumulation (registers with the reduction inner, memory with it outer,
    and the general scheme) gives 20M exactly."""
    from irtensor.passes.llvm import jit as llvm_jit

    module = ir.parse(CONSTANT_SUM.format(rows=20_000_000, cols=2, order=order))
    lowered = lower(module, fast)
    (name,) = [n for n in functions(lowered) if n.startswith("ones")]
    out = np.zeros(2, np.float32)
    llvm_jit.compile_module(lowered).function(name)(out, 0, 20_000_000 if order[0] == 0 else 2)
    np.testing.assert_array_equal(out, [20_000_000, 20_000_000])
