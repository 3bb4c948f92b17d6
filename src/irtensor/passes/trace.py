"""The rewrite trace: which pattern of which pass turned which op into what.

Every pattern-driven pass of irtensor applies its patterns through `rewrite_module`
here. While a `RewriteTrace` is active (`with trace.active():`, which `Pipeline` does
under `Instrumentation(trace_rewrites=True)` or `irtensor-opt --trace-rewrites`), each
successful pattern application is recorded as a `RewriteEvent`: the pass, the pattern's
name, the op before (as text), the ops the pattern inserted, and the op's location. With
no trace active the patterns run unwrapped, so tracing costs nothing when it is off.

The ops a pattern inserts are seen through xDSL's rewriter listener
(`operation_insertion_handler`), so a pattern needs no change to be traced.
"""

from __future__ import annotations

import contextlib
import io
from collections import Counter
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field

from xdsl.dialects.builtin import FileLineColLoc, ModuleOp, UnknownLoc
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.printer import Printer
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from irtensor import ir

MAX_OP_TEXT = 300  # an op's text in an event is cut after this many characters


@dataclass(frozen=True)
class RewriteEvent:
    """One pattern application."""

    pass_name: str
    pattern: str
    before: str
    after: tuple[str, ...]
    location: str

    def __str__(self) -> str:
        made = [f"  + {a}" for a in self.after] or ["  (replaced by values that existed)"]
        return "\n".join([f"[{self.pass_name}] {self.pattern} at {self.location}",
                          f"  - {self.before}", *made])


@dataclass
class RewriteTrace:
    """The events of one pipeline run, in order."""

    events: list[RewriteEvent] = field(default_factory=list)
    current_pass: str = ""

    def fired(self, pass_name: str | None = None) -> Counter[str]:
        """How often each pattern fired (in one pass, or in all)."""
        return Counter(e.pattern for e in self.events
                       if pass_name is None or e.pass_name == pass_name)

    def made(self, op_name: str) -> list[RewriteEvent]:
        """The events whose pattern inserted an op named `op_name` ("which rewrite made it")."""
        return [e for e in self.events if any(_op_name(a) == op_name for a in e.after)]

    def text(self) -> str:
        return "\n".join(str(e) for e in self.events) + ("\n" if self.events else "")


_ACTIVE: ContextVar[RewriteTrace | None] = ContextVar("irtensor_rewrite_trace", default=None)


@contextlib.contextmanager
def active(trace: RewriteTrace | None = None) -> Iterator[RewriteTrace]:
    """Record the pattern applications of the passes run inside the block."""
    trace = trace if trace is not None else RewriteTrace()
    token = _ACTIVE.set(trace)
    try:
        yield trace
    finally:
        _ACTIVE.reset(token)


def current() -> RewriteTrace | None:
    return _ACTIVE.get()


def ops_text(ops: Sequence[Operation]) -> tuple[str, ...]:
    """One line per op as printed together (so the values they share keep one name); a
    region's body is left out."""
    stream = io.StringIO()
    printer = Printer(stream=stream)
    lines = []
    for op in ops:
        stream.seek(0)
        stream.truncate()
        printer.print_op(op)
        first = stream.getvalue().strip().splitlines()[0]
        lines.append(first if len(first) <= MAX_OP_TEXT else first[: MAX_OP_TEXT - 3] + "...")
    return tuple(lines)


def _op_name(text: str) -> str:
    rhs = text.split(" = ", 1)[-1].strip()
    return rhs.split(" ", 1)[0].split("(", 1)[0].strip('"')


@dataclass(eq=False)
class TracedPattern(RewritePattern):
    """`inner`, recording each application in `trace`."""

    inner: RewritePattern
    trace: RewriteTrace

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        (before,), location = ops_text([op]), ir.location(op)
        inserted: list[Operation] = []
        handler = inserted.append
        rewriter.operation_insertion_handler.append(handler)
        done_before = rewriter.has_done_action
        try:
            self.inner.match_and_rewrite(op, rewriter)
        finally:
            rewriter.operation_insertion_handler.remove(handler)
        if rewriter.has_done_action and not done_before:
            after = ops_text([o for o in inserted if o.parent is not None])
            self.trace.events.append(RewriteEvent(
                self.trace.current_pass, type(self.inner).__name__, before, after, location))


@dataclass(eq=False)
class LocatedPattern(RewritePattern):
    """`inner`, giving the ops it inserts the location of the op it matched (where they
    have none), as MLIR's builders take the matched op's `loc`: an `ll.add` that
    decompose-hlops made from the `hl.sub` on line 3 says line 3, in errors and traces."""

    inner: RewritePattern

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        location = op.location
        if not isinstance(location, FileLineColLoc):
            self.inner.match_and_rewrite(op, rewriter)
            return

        def locate(inserted: Operation) -> None:
            if isinstance(inserted.location, UnknownLoc):
                inserted.location = location

        rewriter.operation_insertion_handler.append(locate)
        try:
            self.inner.match_and_rewrite(op, rewriter)
        finally:
            rewriter.operation_insertion_handler.remove(locate)


