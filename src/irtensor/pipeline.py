"""Running pass pipelines, with MLIR's instrumentation built in.

A `Pipeline` is a list of passes, built from a pipeline string in xDSL's
grammar (`"decompose-hlops,cse,fold-constants{fast-math=true}"`, named
pipelines expand in place) or from pass objects. Running it can print the IR
before or after chosen passes, after every pass or only after passes that
changed it, write one numbered file per stage into a folder, verify after each
pass (on by default, so a broken pass is caught by name), time each pass, and
on a failure write a reproducer: the IR the failing pass got and the pipeline
that remained.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from irtensor import ir, passes
from irtensor.passes import trace


class PipelineError(Exception):
    """A bad pipeline string, a pass that failed, or IR a pass left broken."""


@dataclass
class Instrumentation:
    """What to show and check while a pipeline runs (all off but verification)."""

    print_ir_after_all: bool = False
    print_ir_before: frozenset[str] = frozenset()
    print_ir_after: frozenset[str] = frozenset()
    print_ir_after_change: bool = False
    dump_dir: Path | None = None
    verify_each: bool = True
    timing: bool = False
    generic: bool = False
    trace_rewrites: bool = False  # record every pattern application (report.trace)
    pass_statistics: bool = False  # ops before/after and patterns fired, per pass
    stream: TextIO = field(default_factory=lambda: sys.stderr)


@dataclass
class PassRecord:
    """What one pass did: its pipeline text, wall time, whether the IR changed, and (with
    pass statistics) its ops before and after and how often each pattern fired."""

    spec: str
    seconds: float
    changed: bool | None  # None: not looked at (no instrumentation needed the IR text)
    ops_before: int = 0
    ops_after: int = 0
    fired: dict[str, int] = field(default_factory=dict)


@dataclass
class PipelineReport:
    records: list[PassRecord] = field(default_factory=list)
    trace: trace.RewriteTrace | None = None  # with Instrumentation(trace_rewrites=True)

    def statistics_table(self) -> str:
        """MLIR's -mlir-pass-statistics, in our terms: per pass, ops and patterns."""
        lines = ["===- pass statistics -===",
                 f"{'ops before':>10} {'ops after':>10}  pass: patterns fired"]
        for r in self.records:
            fired = ", ".join(f"{name} {n}" for name, n in sorted(r.fired.items()))
            lines.append(f"{r.ops_before:>10} {r.ops_after:>10}  {r.spec}"
                         + (f": {fired}" if fired else ""))
        return "\n".join(lines) + "\n"

    @property
    def total_seconds(self) -> float:
        return sum(r.seconds for r in self.records)

    def timing_table(self) -> str:
        total = self.total_seconds or 1e-12
        lines = ["===- pass timing -===", f"{'wall ms':>10}  {'share':>6}  pass"]
        for r in self.records:
            lines.append(f"{r.seconds * 1e3:10.3f}  {r.seconds / total:6.1%}  {r.spec}")
        lines.append(f"{self.total_seconds * 1e3:10.3f}  {1:6.1%}  total")
        return "\n".join(lines) + "\n"


def expand(spec: str, seen: tuple[str, ...] = ()) -> list[ArgSpec]:
    """Parse a pipeline string; names of registered pipelines expand to their passes."""
    try:
        elements = list(parse_pipeline(spec))
    except ArgSpecParseError as e:
        reason = str(e).strip().splitlines()[-1].strip()
        raise PipelineError(f"bad pipeline '{spec}': {reason}") from None
    out: list[ArgSpec] = []
    pipelines = passes.all_pipelines()
    for element in elements:
        if element.name in pipelines and not element.parameters:
            if element.name in seen:
                raise PipelineError(f"pipeline '{element.name}' includes itself")
            out.extend(expand(pipelines[element.name], (*seen, element.name)))
        else:
            out.append(element)
    return out


# Passes made from spec text, by class and text: xDSL's `from_spec` reads the class's type
# hints each time (a tenth of lowering a small kernel). Only frozen dataclasses are shared.
_MADE: dict[tuple[type[ModulePass], str], ModulePass] = {}


