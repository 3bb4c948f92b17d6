"""The signature of a compiled kernel: its parameters, from the argument types
`convert-to-llvm` keeps on an `llvm.func` (or from LLVM IR text, where a pointer is any
contiguous array), and the checked conversion of a call's Python values to ctypes ones.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, IndexType, IntegerType, MemRefType
from xdsl.ir import Attribute

from irtensor import dtypes
from irtensor.passes.llvm.lowering import ARG_TYPES_ATTR, WRITTEN_ATTR

_SCALARS: dict[str, tuple[np.dtype, Any]] = {
    "i1": (np.dtype(np.bool_), ctypes.c_bool),
    "i8": (np.dtype(np.int8), ctypes.c_int8),
    "i16": (np.dtype(np.int16), ctypes.c_int16),
    "i32": (np.dtype(np.int32), ctypes.c_int32),
    "i64": (np.dtype(np.int64), ctypes.c_int64),
    "index": (np.dtype(np.int64), ctypes.c_int64),
    "f32": (np.dtype(np.float32), ctypes.c_float),
    "float": (np.dtype(np.float32), ctypes.c_float),
    "f64": (np.dtype(np.float64), ctypes.c_double),
    "double": (np.dtype(np.float64), ctypes.c_double),
}


def _element_dtype(t: Attribute) -> np.dtype:
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if isinstance(t, IntegerType) and t.width.data in (8, 16):
        return np.dtype(f"int{t.width.data}")
    return dtypes.to_numpy(t)


@dataclass(frozen=True)
class Parameter:
    """One argument of a compiled function: a buffer (numpy array) or a scalar.

    `dtype`/`shape` are None where the IR does not say (LLVM IR text has only
    `ptr`); `written` marks buffers the function may store into.
    """

    name: str
    type: str
    buffer: bool
    dtype: np.dtype | None = None
    shape: tuple[int, ...] | None = None
    written: bool = False

    @property
    def ctype(self) -> Any:
        if self.buffer:
            return ctypes.c_void_p
        if self.type == "bf16":  # a bf16 scalar is passed as the f32 holding it
            return ctypes.c_float
        if self.type not in _SCALARS:
            raise TypeError(f"argument {self.name}: scalars of type {self.type} cannot be "
                            "passed through ctypes")
        return _SCALARS[self.type][1]

    def describe(self) -> str:
        if not self.buffer:
            return f"{self.name}: {self.type}"
        shape = "?" if self.shape is None else "x".join(map(str, self.shape)) or "()"
        return f"{self.name}: {shape} {self.dtype or 'array'}"

    def convert(self, value: object, where: str) -> Any:
        """The ctypes value of `value`, or TypeError/ValueError naming the argument."""
        if self.buffer:
            return self._pointer(value, where)
        if self.type == "i1":
            if not isinstance(value, bool | np.bool_):
                raise TypeError(f"{where}: expected a bool, got {type(value).__name__}")
            return bool(value)
        if self.type in ("f32", "f64", "bf16"):
            if not isinstance(value, int | float | np.integer | np.floating) or isinstance(
                    value, bool | np.bool_):
                raise TypeError(f"{where}: expected a float, got {type(value).__name__}")
            if self.type == "bf16":
                import ml_dtypes

                return float(dtypes.cast_array(np.float64(value), np.dtype(ml_dtypes.bfloat16)))
            return float(value)
        if not isinstance(value, int | np.integer) or isinstance(value, bool | np.bool_):
            raise TypeError(f"{where}: expected an integer, got {type(value).__name__}")
        info = np.iinfo(_SCALARS[self.type][0])
        if not info.min <= int(value) <= info.max:
            raise ValueError(f"{where}: {value} does not fit in {self.type}")
        return int(value)

    def _pointer(self, value: object, where: str) -> int:
        if not isinstance(value, np.ndarray):
            raise TypeError(f"{where}: expected a numpy array, got {type(value).__name__}")
        if self.dtype is not None and value.dtype != self.dtype:
            raise TypeError(f"{where}: expected dtype {self.dtype}, got {value.dtype}")
        if self.shape is not None and value.shape != self.shape:
            raise ValueError(f"{where}: expected shape {self.shape}, got {value.shape}")
        flags = value.flags
        if not flags.c_contiguous:
            raise ValueError(f"{where}: the array is not C-contiguous "
                             "(np.ascontiguousarray makes a contiguous copy)")
        if not flags.aligned:
            raise ValueError(f"{where}: the array is not aligned to its element size")
        if self.written and not flags.writeable:
            raise ValueError(f"{where}: the function writes this array, which is read-only")
        return value.ctypes.data


def parameter_of(t: Attribute, name: str, written: bool = False) -> Parameter:
    """The parameter a lowered function has for an argument of type `t`."""
    return _parameter(t, name, written)


def _parameter(t: Attribute, name: str, written: bool) -> Parameter:
    if isinstance(t, MemRefType):
        shape = tuple(t.get_shape())
        return Parameter(name, str(t), True, _element_dtype(t.element_type), shape, written)
    if isinstance(t, llvm.LLVMPointerType):
        return Parameter(name, "ptr", True, written=True)
    return Parameter(name, str(t), False)


def signature_of(function: llvm.FuncOp) -> tuple[Parameter, ...]:
    """The parameters of a lowered function, from the types `convert-to-llvm` kept."""
    kept = function.attributes.get(ARG_TYPES_ATTR)
    types = list(kept.data) if isinstance(kept, ArrayAttr) else list(
        function.function_type.inputs.data)
    written_attr = function.attributes.get(WRITTEN_ATTR)
    written = (set(written_attr.get_values()) if isinstance(written_attr, DenseArrayBase)
               else set(range(len(types))))
    args = function.body.blocks[0].args if function.body.blocks else ()
    names = [f"%{a.name_hint}" if a.name_hint else f"#{i}" for i, a in enumerate(args)]
    names += [f"#{i}" for i in range(len(names), len(types))]
    return tuple(_parameter(t, names[i], i in written) for i, t in enumerate(types))


def result_type(output: Attribute) -> str | None:
    if isinstance(output, llvm.LLVMVoidType):
        return None
    if isinstance(output, llvm.LLVMPointerType):
        return "ptr"
    return str(output)


def signature_from_ir(fn: Any) -> tuple[tuple[Parameter, ...], str | None]:
    """Parameters of a function of LLVM IR text (pointers: any contiguous array)."""
    elements = [str(t) for t in fn.global_value_type.elements]
    params = tuple(
        Parameter(f"#{i}", t, True, written=True) if t == "ptr"
        else Parameter(f"#{i}", {"i64": "i64", "float": "f32", "double": "f64"}.get(t, t), False)
        for i, t in enumerate(elements[1:])
    )
    result = {"void": None, "float": "f32", "double": "f64"}.get(elements[0], elements[0])
    return params, result


__all__ = ["Parameter", "parameter_of", "result_type", "signature_from_ir", "signature_of"]
