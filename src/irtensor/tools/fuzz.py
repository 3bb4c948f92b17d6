"""`irtensor fuzz`: random programs through a device's pipeline, against the interpreter.

    irtensor fuzz --device llvm --n 1000 --seed 0

Each program comes from `irtensor.testing.programs` (every element type, every
hl op family, size-0 and size-1 axes, edge-value inputs). The interpreter
runs it as written (each float op checked against numpy in float64 by
`fuzz_numpy`); the device runs what realizing a tensor on it runs (its
`default-<device>` pipeline, then its runtime), in a child process with a
timeout (`fuzz_worker`); `fuzz_compare` says whether they agree. All N
programs run; the counts come at the end. Each distinct failure is then
shrunk by hypothesis (a second run over the same seed, which draws the same
programs, now stopping at that failure) and written out as a reproducer
`irtensor-opt` runs (`fuzz_report`). The same seed draws the same programs.

Exit status: 0 when every program passed, 1 when any mismatched or failed
with an error, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import pkgutil
import re
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import HypothesisWarning
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Region

from irtensor import dtypes, ir
from irtensor.dialects._base import element_of
from irtensor.pipeline import PipelineError
from irtensor.testing import ALL_HL_FAMILIES, Program, programs
from irtensor.tools.fuzz_compare import Expected, compare, expected
from irtensor.tools.fuzz_core import (
    DEVICES,
    PASSED,
    SHRINK_SECONDS,
    TIMEOUT,
    Config,
    Failure,
    Outcome,
    Report,
    Runner,
    error_outcome,
    run_device,
)
from irtensor.tools.fuzz_numpy import check_interpreter, returning_everything
from irtensor.tools.fuzz_worker import DeviceFailure, Worker


def strategy(max_ops: int) -> st.SearchStrategy[Program]:
    return programs(dialect="hl", dtypes=dtypes.ELEMENT_TYPES, ops=ALL_HL_FAMILIES,
                    max_ops=max_ops, max_results=3, special=0.05, big=0.1)


def in_process(device: str) -> Runner:
    return lambda program: run_device(program, device)


def check_program(program: Program, run: Runner) -> Outcome:
    """What `program` does when `run` runs it (`in_process`, or a `Worker`)."""
    try:
        ir.verify(program.module)
    except ir.IRError as e:
        return error_outcome("generator", e)
    try:
        want = expected(program.module, program.inputs)
        check = check_interpreter(program.module, program.inputs)
    except Exception as e:
        return error_outcome("interpreter", e)
    want.overflow = check.overflow
    if (problem := check.problem) is not None:
        op, _, types = problem.partition(" on ")
        elements = sorted(set(re.findall(r"x?([a-z]+\d+)>", types.split(":")[0])))
        return Outcome("interpreter", ("interpreter", op, ",".join(elements)), problem)
    try:
        got = run(program)
    except DeviceFailure as e:
        return e.outcome  # type: ignore[no-any-return]
    except Exception as e:
        return error_outcome("pipeline" if isinstance(e, PipelineError) else "device", e)
    if (problem := compare(got, want)) is not None:
        return Outcome("mismatch", ("mismatch", *culprit(program, run, check.overflow)), problem)
    return PASSED


def culprit(program: Program, run: Runner, overflow: bool) -> tuple[str, str]:
    """The first op whose value differs when the device returns every value, and its
    element type (not its shape: one bug, one signature), or ("fused", the results'
    element types) when the difference goes away unfused."""
    traced, values = returning_everything(program.module)
    everything = Program(traced, program.inputs)
    try:
        want: Expected = expected(traced, program.inputs)
        got = run(everything)
    except Exception:
        return "unknown", ""
    for value, g, w, noise, unstable in zip(values, got, want.values, want.noise,
                                            want.unstable, strict=True):
        if compare([g], Expected([w], [noise], [unstable], overflow)) is not None:
            return value.owner.name, str(element_of(value))  # type: ignore[union-attr]
    returned = program.module.body.block.first_op.body.block.last_op.operands  # type: ignore[union-attr]
    return "fused", ",".join(sorted({str(element_of(v)) for v in returned}))


class _Found(Exception):
    """Raised inside the replay to make hypothesis shrink the failure it stands for."""


class _OutOfTime(BaseException):
    """Raised inside the replay when shrinking has had its time."""


def import_everything() -> None:
    """Import every irtensor module. Hypothesis draws some values from the literals in the
    source of the local modules loaded so far; with all of them loaded first, that pool is
    the same from the first program on, whatever the run then imports itself."""
    import irtensor

    for module in pkgutil.walk_packages(irtensor.__path__, "irtensor."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)


def explore(n: int, seed: int, max_ops: int, body: Callable[[Program], None],
            shrink: bool = False) -> None:
    """Call `body` on the programs seed `seed` draws, up to `n` of them; with `shrink`, a
    `_Found` from `body` makes hypothesis shrink that program first."""
    import_everything()
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


def fuzz(config: Config, stream: TextIO = sys.stderr) -> Report:
    """Check `config.n` programs; then shrink the first program of each failure. With
    `config.out`, each new failure is written there as it is found (and again once
    shrunk)."""
    from irtensor.tools.fuzz_report import folder_for, write_reproducer

    report = Report(config)
    start = time.perf_counter()
    worker = Worker(config.device, config.timeout, config.plugins) if config.timeout else None
    run = worker or in_process(config.device)

    def body(program: Program) -> None:
        outcome = check_program(program, run)
        report.kinds[outcome.kind] += 1
        if (known := report.failures.get(outcome.signature)) is not None:
            known.count += 1
        elif outcome.kind != "passed":
            failure = report.failures[outcome.signature] = Failure(
                outcome, report.generated, program)
            if config.out is not None:
                failure.folder = folder_for(config.out, len(report.failures), outcome)
                mlir, _ = write_reproducer(failure, config, failure.folder)
                stream.write(f"new failure at program #{report.generated}: "
                             f"{outcome.label}: {mlir}\n")
        report.generated += 1
        if config.progress and report.generated % config.progress == 0:
            stream.write(f"{report.generated} programs, {time.perf_counter() - start:.0f} s: "
                         f"{dict(report.kinds)}\n")
            stream.flush()

    try:
        explore(config.n, config.seed, config.max_ops, body)
        report.seconds = time.perf_counter() - start
        for failure in report.failures.values() if config.shrink else ():
            shrink(failure, config, run)
    finally:
        if worker is not None:
            worker.stop()
    return report


def shrink(failure: Failure, config: Config, run: Runner) -> None:
    """Set `failure.shrunk` to the smallest program hypothesis finds in
    `config.shrink_seconds` that fails as `failure` does, pruned. The replay draws what
    the first run drew, so the programs before the failing one are skipped. A hang is
    not shrunk: each try would take the whole timeout."""
    if failure.outcome.signature[:3] == ("error", "device", "timeout"):
        return
    calls, smallest = 0, []
    deadline = time.perf_counter() + config.shrink_seconds

    def body(program: Program) -> None:
        nonlocal calls
        calls += 1
        if calls <= failure.first:
            return
        if smallest and time.perf_counter() > deadline:
            raise _OutOfTime
        outcome = check_program(program, run)
        if outcome.signature == failure.outcome.signature:
            smallest[:] = [program, outcome]
            raise _Found

    # _Found (or a flaky failure) ends in an exception hypothesis raises; _OutOfTime is no
    # Exception, so hypothesis stops at once and lets it through.
    with contextlib.suppress(Exception, _OutOfTime):
        explore(config.n, config.seed, config.max_ops, body, shrink=True)
    if smallest:
        pruned = prune(smallest[0])
        outcome = check_program(pruned, run)
        failure.shrunk, failure.shrunk_outcome = ((pruned, outcome) if outcome.signature ==
                                                  failure.outcome.signature else smallest)


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
    p.add_argument("--timeout", type=float, default=TIMEOUT, metavar="S",
                   help=f"seconds a device run may take (default {TIMEOUT:g}); 0 runs the "
                        "device in this process, without a timeout")
    p.add_argument("--load-pass-plugin", action="append", default=[], metavar="FILE.py",
                   help="import a Python file first, here and where the device runs")
    p.add_argument("--progress", type=int, default=0, metavar="K",
                   help="a line on stderr every K programs")
    return p


def parse_config(argv: Sequence[str] | None) -> Config:
    parser = build_parser()
    args = parser.parse_args(argv)
    for flag, value in (("--n", args.n), ("--max-ops", args.max_ops)):
        if value < 1:
            parser.error(f"{flag} must be at least 1, got {value}")
    for flag, value in (("--progress", args.progress), ("--timeout", args.timeout),
                        ("--shrink-seconds", args.shrink_seconds)):
        if value < 0:
            parser.error(f"{flag} must be 0 or more, got {value:g}")
    return Config(args.device, args.n, args.seed, args.max_ops, not args.no_shrink,
                  args.shrink_seconds, args.timeout,
                  tuple(str(Path(p).resolve()) for p in args.load_pass_plugin), args.progress,
                  args.out)


def main(argv: Sequence[str] | None = None) -> int:
    from irtensor import passes
    from irtensor.tools.fuzz_report import details, summary

    config = parse_config(argv)
    try:
        for plugin in config.plugins:
            passes.load_pass_plugin(plugin)
    except passes.PassRegistryError as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    if config.device == "opencl":
        from irtensor.runtime import opencl_device

        if (why := opencl_device.unavailable()) is not None:
            sys.stderr.write(f"error: --device opencl: no OpenCL device builds programs here: "
                             f"{why}\n")
            return 2
    report = fuzz(config)
    sys.stdout.write(summary(report))
    if report.failures:
        sys.stdout.write(details(report, config.out or Path("fuzz-failures")))
    sys.stdout.flush()
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