def instantiate(element: ArgSpec) -> ModulePass:
    try:
        cls = passes.get_pass(element.name)
    except passes.PassRegistryError as e:
        raise PipelineError(str(e)) from None
    key = (cls, str(element))
    if (made := _MADE.get(key)) is not None:
        return made
    try:
        made = cls.from_spec(element)
    except (ValueError, TypeError) as e:
        options = ", ".join(o for o, _, _ in passes.pass_options(cls)) or "none"
        raise PipelineError(f"pass '{element.name}': {e} (its options: {options})") from None
    params = getattr(cls, "__dataclass_params__", None)
    if params is not None and params.frozen:
        _MADE[key] = made
    return made


class Pipeline:
    """An ordered list of passes, run with `Instrumentation`."""

    def __init__(
        self,
        pipeline: str | Sequence[ModulePass | str],
        instrumentation: Instrumentation | None = None,
    ):
        if isinstance(pipeline, str):
            pipeline = [pipeline] if pipeline.strip() else []
        self.passes: list[ModulePass] = []
        for item in pipeline:
            if isinstance(item, str):
                self.passes.extend(instantiate(e) for e in expand(item))
            else:
                self.passes.append(item)
        self.instrumentation = instrumentation or Instrumentation()
        for option, names in (("print-ir-before", self.instrumentation.print_ir_before),
                              ("print-ir-after", self.instrumentation.print_ir_after)):
            for name in sorted(names):
                try:
                    passes.get_pass(name)
                except passes.PassRegistryError as e:
                    raise PipelineError(f"{option}: {e}") from None

    def __str__(self) -> str:
        return ",".join(str(p.spec()) for p in self.passes)

    def run(self, module: ModuleOp, ctx: Context | None = None) -> PipelineReport:
        ctx = ctx or ir.make_context()
        inst = self.instrumentation
        report = PipelineReport()
        text = ir.to_text(module, inst.generic) if self._needs_text() else ""
        if inst.dump_dir is not None:
            self._start_dump(inst.dump_dir, text)
        outer = trace.current()  # a trace of the caller's (irtensor.Context(trace=True))
        recording = outer or (trace.RewriteTrace()
                              if inst.trace_rewrites or inst.pass_statistics else None)
        scope = trace.active(recording) if recording is not None else contextlib.nullcontext()
        with scope, ir.collector_paused():
            for index, pass_ in enumerate(self.passes, start=1):
                text = self._run_pass(ctx, module, pass_, index, text, report, recording)
        report.trace = recording
        if inst.timing:
            inst.stream.write(report.timing_table())
        if inst.pass_statistics:
            inst.stream.write(report.statistics_table())
        if inst.trace_rewrites and recording is not None and outer is None:
            inst.stream.write("===- rewrite trace -===\n" + recording.text())
        return report

    def _run_pass(self, ctx: Context, module: ModuleOp, pass_: ModulePass, index: int,
                  text: str, report: PipelineReport, recording: trace.RewriteTrace | None
                  ) -> str:
        """Run one pass with the instrumentation around it; the IR text after it."""
        inst = self.instrumentation
        spec = str(pass_.spec())
        if pass_.name in inst.print_ir_before:
            self._print(f"IR Dump Before {spec}", text)
        events_before = len(recording.events) if recording is not None else 0
        if recording is not None:
            recording.current_pass = pass_.name
        ops_before = _count_ops(module) if inst.pass_statistics else 0
        start = time.perf_counter()
        try:
            pass_.apply(ctx, module)
        except passes.PassInputError as e:  # input the pass does not take: no bug
            self._write_reproducer(text, index)
            reason = str(e).removeprefix(f"{pass_.name}: ")
            raise PipelineError(f"pass '{spec}': {reason}") from None
        except Exception as e:
            self._write_reproducer(text, index)
            raise PipelineError(f"pass '{spec}' failed: {type(e).__name__}: {e}") from e
        seconds = time.perf_counter() - start
        if inst.verify_each:
            try:
                ir.verify(module)
            except ir.IRError as e:
                self._write_reproducer(text, index)
                raise PipelineError(f"IR after pass '{spec}' does not verify: {e.message}"
                                    ) from None
        # Printing the module costs about as much as the passes: only when something shows it.
        after = ir.to_text(module, inst.generic) if self._needs_text() else ""
        changed = after != text if self._needs_text() else None
        record = PassRecord(spec, seconds, changed)
        if inst.pass_statistics and recording is not None:
            record.ops_before, record.ops_after = ops_before, _count_ops(module)
            record.fired = dict(Counter(e.pattern for e in recording.events[events_before:]))
        report.records.append(record)
        self._show_after(pass_.name, spec, after, changed, index)
        return after

    def _needs_text(self) -> bool:
        """Whether the IR text is printed, dumped or compared: a failing pass's
        reproducer is only written into the dump folder."""
        inst = self.instrumentation
        return bool(inst.print_ir_after_all or inst.print_ir_before or inst.print_ir_after
                    or inst.print_ir_after_change or inst.dump_dir is not None)

    def _show_after(self, name: str, spec: str, text: str, changed: bool | None,
                    index: int) -> None:
        inst = self.instrumentation
        # --print-ir-after-change alone means "after every pass that changed the IR";
        # with after-all or after=NAMES it narrows those to the passes that changed it.
        chosen = inst.print_ir_after_all or name in inst.print_ir_after or (
            inst.print_ir_after_change and not inst.print_ir_after
        )
        if chosen and (changed or not inst.print_ir_after_change):
            self._print(f"IR Dump After {spec}", text)
        if inst.dump_dir is not None:
            write(inst.dump_dir / f"{index:02d}-{name}.mlir", text)

    def _print(self, title: str, text: str) -> None:
        self.instrumentation.stream.write(f"// -----// {title} //----- //\n{text}")

    def _write_reproducer(self, text: str, failing_index: int) -> None:
        """Keep the IR the failing pass received, with the rest of the pipeline to rerun it."""
        folder = self.instrumentation.dump_dir
        if folder is None:
            return
        rest = ",".join(str(p.spec()) for p in self.passes[failing_index - 1:])
        header = f"// irtensor-opt reproducer.mlir -p '{rest}'\n"
        write(folder / "reproducer.mlir", header + text)

    @staticmethod
    def _start_dump(folder: Path, text: str) -> None:
        """Make the stage folder, clear what an earlier run left there, write the input."""
        try:
            folder.mkdir(parents=True, exist_ok=True)
            stale = [*folder.glob("[0-9][0-9]-*.mlir"), folder / "reproducer.mlir"]
            for path in stale:  # a folder holds one run's stages
                path.unlink(missing_ok=True)
        except OSError as e:
            why = "it is a file, not a folder" if folder.is_file() else e.strerror
            raise PipelineError(f"cannot dump stages into {folder}: {why}") from None
        write(folder / "00-input.mlir", text)


