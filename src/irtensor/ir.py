"""Reading, checking and writing irtensor IR.

`parse` records where each op came from (`file:line:col`), so verifier errors
point at the source line as parse errors do; `verify` reports the first bad op
as an `IRError` whose text is one line, `file:line:col: error: 'op' ...`.
"""

from __future__ import annotations

import contextlib
import gc
import io
import struct
import sys
from collections.abc import Iterator

from xdsl.context import Context
from xdsl.dialects import arith, cf, func, llvm, math, memref, scf, vector
from xdsl.dialects.builtin import (
    Builtin,
    FileLineColLoc,
    IntAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Span

from irtensor import shapes
from irtensor.dialects import HL, KERNEL, LL
from irtensor.dialects.amx import AMX
from irtensor.dialects.ocl import OCL
from irtensor.dialects.x86vector import X86VECTOR


class IRError(Exception):
    """Bad IR from a user: a parse or verify error, already formatted for printing.

    `where` is `file:line:col` (or `<unknown>` for ops a pass made) and `message`
    the error without it.
    """

    def __init__(self, text: str, where: str = "", message: str = ""):
        super().__init__(text)
        self.where, self.message = where, message or text


def make_context() -> Context:
    """A context with builtin, func, the standard dialects and irtensor's own loaded."""
    # ll's canonicalization patterns register themselves on import (the dialect does
    # not import its passes), so canonicalize sees them whichever way it is reached.
    from irtensor.passes.rewrite import ll_patterns  # noqa: F401

    ctx = Context()
    for dialect in (Builtin, func.Func, arith.Arith, math.Math, scf.Scf, cf.Cf, memref.MemRef,
                    vector.Vector, llvm.LLVM, HL, LL, KERNEL, OCL, X86VECTOR, AMX):
        ctx.load_dialect(dialect)
    return ctx


class LocatingParser(Parser):
    """A parser that gives every op without a `loc(...)` its position in the input."""

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        try:
            op = super().parse_operation()
        except (ValueError, OverflowError, struct.error, VerifyException) as e:
            # xDSL builds attributes as it reads them, and a value they cannot hold (an
            # integer beyond i64) raises from inside; report it at the op being read.
            self.raise_error(f"this op cannot be built: {_build_reason(e)}", start.start,
                             self.pos)
        if not isinstance(op.location, FileLineColLoc):
            _, line, col = start.get_location()
            op.location = FileLineColLoc(StringAttr(self.lexer.input.name), IntAttr(line),
                                         IntAttr(col))
        return op


def _build_reason(e: Exception) -> str:
    if isinstance(e, struct.error):
        return "a number is out of the range of its type"
    return " ".join(str(e).split()) or type(e).__name__


def parse(text: str, ctx: Context | None = None, name: str = "<input>") -> ModuleOp:
    """Parse a module (or a bare list of ops, wrapped in a module); raise IRError on bad text."""
    parser = LocatingParser(ctx or make_context(), text, name)
    try:
        return parser.parse_module()
    except ParseError as e:
        raise IRError(_parse_message(e, name)) from None
    except RecursionError:
        # xDSL's parser recurses once per level of nesting (ops in regions, types in
        # types); the position is where it ran out of stack.
        where = parser.pos
        span = Span(where, where, parser.lexer.input)
        limit = sys.getrecursionlimit()
        raise IRError(_parse_message(ParseError(
            span, f"the input nests too deeply to parse (Python's recursion limit is {limit})"
        ), name)) from None


SHOWN_LINE = 120  # characters of the source line shown under a parse error


def _parse_message(e: ParseError, name: str) -> str:
    """`file:line:col: error: message`, then the source line with the span underlined."""
    if not hasattr(e, "span"):
        return f"{name}: error: {e}"
    span = e.span
    where = span.get_location()
    text = span.input.content
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    line_start = span.input.get_start_of_line(span.start)
    line = text[line_start:].split("\n", 1)[0].rstrip("\r")
    column = span.start - line_start
    if len(line) > SHOWN_LINE:  # a window of a long line, around the error
        cut = max(column - SHOWN_LINE // 2, 0)
        line, column = line[cut:cut + SHOWN_LINE], column - cut
    underlined = line[column:column + max(span.end - span.start, 1)].rstrip()
    underline = " " * column + "^" * max(len(underlined), 1)
    return f"{where.file}:{where.line}:{where.col}: error: {e.msg}\n{line}\n{underline}"


def location(op: Operation) -> str:
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return "<unknown>"


def check_types(op: Operation) -> None:
    """The tensor types an op defines have sizes every stage can handle (see
    `shapes.check_static`): its results, its regions' arguments, a function's signature."""
    typed = [(f"result #{i}", r.type) for i, r in enumerate(op.results)]
    if isinstance(op, func.FuncOp):
        signature = op.function_type
        typed += [(f"argument #{i}", t) for i, t in enumerate(signature.inputs.data)]
        typed += [(f"function result #{i}", t) for i, t in enumerate(signature.outputs.data)]
    else:
        typed += [(f"region argument #{a.index}", a.type)
                  for region in op.regions for block in region.blocks for a in block.args]
    for what, t in typed:
        if isinstance(t, TensorType):
            try:
                shapes.check_static(t.get_shape())
            except shapes.ShapeError as e:
                raise VerifyException(f"{what} has type {t}: {e}") from None


def verify(module: Operation) -> None:
    """Verify every op, innermost first; the first failure becomes one IRError line."""
    for op in module.walk():
        try:
            check_types(op)
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            # xDSL's constraint errors put their reason on the following lines.
            message = " ".join(line.strip() for line in str(e).splitlines() if line.strip())
            message = message.removeprefix("Operation does not verify: ")
            if not message.startswith("'"):
                message = f"'{op.name}' op {message}"
            where = location(op)
            raise IRError(f"{where}: error: {message}", where, message) from None


def to_text(op: Operation, generic: bool = False) -> str:
    """Print an op (a module, usually) in custom or MLIR generic syntax."""
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(op)
    return stream.getvalue() + "\n"


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while passes run (`Pipeline.run`: a kernel's
    lowering, a program's pipeline, a user's): they make tens of thousands of xDSL
    objects, most of them kept until the passes end, and each collection they set off
    walked them all (and every other live object) and found little to free. ResNet-50's
    46 kernels, lowered in one process: 15.5-16.1 s with it on, 14.2-14.4 s off; its
    program's pipeline 0.94-1.21 s on, 0.73-0.84 s off. The garbage the passes leave goes
    at the next collection."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
