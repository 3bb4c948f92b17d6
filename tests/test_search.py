"""Schedule search: candidates are valid schedules, the fastest is kept and remembered on
disk, the kept schedule computes the same numbers."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from irtensor.dialects.kernel import KernelOp, ScheduleAttr
from irtensor.ir import parse
from irtensor.pipeline import Pipeline
from irtensor.runtime import llvm_device, search

MATMUL = """
func.func @main(%a: tensor<24x40xf32>, %b: tensor<40x56xf32>) -> tensor<24x56xf32> {
  %0 = hl.matmul %a, %b : tensor<24x40xf32>, tensor<40x56xf32> -> tensor<24x56xf32>
  func.return %0 : tensor<24x56xf32>
}"""


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_CACHE_DIR", str(tmp_path))


def matmul_kernel() -> tuple[KernelOp, list[np.ndarray], np.ndarray]:
    module = parse(MATMUL)
    Pipeline("hl-to-kernel").run(module)
    (kernel,) = [k for k in module.walk() if isinstance(k, KernelOp)]
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((24, 40), np.float32), rng.standard_normal((40, 56), np.float32)]
    return kernel, args, np.empty((24, 56), np.float32)


def test_candidates_are_distinct_valid_schedules_the_models_first() -> None:
    kernel, _, _ = matmul_kernel()
    options = search.candidates(kernel, 12)
    assert options[0] == kernel.schedule
    assert 4 <= len(options) <= 12 and len(set(map(str, options))) == len(options)
    for schedule in options:
        assert kernel.schedule_problems(schedule) == []
    assert len(search.candidates(kernel, 3)) == 3


def test_a_blocked_kernel_tries_other_block_shapes_and_tiles() -> None:
    """A 1024^3 matmul's model schedule is a register block with a tiled column dim:
    the candidates after it keep its loop order and vary the block's rows, its vector
    width (rows doubled) and the tile (halved, doubled)."""
    text = MATMUL.replace("24x40", "1024x1024").replace("40x56", "1024x1024") \
        .replace("24x56", "1024x1024")
    module = parse(text)
    Pipeline("hl-to-kernel").run(module)
    (kernel,) = [k for k in module.walk() if isinstance(k, KernelOp)]
    base = kernel.schedule
    assert base is not None and base.unroll.data > 1 and any(base.tile_sizes)
    options = search.candidates(kernel, 64)
    blocks = {(s.vector.data, s.unroll.data, tuple(s.tile_sizes)) for s in options
              if s.order_dims == base.order_dims}
    v, tiles = base.vector.data, tuple(base.tile_sizes)
    assert {(v, rows, tiles) for rows in (4, 5, 6, 8)} <= blocks
    assert (v // 2, 2 * base.unroll.data, tiles) in blocks
    for i, tile in enumerate(tiles):
        if tile:
            halved = tuple(t // 2 if j == i else t for j, t in enumerate(tiles))
            assert (v, base.unroll.data, halved) in blocks
    for schedule in options:
        assert kernel.schedule_problems(schedule) == []


def test_the_fastest_is_kept_and_remembered(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    kernel, args, out = matmul_kernel()
    options = search.candidates(kernel, 6)
    fastest = options[3]
    timed: list[ScheduleAttr] = []

    def fake_timer(k: KernelOp, a: Sequence[np.ndarray], o: np.ndarray) -> float:
        assert k.schedule is not None and k is not kernel
        timed.append(k.schedule)
        return 1.0 if k.schedule == fastest else 2.0 + len(timed)

    monkeypatch.setattr(search, "PROGRESS_AFTER_S", 0.0)
    key = llvm_device.search_key(kernel)
    assert search.best_schedule(kernel, args, out, 6, fake_timer, key) == fastest
    assert timed == options
    assert "search r_24_40_56" in capsys.readouterr().err

    def no_timer(k: KernelOp, a: Sequence[np.ndarray], o: np.ndarray) -> float:
        raise AssertionError("a remembered search times nothing")

    assert search.best_schedule(kernel, args, out, 6, no_timer, key) == fastest


def test_a_searched_schedule_computes_the_same_numbers() -> None:
    kernel, args, out = matmul_kernel()
    chosen = llvm_device.search_schedule(kernel, args, out, 4)
    assert chosen is not None and chosen in search.candidates(kernel, 4)
    llvm_device.call(llvm_device.compile_kernel(search.with_schedule(kernel, chosen)), args, out)
    np.testing.assert_allclose(out, args[0] @ args[1], rtol=1e-5, atol=1e-4)
    assert search.COUNTS["schedules_timed"] >= 4


def test_search_width_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IRTENSOR_SEARCH", raising=False)
    assert search.search_width() == 0
    monkeypatch.setenv("IRTENSOR_SEARCH", "8")
    assert search.search_width() == 8


def test_device_llvm_searches_each_new_kernel_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from irtensor import Tensor

    monkeypatch.setenv("IRTENSOR_SEARCH", "3")
    before = dict(search.COUNTS)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((40, 24), np.float32), rng.standard_normal((24, 36), np.float32)
    x, w = Tensor(a, device="llvm"), Tensor(b, device="llvm")
    for _ in range(3):
        np.testing.assert_allclose((x @ w).numpy(), a @ b, rtol=1e-5, atol=1e-4)
    assert search.COUNTS["searches"] == before["searches"] + 1
    assert search.COUNTS["schedules_timed"] == before["schedules_timed"] + 3
