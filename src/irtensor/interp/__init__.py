"""The reference interpreter: runs `hl`, `ll` and `kernel` programs on numpy arrays.

    from irtensor.interp import run
    outs = run(module, [x, w], fn="main")

It is the oracle for every pass and backend, so each op is one short, plain
numpy implementation (`hl_impls`, `ll_impls`, `kernel_impls`) on xDSL's interpreter. Inputs are
checked against the function's signature and never cast; each output has
exactly its result type's shape and dtype (rank 0 gives a 0-d array).
Floating-point exceptions are silent: NaN and inf come out as numpy makes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.interpreter import Interpreter

from irtensor import dtypes, ir
from irtensor.interp.hl_impls import HlFunctions
from irtensor.interp.kernel_impls import KernelFunctions
from irtensor.interp.ll_impls import LlFunctions
from irtensor.shapes import fmt

__all__ = ["HlFunctions", "KernelFunctions", "LlFunctions", "make_interpreter", "run"]


def make_interpreter(module: ModuleOp) -> Interpreter:
    """An xDSL interpreter over `module` that knows func, `hl`, `ll` and `kernel`."""
    # Here, not at the top: the passes import this package for its numpy helpers, and
    # `xdsl.interpreters` loads every interpreter xDSL has (riscv's dialect alone is about
    # a third of `import irtensor`'s time).
    from xdsl.interpreters.func import FuncFunctions

    interp = Interpreter(module)
    interp.register_implementations(FuncFunctions())
    interp.register_implementations(HlFunctions())
    interp.register_implementations(LlFunctions())
    interp.register_implementations(KernelFunctions())
    return interp


def run(module: ModuleOp, inputs: Sequence[np.ndarray], fn: str = "main") -> list[np.ndarray]:
    """Run function `fn` of `module` on `inputs` (one numpy array per argument).

    The module is verified first (an `irtensor.ir.IRError` if it is bad). A
    wrong number of inputs or a wrong shape raises ValueError, a wrong dtype
    TypeError; an unknown `fn` raises ValueError. Returns one fresh array per
    result, of the result type's shape and numpy dtype.
    """
    function = _find_function(module, fn)
    arrays = _check_inputs(function, inputs)
    ir.verify(module)
    with np.errstate(all="ignore"):
        outs = make_interpreter(module).call_op(fn, tuple(arrays))
    return [np.array(out, copy=True) for out in outs]


def _find_function(module: ModuleOp, fn: str) -> func.FuncOp:
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    for f in functions:
        if f.sym_name.data == fn:
            if not f.body.blocks:
                raise ValueError(f"@{fn} is a declaration without a body; nothing to run")
            return f
    names = ", ".join(f"@{f.sym_name.data}" for f in functions) or "none"
    raise ValueError(f"no function @{fn} in the module (functions: {names})")


def _check_inputs(function: func.FuncOp, inputs: Sequence[Any]) -> list[np.ndarray]:
    """The inputs as arrays, after checking count, shape and dtype against the signature."""
    name = f"@{function.sym_name.data}"
    types = function.function_type.inputs.data
    if isinstance(inputs, np.ndarray | str) or not isinstance(inputs, Sequence):
        raise TypeError(f"{name}: inputs must be a sequence of numpy arrays (a list or tuple)")
    if len(inputs) != len(types):
        signature = ", ".join(str(t) for t in types)
        raise ValueError(
            f"{name} takes {len(types)} argument(s) ({signature}), got {len(inputs)} input(s)"
        )
    arrays = []
    for i, (t, given) in enumerate(zip(types, inputs, strict=True)):
        where = f"{name} argument #{i}"
        if not isinstance(t, TensorType) or not dtypes.is_supported(t.element_type):
            raise TypeError(f"{where} has type {t}; the interpreter only passes tensors in")
        shape, dtype = tuple(t.get_shape()), dtypes.to_numpy(t.element_type)
        expected = f"expected {t} (shape {fmt(shape)}, {dtype})"
        if not isinstance(given, np.ndarray | np.generic):
            raise TypeError(f"{where}: {expected}, got {type(given).__name__}, not a numpy array")
        array = np.asarray(given)
        got = f"got shape {fmt(array.shape)} {array.dtype}"
        if array.shape != shape:
            raise ValueError(f"{where}: {expected}, {got}")
        if array.dtype != dtype:
            raise TypeError(f"{where}: {expected}, {got}")
        arrays.append(array)
    return arrays