def run_verified_at_end(pipeline: str | Sequence[ModulePass | str], module: ModuleOp,
                        verify_each: bool = False) -> None:
    """Run `pipeline` on `module` (a program's pipeline when it is realized, a device's on
    one kernel's module), verifying the result once instead of after every pass:
    verification was half of the pipeline's time on ResNet-50's program, and an eighth of
    a kernel's compile time. When the result does not verify, or a pass fails, the
    pipeline runs again on a copy of the input with verification after each pass, so the
    error names the pass that broke the IR, as a per-pass check would have (a pass that
    failed on IR an earlier pass broke is not blamed for it)."""
    if verify_each:
        Pipeline(pipeline).run(module)
        return
    original = module.clone()
    unverified = Pipeline(pipeline, Instrumentation(verify_each=False))
    try:
        unverified.run(module)
    except PipelineError:
        Pipeline(unverified.passes).run(original)  # raises: naming the breaking pass first
        raise
    try:
        ir.verify(module)
    except ir.IRError as e:
        Pipeline(unverified.passes).run(original)  # raises, naming the pass
        raise PipelineError(f"IR after '{unverified}' does not verify: {e.message}") from None


def write(path: Path, text: str) -> None:
    """Write a stage file; a folder that cannot take it is the user's error, by name."""
    try:
        path.write_text(text)
    except OSError as e:
        raise PipelineError(f"cannot write {path}: {e.strerror}") from None


def _count_ops(module: ModuleOp) -> int:
    return sum(1 for _ in module.walk()) - 1  # the module itself is not counted
