"""`irtensor fuzz`: random programs through a device's pipeline, against the interpreter.

    irtensor fuzz --device llvm --n 1000 --seed 0

Each program comes from `irtensor.testing.programs` (every element type, every
hl op family, size-0 and size-1 axes, edge-value inputs). The interpreter
runs it as written (each float op checked against numpy in float64 by
`fuzz_numpy`); the device runs what realizing a tensor on it runs (its
`default-<device>` pipeline, then its runtime); `fuzz_compare` says whether
they agree. All N programs run; the counts come at the end. Each distinct
failure is then shrunk by hypothesis (a second run over the same seed, which
draws the same programs, now stopping at that failure) and written out as a
reproducer `irtensor-opt` runs. The same seed draws the same programs.

Exit status: 0 when every program passed, 1 when any mismatched or failed
with an error, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import HypothesisWarning
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Region

from irtensor import dtypes, interp, ir
from irtensor.dialects._base import element_of
from irtensor.pipeline import Pipeline, PipelineError
from irtensor.testing import ALL_HL_FAMILIES, Program, programs
from irtensor.tools.fuzz_compare import Expected, compare, expected
from irtensor.tools.fuzz_numpy import check_interpreter, returning_everything

DEVICES = ("interp", "llvm", "opencl")
SHRINK_SECONDS = 60.0  # per failure; then the smallest program found so far


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


def strategy(max_ops: int) -> st.SearchStrategy[Program]:
    return programs(dialect="hl", dtypes=dtypes.ELEMENT_TYPES, ops=ALL_HL_FAMILIES,
                    max_ops=max_ops, max_results=3, special=0.05, big=0.1)


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


def check_program(program: Program, device: str) -> Outcome:
    try:
        ir.verify(program.module)
    except ir.IRError as e:
        return error_outcome("generator", e)
    try:
        want = expected(program.module, program.inputs)
        problem = check_interpreter(program.module, program.inputs)
    except Exception as e:
        return error_outcome("interpreter", e)
    if problem is not None:
        op, _, types = problem.partition(" on ")
        elements = sorted(set(re.findall(r"x?([a-z]+\d+)>", types.split(":")[0])))
        return Outcome("interpreter", ("interpreter", op, ",".join(elements)), problem)
    try:
        got = run_device(program, device)
    except Exception as e:
        return error_outcome("pipeline" if isinstance(e, PipelineError) else "device", e)
    if (problem := compare(got, want)) is not None:
        return Outcome("mismatch", ("mismatch", *culprit(program, device)), problem)
    return PASSED


def culprit(program: Program, device: str) -> tuple[str, str]:
    """The first op whose value differs when the device returns every value, and its
    element type (not its shape: one bug, one signature), or ("fused", the results'
    element types) when the difference goes away unfused."""
    traced, values = returning_everything(program.module)
    everything = Program(traced, program.inputs)
    try:
        want: Expected = expected(traced, program.inputs)
        got = run_device(everything, device)
    except Exception:
        return "unknown", ""
    for value, g, w, noise, unstable in zip(values, got, want.values, want.noise,
                                            want.unstable, strict=True):
        if compare([g], Expected([w], [noise], [unstable])) is not None:
            return value.owner.name, str(element_of(value))  # type: ignore[union-attr]
    returned = program.module.body.block.first_op.body.block.last_op.operands  # type: ignore[union-attr]
    return "fused", ",".join(sorted({str(element_of(v)) for v in returned}))


@dataclass
class Failure:
    outcome: Outcome
    first: int  # index of the first program that failed so
    program: Program
    count: int = 1
    shrunk: Program | None = None
    folder: Path | None = None  # where its reproducer is


@dataclass
class Report:
    device: str
    seed: int
    generated: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    failures: dict[tuple[str, ...], Failure] = field(default_factory=dict)
    seconds: float = 0.0
    shrink: bool = True

    @property
    def ok(self) -> bool:
        return self.generated > 0 and self.kinds["passed"] == self.generated


class _Found(Exception):
    """Raised inside the replay to make hypothesis shrink the failure it stands for."""


class _OutOfTime(BaseException):
    """Raised inside the replay when shrinking has had its time."""


def explore(n: int, seed: int, max_ops: int, body: Callable[[Program], None],
            shrink: bool = False) -> None:
    """Call `body` on the programs seed `seed` draws, up to `n` of them; with `shrink`, a
    `_Found` from `body` makes hypothesis shrink that program first."""
    phases = (Phase.generate, Phase.shrink) if shrink else (Phase.generate,)

    @hypothesis_seed(seed)
    @settings(max_examples=n, database=None, phases=phases, deadline=None,
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
              report_multiple_bugs=False)
    @given(strategy(max_ops))
    def run(program: Program) -> None:
        body(program)

    with warnings.catch_warnings():  # hypothesis warns that big programs print long
        warnings.simplefilter("ignore", HypothesisWarning)
        run()


def fuzz(device: str, n: int, seed: int, max_ops: int = 8, shrink: bool = True,
         progress: int = 0, stream: TextIO = sys.stderr, out: Path | None = None,
         shrink_seconds: float = SHRINK_SECONDS) -> Report:
    """Check `n` programs on `device`; then shrink the first program of each failure for
    up to `shrink_seconds`. With `out`, each new failure is written there as it is found
    (and again once shrunk)."""
    report = Report(device, seed, shrink=shrink)
    start = time.perf_counter()

    def body(program: Program) -> None:
        outcome = check_program(program, device)
        report.kinds[outcome.kind] += 1
        if outcome.kind != "passed":
            if (known := report.failures.get(outcome.signature)) is not None:
                known.count += 1
            else:
                failure = report.failures[outcome.signature] = Failure(
                    outcome, report.generated, program)
                if out is not None:
                    failure.folder = folder_for(out, len(report.failures), outcome)
                    mlir, _ = write_reproducer(failure, device, failure.folder)
                    stream.write(f"new failure at program #{report.generated}: "
                                 f"{outcome.label}: {mlir}\n")
        report.generated += 1
        if progress and report.generated % progress == 0:
            stream.write(f"{report.generated} programs, {time.perf_counter() - start:.0f} s: "
                         f"{dict(report.kinds)}\n")
            stream.flush()

    explore(n, seed, max_ops, body)
    report.seconds = time.perf_counter() - start
    if shrink:
        for failure in report.failures.values():
            failure.shrunk = shrunk(failure, device, n, seed, max_ops, shrink_seconds)
    return report


def shrunk(failure: Failure, device: str, n: int, seed: int, max_ops: int,
           seconds: float) -> Program | None:
    """The smallest program hypothesis finds in `seconds` that fails as `failure` does,
    pruned. The replay draws what the first run drew, so the programs before the failing
    one are skipped."""
    calls, smallest = 0, []
    deadline = time.perf_counter() + seconds

    def body(program: Program) -> None:
        nonlocal calls
        calls += 1
        if calls <= failure.first:
            return
        if smallest and time.perf_counter() > deadline:
            raise _OutOfTime
        if check_program(program, device).signature == failure.outcome.signature:
            smallest[:] = [program]
            raise _Found

    # _Found (or a flaky failure) ends in an exception hypothesis raises; _OutOfTime is no
    # Exception, so hypothesis stops at once and lets it through.
    with contextlib.suppress(Exception, _OutOfTime):
        explore(n, seed, max_ops, body, shrink=True)
    if not smallest:
        return None
    pruned = prune(smallest[0])
    return pruned if check_program(pruned, device).signature == failure.outcome.signature \
        else smallest[0]


def prune(program: Program) -> Program:
    """`program` without ops nothing uses and without arguments nothing reads (hypothesis
    shrinks the choices that drew a program, which leaves such leftovers)."""
    module = program.module.clone()
    main = module.body.block.first_op
    assert isinstance(main, func.FuncOp)
    block = main.body.block
    for op in reversed(list(block.ops)):
        if not isinstance(op, func.ReturnOp) and all(not r.uses for r in op.results):
            block.erase_op(op)
    inputs = list(program.inputs)
    for arg in reversed(block.args):
        if not arg.uses:
            del inputs[arg.index]
            block.erase_arg(arg)
    main.body.detach_block(block)
    results = [v.type for v in block.last_op.operands]  # type: ignore[union-attr]
    main = func.FuncOp("main", ([a.type for a in block.args], results), Region(block))
    return Program(ModuleOp([main]), inputs)


# --------------------------------------------------------------------------- reproducers


def repro_command(device: str, mlir: Path, inputs: Sequence[Path]) -> str:
    """The irtensor-opt line that runs the reproducer on `device` (on interp, through the
    kernels it runs: irtensor-opt's plain --run interprets the hl program itself)."""
    passes = " -p default-interp" if device == "interp" else ""
    given = " ".join(f"--input {i}={path}" for i, path in enumerate(inputs))
    return f"irtensor-opt {mlir}{passes} --run --device {device} {given}".rstrip()


def folder_for(out: Path, number: int, outcome: Outcome) -> Path:
    """out/NN-<the signature in letters, digits, dots and dashes>."""
    return out / f"{number:02d}-{re.sub(r'[^A-Za-z0-9.]+', '-', outcome.label).strip('-')[:60]}"


def write_reproducer(failure: Failure, device: str, folder: Path) -> tuple[Path, str]:
    """repro.mlir, its inputs in0.npy ... and the interpreter's results expected0.npy ...;
    returns the .mlir file and the command that runs it."""
    program = failure.shrunk or failure.program
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.npy"):  # an earlier, unshrunk version's
        stale.unlink()
    inputs = []
    for i, x in enumerate(program.inputs):
        np.save(folder / f"in{i}.npy", x)
        inputs.append(folder / f"in{i}.npy")
    try:
        for i, r in enumerate(interp.run(program.module, list(program.inputs))):
            np.save(folder / f"expected{i}.npy", r)
    except Exception:
        pass  # the interpreter's own failure is what reproduces
    mlir = folder / "repro.mlir"
    command = repro_command(device, mlir, inputs)
    header = (f"// {failure.outcome.label}: {failure.outcome.detail}\n"
              f"// {command}\n"
              f"// The interpreter's results: irtensor-opt {mlir} --run "
              f"{' '.join(f'--input {i}={p}' for i, p in enumerate(inputs))} "
              f"(also in expected*.npy)\n")
    mlir.write_text(header + ir.to_text(program.module))
    return mlir, command


def summary(report: Report) -> str:
    k = report.kinds
    lines = [f"irtensor fuzz: device {report.device}, seed {report.seed}: {report.generated} "
             f"programs in {report.seconds:.1f} s",
             f"  generated     {report.generated}",
             f"  passed        {k['passed']}",
             f"  mismatched    {k['mismatch']}",
             f"  interpreter   {k['interpreter']}  (the interpreter against numpy in float64)",
             f"  errors        {k['error']}"]
    for failure in sorted(report.failures.values(), key=lambda f: (f.outcome.kind, -f.count)):
        lines.append(f"    {failure.count:5d}  {failure.outcome.label}  (first: program "
                     f"#{failure.first})")
    return "\n".join(lines) + "\n"


def details(report: Report, out: Path) -> str:
    """Per failure: what differed, the shrunk program and its reproducer."""
    text = []
    for number, failure in enumerate(report.failures.values(), start=1):
        if failure.folder is None:
            failure.folder = folder_for(out, number, failure.outcome)
        mlir, command = write_reproducer(failure, report.device, failure.folder)
        program = failure.shrunk or failure.program
        state = ("shrunk" if failure.shrunk is not None else
                 "as drawn (shrinking did not reproduce it)" if report.shrink else "as drawn")
        text.append(f"\n--- failure {number}: {failure.outcome.label} ({failure.count} "
                    f"programs, first #{failure.first})\n"
                    f"{check_program(program, report.device).detail or failure.outcome.detail}\n"
                    f"program, {state}:\n{ir.to_text(program.module)}"
                    f"reproducer: {mlir}\n  {command}\n")
    return "".join(text)


# --------------------------------------------------------------------------- command line


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="irtensor fuzz",
        description="Random programs through a device's pipeline, checked against the "
                    "interpreter (and the interpreter against numpy in float64).")
    p.add_argument("--device", default="llvm", choices=DEVICES,
                   help="where programs run: llvm, opencl, or interp (the kernels, interpreted)")
    p.add_argument("--n", type=int, default=100, help="how many programs (default 100)")
    p.add_argument("--seed", type=int, default=0, help="the seed: the same seed, the same programs")
    p.add_argument("--max-ops", type=int, default=8, help="ops drawn per program (default 8)")
    p.add_argument("--out", type=Path, default=Path("fuzz-failures"),
                   help="folder for reproducers (default ./fuzz-failures; written on failure)")
    p.add_argument("--no-shrink", action="store_true", help="report failures as drawn")
    p.add_argument("--shrink-seconds", type=float, default=SHRINK_SECONDS, metavar="S",
                   help=f"time to shrink each failure (default {SHRINK_SECONDS:g})")
    p.add_argument("--progress", type=int, default=0, metavar="K",
                   help="a line on stderr every K programs")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    for flag, value in (("--n", args.n), ("--max-ops", args.max_ops)):
        if value < 1:
            parser.error(f"{flag} must be at least 1, got {value}")
    if args.progress < 0 or args.shrink_seconds < 0:
        parser.error("--progress and --shrink-seconds must be 0 or more")
    if args.device == "opencl":
        from irtensor.runtime import opencl_device

        if (why := opencl_device.unavailable()) is not None:
            sys.stderr.write(f"error: --device opencl: no OpenCL device builds programs here: "
                             f"{why}\n")
            return 2
    report = fuzz(args.device, args.n, args.seed, args.max_ops, not args.no_shrink,
                  args.progress, out=args.out, shrink_seconds=args.shrink_seconds)
    sys.stdout.write(summary(report))
    if report.failures:
        sys.stdout.write(details(report, args.out))
    sys.stdout.flush()
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
