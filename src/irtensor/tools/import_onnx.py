"""irtensor-import-onnx: an ONNX model as an hl module (text), for irtensor-opt to run.

    irtensor-import-onnx model.onnx -o model.mlir [--shape input=1,3,224,224]

A model irtensor cannot import (a malformed file, an unsupported operator or
attribute, a shape not known at import) prints one `irtensor-import-onnx: error:`
line naming the node and what is unsupported, and exits 1 (2 for a bad command line).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from irtensor import ir

PROG = "irtensor-import-onnx"


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def shape_arg(text: str) -> tuple[str, tuple[int, ...]]:
    name, sep, dims = text.rpartition("=")
    try:
        if not sep or not name:
            raise ValueError
        return name, tuple(int(d) for d in dims.split(",") if d)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=D0,D1,..., got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog=PROG, description="Import an ONNX model as an irtensor hl module.")
    p.add_argument("model", help="the .onnx file")
    p.add_argument("-o", "--output", default="-", help="output .mlir file (default stdout)")
    p.add_argument("--shape", action="append", type=shape_arg, default=[],
                   metavar="NAME=D0,D1,...", help="the shape of an input with unknown sizes")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from irtensor.onnx import OnnxImportError, load

    try:
        module = load(args.model, shapes=dict(args.shape) or None)
        text = ir.to_text(module)
        if args.output == "-":
            sys.stdout.write(text + ("" if text.endswith("\n") else "\n"))
        else:
            Path(args.output).write_text(text + ("" if text.endswith("\n") else "\n"))
    except (OnnxImportError, OSError) as e:
        message = str(e).splitlines()[0] if str(e) else type(e).__name__
        sys.stderr.write(f"{PROG}: error: {message}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
