"""irtensor-opt: read IR, run a pass pipeline, print the result (like mlir-opt), or run it.

    irtensor-opt FILE.mlir -p decompose-hlops,cse --print-ir-after-all
    irtensor-opt FILE.mlir --run --input a=a.npy

User mistakes (bad IR, unknown passes, inputs that do not fit) print one
`irtensor-opt: error:` line on stderr (IR errors: `FILE:LINE:COL: error:` and the
source line) and exit 1 (2 for a malformed command line), never a Python traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, bf16
from xdsl.ir import Attribute

from irtensor import dtypes, ir, passes
from irtensor.pipeline import Instrumentation, Pipeline, PipelineError
from irtensor.runtime import limits

SPLIT_MARKER = "// -----"


class UserError(Exception):
    """A mistake in the command line or its inputs: printed as one message, exit 1."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with its errors as the tool's other errors: one line, no usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def seed(text: str) -> int:
    """A seed of numpy's generator: a non-negative integer."""
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="irtensor-opt", description="Read irtensor IR, run passes, print or run it."
    )
    p.add_argument("file", nargs="?", default="-", help="input .mlir file, or - for stdin")
    p.add_argument("-p", "--passes", default="", metavar="PIPELINE",
                   help="pass pipeline, e.g. 'cse,dce' or a named pipeline")
    p.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    p.add_argument("--print-ir-after-all", action="store_true", help="print IR after each pass")
    p.add_argument("--print-ir-after", default="", metavar="NAMES",
                   help="comma-separated passes to print the IR after")
    p.add_argument("--print-ir-before", default="", metavar="NAMES",
                   help="comma-separated passes to print the IR before")
    p.add_argument("--print-ir-after-change", action="store_true",
                   help="print IR after a pass only if it changed the IR")
    p.add_argument("--dump-dir", type=Path, help="write one numbered .mlir file per stage")
    p.add_argument("--timing", action="store_true", help="report wall time per pass")
    p.add_argument("--trace-rewrites", action="store_true",
                   help="print every pattern application (pass, pattern, op before/after)")
    p.add_argument("--pass-statistics", action="store_true",
                   help="print ops before/after and patterns fired per pass")
    p.add_argument("--explain-fusion", action="store_true",
                   help="print the kernels the input becomes and why each is a kernel")
    p.add_argument("--generic", action="store_true", help="print in MLIR's generic syntax")
    p.add_argument("--no-verify", action="store_true", help="do not verify after each pass")
    p.add_argument("--list-passes", action="store_true", help="list passes and pipelines")
    p.add_argument("--load-pass-plugin", action="append", default=[], metavar="FILE.py",
                   help="import a Python file that registers passes")
    p.add_argument("--split-input-file", action="store_true",
                   help="treat '// -----' separated chunks as independent inputs")
    p.add_argument("--run", action="store_true", help="execute @main after the pipeline")
    p.add_argument("--entry", default="main", help="function to run (default main)")
    p.add_argument("--device", default="interp", choices=["interp", "llvm", "opencl"],
                   help="where --run executes: interp (the reference interpreter), llvm or "
                        "opencl (lowered with hl-to-kernel if needed, compiled, run)")
    p.add_argument("--emit", default="mlir", choices=["mlir", *EMIT_STAGES],
                   help="print the IR after -p (mlir), or carry it on down the ladder to a "
                        "stage and print that: ll, kernel, loops, llvm (the llvm dialect), "
                        "llvm-ir, llvm-ir-opt (after LLVM's optimisation), asm, opencl (C)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="an input of --run, by argument name or position")
    p.add_argument("--seed", type=seed, default=0, help="seed of random --run inputs")
    return p


def list_passes() -> str:
    lines = ["Passes:"]
    for name, cls in passes.all_passes().items():
        lines.append(f"  {name:<24} {passes.describe(name)}")
        for option, kind, default in passes.pass_options(cls):
            lines.append(f"      {option}: {kind} = {default!r}")
    lines.append("Pipelines:")
    for name, spec in passes.all_pipelines().items():
        lines.append(f"  {name:<24} {spec}")
    return "\n".join(lines) + "\n"


def read_input(path: str) -> tuple[str, str]:
    name = "<stdin>" if path == "-" else path
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from None
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as e:
        raise UserError(f"{name} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset "
                        f"{e.start}); irtensor IR is text") from None


def instrumentation(args: argparse.Namespace) -> Instrumentation:
    return Instrumentation(
        print_ir_after_all=args.print_ir_after_all,
        print_ir_before=frozenset(filter(None, args.print_ir_before.split(","))),
        print_ir_after=frozenset(filter(None, args.print_ir_after.split(","))),
        print_ir_after_change=args.print_ir_after_change,
        dump_dir=args.dump_dir,
        verify_each=not args.no_verify,
        timing=args.timing,
        generic=args.generic,
        trace_rewrites=args.trace_rewrites,
        pass_statistics=args.pass_statistics,
    )


def process(text: str, name: str, args: argparse.Namespace, line_offset: int = 0) -> str:
    """Parse, verify, run the pipeline (and --run) on one input; return the text to print."""
    module = ir.parse("\n" * line_offset + text, name=name)
    ir.verify(module)
    Pipeline(args.passes, instrumentation(args)).run(module)
    if args.explain_fusion:
        from irtensor.passes.kernel.explain import explain_fusion

        return explain_fusion(module, args.entry)
    if args.run:
        return run_entry(module, args)
    if args.emit != "mlir":
        return emit(module, args.emit, args.generic)
    return ir.to_text(module, args.generic)


# --emit STAGE: the rest of the ladder from the stage -p left the module at.
EMIT_STAGES = ("ll", "kernel", "loops", "llvm", "llvm-ir", "llvm-ir-opt", "asm", "opencl")
_LADDER = ("ll", "kernel", "loops", "llvm")
_STEP_TO = {"kernel": "fuse,split-reductions,pack-operands,cse,reorder-loops",
            "loops": "lower-kernels-to-loops", "llvm": "convert-to-llvm"}


def stage_of(module: ModuleOp) -> str:
    """The lowest rung any op of `module` is at: ll (hl or ll ops), kernel, loops, llvm."""
    from irtensor.dialects.kernel import KernelOp
    from irtensor.passes.loops.loop_builder import KERNEL_ATTR

    ops = list(module.walk())
    if any(op.name.startswith("llvm.") for op in ops):
        return "llvm"
    if any(isinstance(op, func.FuncOp) and KERNEL_ATTR in op.attributes for op in ops):
        return "loops"
    return "kernel" if any(isinstance(op, KernelOp) for op in ops) else "ll"


def lower_to(module: ModuleOp, stage: str) -> None:
    """Run the ladder's steps from the module's stage down to `stage`."""
    start = _LADDER.index(stage_of(module))
    if _LADDER.index(stage) < start:
        raise UserError(f"--emit {stage}: the module is already at stage {_LADDER[start]}")
    steps = [_STEP_TO[s] for s in _LADDER[start + 1: _LADDER.index(stage) + 1]]
    if start == 0:
        steps.insert(0, "hl-to-ll")  # hl ops (or ll ops that fold) before fusing
    if steps:
        Pipeline(",".join(steps)).run(module)


def emit(module: ModuleOp, stage: str, generic: bool) -> str:
    from irtensor.dialects import ocl

    if stage in _LADDER:
        lower_to(module, stage)
        return ir.to_text(module, generic)
    if stage == "opencl":
        if not any(isinstance(op, ocl.KernelOp) for op in module.walk()):
            lower_to(module, "kernel")
            Pipeline("lower-to-opencl").run(module)
        return opencl_source(module)
    from irtensor.passes.llvm import jit as llvm_jit

    if stage_of(module) != "llvm":
        lower_to(module, "loops")
    if stage == "llvm-ir":
        return llvm_jit.llvm_ir(module)
    compiled = llvm_jit.compile_module(module)
    return compiled.optimized_ir if stage == "llvm-ir-opt" else compiled.assembly()


def opencl_source(module: ModuleOp) -> str:
    from irtensor.dialects import ocl
    from irtensor.passes.opencl.c_printer import UnsupportedError, print_program

    kernels = [op for op in module.walk() if isinstance(op, ocl.KernelOp)]
    if not kernels:
        raise UserError("--emit opencl: the module has no ocl.kernel (run lower-to-opencl)")
    try:
        return print_program(kernels).source
    except UnsupportedError as e:
        raise UserError(str(e)) from None


def run_entry(module: ModuleOp, args: argparse.Namespace) -> str:
    from irtensor.interp import run

    fn = find_function(module, args.entry)
    try:
        limits.check_function(fn, args.device)  # before drawing inputs of that size
    except limits.TooLargeError as e:
        raise UserError(f"--run: {e}") from None
    arrays = make_inputs(fn, args.input, args.seed)
    try:
        if args.device in ("llvm", "opencl"):
            results = run_compiled(module, arrays, args.entry, args.device)
        else:
            results = run(module, arrays, fn=args.entry)
    except (ValueError, TypeError) as e:  # inputs that do not fit the function's types
        raise UserError(str(e)) from None
    np.set_printoptions(precision=6, suppress=False, threshold=200)
    out = []
    for i, (r, t) in enumerate(zip(results, fn.function_type.outputs, strict=True)):
        out.append(f"// result #{i}: {t}\n{np.array2string(np.asarray(r), separator=', ')}")
    return "\n".join(out) + "\n"


def run_compiled(module: ModuleOp, arrays: list[np.ndarray], entry: str,
                 device: str = "llvm") -> list[np.ndarray]:
    from irtensor.interp import _check_inputs
    from irtensor.runtime import llvm_device, opencl_device

    _check_inputs(find_function(module, entry), arrays)
    lowered = entry_module(module, entry)
    Pipeline(f"default-{device}").run(lowered)
    if device == "llvm":
        return llvm_device.run(lowered, arrays, entry)
    if (why := opencl_device.unavailable()) is not None:
        raise UserError(f"--device opencl: no OpenCL device builds programs here: {why}")
    try:
        return opencl_device.run(lowered, arrays, entry)
    except opencl_device.OpenCLError as e:
        raise UserError(str(e)) from None


def entry_module(module: ModuleOp, entry: str) -> ModuleOp:
    """A module of the function `entry` and those it calls: the rest of the file is not
    compiled (a function on scalars, or a declaration, has no device lowering)."""
    functions = {op.sym_name.data: op for op in module.walk() if isinstance(op, func.FuncOp)}
    wanted, todo = [], [entry]
    while todo:
        name = todo.pop()
        if name in wanted or name not in functions:
            continue
        wanted.append(name)
        todo += [call.callee.root_reference.data for call in functions[name].walk()
                 if isinstance(call, func.CallOp)]
    return ModuleOp([functions[name].clone() for name in wanted])


def find_function(module: ModuleOp, name: str) -> func.FuncOp:
    """The function --run runs: one with a body, taking tensors."""
    for op in module.walk():
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            if not op.body.blocks:
                raise UserError(f"@{name} is a declaration without a body; nothing to run")
            for i, t in enumerate(op.function_type.inputs.data):
                if not isinstance(t, TensorType) or not dtypes.is_supported(t.element_type):
                    raise UserError(f"@{name} argument #{i} has type {t}; --run passes "
                                    f"tensors of {dtypes.SUPPORTED_NAMES} only")
            return op
    raise UserError(f"no function @{name} to run")


def make_inputs(fn: func.FuncOp, specs: Sequence[str], seed: int) -> list[np.ndarray]:
    """Inputs given as NAME=FILE.npy (name or position); the rest random, from `seed`."""
    block = fn.body.block
    names = {arg.name_hint: i for i, arg in enumerate(block.args) if arg.name_hint}
    given: dict[int, np.ndarray] = {}
    for spec in specs:
        key, sep, path = spec.partition("=")
        if not sep:
            raise UserError(f"--input {spec}: expected NAME=FILE.npy")
        index = int(key) if key.isascii() and key.isdigit() else names.get(key)
        if index is None or index >= len(block.args):
            raise UserError(f"--input {spec}: @{fn.sym_name.data} has no argument '{key}'")
        try:
            given[index] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise UserError(f"--input {spec}: cannot load {path}: {e}") from None
        given[index] = as_argument_dtype(given[index], block.args[index].type)
    rng = np.random.default_rng(seed)
    arrays = []
    for i, arg in enumerate(block.args):
        t = arg.type
        assert isinstance(t, TensorType)  # find_function took tensor arguments only
        arrays.append(given[i] if i in given else random_array(rng, t))
    return arrays


def as_argument_dtype(array: np.ndarray, t: Attribute) -> np.ndarray:
    """numpy saves bfloat16 as raw 2-byte records ('V2'), which load back as such: for a bf16
    argument those bytes are the values."""
    element = t.element_type if isinstance(t, TensorType) else None
    if element is not None and element == bf16 and array.dtype == np.dtype("V2"):
        return array.view(dtypes.to_numpy(bf16))
    return array


def random_array(rng: np.random.Generator, t: TensorType) -> np.ndarray:
    shape, element = tuple(t.get_shape()), t.element_type
    dtype = dtypes.to_numpy(element)
    if dtypes.is_bool(element):
        return rng.random(shape) < 0.5
    if dtypes.is_int(element):
        return rng.integers(-10, 10, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def split_chunks(text: str) -> list[tuple[str, int]]:
    """Chunks separated by `// -----` lines, each with the line it starts on (0-based)."""
    chunks, current, start = [], [], 0
    for number, line in enumerate(text.splitlines(keepends=True)):
        if line.strip() == SPLIT_MARKER:
            chunks.append(("".join(current), start))
            current, start = [], number + 1
        else:
            current.append(line)
    chunks.append(("".join(current), start))
    return chunks


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        for plugin in args.load_pass_plugin:
            passes.load_pass_plugin(plugin)
        if args.list_passes:
            sys.stdout.write(list_passes())
            return 0
        Pipeline(args.passes, instrumentation(args))  # reject a bad pipeline before any input
        text, name = read_input(args.file)
        chunks = split_chunks(text) if args.split_input_file else [(text, 0)]
        failed = False
        outputs = []
        for chunk, offset in chunks:
            try:
                outputs.append(process(chunk, name, args, offset))
            except (ir.IRError, PipelineError, UserError) as e:
                if not args.split_input_file:
                    raise
                sys.stderr.write(format_error(e))
                failed = True
        write_output(f"{SPLIT_MARKER}\n".join(outputs), args.output)
        return 1 if failed else 0
    except (ir.IRError, PipelineError, UserError, passes.PassRegistryError) as e:
        sys.stderr.write(format_error(e))
        return 1


def format_error(e: Exception) -> str:
    """IR errors carry their own `file:line:col: error:` prefix; the rest get the tool's."""
    return f"{e}\n" if isinstance(e, ir.IRError) else f"irtensor-opt: error: {e}\n"


def write_output(text: str, path: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        return
    try:
        Path(path).write_text(text)
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror}") from None


if __name__ == "__main__":
    sys.exit(main())
