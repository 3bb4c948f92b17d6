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
    VarConstraint,
    base,
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
    F64_ATTR,
    I64_ATTR,
    INT_ARRAY,
    CastOpBase,
    SameTypeUnaryOp,
    check_elements,
    check_result,
    check_same_element,
    element_of,
    f64_attr,
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


# --------------------------------------------------------------------------- linear algebra, nn


@irdl_op_definition
class MatmulOp(IRDLOperation):
    """`%r = hl.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>`

    numpy.matmul: batch axes broadcast; 1-D operands are promoted and the added
    axis dropped again.
    """

    name = "hl.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    res = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($res)"
    )

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        shape = shapes.matmul(shape_of(lhs), shape_of(rhs))
        super().__init__(operands=[lhs, rhs], result_types=[_tensor(shape, lhs)])

    def verify_(self) -> None:
        check_elements(self, "operand 'lhs'", self.lhs, "numeric")
        check_same_element(self, ("lhs", "rhs"), (self.lhs, self.rhs))
        shape = shape_rule(self, shapes.matmul, shape_of(self.lhs), shape_of(self.rhs))
        check_result(self, self.res, shape, element_of(self.lhs))


def _pair(values: tuple[int, ...] | int) -> tuple[int, ...]:
    return (values, values) if isinstance(values, int) else tuple(values)


def _pads(padding: tuple[int, ...] | int) -> tuple[int, ...]:
    """An int, an (h, w) pair, or [top, left, bottom, right]."""
    p = _pair(padding)
    return p * 2 if len(p) == 2 else p


@irdl_op_definition
class Conv2dOp(IRDLOperation):
    """`%r = hl.conv2d %x, %w strides [2, 2] padding [1, 1, 1, 1] : ...`

    Cross-correlation as in torch: input (N, C, H, W), weight (O, C/groups, KH,
    KW), result (N, O, OH, OW). `padding` is [top, left, bottom, right]; the
    defaults (strides and dilations [1, 1], padding 0, groups 1) are not printed.
    """

    name = "hl.conv2d"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    strides = prop_def(INT_ARRAY, default_value=int_array((1, 1)))
    padding = prop_def(INT_ARRAY, default_value=int_array((0, 0, 0, 0)))
    dilations = prop_def(INT_ARRAY, default_value=int_array((1, 1)))
    groups = prop_def(I64_ATTR, default_value=IntegerAttr(1, i64))
    res = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight (`strides` $strides^)? (`padding` $padding^)? "
        "(`dilations` $dilations^)? (`groups` $groups^)? attr-dict "
        "`:` type($input) `,` type($weight) `->` type($res)"
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        strides: tuple[int, ...] | int = 1,
        padding: tuple[int, ...] | int = 0,
        dilations: tuple[int, ...] | int = 1,
        groups: int = 1,
    ):
        s, p, d = _pair(strides), _pads(padding), _pair(dilations)
        shape = shapes.conv2d(shape_of(input), shape_of(weight), s, p, d, groups)
        super().__init__(
            operands=[input, weight],
            properties={
                "strides": int_array(s), "padding": int_array(p),
                "dilations": int_array(d), "groups": IntegerAttr(groups, i64),
            },
            result_types=[_tensor(shape, input)],
        )

    def verify_(self) -> None:
        check_elements(self, "operand 'input'", self.input, "float")
        check_same_element(self, ("input", "weight"), (self.input, self.weight))
        shape = shape_rule(
            self, shapes.conv2d, shape_of(self.input), shape_of(self.weight),
            ints(self.strides), ints(self.padding), ints(self.dilations), self.groups.value.data,
        )
        check_result(self, self.res, shape, element_of(self.input))


class Pool2dOp(IRDLOperation):
    """`%r = hl.<pool> %x kernel [2, 2] strides [2, 2] : ...` over the last two axes.

    `strides` is always written; in Python it defaults to the kernel, as in torch.
    """

    input = operand_def(TensorType)
    kernel = prop_def(INT_ARRAY)
    strides = prop_def(INT_ARRAY)  # always printed: torch's default is the kernel, MLIR's 1
    padding = prop_def(INT_ARRAY, default_value=int_array((0, 0, 0, 0)))
    res = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `kernel` $kernel `strides` $strides (`padding` $padding^)? attr-dict "
        "`:` type($input) `->` type($res)"
    )

    def __init__(
        self,
        input: SSAValue,
        kernel: tuple[int, ...] | int,
        strides: tuple[int, ...] | int | None = None,
        padding: tuple[int, ...] | int = 0,
    ):
        k = _pair(kernel)
        s, p = _pair(strides) if strides is not None else k, _pads(padding)
        shape = shapes.pool2d(shape_of(input), k, s, p)
        super().__init__(
            operands=[input],
            properties={"kernel": int_array(k), "strides": int_array(s), "padding": int_array(p)},
            result_types=[_tensor(shape, input)],
        )

    def verify_(self) -> None:
        check_elements(self, "operand 'input'", self.input, "float")
        shape = shape_rule(
            self, shapes.pool2d, shape_of(self.input),
            ints(self.kernel), ints(self.strides), ints(self.padding),
        )
        check_result(self, self.res, shape, element_of(self.input))


