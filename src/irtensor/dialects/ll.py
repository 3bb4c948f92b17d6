"""The `ll` dialect: the few low-level op types every tensor program reduces to.

Unary (neg, exp2, log2, sqrt, reciprocal, sin, cast), binary (add, mul, max,
cmplt, cmpeq, idiv, mod), ternary (where), reduce (sum, max; the reduced axes
keep size 1), movement (reshape, permute, expand, pad, shrink, flip, stride)
and const (a scalar broadcast to a shape). Operands of an `ll` op never
broadcast implicitly: shapes and element types match exactly, and an `expand`
says where data is reused. Everything else is an HLOP in `hl`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import auto
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.interfaces import HasCanonicalizationPatternsInterface
from xdsl.ir import Attribute, Dialect, Operation, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import Commutative, ConstantLike, Pure
from xdsl.utils.str_enum import StrEnum

from irtensor import dtypes, shapes
from irtensor.dialects._base import (
    INT_ARRAY,
    CastOpBase,
    SameTypeUnaryOp,
    check_elements,
    check_result,
    element_of,
    fail,
    format_scalar,
    int_array,
    ints,
    parse_scalar,
    scalar_attr,
    scalar_value,
    shape_of,
    shape_rule,
)
from irtensor.dialects._movement import (
    FlipOpBase,
    MovementOpBase,
    PadOpBase,
    PermuteOpBase,
    ToShapeOpBase,
)

# The exact local rewrites of ll ops live with the other rewrites (passes/rewrite/
# ll_patterns.py), which register them here: the dialect does not import its passes.
_CANONICALIZATION: dict[type[Operation], tuple[RewritePattern, ...]] = {}


def register_canonicalization(patterns: Mapping[type[Operation], tuple[RewritePattern, ...]]
                              ) -> None:
    """Make `patterns[op]` what `op.get_canonicalization_patterns()` gives (canonicalize)."""
    _CANONICALIZATION.update(patterns)


class Canonicalized(HasCanonicalizationPatternsInterface):
    """An ll op whose canonicalization patterns come from `register_canonicalization`."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return _CANONICALIZATION.get(cls, ())

# --------------------------------------------------------------------------- const


def scalar_problem(value: float | int | bool, element: Attribute) -> str | None:
    """Why `value` is not a value of `element`, or None if it is."""
    if dtypes.is_bool(element):
        return None if isinstance(value, bool) else f"{value} is not a value of i1 (true, false)"
    if isinstance(value, bool):
        return f"{str(value).lower()} is not a value of {element}"
    if dtypes.is_int(element):
        if isinstance(value, float):
            return f"{value} is not a value of {element}"
        info = np.iinfo(dtypes.to_numpy(element))
        if not info.min <= value <= info.max:
            return f"{value} is out of range for {element} [{info.min}, {info.max}]"
    return None


@irdl_op_definition
class ConstOp(IRDLOperation):
    """A scalar broadcast to a shape.

    `%c = ll.const 2.0 : tensor<4x4xf32>`; also `true`, `-inf`, `nan`, `7`.
    Constants are scalars on purpose: a broadcast constant costs nothing to
    store, and folding never builds large literal arrays.
    """

    name = "ll.const"
    value = prop_def(base(FloatAttr) | base(IntegerAttr))
    res = result_def(TensorType)
    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: float | int | bool, type: TensorType):
        super().__init__(
            properties={"value": scalar_attr(value, type.element_type)}, result_types=[type]
        )

    @property
    def scalar(self) -> float | int | bool:
        return scalar_value(self.value)

    def verify_(self) -> None:
        check_elements(self, "result", self.res, "any")
        if self.value.type != element_of(self.res):
            fail(self, f"value has type {self.value.type}, expected {element_of(self.res)}")

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        at = parser.pos
        value = parse_scalar(parser)
        end = parser.pos
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_at = parser.pos
        t = parser.parse_type()
        if not isinstance(t, TensorType) or not dtypes.is_supported(t.element_type):
            parser.raise_error(
                f"ll.const needs a tensor of a supported element type, got {t}", type_at,
                parser.pos,
            )
        if (problem := scalar_problem(value, t.element_type)) is not None:
            parser.raise_error(problem, at, end)
        op = cls(value, t)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" " + format_scalar(self.scalar))
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.res.type)


# --------------------------------------------------------------------------- unary


@irdl_op_definition
class NegOp(SameTypeUnaryOp, Canonicalized):
    """`%r = ll.neg %x : tensor<4xf32>`"""

    name = "ll.neg"
    ELEMENTS: ClassVar[str] = "numeric"


@irdl_op_definition
class Exp2Op(SameTypeUnaryOp):
    """`%r = ll.exp2 %x : tensor<4xf32>`"""

    name = "ll.exp2"


@irdl_op_definition
class Log2Op(SameTypeUnaryOp):
    """`%r = ll.log2 %x : tensor<4xf32>`"""

    name = "ll.log2"


@irdl_op_definition
class SqrtOp(SameTypeUnaryOp):
    """`%r = ll.sqrt %x : tensor<4xf32>`"""

    name = "ll.sqrt"


