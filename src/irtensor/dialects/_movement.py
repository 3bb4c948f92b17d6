"""Movement ops that `hl` and `ll` share in form: the base classes both dialects name.

A movement op is a copy-free view: its result's elements are some of its
input's, moved. Each subclass gives its name and the shape rule it follows.
"""

from __future__ import annotations

import math
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure

from irtensor import shapes
from irtensor.dialects._base import (
    F64_ATTR,
    INT_ARRAY,
    check_elements,
    check_result,
    element_of,
    f64_attr,
    fail,
    format_scalar,
    int_array,
    ints,
    pad_value_problem,
    parse_scalar,
    shape_of,
    shape_rule,
)


class MovementOpBase(IRDLOperation):
    """A view; `result_shape` is the rule its result type must follow."""

    input = operand_def(TensorType)
    res = result_def(TensorType)
    traits = traits_def(Pure())

    def result_shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    def verify_(self) -> None:
        check_elements(self, "operand 'input'", self.input, "any")
        shape = shape_rule(self, self.result_shape)
        check_result(self, self.res, shape, element_of(self.input))


class ToShapeOpBase(MovementOpBase):
    """`%r = <op> %x : tensor<2x6xf32> -> tensor<3x4xf32>`: the result type is the argument."""

    assembly_format = "$input attr-dict `:` type($input) `->` type($res)"

    def __init__(self, input: SSAValue, shape: tuple[int, ...]):
        super().__init__(
            operands=[input], result_types=[TensorType(element_of(input), list(shape))]
        )


class PermuteOpBase(MovementOpBase):
    """`%r = <op> %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>`"""

    perm = prop_def(INT_ARRAY)
    assembly_format = "$input $perm attr-dict `:` type($input) `->` type($res)"

    def __init__(self, input: SSAValue, perm: tuple[int, ...]):
        shape = shapes.permute(shape_of(input), perm)
        super().__init__(
            operands=[input],
            properties={"perm": int_array(perm)},
            result_types=[TensorType(element_of(input), list(shape))],
        )

    def result_shape(self) -> tuple[int, ...]:
        return shapes.permute(shape_of(self.input), ints(self.perm))


class FlipOpBase(MovementOpBase):
    """`%r = <op> %x axes [0] : tensor<2x3xf32>`: reverse the named axes."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    res = result_def(T)
    axes = prop_def(INT_ARRAY)
    assembly_format = "$input `axes` $axes attr-dict `:` type($res)"

    def __init__(self, input: SSAValue, axes: tuple[int, ...]):
        super().__init__(
            operands=[input], properties={"axes": int_array(axes)}, result_types=[input.type]
        )

    def result_shape(self) -> tuple[int, ...]:
        shapes.check_axes(ints(self.axes), len(shape_of(self.input)))
        return shape_of(self.input)


class PadOpBase(MovementOpBase):
    """Shared properties and syntax of `ll.pad` and `hl.pad`.

    `%r = <op> %x low [1, 0] high [0, 2] value -inf : tensor<..> -> tensor<..>`
    (`value` is omitted when it is 0.0). The value must be one of the element
    type's (`pad_value_problem`): any float value it does not overflow on, a
    whole number in an integer type's range, 0 or 1 for bool; -inf and inf
    stand for an integer or bool type's lowest and highest value.
    """

    low = prop_def(INT_ARRAY)
    high = prop_def(INT_ARRAY)
    value = prop_def(F64_ATTR, default_value=f64_attr(0.0))

    def __init__(
        self, input: SSAValue, low: tuple[int, ...], high: tuple[int, ...], value: float = 0.0
    ):
        shape = shapes.pad(shape_of(input), low, high)
        super().__init__(
            operands=[input],
            properties={"low": int_array(low), "high": int_array(high), "value": f64_attr(value)},
            result_types=[TensorType(element_of(input), list(shape))],
        )

    def result_shape(self) -> tuple[int, ...]:
        return shapes.pad(shape_of(self.input), ints(self.low), ints(self.high))

    def verify_(self) -> None:
        super().verify_()
        element = element_of(self.input)
        if (problem := pad_value_problem(self.pad_value, element)) is not None:
            fail(self, f"pad value {format_scalar(self.pad_value)} is not a value of the "
                       f"element type {element}: it {problem}")

    @property
    def pad_value(self) -> float:
        return self.value.value.data

    @classmethod
    def parse(cls, parser: Parser) -> PadOpBase:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_keyword("low")
        low = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
        parser.parse_keyword("high")
        high = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
        value = float(parse_scalar(parser)) if parser.parse_optional_keyword("value") else 0.0
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        in_type = parser.parse_type()
        parser.parse_punctuation("->")
        out_type = parser.parse_type()
        props = {"low": int_array(low), "high": int_array(high), "value": f64_attr(value)}
        input = parser.resolve_operand(unresolved, in_type)
        return cls.create(
            operands=[input], result_types=[out_type], properties=props, attributes=attrs
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(f" low {list(ints(self.low))} high {list(ints(self.high))}")
        if self.pad_value != 0.0 or math.copysign(1.0, self.pad_value) < 0:
            printer.print_string(f" value {format_scalar(self.pad_value)}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.res.type)
