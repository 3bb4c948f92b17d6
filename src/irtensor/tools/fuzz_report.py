"""What `irtensor fuzz` prints and writes: the counts, and a reproducer per failure.

A reproducer is a folder: `repro.mlir` (the program, its first lines the
commands that run it), its inputs `in0.npy` ... and the interpreter's results
`expected0.npy` ... . `irtensor-opt repro.mlir --run --device D --input ...`
runs it as the fuzzer did.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from irtensor import interp, ir
from irtensor.tools.fuzz_core import Config, Failure, Outcome, Report


def repro_command(config: Config, mlir: Path, inputs: Sequence[Path]) -> str:
    """The irtensor-opt line that runs the reproducer on the device (on interp, through
    the kernels it runs: a plain --run interprets the hl program itself)."""
    plugins = "".join(f" --load-pass-plugin {p}" for p in config.plugins)
    passes = " -p default-interp" if config.device == "interp" else ""
    given = "".join(f" --input {i}={path}" for i, path in enumerate(inputs))
    return f"irtensor-opt {mlir}{plugins}{passes} --run --device {config.device}{given}"


def folder_for(out: Path, number: int, outcome: Outcome) -> Path:
    """out/NN-<the signature in letters, digits, dots and dashes>."""
    return out / f"{number:02d}-{re.sub(r'[^A-Za-z0-9.]+', '-', outcome.label).strip('-')[:60]}"


def write_reproducer(failure: Failure, config: Config, folder: Path) -> tuple[Path, str]:
    """The reproducer of `failure` (shrunk, if it is) in `folder`; returns its .mlir file
    and the command that runs it."""
    program = failure.shrunk or failure.program
    outcome = failure.shrunk_outcome or failure.outcome
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
    command = repro_command(config, mlir, inputs)
    given = "".join(f" --input {i}={p}" for i, p in enumerate(inputs))
    header = (f"// {outcome.label}: {outcome.detail}\n"
              f"// {command}\n"
              f"// The interpreter's results: irtensor-opt {mlir} --run{given} "
              f"(also in expected*.npy)\n")
    mlir.write_text(header + ir.to_text(program.module))
    return mlir, command


def summary(report: Report) -> str:
    k, config = report.kinds, report.config
    lines = [f"irtensor fuzz: device {config.device}, seed {config.seed}: {report.generated} "
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
    """Per failure: what differed, the (shrunk) program and its reproducer."""
    text = []
    for number, failure in enumerate(report.failures.values(), start=1):
        if failure.folder is None:
            failure.folder = folder_for(out, number, failure.outcome)
        mlir, command = write_reproducer(failure, report.config, failure.folder)
        program = failure.shrunk or failure.program
        outcome = failure.shrunk_outcome or failure.outcome
        state = ("shrunk" if failure.shrunk is not None else
                 "as drawn (shrinking did not reproduce it)" if report.config.shrink
                 and outcome.signature[:3] != ("error", "device", "timeout") else "as drawn")
        text.append(f"\n--- failure {number}: {failure.outcome.label} ({failure.count} "
                    f"programs, first #{failure.first})\n{outcome.detail}\n"
                    f"program, {state}:\n{ir.to_text(program.module)}"
                    f"reproducer: {mlir}\n  {command}\n")
    return "".join(text)
