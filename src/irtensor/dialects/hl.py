"""The `hl` dialect: tensor programs as a user writes them.

Elementwise ops broadcast as numpy does; operands of one op share an element
type (the frontend inserts `hl.cast` where numpy would promote). Every op here
is an HLOP: `decompose-hlops` and `conv-to-mul-sum` rewrite it into `ll`.
Constants are `ll.const` at both levels.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IntegerAttr, TensorType, UnitAttr, i64
from xdsl.ir import Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Commutative, Pure

from irtensor import dtypes, shapes
from irtensor.dialects._base import (
    I64_ATTR,
    INT_ARRAY,
    CastOpBase,
    SameTypeUnaryOp,
    check_elements,
    check_result,
    check_same_element,
    element_of,
    fail,
    int_array,
    ints,
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
from irtensor.dialects.hl_nn import (
    NN_OPS,
    AvgPool2dOp,
    AxisOp,
    BatchNormOp,
    Conv2dOp,
    GroupNormOp,
    LayerNormOp,
    LogSoftmaxOp,
    MatmulOp,
    MaxPool2dOp,
    NormOp,
    Pool2dOp,
    SoftmaxOp,
)


def _tensor(shape: tuple[int, ...], like: SSAValue) -> TensorType:
    return TensorType(element_of(like), list(shape))


# --------------------------------------------------------------------------- unary


class FloatUnaryOp(SameTypeUnaryOp):
    ELEMENTS: ClassVar[str] = "float"


class NumericUnaryOp(SameTypeUnaryOp):
    ELEMENTS: ClassVar[str] = "numeric"


def _unary(name: str, parent: type[SameTypeUnaryOp], doc: str) -> type[SameTypeUnaryOp]:
    cls = type(
        name.title().replace("_", "") + "Op",
        (parent,),
        {"name": f"hl.{name}", "__doc__": f"`%r = hl.{name} %x : tensor<4xf32>`: {doc}"},
    )
    return irdl_op_definition(cls)


NegOp = _unary("neg", NumericUnaryOp, "-x")
AbsOp = _unary("abs", NumericUnaryOp, "|x|")
ReluOp = _unary("relu", NumericUnaryOp, "max(x, 0)")
ExpOp = _unary("exp", FloatUnaryOp, "e**x")
Exp2Op = _unary("exp2", FloatUnaryOp, "2**x")
LogOp = _unary("log", FloatUnaryOp, "natural logarithm")
Log2Op = _unary("log2", FloatUnaryOp, "base-2 logarithm")
SqrtOp = _unary("sqrt", FloatUnaryOp, "square root")
RsqrtOp = _unary("rsqrt", FloatUnaryOp, "1/sqrt(x)")
ReciprocalOp = _unary("reciprocal", FloatUnaryOp, "1/x")
SinOp = _unary("sin", FloatUnaryOp, "sine")
CosOp = _unary("cos", FloatUnaryOp, "cosine")
SigmoidOp = _unary("sigmoid", FloatUnaryOp, "1/(1+e**-x)")
TanhOp = _unary("tanh", FloatUnaryOp, "hyperbolic tangent")


@irdl_op_definition
class NotOp(SameTypeUnaryOp):
    """`%r = hl.not %x : tensor<4xi1>`: logical not."""

    name = "hl.not"
    ELEMENTS: ClassVar[str] = "bool"


@irdl_op_definition
class CastOp(CastOpBase):
    """`%r = hl.cast %x : tensor<4xf32> -> tensor<4xi32>` converts as numpy's astype."""

    name = "hl.cast"


# --------------------------------------------------------------------------- binary


class BinaryOp(IRDLOperation):
    """`%r = hl.<op> %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>`

    Operands broadcast as in numpy and share one element type.
    """

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    res = result_def(TensorType)
    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($res)"
    )
    ELEMENTS: ClassVar[str] = "numeric"
    COMPARE: ClassVar[bool] = False

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        shape = shapes.broadcast(shape_of(lhs), shape_of(rhs))
        element = dtypes.BOOL_TYPE if self.COMPARE else element_of(lhs)
        super().__init__(operands=[lhs, rhs], result_types=[TensorType(element, list(shape))])

    def verify_(self) -> None:
        check_elements(self, "operand 'lhs'", self.lhs, self.ELEMENTS)
        check_same_element(self, ("lhs", "rhs"), (self.lhs, self.rhs))
        shape = shape_rule(self, shapes.broadcast, shape_of(self.lhs), shape_of(self.rhs))
        element = dtypes.BOOL_TYPE if self.COMPARE else element_of(self.lhs)
        check_result(self, self.res, shape, element)


