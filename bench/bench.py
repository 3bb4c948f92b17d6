#!/usr/bin/env python
"""The same as `irtensor bench` (the suite lives in the package, `irtensor.bench`);
kept so that `python bench/bench.py ...` still works. See bench/README.md."""

import sys
from pathlib import Path

try:
    from irtensor.bench import main
except ImportError:  # run from a checkout that is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    from irtensor.bench import main

if __name__ == "__main__":
    sys.exit(main(prog="bench/bench.py"))