@irdl_op_definition
class ReciprocalOp(SameTypeUnaryOp):
    """`%r = ll.reciprocal %x : tensor<4xf32>` computes 1/x."""

    name = "ll.reciprocal"


@irdl_op_definition
class SinOp(SameTypeUnaryOp):
    """`%r = ll.sin %x : tensor<4xf32>`"""

    name = "ll.sin"


@irdl_op_definition
class CastOp(CastOpBase, Canonicalized):
    """`%r = ll.cast %x : tensor<4xf32> -> tensor<4xi32>` converts as numpy's astype."""

    name = "ll.cast"


# --------------------------------------------------------------------------- binary


class BinaryOp(IRDLOperation, Canonicalized):
    """`%r = ll.<op> %a, %b : tensor<4xf32>`: operands and result share one type."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def(T)
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($res)"
    ELEMENTS: ClassVar[str] = "numeric"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        check_elements(self, "operand 'lhs'", self.lhs, self.ELEMENTS)


@irdl_op_definition
class AddOp(BinaryOp):
    """`%r = ll.add %a, %b : tensor<4xf32>`"""

    name = "ll.add"
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class MulOp(BinaryOp):
    """`%r = ll.mul %a, %b : tensor<4xf32>`"""

    name = "ll.mul"
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class MaxOp(BinaryOp):
    """`%r = ll.max %a, %b : tensor<4xf32>`: NaN wins, as numpy.maximum."""

    name = "ll.max"
    traits = traits_def(Pure(), Commutative())
    ELEMENTS: ClassVar[str] = "any"


@irdl_op_definition
class DivOp(BinaryOp):
    """`%r = ll.div %a, %b : tensor<4xf32>`: the correctly rounded quotient (numpy's true
    division; x / 0 is an infinity or NaN). Not x * (1 / y), up to an ulp from it."""

    name = "ll.div"
    traits = traits_def(Pure())
    ELEMENTS: ClassVar[str] = "float"


@irdl_op_definition
class IDivOp(BinaryOp):
    """`%r = ll.idiv %a, %b : tensor<4xi32>`: floor division; x idiv 0 is 0 (numpy's result)."""

    name = "ll.idiv"
    traits = traits_def(Pure())
    ELEMENTS: ClassVar[str] = "int"


@irdl_op_definition
class ModOp(BinaryOp):
    """`%r = ll.mod %a, %b : tensor<4xi32>`: sign of the divisor; x mod 0 is 0 (as numpy)."""

    name = "ll.mod"
    traits = traits_def(Pure())
    ELEMENTS: ClassVar[str] = "int"


class CompareOp(IRDLOperation, Canonicalized):
    """`%r = ll.<cmp> %a, %b : tensor<4xf32> -> tensor<4xi1>`"""

    T: ClassVar = VarConstraint("T", base(TensorType))
    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($res)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        result = TensorType(dtypes.BOOL_TYPE, list(shape_of(lhs)))
        super().__init__(operands=[lhs, rhs], result_types=[result])

    def verify_(self) -> None:
        check_elements(self, "operand 'lhs'", self.lhs, "any")
        check_result(self, self.res, shape_of(self.lhs), dtypes.BOOL_TYPE)


@irdl_op_definition
class CmpLtOp(CompareOp):
    """`%r = ll.cmplt %a, %b : tensor<4xf32> -> tensor<4xi1>`"""

    name = "ll.cmplt"
    traits = traits_def(Pure())


@irdl_op_definition
class CmpEqOp(CompareOp):
    """`%r = ll.cmpeq %a, %b : tensor<4xf32> -> tensor<4xi1>`"""

    name = "ll.cmpeq"
    traits = traits_def(Pure(), Commutative())


@irdl_op_definition
class WhereOp(IRDLOperation, Canonicalized):
    """`%r = ll.where %c, %a, %b : tensor<4xi1>, tensor<4xf32>`: a where c else b."""

    name = "ll.where"
    T: ClassVar = VarConstraint("T", base(TensorType))
    cond = operand_def(TensorType)
    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($res)"

    def __init__(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[cond, lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        check_elements(self, "operand 'lhs'", self.lhs, "any")
        want = TensorType(dtypes.BOOL_TYPE, list(shape_of(self.lhs)))
        if self.cond.type != want:
            fail(self, f"operand 'cond' has type {self.cond.type}, expected {want}")


# --------------------------------------------------------------------------- reduce


class ReduceKind(StrEnum):
    SUM = auto()
    MAX = auto()


@irdl_attr_definition
class ReduceKindAttr(EnumAttribute[ReduceKind], SpacedOpaqueSyntaxAttribute):
    """`sum` or `max`."""

    name = "ll.reduce_kind"


@irdl_op_definition
class ReduceOp(IRDLOperation, Canonicalized):
    """`%r = ll.reduce sum %x axes [1] : tensor<4x5xf32> -> tensor<4x1xf32>`

    The reduced axes keep size 1, so the result lines up with the input and an
    `expand` brings it back to the input's shape. NaN wins a max. Over no
    elements a sum is 0 and a max is -inf (the int minimum, false).
    """

    name = "ll.reduce"
    kind = prop_def(ReduceKindAttr)
    input = operand_def(TensorType)
    axes = prop_def(INT_ARRAY)
    res = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$kind $input `axes` $axes attr-dict `:` type($input) `->` type($res)"

    def __init__(self, kind: ReduceKind | str, input: SSAValue, axes: tuple[int, ...]):
        shape = shapes.reduce(shape_of(input), axes, keepdim=True)
        super().__init__(
            operands=[input],
            properties={"kind": ReduceKindAttr(ReduceKind(kind)), "axes": int_array(axes)},
            result_types=[TensorType(element_of(input), list(shape))],
        )

    def verify_(self) -> None:
        kind = "any" if self.kind.data == ReduceKind.MAX else "numeric"
        check_elements(self, "operand 'input'", self.input, kind)
        shape = shape_rule(self, shapes.reduce, shape_of(self.input), ints(self.axes), True)
        check_result(self, self.res, shape, element_of(self.input))


# --------------------------------------------------------------------------- movement


class MovementOp(MovementOpBase, Canonicalized):
    """A copy-free view: the result's elements are some of the input's, moved."""


@irdl_op_definition
class ReshapeOp(ToShapeOpBase, MovementOp):
    """`%r = ll.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>` (row-major order)."""

    name = "ll.reshape"

    def result_shape(self) -> tuple[int, ...]:
        return shapes.reshape(shape_of(self.input), shape_of(self.res))


@irdl_op_definition
class PermuteOp(PermuteOpBase, MovementOp):
    """`%r = ll.permute %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>`"""

    name = "ll.permute"


@irdl_op_definition
class ExpandOp(ToShapeOpBase, MovementOp):
    """`%r = ll.expand %x : tensor<1x4xf32> -> tensor<3x4xf32>`: size-1 axes repeat."""

    name = "ll.expand"

    def result_shape(self) -> tuple[int, ...]:
        return shapes.expand(shape_of(self.input), shape_of(self.res))


@irdl_op_definition
class PadOp(PadOpBase, MovementOp):
    """`%r = ll.pad %x low [1, 0] high [0, 2] value 0.0 : tensor<2x2xf32> -> tensor<3x4xf32>`

    New elements hold `value` (converted to the element type; `-inf` pads a max).
    """

    name = "ll.pad"


@irdl_op_definition
class ShrinkOp(MovementOp):
    """`%r = ll.shrink %x starts [0, 1] limits [2, 3] : tensor<4x4xf32> -> tensor<2x2xf32>`"""

    name = "ll.shrink"
    starts = prop_def(INT_ARRAY)
    limits = prop_def(INT_ARRAY)
    assembly_format = (
        "$input `starts` $starts `limits` $limits attr-dict `:` type($input) `->` type($res)"
    )

    def __init__(self, input: SSAValue, starts: tuple[int, ...], limits: tuple[int, ...]):
        shape = shapes.shrink(shape_of(input), starts, limits)
        super().__init__(
            operands=[input],
            properties={"starts": int_array(starts), "limits": int_array(limits)},
            result_types=[TensorType(element_of(input), list(shape))],
        )

    def result_shape(self) -> tuple[int, ...]:
        return shapes.shrink(shape_of(self.input), ints(self.starts), ints(self.limits))


@irdl_op_definition
class FlipOp(FlipOpBase, MovementOp):
    """`%r = ll.flip %x axes [0] : tensor<2x3xf32>`: reverse the named axes."""

    name = "ll.flip"


@irdl_op_definition
class StrideOp(MovementOp):
    """`%r = ll.stride %x [2, 1] : tensor<5x3xf32> -> tensor<3x3xf32>`: every k-th element."""

    name = "ll.stride"
    strides = prop_def(INT_ARRAY)
    assembly_format = "$input $strides attr-dict `:` type($input) `->` type($res)"

    def __init__(self, input: SSAValue, strides: tuple[int, ...]):
        shape = shapes.stride(shape_of(input), strides)
        super().__init__(
            operands=[input],
            properties={"strides": int_array(strides)},
            result_types=[TensorType(element_of(input), list(shape))],
        )

    def result_shape(self) -> tuple[int, ...]:
        return shapes.stride(shape_of(self.input), ints(self.strides))


UNARY_OPS = (NegOp, Exp2Op, Log2Op, SqrtOp, ReciprocalOp, SinOp)
BINARY_OPS = (AddOp, MulOp, MaxOp, DivOp, IDivOp, ModOp)
COMPARE_OPS = (CmpLtOp, CmpEqOp)
MOVEMENT_OPS = (ReshapeOp, PermuteOp, ExpandOp, PadOp, ShrinkOp, FlipOp, StrideOp)

LL = Dialect(
    "ll",
    [ConstOp, *UNARY_OPS, CastOp, *BINARY_OPS, *COMPARE_OPS, WhereOp, ReduceOp, *MOVEMENT_OPS],
    [ReduceKindAttr],
)