def _binary(
    name: str, elements: str, doc: str, commutative: bool = False, compare: bool = False
) -> type[BinaryOp]:
    traits = traits_def(Pure(), Commutative()) if commutative else traits_def(Pure())
    cls = type(
        name.title().replace("_", "") + "Op",
        (BinaryOp,),
        {
            "name": f"hl.{name}",
            "__doc__": f"`%r = hl.{name} %a, %b : ...`: {doc}",
            "traits": traits,
            "ELEMENTS": elements,
            "COMPARE": compare,
            "__annotations__": {"ELEMENTS": ClassVar[str], "COMPARE": ClassVar[bool]},
        },
    )
    return irdl_op_definition(cls)


AddOp = _binary("add", "numeric", "a + b", commutative=True)
SubOp = _binary("sub", "numeric", "a - b")
MulOp = _binary("mul", "numeric", "a * b", commutative=True)
DivOp = _binary("div", "float", "a / b (true division; floats only, use hl.idiv for ints)")
PowOp = _binary("pow", "float", "a ** b")
MaximumOp = _binary("maximum", "any", "numpy.maximum (NaN wins)", commutative=True)
MinimumOp = _binary("minimum", "any", "numpy.minimum (NaN wins)", commutative=True)
IDivOp = _binary("idiv", "int", "a // b, floor division; x // 0 is 0 as in numpy")
ModOp = _binary("mod", "int", "a % b, sign of the divisor; x % 0 is 0 as in numpy")
AndOp = _binary("and", "bool", "logical and", commutative=True)
OrOp = _binary("or", "bool", "logical or", commutative=True)
XorOp = _binary("xor", "bool", "logical xor", commutative=True)
LtOp = _binary("lt", "any", "a < b", compare=True)
LeOp = _binary("le", "any", "a <= b", compare=True)
GtOp = _binary("gt", "any", "a > b", compare=True)
GeOp = _binary("ge", "any", "a >= b", compare=True)
EqOp = _binary("eq", "any", "a == b", commutative=True, compare=True)
NeOp = _binary("ne", "any", "a != b", commutative=True, compare=True)


@irdl_op_definition
class WhereOp(IRDLOperation):
    """`%r = hl.where %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>`

    a where c else b; the three operands broadcast together.
    """

    name = "hl.where"
    cond = operand_def(TensorType)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    res = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($lhs) `,` type($rhs) "
        "`->` type($res)"
    )

    def __init__(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue):
        shape = shapes.broadcast(shape_of(cond), shape_of(lhs), shape_of(rhs))
        super().__init__(operands=[cond, lhs, rhs], result_types=[_tensor(shape, lhs)])

    def verify_(self) -> None:
        check_elements(self, "operand 'cond'", self.cond, "bool")
        check_elements(self, "operand 'lhs'", self.lhs, "any")
        check_same_element(self, ("lhs", "rhs"), (self.lhs, self.rhs))
        operands = (shape_of(self.cond), shape_of(self.lhs), shape_of(self.rhs))
        shape = shape_rule(self, shapes.broadcast, *operands)
        check_result(self, self.res, shape, element_of(self.lhs))


# --------------------------------------------------------------------------- reductions


class ReductionOp(IRDLOperation):
    """`%r = hl.<op> %x axes [1] keepdim : tensor<4x5xf32> -> tensor<4x1xf32>`"""

    input = operand_def(TensorType)
    axes = prop_def(INT_ARRAY)
    keepdim = opt_prop_def(UnitAttr)
    res = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `axes` $axes (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($res)"
    )
    ELEMENTS: ClassVar[str] = "numeric"

    def __init__(self, input: SSAValue, axes: tuple[int, ...], keepdim: bool = False):
        shape = shapes.reduce(shape_of(input), axes, keepdim)
        props = {"axes": int_array(axes)} | ({"keepdim": UnitAttr()} if keepdim else {})
        super().__init__(operands=[input], properties=props, result_types=[_tensor(shape, input)])

    def verify_(self) -> None:
        check_elements(self, "operand 'input'", self.input, self.ELEMENTS)
        keep = self.keepdim is not None
        shape = shape_rule(self, shapes.reduce, shape_of(self.input), ints(self.axes), keep)
        check_result(self, self.res, shape, element_of(self.input))


