"""Run the lit + FileCheck suite in tests/filecheck, in a few pytest tests.

The suite's files are dealt round-robin into GROUPS pytest tests, so that pytest's
workers (pytest-xdist) share them out; each runs lit on its files.

lit is started with the Python that runs pytest, so `irtensor-opt` and
`filecheck` come from the same environment (tests/filecheck/lit.cfg.py puts
that interpreter's bin folder first on PATH). The test fails with lit's output
when any lit test fails, and also when lit ran no test at all.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

SUITE = Path(__file__).parent / "filecheck"

# lit's verbose result lines: "PASS: irtensor :: cli/run.mlir (3 of 27)".
RESULT = re.compile(r"^(?P<code>[A-Z]+): irtensor :: (?P<test>\S+)", re.MULTILINE)
# UNSUPPORTED: a test whose REQUIRES (opencl, mlir-opt) this machine lacks; CI sets
# IRTENSOR_REQUIRE_OPENCL=1 and IRTENSOR_REQUIRE_MLIR=1, under which lit.cfg.py refuses to
# run without them instead.
GOOD = {"PASS", "XFAIL", "UNSUPPORTED"}

# `python -m lit` needs a lit with `lit/__main__.py` (lit 23.1 has none), so
# call lit's entry point directly.
LIT = "import sys; from lit.main import main; sys.exit(main())"


GROUPS = 8
FILES = sorted(p for p in SUITE.rglob("*.mlir")
               if "Inputs" not in p.parts and "Output" not in p.parts)


def test_the_groups_cover_the_suite() -> None:
    dealt = [f for g in range(GROUPS) for f in FILES[g::GROUPS]]
    assert len(FILES) > 40 and sorted(dealt) == FILES


@pytest.mark.parametrize("group", range(GROUPS))
def test_lit_suite(group: int) -> None:
    files = [str(f) for f in FILES[group::GROUPS]]
    proc = subprocess.run(
        [sys.executable, "-c", LIT, "-v", *files],
        capture_output=True,
        text=True,
        timeout=2400,
        check=False,
    )
    output = f"{proc.stdout}\n{proc.stderr}"
    results = [(m["code"], m["test"]) for m in RESULT.finditer(proc.stdout)]
    bad = [f"{code}: {test}" for code, test in results if code not in GOOD]
    assert len(results) == len(files), f"lit ran {len(results)} of {len(files)} tests:\n{output}"
    assert proc.returncode == 0 and not bad, (
        f"lit tests failed ({', '.join(bad) or f'exit code {proc.returncode}'}):\n{output}"
    )
