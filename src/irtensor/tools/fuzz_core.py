"""The pieces of `irtensor fuzz` its workers and reports share: outcomes, the run's
configuration and report, and running one program on a device."""

from __future__ import annotations

import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from irtensor import interp
from irtensor.pipeline import Pipeline, PipelineError
from irtensor.testing import Program

DEVICES = ("interp", "llvm", "opencl")
SHRINK_SECONDS = 60.0  # per failure; then the smallest program found so far
TIMEOUT = 60.0  # per device run; programs take well under a second


@dataclass(frozen=True)
class Outcome:
    """What one program did. `signature` tells failures apart: the same bug, the same
    signature (kind, where, and the dtype involved)."""

    kind: str  # "passed", "mismatch", "interpreter" (vs numpy) or "error"
    signature: tuple[str, ...] = ()
    detail: str = ""

    @property
    def label(self) -> str:
        return " ".join(self.signature)


PASSED = Outcome("passed")


def run_device(program: Program, device: str) -> list[np.ndarray]:
    """What realizing on `device` runs: `default-<device>`, then the device's runtime
    (for interp: the kernels, interpreted), as `irtensor-opt --run --device` does."""
    from irtensor.tools.opt import run_compiled

    if device != "interp":
        return run_compiled(program.module, list(program.inputs), "main", device)
    lowered = program.module.clone()
    Pipeline("default-interp").run(lowered)
    return interp.run(lowered, list(program.inputs))


def error_outcome(stage: str, e: BaseException) -> Outcome:
    """An exception as an outcome, told apart by its type and where it was raised: the
    failing pass of a PipelineError, else the innermost irtensor function."""
    cause = e.__cause__ if isinstance(e, PipelineError) and e.__cause__ else e
    where = ""
    for frame in traceback.extract_tb(cause.__traceback__):
        if "irtensor" in frame.filename:
            where = f"{Path(frame.filename).stem}.{frame.name}"
    message = str(e).splitlines()[0] if str(e) else ""
    if isinstance(e, PipelineError) and message.startswith(("pass '", "IR after pass '")):
        where = "pass " + message.split("'")[1]
    return Outcome("error", ("error", stage, type(cause).__name__, where),
                   f"{type(e).__name__}: {message}")


Runner = Callable[[Program], list[np.ndarray]]


@dataclass
class Config:
    """One fuzzing run. `timeout` 0 runs the device in this process (no `Worker`)."""

    device: str = "llvm"
    n: int = 100
    seed: int = 0
    max_ops: int = 8
    shrink: bool = True
    shrink_seconds: float = SHRINK_SECONDS
    timeout: float = TIMEOUT
    plugins: tuple[str, ...] = ()
    progress: int = 0
    out: Path | None = None


@dataclass
class Failure:
    outcome: Outcome
    first: int  # index of the first program that failed so
    program: Program
    count: int = 1
    shrunk: Program | None = None
    shrunk_outcome: Outcome | None = None
    folder: Path | None = None  # where its reproducer is


@dataclass
class Report:
    config: Config
    generated: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    failures: dict[tuple[str, ...], Failure] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.generated > 0 and self.kinds["passed"] == self.generated