@irdl_op_definition
class MaxPool2dOp(Pool2dOp):
    """Max over each window; padding never wins (it is -inf)."""

    name = "hl.max_pool2d"


@irdl_op_definition
class AvgPool2dOp(Pool2dOp):
    """Mean over each window, padding counted as zeros (torch's count_include_pad=True)."""

    name = "hl.avg_pool2d"


class AxisOp(IRDLOperation):
    """`%r = hl.<op> %x axis 1 : tensor<2x3xf32>`"""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    axis = prop_def(I64_ATTR)
    res = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input `axis` $axis attr-dict `:` type($res)"

    def __init__(self, input: SSAValue, axis: int):
        super().__init__(
            operands=[input], properties={"axis": IntegerAttr(axis, i64)},
            result_types=[input.type],
        )

    def verify_(self) -> None:
        check_elements(self, "operand 'input'", self.input, "float")
        shape_rule(self, shapes.check_axes, [self.axis.value.data], len(shape_of(self.input)),
                   "axis")


@irdl_op_definition
class SoftmaxOp(AxisOp):
    """exp(x - max) / sum(exp(x - max)) along `axis`."""

    name = "hl.softmax"


@irdl_op_definition
class LogSoftmaxOp(AxisOp):
    """x - max - log(sum(exp(x - max))) along `axis`."""

    name = "hl.log_softmax"


class NormOp(IRDLOperation):
    """Normalisation without affine parameters: (x - mean) / sqrt(var + eps), biased var."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    eps = prop_def(F64_ATTR, default_value=f64_attr(1e-5))
    res = result_def(T)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        check_elements(self, "operand 'input'", self.input, "float")


@irdl_op_definition
class LayerNormOp(NormOp):
    """`%r = hl.layer_norm %x axes [2] : tensor<2x3x4xf32>`: statistics over `axes`."""

    name = "hl.layer_norm"
    axes = prop_def(INT_ARRAY)
    assembly_format = "$input `axes` $axes (`eps` $eps^)? attr-dict `:` type($res)"

    def __init__(self, input: SSAValue, axes: tuple[int, ...], eps: float = 1e-5):
        super().__init__(
            operands=[input], properties={"axes": int_array(axes), "eps": f64_attr(eps)},
            result_types=[input.type],
        )

    def verify_(self) -> None:
        super().verify_()
        shape_rule(self, shapes.check_axes, ints(self.axes), len(shape_of(self.input)))


@irdl_op_definition
class BatchNormOp(NormOp):
    """`%r = hl.batch_norm %x : tensor<8x3x5x5xf32>`: batch statistics over every axis but 1."""

    name = "hl.batch_norm"
    assembly_format = "$input (`eps` $eps^)? attr-dict `:` type($res)"

    def __init__(self, input: SSAValue, eps: float = 1e-5):
        super().__init__(
            operands=[input], properties={"eps": f64_attr(eps)}, result_types=[input.type]
        )

    def verify_(self) -> None:
        super().verify_()
        if len(shape_of(self.input)) < 2:
            fail(self, f"operand 'input' has shape {shapes.fmt(shape_of(self.input))}, "
                       "expected rank >= 2 (N, C, ...)")


@irdl_op_definition
class GroupNormOp(NormOp):
    """`%r = hl.group_norm %x groups 4 : tensor<8x16x5x5xf32>`: statistics per (n, group)."""

    name = "hl.group_norm"
    groups = prop_def(I64_ATTR)
    assembly_format = "$input `groups` $groups (`eps` $eps^)? attr-dict `:` type($res)"

    def __init__(self, input: SSAValue, groups: int, eps: float = 1e-5):
        super().__init__(
            operands=[input],
            properties={"groups": IntegerAttr(groups, i64), "eps": f64_attr(eps)},
            result_types=[input.type],
        )

    def verify_(self) -> None:
        super().verify_()
        shape, g = shape_of(self.input), self.groups.value.data
        if len(shape) < 2:
            fail(self, f"operand 'input' has shape {shapes.fmt(shape)}, expected rank >= 2")
        if g < 1 or shape[1] % g:
            fail(self, f"groups={g} must divide the {shape[1]} channels of axis 1")


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
NN_OPS = (
    MatmulOp, Conv2dOp, MaxPool2dOp, AvgPool2dOp, SoftmaxOp, LogSoftmaxOp,
    LayerNormOp, BatchNormOp, GroupNormOp,
)

HL = Dialect(
    "hl",
    [*UNARY_OPS, CastOp, *BINARY_OPS, *COMPARE_OPS, WhereOp, *REDUCTION_OPS, *MOVEMENT_OPS,
     *NN_OPS],
    [],
)
