"""Reading, checking and writing irtensor IR.

`parse` records where each op came from (`file:line:col`), so verifier errors
point at the source line as parse errors do; `verify` reports the first bad op
as an `IRError` whose text is one line, `file:line:col: error: 'op' ...`.
"""

from __future__ import annotations

import io

from xdsl.context import Context
from xdsl.dialects import arith, func, math, memref, scf
from xdsl.dialects.builtin import Builtin, FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from irtensor.dialects import HL, LL


class IRError(Exception):
    """Bad IR from a user: a parse or verify error, already formatted for printing."""


def make_context() -> Context:
    """A context with builtin, func, the standard dialects and irtensor's own loaded."""
    ctx = Context()
    for dialect in (Builtin, func.Func, arith.Arith, math.Math, scf.Scf, memref.MemRef, HL, LL):
        ctx.load_dialect(dialect)
    return ctx


class LocatingParser(Parser):
    """A parser that gives every op without a `loc(...)` its position in the input."""

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        op = super().parse_operation()
        if not isinstance(op.location, FileLineColLoc):
            _, line, col = start.get_location()
            op.location = FileLineColLoc(StringAttr(self.lexer.input.name), IntAttr(line),
                                         IntAttr(col))
        return op


def parse(text: str, ctx: Context | None = None, name: str = "<input>") -> ModuleOp:
    """Parse a module (or a bare list of ops, wrapped in a module); raise IRError on bad text."""
    try:
        return LocatingParser(ctx or make_context(), text, name).parse_module()
    except ParseError as e:
        raise IRError(_parse_message(e, name)) from None


def _parse_message(e: ParseError, name: str) -> str:
    # xDSL prints "file:line:col", the source line, a caret line, then the message.
    lines = str(e).splitlines()
    if len(lines) < 2:
        return f"{name}: error: {e}"
    return f"{lines[0]}: error: {lines[-1].strip()}\n" + "\n".join(lines[1:-1])


def location(op: Operation) -> str:
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return "<unknown>"


def verify(module: Operation) -> None:
    """Verify every op, innermost first; the first failure becomes one IRError line."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            message = str(e).splitlines()[0].removeprefix("Operation does not verify: ")
            if not message.startswith("'"):
                message = f"'{op.name}' op {message}"
            raise IRError(f"{location(op)}: error: {message}") from None


def to_text(op: Operation, generic: bool = False) -> str:
    """Print an op (a module, usually) in custom or MLIR generic syntax."""
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(op)
    return stream.getvalue() + "\n"