@irdl_op_definition
class SumOp(ReductionOp):
    """Sum over `axes`; the sum of no elements is 0."""

    name = "hl.sum"


@irdl_op_definition
class MaxOp(ReductionOp):
    """Maximum over `axes`; NaN wins; over no elements it is -inf (the int minimum, false)."""

    name = "hl.max"
    ELEMENTS: ClassVar[str] = "any"


@irdl_op_definition
class MinOp(ReductionOp):
    """Minimum over `axes`; NaN wins; over no elements it is +inf (the int maximum, true)."""

    name = "hl.min"
    ELEMENTS: ClassVar[str] = "any"


@irdl_op_definition
class MeanOp(ReductionOp):
    """Mean over `axes` (floats)."""

    name = "hl.mean"
    ELEMENTS: ClassVar[str] = "float"


@irdl_op_definition
class VarOp(ReductionOp):
    """`%r = hl.var %x axes [0] correction 0 : ...`: variance, sum((x-mean)^2)/(n-correction).

    The correction defaults to 1 (Bessel's), as in tinygrad and torch; numpy's
    default is 0.
    """

    name = "hl.var"
    correction = prop_def(I64_ATTR, default_value=IntegerAttr(1, i64))
    assembly_format = (
        "$input `axes` $axes (`keepdim` $keepdim^)? (`correction` $correction^)? attr-dict "
        "`:` type($input) `->` type($res)"
    )
    ELEMENTS: ClassVar[str] = "float"

    def __init__(
        self, input: SSAValue, axes: tuple[int, ...], keepdim: bool = False, correction: int = 1
    ):
        super().__init__(input, axes, keepdim)
        self.correction = IntegerAttr(correction, i64)


# --------------------------------------------------------------------------- movement


@irdl_op_definition
class ReshapeOp(ToShapeOpBase):
    """`%r = hl.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>` (row-major order)."""

    name = "hl.reshape"

    def result_shape(self) -> tuple[int, ...]:
        return shapes.reshape(shape_of(self.input), shape_of(self.res))


@irdl_op_definition
class PermuteOp(PermuteOpBase):
    """`%r = hl.permute %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>`"""

    name = "hl.permute"


@irdl_op_definition
class BroadcastToOp(ToShapeOpBase):
    """`%r = hl.broadcast_to %x : tensor<4xf32> -> tensor<3x4xf32>` (numpy.broadcast_to)."""

    name = "hl.broadcast_to"

    def result_shape(self) -> tuple[int, ...]:
        return shapes.broadcast_to(shape_of(self.input), shape_of(self.res))


@irdl_op_definition
class PadOp(PadOpBase):
    """`%r = hl.pad %x low [1, 0] high [0, 2] value 1.0 : tensor<2x2xf32> -> tensor<3x4xf32>`"""

    name = "hl.pad"


@irdl_op_definition
class SliceOp(MovementOpBase):
    """`%r = hl.slice %x starts [1] limits [7] steps [2] : tensor<8xf32> -> tensor<3xf32>`

    numpy's x[1:7:2] with the bounds already clamped; negative steps are a
    `hl.flip` followed by a slice.
    """

    name = "hl.slice"
    starts = prop_def(INT_ARRAY)
    limits = prop_def(INT_ARRAY)
    steps = prop_def(INT_ARRAY)
    assembly_format = (
        "$input `starts` $starts `limits` $limits `steps` $steps attr-dict "
        "`:` type($input) `->` type($res)"
    )

    def __init__(
        self,
        input: SSAValue,
        starts: tuple[int, ...],
        limits: tuple[int, ...],
        steps: tuple[int, ...],
    ):
        shape = shapes.slice_(shape_of(input), starts, limits, steps)
        props = {"starts": int_array(starts), "limits": int_array(limits)}
        props["steps"] = int_array(steps)
        super().__init__(operands=[input], properties=props, result_types=[_tensor(shape, input)])

    def result_shape(self) -> tuple[int, ...]:
        return shapes.slice_(
            shape_of(self.input), ints(self.starts), ints(self.limits), ints(self.steps)
        )


