"""The Python examples run to the end and check themselves against numpy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
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
    for stage in ("hl", "ll", "kernel"):
        assert f"the MLP at stage {stage}" in done.stdout
    assert "as LLVM IR" in done.stdout and "define void" in done.stdout
    assert "*** llvm r_64_784_256" in done.stderr  # the DEBUG=2 kernel table
