"""bench/bench.py runs every case in --quick mode and each result agrees with numpy.

No time is asserted: the machines are noisy, and the figures are for people.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCH = Path(__file__).parent.parent / "bench" / "bench.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("irtensor_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("bench") / "quick.json"
    done = subprocess.run([sys.executable, str(BENCH), "--quick", "--json", str(out)],
                          capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(out.read_text())


def test_every_case_ran_and_agreed_with_numpy(quick_run: dict) -> None:
    bench = load_bench()
    want = [c.name for c in bench.cases(quick=True)]
    (run,) = quick_run["runs"]
    assert [r["name"] for r in run["cases"]] == want
    for r in run["cases"]:
        assert "error" not in r, r
        assert r["ok"], r["checks"]
        assert {"irtensor_first", "irtensor", "numpy"} <= set(r["checks"])
        assert all(c["ok"] for c in r["checks"].values()), r["checks"]
        for key in ("irtensor_first_ms", "irtensor_ms", "irtensor_realize_ms", "numpy_ms"):
            assert r[key] > 0, (r["name"], key)
        assert r["kernels"] >= 0
        assert r["first_call_stats"]["pipeline_runs"] >= 1


def test_the_quick_sizes_leave_out_the_big_matmul() -> None:
    bench = load_bench()
    quick = {c.name for c in bench.cases(quick=True)}
    full = {c.name for c in bench.cases(quick=False)}
    assert quick == full - {"matmul_big"}


def test_an_unknown_case_is_refused() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--cases", "nope"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "unknown case" in done.stderr


def test_check_flags_wrong_values_nan_and_shape() -> None:
    bench = load_bench()
    ref = np.array([1.0, 2.0])
    ones = np.ones(2)
    assert bench.check(np.float32([1, 2]), ref, ones, 1e-6)[0]
    ok, worst, message = bench.check(np.float32([1, 2.5]), ref, ones, 1e-6)
    assert not ok and worst == pytest.approx(0.5) and "1 of 2" in message
    assert not bench.check(np.float32([1, np.nan]), ref, ones, 1e-6)[0]
    assert not bench.check(np.float32([1, 2, 3]), ref, ones, 1e-6)[0]
    assert not bench.check(np.float64([1, 2]), ref, ones, 1e-6)[0]
