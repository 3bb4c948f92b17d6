"""The Python examples run to the end and check themselves against numpy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))
# Compiling all of ResNet-50 takes minutes on two cores with a cold kernel cache; the
# same model runs in tests/test_onnx_models.py under IRTENSOR_ONNX_ALL=1.
SLOW = {"onnx_resnet.py"}


def example_param(script: Path) -> object:
    return pytest.param(script, id=script.name, marks=pytest.mark.skipif(
        script.name in SLOW and os.environ.get("IRTENSOR_ONNX_ALL") != "1",
        reason="compiles ResNet-50 (minutes); IRTENSOR_ONNX_ALL=1 runs it"))


@pytest.mark.parametrize("script", [example_param(s) for s in EXAMPLES])
def test_example_runs(script: Path) -> None:
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def test_there_are_python_examples() -> None:
    assert EXAMPLES


def test_the_demo_runs_both_models_on_every_device_and_matches_numpy() -> None:
    from conftest import opencl_unavailable

    done = subprocess.run([sys.executable, "-m", "irtensor.tools.cli", "demo", "--stages"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    devices = 2 if opencl_unavailable() else 3
    assert done.stdout.count("matches numpy") == 2 * devices, done.stdout
    summary = done.stdout.index("matches numpy")
    for name in ("MLP", "conv net"):
        for stage in ("hl", "ll", "kernel", "loops"):
            at = done.stdout.index(f"the {name} at stage {stage} (batch 4)")
            assert at > summary  # the summary comes first
    assert "as LLVM IR" in done.stdout and "define void" in done.stdout
    assert "*** llvm r_64_784_256" in done.stderr  # the DEBUG=2 kernel table


def test_bare_irtensor_and_help_print_usage_on_stdout() -> None:
    for argv in ([], ["--help"]):
        done = subprocess.run([sys.executable, "-m", "irtensor.tools.cli", *argv],
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0 and done.stdout.startswith("usage: irtensor demo")
        assert "irtensor viz" in done.stdout and not done.stderr
    done = subprocess.run([sys.executable, "-m", "irtensor.tools.cli", "bogus"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "unknown command 'bogus'" in done.stderr


def test_list_passes_gives_whole_descriptions() -> None:
    done = subprocess.run([sys.executable, "-m", "irtensor.tools.opt", "--list-passes"],
                          capture_output=True, text=True, timeout=60, check=False)
    line = next(x for x in done.stdout.splitlines() if x.strip().startswith("lower-to-opencl"))
    assert line.rstrip().endswith("for long reductions with few outputs).")
