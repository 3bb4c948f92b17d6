"""The `hl` dialect's linear algebra and nn ops: matmul, conv2d, the pools, softmax and
the norms. Part of the `hl` dialect (`irtensor.dialects.hl` lists and re-exports them);
a separate module so elementwise/movement ops and nn ops each stay one short file.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IntegerAttr, TensorType, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from irtensor import shapes
from irtensor.dialects._base import (
    F64_ATTR,
    I64_ATTR,
    INT_ARRAY,
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


def _tensor(shape: tuple[int, ...], like: SSAValue) -> TensorType:
    return TensorType(element_of(like), list(shape))


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


NN_OPS = (
    MatmulOp, Conv2dOp, MaxPool2dOp, AvgPool2dOp, SoftmaxOp, LogSoftmaxOp,
    LayerNormOp, BatchNormOp, GroupNormOp,
)