def op_types_of(pattern: RewritePattern) -> tuple[type[Operation], ...] | None:
    """The op classes `pattern` can rewrite (its class's `op_types`), None when it does
    not say (it is tried on every op)."""
    if isinstance(pattern, TracedPattern | LocatedPattern):
        return op_types_of(pattern.inner)
    return getattr(pattern, "op_types", None)


# Which of a pattern list's patterns each op class can match, by the lists' `op_types`: a
# pass makes its patterns anew for each module (a small kernel's convert-to-llvm spent a
# tenth of its time choosing them again).
_DISPATCH: dict[tuple[tuple[type[Operation], ...] | None, ...],
                dict[type[Operation], tuple[int, ...]]] = {}


class DispatchingApplier(RewritePattern):
    """xDSL's GreedyRewritePatternApplier (a trivially dead op is erased; else the
    patterns in order until one rewrites), trying on each op only the patterns whose
    `op_types` include its class, and every pattern that declares none. convert-to-llvm
    tried each of its 30 patterns on every op: 14 failed matches an op, a quarter of
    its time."""

    def __init__(self, patterns: Sequence[RewritePattern]):
        self.patterns = list(patterns)
        self._by_type: dict[type[Operation], list[RewritePattern]] = {}
        self._types = tuple(op_types_of(p) for p in self.patterns)
        self._indices = _DISPATCH.setdefault(self._types, {})

    def patterns_for(self, op_type: type[Operation]) -> list[RewritePattern]:
        found = self._by_type.get(op_type)
        if found is None:
            indices = self._indices.get(op_type)
            if indices is None:
                indices = self._indices[op_type] = tuple(
                    i for i, types in enumerate(self._types)
                    if types is None or issubclass(op_type, types))
            found = self._by_type[op_type] = [self.patterns[i] for i in indices]
        return found

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if is_trivially_dead(op):
            rewriter.erase(op)
            return
        for pattern in self.patterns_for(type(op)):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


def convert_module(module: ModuleOp, patterns: Sequence[RewritePattern]) -> None:
    """Apply `patterns` to each op of `module` once, as MLIR's dialect conversion does:
    the ops in `walk` order, each followed by the ops its rewrite inserted; a trivially
    dead op is erased instead. xDSL's walker (`rewrite_module`) then sweeps the whole
    module again until nothing changes, trying every pattern on every op the conversion
    made, a twelfth of convert-to-llvm's time. Ops a pattern left for a second look (none
    of convert-to-llvm's do) get xDSL's walker after all. Traced and located as
    `rewrite_module`."""
    listed = list(patterns)
    if (trace := current()) is not None:
        listed = [TracedPattern(p, trace) for p in listed]
    applier = DispatchingApplier(listed)
    located = LocatedPattern(applier)
    pending = list(module.walk())
    pending.reverse()
    inserted: list[Operation] = []
    declined: list[Operation] = []  # ops a pattern was tried on and left
    changed = False
    while pending:
        op = pending.pop()
        if op.parent is None or (not applier.patterns_for(type(op))
                                 and not is_trivially_dead(op)):
            continue
        rewriter = PatternRewriter(op)
        rewriter.operation_insertion_handler.append(inserted.append)
        located.match_and_rewrite(op, rewriter)
        changed |= rewriter.has_done_action
        if not rewriter.has_done_action:
            declined.append(op)
        pending.extend(reversed(inserted))
        inserted.clear()
    if changed and any(op.parent is not None for op in declined):
        rewrite_module(module, patterns)


def rewrite_each(ops: Sequence[Operation], pattern: RewritePattern) -> None:
    """Try `pattern` once on each of `ops` still in the IR, in order (traced and located as
    `rewrite_module`): where the ops a pattern can match are known, a walk of the whole
    module with xDSL's walker, which sweeps it again after any change, is wasted (a
    register-blocked kernel's module is thousands of ops; two such sweeps were about 6% of
    convert-to-llvm's time)."""
    located = _traced_and_located([pattern])
    for op in ops:
        if op.parent is not None:
            located.match_and_rewrite(op, PatternRewriter(op))


def rewrite_module(module: ModuleOp, patterns: Sequence[RewritePattern] | RewritePattern, *,
                   apply_recursively: bool = True) -> None:
    """Apply `patterns` greedily over `module` (xDSL's walker), traced when a trace is on;
    the ops a pattern inserts take the location of the op it matched."""
    listed = [patterns] if isinstance(patterns, RewritePattern) else list(patterns)
    walker = PatternRewriteWalker(_traced_and_located(listed),
                                  apply_recursively=apply_recursively)
    walker.rewrite_module(module)


def _traced_and_located(patterns: Sequence[RewritePattern]) -> RewritePattern:
    """`patterns` as one pattern: each traced when a trace is on, the ops they insert
    located at the op they matched."""
    listed = list(patterns)
    if (trace := current()) is not None:
        listed = [TracedPattern(p, trace) for p in listed]
    return LocatedPattern(listed[0] if len(listed) == 1 else DispatchingApplier(listed))
