"""Run the lit + FileCheck suite in tests/filecheck as one pytest test.

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


def test_lit_suite() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", LIT, "-v", str(SUITE)],
        capture_output=True,
        text=True,
        timeout=2400,
        check=False,
    )
    output = f"{proc.stdout}\n{proc.stderr}"
    results = [(m["code"], m["test"]) for m in RESULT.finditer(proc.stdout)]
    bad = [f"{code}: {test}" for code, test in results if code not in GOOD]
    assert results, f"lit ran no tests in {SUITE}:\n{output}"
    assert proc.returncode == 0 and not bad, (
        f"lit tests failed ({', '.join(bad) or f'exit code {proc.returncode}'}):\n{output}"
    )
