"""Run onnx's backend test cases (the shipped folders: pytorch-converted,
pytorch-operator, simple; `--real` adds the nine light models) on irtensor and print the
counts: passed, failed (wrong numbers), unsupported (an OnnxImportError: what irtensor
does not take, with its message), errors (anything else), skipped.

    python bench/onnx_backend_report.py [--device llvm] [--real] [-k REGEX]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import unittest
from collections import Counter

import onnx.backend.test

from irtensor.onnx.backend import IrtensorBackend

LIGHT = r"test_(bvlc_alexnet|densenet121|inception_v1|inception_v2|resnet50|shufflenet|" \
        r"squeezenet|vgg19|zfnet512)_"


class Result(unittest.TestResult):
    def __init__(self, verbose: bool) -> None:
        super().__init__()
        self.rows: list[tuple[str, str, str]] = []
        self.verbose = verbose

    def add(self, test: unittest.TestCase, kind: str, why: str) -> None:
        self.rows.append((test.id(), kind, why))
        if self.verbose:
            print(f"{kind:11} {test.id().rsplit('.', 1)[-1]}  {why}", flush=True)

    def addSuccess(self, test: unittest.TestCase) -> None:
        self.add(test, "passed", "")

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        self.add(test, "skipped", reason)

    def addFailure(self, test: unittest.TestCase, err: object) -> None:
        self.add(test, "failed", _last_line(err))

    def addError(self, test: unittest.TestCase, err: object) -> None:
        unsupported = "OnnxImportError" in repr(err[1])  # type: ignore[index]
        kind = "unsupported" if unsupported else "error"
        self.add(test, kind, _last_line(err))


def _last_line(err: object) -> str:
    exc = err[1]  # type: ignore[index]
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:200]


def suite(device: str, real: bool, pattern: str | None) -> unittest.TestSuite:
    IrtensorBackend.device = device
    tests = onnx.backend.test.BackendTest(IrtensorBackend, __name__)
    tests.include(pattern or r".*_cpu$")
    if not real:
        tests.exclude(LIGHT)
    loader = unittest.TestLoader()
    found = unittest.TestSuite()
    for case in tests.test_cases.values():
        found.addTests(loader.loadTestsFromTestCase(case))
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="llvm")
    p.add_argument("--real", action="store_true", help="also the nine light models")
    p.add_argument("-k", dest="pattern", help="a regex of the test names to run")
    p.add_argument("-v", "--verbose", action="store_true", help="a line per case as it runs")
    args = p.parse_args(argv)
    os.environ.setdefault("ONNX_HOME", tempfile.mkdtemp())  # where onnx writes dummy data
    result = Result(args.verbose)
    suite(args.device, args.real, args.pattern).run(result)
    counts = Counter(kind for _, kind, _ in result.rows)
    for name, kind, why in sorted(result.rows):
        if kind not in ("passed", "skipped") and not args.verbose:
            print(f"{kind:11} {name.rsplit('.', 1)[-1]}  {why}")
    print(", ".join(f"{counts[k]} {k}" for k in ("passed", "failed", "unsupported", "error",
                                                  "skipped")), f"of {len(result.rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
