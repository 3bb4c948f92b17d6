"""Pieces shared by the `hl` and `ll` dialects: base op classes and checks.

Verifier messages follow MLIR's shape, `'hl.add' op operand 'rhs' ...`, and
always name the operand and the expected vs the given type or shape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar, NoReturn

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    TensorType,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from irtensor import dtypes, shapes

INT_ARRAY = DenseArrayBase.constr(i64)
F64_ATTR = FloatAttr[Float64Type]
I64_ATTR = IntegerAttr[I64]

ELEMENT_KINDS: dict[str, str] = {
    "float": "a floating-point element type (f16, bf16, f32, f64)",
    "int": f"an integer element type ({', '.join(map(str, dtypes.INT_TYPES))})",
    "bool": "the boolean element type i1",
    "numeric": "a numeric element type "
               f"({', '.join(map(str, (*dtypes.FLOAT_TYPES, *dtypes.INT_TYPES)))})",
    "any": "a supported element type",
}


def fail(op: Operation, message: str) -> NoReturn:
    raise VerifyException(f"'{op.name}' op {message}")


def scalar_attr(value: float | int | bool, element: Attribute) -> FloatAttr | IntegerAttr:
    """The typed attribute that holds one scalar of `element` type."""
    if dtypes.is_float(element):
        return FloatAttr(float(value), element)  # type: ignore[arg-type]
    if dtypes.is_bool(element):
        return IntegerAttr(int(bool(value)), element)  # type: ignore[arg-type]
    return IntegerAttr(int(value), element)  # type: ignore[arg-type]


def pad_value_problem(value: float, element: Attribute) -> str | None:
    """Why `value` cannot pad tensors of `element` (None: it can).

    Floats take any value their type does not overflow on (it rounds to the
    nearest). Integers take whole numbers in their range, and bool 0 and 1;
    both also take -inf and inf, which stand for the type's lowest and highest
    value (false and true): the identities of max and min, which concatenation
    (a max of -inf-padded parts) and max pooling pad with.
    """
    if math.isinf(value):
        return None
    if dtypes.is_float(element):
        if math.isnan(value):
            return None
        with np.errstate(over="ignore"):
            rounded = dtypes.to_numpy(element).type(value)
        return "overflows to inf" if np.isinf(rounded) else None
    if math.isnan(value) or value != int(value):
        return "is not a whole number"
    if dtypes.is_bool(element):
        return None if value in (0, 1) else "is neither 0 nor 1 (nor -inf or inf)"
    info = np.iinfo(dtypes.to_numpy(element))
    if not info.min <= value <= info.max:
        return f"is outside [{info.min}, {info.max}]"
    return None


def scalar_value(attr: Attribute) -> float | int | bool:
    assert isinstance(attr, FloatAttr | IntegerAttr)
    if isinstance(attr, IntegerAttr) and dtypes.is_bool(attr.type):
        return bool(attr.value.data)
    return attr.value.data


def format_scalar(value: float | int | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        text = repr(value)
        # MLIR's float literals need a '.', which repr leaves out of "1e+30".
        mantissa, e, exponent = text.partition("e")
        return f"{mantissa}.0{e}{exponent}" if e and "." not in mantissa else text
    return str(value)


def parse_scalar(parser: Parser) -> float | int | bool:
    """`1`, `-2.5`, `1.0e-3`, `true`, `inf`, `-inf`, `nan` (MLIR float literals need a '.')."""
    negative = parser.parse_optional_punctuation("-") is not None
    if (word := parser.parse_optional_keyword_in(("inf", "nan"))) is not None:
        value: float | int | bool = math.inf if word == "inf" else math.nan
    elif not negative and (flag := parser.parse_optional_boolean()) is not None:
        return flag
    else:
        value = parser.parse_number(context_msg=" (a scalar: number, true, false, inf or nan)")
    return -value if negative else value



def int_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def ints(attr: DenseArrayBase) -> tuple[int, ...]:
    return tuple(int(v) for v in attr.get_values())


def f64_attr(value: float) -> FloatAttr:
    return FloatAttr(value, f64)


def shape_of(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def element_of(value: SSAValue | Attribute) -> Attribute:
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, TensorType)
    return t.element_type


def has_kind(element: Attribute, kind: str) -> bool:
    if not dtypes.is_supported(element):
        return False
    return {
        "float": dtypes.is_float(element),
        "int": dtypes.is_int(element),
        "bool": dtypes.is_bool(element),
        "numeric": dtypes.is_float(element) or dtypes.is_int(element),
        "any": True,
    }[kind]


def check_elements(op: Operation, name: str, value: SSAValue | Attribute, kind: str) -> None:
    """The operand (or result) `name` must hold elements of `kind`."""
    t = value.type if isinstance(value, SSAValue) else value
    if not isinstance(t, TensorType):
        fail(op, f"{name} must be a tensor, got {t}")
    element = t.element_type
    if not has_kind(element, kind):
        fail(op, f"{name} has element type {element}, expected {ELEMENT_KINDS[kind]}")


def check_same_element(op: Operation, names: Sequence[str], values: Sequence[SSAValue]) -> None:
    first = element_of(values[0])
    for name, v in zip(names[1:], values[1:], strict=True):
        if element_of(v) != first:
            fail(
                op,
                f"operand '{name}' has element type {element_of(v)}, expected {first} "
                f"(the element type of '{names[0]}')",
            )


def check_result(op: Operation, result: SSAValue, shape: Sequence[int], element: Attribute) -> None:
    want = TensorType(element, list(shape))
    if result.type != want:
        fail(op, f"result type is {result.type}, expected {want}")


def shape_rule(op: Operation, rule, *args):  # type: ignore[no-untyped-def]
    """Run a `shapes` rule and report its failure as this op's verify error."""
    try:
        return rule(*args)
    except shapes.ShapeError as e:
        fail(op, str(e))


class SameTypeUnaryOp(IRDLOperation):
    """`%r = <op> %x : tensor<...>`: one operand, result of the same type."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    res = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($res)"
    ELEMENTS: ClassVar[str] = "float"

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input], result_types=[input.type])

    def verify_(self) -> None:
        check_elements(self, "operand 'input'", self.input, self.ELEMENTS)


class CastOpBase(IRDLOperation):
    """`%r = <op> %x : tensor<4xf32> -> tensor<4xi32>`: any element type to any other."""

    input = operand_def(TensorType)
    res = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($res)"

    def __init__(self, input: SSAValue, element: Attribute):
        super().__init__(
            operands=[input], result_types=[TensorType(element, list(shape_of(input)))]
        )

    def verify_(self) -> None:
        check_elements(self, "operand 'input'", self.input, "any")
        check_elements(self, "result", self.res, "any")
        check_result(self, self.res, shape_of(self.input), element_of(self.res))


def result_element(lhs: SSAValue, compare: bool) -> Attribute:
    return i1 if compare else element_of(lhs)


__all__ = [
    "F64_ATTR",
    "I64_ATTR",
    "INT_ARRAY",
    "CastOpBase",
    "SameTypeUnaryOp",
    "check_elements",
    "check_result",
    "check_same_element",
    "element_of",
    "f64_attr",
    "fail",
    "int_array",
    "ints",
    "result_element",
    "shape_of",
    "shape_rule",
]