@irdl_op_definition
class FlipOp(FlipOpBase):
    """`%r = hl.flip %x axes [0] : tensor<2x3xf32>`: reverse the named axes."""

    name = "hl.flip"


@irdl_op_definition
class ConcatOp(IRDLOperation):
    """`%r = hl.concat %a, %b axis 0 : tensor<2xf32>, tensor<3xf32> -> tensor<5xf32>`"""

    name = "hl.concat"
    inputs = var_operand_def(TensorType)
    axis = prop_def(I64_ATTR)
    res = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$inputs `axis` $axis attr-dict `:` type($inputs) `->` type($res)"

    def __init__(self, inputs: list[SSAValue], axis: int):
        shape = shapes.concat([shape_of(v) for v in inputs], axis)
        super().__init__(
            operands=[inputs], properties={"axis": IntegerAttr(axis, i64)},
            result_types=[_tensor(shape, inputs[0])],
        )

    def verify_(self) -> None:
        if not self.inputs:
            fail(self, "needs at least one input")
        names = [f"inputs#{i}" for i in range(len(self.inputs))]
        check_elements(self, "operand 'inputs#0'", self.inputs[0], "any")
        check_same_element(self, names, list(self.inputs))
        all_shapes = [shape_of(v) for v in self.inputs]
        shape = shape_rule(self, shapes.concat, all_shapes, self.axis.value.data)
        check_result(self, self.res, shape, element_of(self.inputs[0]))



UNARY_OPS = (
    NegOp, AbsOp, ReluOp, ExpOp, Exp2Op, LogOp, Log2Op, SqrtOp, RsqrtOp, ReciprocalOp,
    SinOp, CosOp, SigmoidOp, TanhOp, NotOp,
)
BINARY_OPS = (
    AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp, IDivOp, ModOp, AndOp, OrOp, XorOp,
)
COMPARE_OPS = (LtOp, LeOp, GtOp, GeOp, EqOp, NeOp)
REDUCTION_OPS = (SumOp, MaxOp, MinOp, MeanOp, VarOp)
MOVEMENT_OPS = (ReshapeOp, PermuteOp, BroadcastToOp, PadOp, SliceOp, FlipOp, ConcatOp)

HL = Dialect(
    "hl",
    [*UNARY_OPS, CastOp, *BINARY_OPS, *COMPARE_OPS, WhereOp, *REDUCTION_OPS, *MOVEMENT_OPS,
     *NN_OPS],
    [],
)

__all__ = [
    "BINARY_OPS",
    "COMPARE_OPS",
    "HL",
    "MOVEMENT_OPS",
    "NN_OPS",
    "REDUCTION_OPS",
    "UNARY_OPS",
    "AbsOp",
    "AddOp",
    "AndOp",
    "AvgPool2dOp",
    "AxisOp",
    "BatchNormOp",
    "BinaryOp",
    "BroadcastToOp",
    "CastOp",
    "ConcatOp",
    "Conv2dOp",
    "CosOp",
    "DivOp",
    "EqOp",
    "Exp2Op",
    "ExpOp",
    "FlipOp",
    "FloatUnaryOp",
    "GeOp",
    "GroupNormOp",
    "GtOp",
    "IDivOp",
    "LayerNormOp",
    "LeOp",
    "Log2Op",
    "LogOp",
    "LogSoftmaxOp",
    "LtOp",
    "MatmulOp",
    "MaxOp",
    "MaxPool2dOp",
    "MaximumOp",
    "MeanOp",
    "MinOp",
    "MinimumOp",
    "ModOp",
    "MulOp",
    "NeOp",
    "NegOp",
    "NormOp",
    "NotOp",
    "NumericUnaryOp",
    "OrOp",
    "PadOp",
    "PermuteOp",
    "Pool2dOp",
    "PowOp",
    "ReciprocalOp",
    "ReductionOp",
    "ReluOp",
    "ReshapeOp",
    "RsqrtOp",
    "SigmoidOp",
    "SinOp",
    "SliceOp",
    "SoftmaxOp",
    "SqrtOp",
    "SubOp",
    "SumOp",
    "TanhOp",
    "VarOp",
    "WhereOp",
    "XorOp",
]
