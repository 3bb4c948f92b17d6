"""`irtensor bench --quick` runs every case on every irtensor device this host can run,
and each result agrees with numpy.

No time is asserted: the machines are noisy, and the figures are for people.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from irtensor.bench import cases, frameworks, measure, report, runner
from irtensor.tools import cli

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("bench") / "quick.json"
    done = subprocess.run([sys.executable, "-m", "irtensor.bench", "--quick", "--no-peers",
                           "--warm-cache", "--json", str(out)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "| case" in done.stdout  # the table
    return json.loads(out.read_text())


def available_devices() -> list[str]:
    return [d for d in runner.DEVICES if frameworks.unavailable(d) is None]


def test_every_case_ran_on_every_device_and_agreed_with_numpy(quick_run: dict) -> None:
    want = [c.name for c in cases.cases(quick=True)]
    (run,) = quick_run["runs"]
    assert [r["name"] for r in run["cases"]] == want
    devices = available_devices()
    assert "llvm" in devices
    for r in run["cases"]:
        assert "error" not in r, r
        assert r["ok"], r["impls"]
        for device in devices:
            entry = r["impls"][f"irtensor-{device}"]
            assert "error" not in entry and "unavailable" not in entry, (r["name"], entry)
            assert entry["ok"], (r["name"], device, entry["checks"])
            assert set(entry["checks"]) == {"first", "warm"}
            assert entry["first_ms"] > 0 and entry["ms"] > 0 and entry["realize_ms"] > 0
            assert entry["kernels"] >= 0 and entry["kernels_compiled"] >= 0
            assert entry["first_call_stats"]["pipeline_runs"] >= 1
        numpy_entry = r["impls"]["numpy"]
        assert numpy_entry["ok"] and numpy_entry["ms"] > 0


def test_a_second_process_with_the_disk_caches_compiles_nothing(quick_run: dict) -> None:
    (run,) = quick_run["runs"]
    second = run["warm_cache"]
    assert [c["name"] for c in second["cases"]] == [c["name"] for c in run["cases"]]
    for case in second["cases"]:
        assert case["ok"], case
        for device in available_devices():
            entry = case["impls"][f"irtensor-{device}"]
            assert entry["ok"] and entry["first_ms"] > 0, (case["name"], entry)
            if second["cache_version"] == run["cache_version"]:  # no compiler edit between
                assert entry["first_call_stats"]["kernels_compiled"] == 0, (case["name"], entry)
    assert "second process, warm disk cache" in report.table(run)


def test_a_device_that_cannot_run_says_why(quick_run: dict) -> None:
    (run,) = quick_run["runs"]
    for device in runner.DEVICES:
        why = frameworks.unavailable(device)
        if why is None:
            continue
        for r in run["cases"]:
            assert r["impls"][f"irtensor-{device}"] == {"unavailable": why}


def test_run_case_reports_an_unavailable_device_and_keeps_the_others() -> None:
    (seed,) = [c for c in cases.cases(quick=True) if c.name == "seed_loop"]
    seed.reps = 2
    result = measure.run_case(seed, [frameworks.irtensor("llvm")],
                              {"irtensor-opencl": "no OpenCL platform"})
    assert result["ok"]
    assert result["impls"]["irtensor-opencl"] == {"unavailable": "no OpenCL platform"}
    assert result["impls"]["irtensor-llvm"]["ok"]
    assert result["impls"]["irtensor-llvm"]["kernels"] <= 1  # the loop is one program
    run = {"cases": [result], "import_ms": 1.0, "startup_ms": 1.0, "loadavg": [0, 0, 0],
           "threads": 1, "quick": True, "frameworks": {"numpy": np.__version__}}
    text = report.table(run)
    assert "unavailable: no OpenCL platform" in text
    assert "seed_loop" in text and "irtensor-llvm" in text


def test_an_implementation_that_raises_is_reported_and_fails_the_case() -> None:
    (seed,) = [c for c in cases.cases(quick=True) if c.name == "seed_loop"]
    seed.reps = 2
    broken = frameworks.irtensor("llvm")
    broken.name = "irtensor-broken"
    broken.zeros = lambda n: 1 / 0
    result = measure.run_case(seed, [frameworks.irtensor("llvm"), broken], {})
    assert not result["ok"]
    assert "ZeroDivisionError" in result["impls"]["irtensor-broken"]["error"]
    assert result["impls"]["irtensor-llvm"]["ok"] and result["impls"]["numpy"]["ok"]
    assert "ERROR ZeroDivisionError" in report.table(
        {"cases": [result], "import_ms": 1.0, "startup_ms": 1.0, "loadavg": [0, 0, 0]})


def test_a_slow_implementation_runs_fewer_repetitions() -> None:
    (seed,) = [c for c in cases.cases(quick=True) if c.name == "seed_loop"]
    seed.reps = 6
    slow = frameworks.irtensor("llvm")
    realize = slow.realize

    def sleepy(t: object) -> object:
        time.sleep(0.05)
        return realize(t)

    slow.realize = sleepy
    result = measure.run_case(seed, [slow], {}, budget=0.12)
    assert result["ok"]
    assert 1 <= result["impls"]["irtensor-llvm"]["reps"] <= 2
    assert result["impls"]["numpy"]["reps"] == 6
    table = report.table({"cases": [result], "import_ms": 1.0, "startup_ms": 1.0,
                          "loadavg": [0, 0, 0]})
    assert re.search(r"\(\d reps?\)", table)
    result = measure.run_case(seed, [slow], {}, budget=0.02)  # the first call is over it
    entry = result["impls"]["irtensor-llvm"]
    assert entry["reps"] == 1 and entry["ms"] == pytest.approx(entry["warm_s"] * 1e3)
    assert result["ok"]


@pytest.mark.parametrize("peer", ["torch", "tinygrad"])
def test_a_peer_that_imports_runs_the_same_functions(peer: str) -> None:
    pytest.importorskip(peer)
    fw = frameworks.torch(1) if peer == "torch" else frameworks.tinygrad()
    if fw is None:
        pytest.skip(f"{peer} imports but cannot run a program here")
    for case in cases.cases(quick=True):
        if case.name in ("seed_loop", "groupnorm", "conv2d", "mlp"):
            case.reps = 1
            result = measure.run_case(case, [fw], {})
            entry = result["impls"][peer]
            assert entry["ok"], (case.name, entry)


def test_the_quick_sizes_leave_out_the_big_matmul() -> None:
    quick = {c.name for c in cases.cases(quick=True)}
    full = {c.name for c in cases.cases(quick=False)}
    assert quick == full - {"matmul_big"}
    assert {"ew_chain", "ew_triad", "sum_all", "sum_axis1", "softmax", "matmul", "conv2d",
            "batchnorm", "groupnorm", "mlp", "seed_loop"} <= quick


def test_the_numpy_conv_matches_a_direct_convolution() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 5, 6))
    w = rng.standard_normal((4, 3, 3, 3))
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    direct = np.zeros((2, 4, 5, 6))
    for i in range(3):
        for j in range(3):
            direct += np.einsum("nchw,oc->nohw", padded[:, :, i:i + 5, j:j + 6], w[:, :, i, j])
    np.testing.assert_allclose(cases._conv_np([x, w]), direct, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("command", [
    [sys.executable, "-m", "irtensor.bench", "--cases", "nope"],
    [sys.executable, str(ROOT / "bench" / "bench.py"), "--cases", "nope"],
    [sys.executable, "-m", "irtensor.bench", "--devices", "cuda"],
])
def test_an_unknown_case_or_device_is_refused(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert "unknown" in done.stderr


def test_irtensor_bench_is_a_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["bench", "--help"])
    assert exit_.value.code == 0
    assert "--quick" in capsys.readouterr().out
    assert cli.main(["nope"]) == 2
    assert "irtensor bench" in capsys.readouterr().err


def test_check_flags_wrong_values_nan_and_shape() -> None:
    ref = np.array([1.0, 2.0])
    ones = np.ones(2)
    assert measure.check(np.float32([1, 2]), ref, ones, 1e-6)["ok"]
    bad = measure.check(np.float32([1, 2.5]), ref, ones, 1e-6)
    assert not bad["ok"] and bad["worst_error"] == pytest.approx(0.5)
    assert "1 of 2" in bad["message"]
    assert not measure.check(np.float32([1, np.nan]), ref, ones, 1e-6)["ok"]
    assert not measure.check(np.float32([1, 2, 3]), ref, ones, 1e-6)["ok"]
    assert not measure.check(np.float64([1, 2]), ref, ones, 1e-6)["ok"]
