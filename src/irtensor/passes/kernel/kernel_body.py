"""Building a kernel's body: `ll` node trees become scalar arith/math ops.

Each `ll` elementwise op has a short scalar definition here, with numpy's
meaning kept (floor division and modulo with x // 0 = 0, NaN-propagating max,
casts as numpy's astype). Reads become block arguments with their accesses;
a pad of a computed value becomes a `select` on its validity, computed from
`kernel.index`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IndexType, IntegerAttr, TensorType, f32, i1, i32
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSet,
)
from xdsl.ir.affine.affine_set import AffineConstraintKind

from irtensor import dtypes
from irtensor.dialects import kernel, ll
from irtensor.dialects._base import scalar_attr
from irtensor.interp.ll_impls import scalar_of
from irtensor.passes.kernel.nodes import Apply, Const, Masked, Node, Read
from irtensor.passes.kernel.views import Constraints, substitute, substitute_constraint


class BodyBuilder:
    """Emits one kernel region; collects the reads it makes."""

    def __init__(
        self,
        rank: int,
        reduction: Sequence[int] = (),
        accumulator: Attribute | None = None,
        relabel: Sequence[AffineExpr] | None = None,
        unsigned_max: bool = False,
    ):
        self.rank = rank
        self.block = Block()
        self.inputs: list[SSAValue] = []
        self.accesses: list[kernel.AccessAttr] = []
        self.args: dict[tuple[Any, ...], SSAValue] = {}
        self.relabel = list(relabel) if relabel is not None else None
        self.accumulator = (self.block.insert_arg(dtypes.signless(accumulator), 0)
                            if accumulator else None)
        self.indices: dict[int, SSAValue] = {}
        if self.accumulator is not None and unsigned_max:
            self.accumulator = self.flip_sign_bit(self.accumulator)

    def add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    # ------------------------------------------------------------------ nodes

    def emit(self, node: Node, accumulator_for: Node | None = None) -> SSAValue:
        if accumulator_for is not None and node is accumulator_for:
            assert self.accumulator is not None
            return self.accumulator
        if isinstance(node, Read):
            return self.read(node)
        if isinstance(node, Const):
            return self.constant(node.value, node.element)
        if isinstance(node, Masked):
            value = self.emit(node.child, accumulator_for)
            valid = self.validity(node.valid)
            return self.add(arith.SelectOp(valid, value, self.constant(node.pad, node.element)))
        assert isinstance(node, Apply)
        args = [self.emit(a, accumulator_for) for a in node.args]
        return SCALAR[node.op](self, args, node.element, [a.element for a in node.args])

    def relabeled(self, expr: AffineExpr) -> AffineExpr:
        return substitute(expr, self.relabel) if self.relabel is not None else expr

    def read(self, node: Any) -> SSAValue:
        exprs = tuple(self.relabeled(e) for e in node.exprs)
        valid = tuple(substitute_constraint(c, self.relabel) if self.relabel is not None else c
                      for c in node.valid)
        key = (id(node.buffer), tuple(map(str, exprs)), tuple(map(str, valid)), node.pad)
        if key not in self.args:
            access = kernel.AccessAttr(AffineMap(self.rank, 0, exprs),
                                       AffineSet(self.rank, 0, valid), node.pad)
            self.inputs.append(node.buffer)
            self.accesses.append(access)
            self.args[key] = self.block.insert_arg(dtypes.signless(node.element),
                                                   len(self.block.args))
        return self.args[key]

    def constant(self, value: float | int | bool, element: Attribute) -> SSAValue:
        """A pad value (a float property) or a constant as the element type converts it:
        -inf is an int type's own lowest value (false for bool), as the interpreter has it."""
        converted = scalar_of(value, element).item()
        if dtypes.is_int(element):
            converted = dtypes.as_signless_value(converted, element)
        computed = dtypes.signless(element)
        return self.add(arith.ConstantOp(scalar_attr(converted, computed), computed))

    def flip_sign_bit(self, value: SSAValue) -> SSAValue:
        """x ^ 0x80...: maps unsigned order onto signed order and back."""
        t = value.type
        bit = self.add(arith.ConstantOp(IntegerAttr(-(1 << (dtypes.int_width(t) - 1)), t), t))
        return self.add(arith.XOrIOp(value, bit))

    # ------------------------------------------------------------------ indices

    def index(self, dim: int) -> SSAValue:
        if dim not in self.indices:
            self.indices[dim] = self.add(kernel.IndexOp(dim))
        return self.indices[dim]

    def index_expr(self, expr: AffineExpr) -> SSAValue:
        if isinstance(expr, AffineDimExpr):
            return self.index(expr.position)
        if isinstance(expr, AffineConstantExpr):
            return self.add(arith.ConstantOp(IntegerAttr(expr.value, IndexType())))
        assert isinstance(expr, AffineBinaryOpExpr)
        a, b = self.index_expr(expr.lhs), self.index_expr(expr.rhs)
        if expr.kind == AffineBinaryOpKind.Add:
            return self.add(arith.AddiOp(a, b))
        if expr.kind == AffineBinaryOpKind.Mul:
            return self.add(arith.MuliOp(a, b))
        quotient = self.add(arith.FloorDivSIOp(a, b))
        if expr.kind == AffineBinaryOpKind.FloorDiv:
            return quotient
        assert expr.kind == AffineBinaryOpKind.Mod  # a - (a floordiv b) * b: a floor modulo
        return self.add(arith.SubiOp(a, self.add(arith.MuliOp(quotient, b))))

    def validity(self, constraints: Constraints) -> SSAValue:
        result: SSAValue | None = None
        zero = self.add(arith.ConstantOp(IntegerAttr(0, IndexType())))
        for c in constraints:
            if self.relabel is not None:
                c = substitute_constraint(c, self.relabel)
            value = self.index_expr(c.lhs - c.rhs)
            predicate = "sge" if c.kind == AffineConstraintKind.ge else "eq"
            holds = self.add(arith.CmpiOp(value, zero, predicate))
            result = holds if result is None else self.add(arith.AndIOp(result, holds))
        if result is None:
            return self.add(arith.ConstantOp(IntegerAttr(1, i1)))
        return result

    # ------------------------------------------------------------------ the kernel

    def finish(
        self,
        name: str,
        space: Sequence[int],
        value: SSAValue,
        writes: AffineMap,
        result: TensorType,
        reduce: Sequence[int] = (),
        combiner: str | None = None,
        epilogue: tuple[BodyBuilder, SSAValue] | None = None,
    ) -> kernel.KernelOp:
        self.block.add_op(kernel.YieldOp(value))
        inputs, accesses = list(self.inputs), list(self.accesses)
        epilogue_region = None
        if epilogue is not None:
            builder, epilogue_value = epilogue
            builder.block.add_op(kernel.YieldOp(epilogue_value))
            inputs += builder.inputs
            accesses += builder.accesses
            epilogue_region = Region(builder.block)
        return kernel.KernelOp(
            name, inputs, space, accesses, writes, result, Region(self.block),
            reduce=reduce, combiner=combiner, epilogue=epilogue_region,
            epilogue_inputs=len(epilogue[0].inputs) if epilogue is not None else 0,
        )


# --------------------------------------------------------------------------- scalar ops

# Each scalar op gets the values (in arith's signless types), the result's element type
# and its operands' element types (unsigned or not, which the values no longer say).
Emit = Callable[[BodyBuilder, list[SSAValue], Attribute, list[Attribute]], SSAValue]


def _float_or_int(float_op: type[Operation], int_op: type[Operation]) -> Emit:
    def emit(b: BodyBuilder, args: list[SSAValue], element: Attribute,
             sources: list[Attribute]) -> SSAValue:
        op = float_op if dtypes.is_float(args[0].type) else int_op
        return b.add(op(*args))

    return emit


def _unary(op: type[Operation]) -> Emit:
    return lambda b, args, element, sources: b.add(op(args[0]))


def _neg(b: BodyBuilder, args: list[SSAValue], element: Attribute,
         sources: list[Attribute]) -> SSAValue:
    if dtypes.is_float(element):
        return b.add(arith.NegfOp(args[0]))
    return b.add(arith.SubiOp(b.constant(0, element), args[0]))


def _reciprocal(b: BodyBuilder, args: list[SSAValue], element: Attribute,
                sources: list[Attribute]) -> SSAValue:
    return b.add(arith.DivfOp(b.constant(1.0, element), args[0]))


def _divide(b: BodyBuilder, args: list[SSAValue], element: Attribute,
            sources: list[Attribute]) -> SSAValue:
    return b.add(arith.DivfOp(*args))


def _max(b: BodyBuilder, args: list[SSAValue], element: Attribute,
         sources: list[Attribute]) -> SSAValue:
    if dtypes.is_float(element):
        return b.add(arith.MaximumfOp(*args))
    unsigned = dtypes.is_bool(element) or dtypes.is_unsigned(element)
    return b.add((arith.MaxUIOp if unsigned else arith.MaxSIOp)(*args))


def _compare(float_pred: str, signed_pred: str, unsigned_pred: str) -> Emit:
    def emit(b: BodyBuilder, args: list[SSAValue], element: Attribute,
             sources: list[Attribute]) -> SSAValue:
        t = sources[0]
        if dtypes.is_float(t):
            return b.add(arith.CmpfOp(args[0], args[1], float_pred))
        unsigned = dtypes.is_bool(t) or dtypes.is_unsigned(t)
        return b.add(arith.CmpiOp(args[0], args[1], unsigned_pred if unsigned else signed_pred))

    return emit


def _where(b: BodyBuilder, args: list[SSAValue], element: Attribute,
           sources: list[Attribute]) -> SSAValue:
    return b.add(arith.SelectOp(*args))


def _guarded_division(b: BodyBuilder, args: list[SSAValue], element: Attribute
                      ) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(divisor == 0, a safe divisor, zero): x // 0 and x % 0 are 0, as in numpy."""
    zero = b.constant(0, element)
    by_zero = b.add(arith.CmpiOp(args[1], zero, "eq"))
    safe = b.add(arith.SelectOp(by_zero, b.constant(1, element), args[1]))
    return by_zero, safe, zero


def _idiv(b: BodyBuilder, args: list[SSAValue], element: Attribute,
          sources: list[Attribute]) -> SSAValue:
    by_zero, safe, zero = _guarded_division(b, args, element)
    divide = arith.DivUIOp if dtypes.is_unsigned(element) else arith.FloorDivSIOp
    quotient = b.add(divide(args[0], safe))
    return b.add(arith.SelectOp(by_zero, zero, quotient))


def _mod(b: BodyBuilder, args: list[SSAValue], element: Attribute,
         sources: list[Attribute]) -> SSAValue:
    by_zero, safe, zero = _guarded_division(b, args, element)
    if dtypes.is_unsigned(element):
        rest = b.add(arith.RemUIOp(args[0], safe))
    else:
        quotient = b.add(arith.FloorDivSIOp(args[0], safe))
        rest = b.add(arith.SubiOp(args[0], b.add(arith.MuliOp(quotient, safe))))
    return b.add(arith.SelectOp(by_zero, zero, rest))


def _float_to_int(b: BodyBuilder, x: SSAValue, element: Attribute) -> SSAValue:
    """fptosi as `dtypes.float_to_int` has it: narrow types through i32, unsigned 32 and
    64 bits as x86 converts them (x - 2**(w-1) with the top bit flipped above 2**(w-1))."""
    width = dtypes.int_width(element)
    if width < 32:
        return b.add(arith.TruncIOp(b.add(arith.FPToSIOp(x, i32)), dtypes.signless(element)))
    computed = dtypes.signless(element)
    if not dtypes.is_unsigned(element):
        return b.add(arith.FPToSIOp(x, computed))
    top = b.constant(2.0 ** (width - 1), x.type)
    high = b.add(arith.CmpfOp(x, top, "oge"))
    low_part = b.add(arith.FPToSIOp(x, computed))
    shifted = b.add(arith.FPToSIOp(b.add(arith.SubfOp(x, top)), computed))
    sign_bit = b.add(arith.ConstantOp(IntegerAttr(-(1 << (width - 1)), computed), computed))
    high_part = b.add(arith.XOrIOp(shifted, sign_bit))
    return b.add(arith.SelectOp(high, high_part, low_part))


def _cast(b: BodyBuilder, args: list[SSAValue], element: Attribute,
          sources: list[Attribute]) -> SSAValue:
    x, source = args[0], sources[0]
    if source == element:
        return x
    if dtypes.is_bool(element):  # numpy: x != 0 (NaN is true)
        if dtypes.is_float(source):
            return b.add(arith.CmpfOp(x, b.constant(0.0, source), "une"))
        return b.add(arith.CmpiOp(x, b.constant(0, source), "ne"))
    if dtypes.is_float(element):
        if dtypes.is_float(source):
            wider = dtypes.to_numpy(element).itemsize > dtypes.to_numpy(source).itemsize
            if dtypes.to_numpy(element).itemsize == dtypes.to_numpy(source).itemsize:
                return b.add(arith.TruncFOp(b.add(arith.ExtFOp(x, f32)), element))
            return b.add((arith.ExtFOp if wider else arith.TruncFOp)(x, element))
        unsigned = dtypes.is_bool(source) or dtypes.is_unsigned(source)
        return b.add((arith.UIToFPOp if unsigned else arith.SIToFPOp)(x, element))
    if dtypes.is_float(source):
        return _float_to_int(b, x, element)
    computed = dtypes.signless(element)
    if x.type == computed:  # i32 <-> ui32: the same bits
        return x
    if dtypes.is_bool(source) or dtypes.is_unsigned(source):
        extend: type[Operation] = arith.ExtUIOp
    else:
        extend = arith.ExtSIOp
    wider = dtypes.int_width(element) > dtypes.int_width(source)  # i1 is narrower than i8
    return b.add((extend if wider else arith.TruncIOp)(x, computed))


SCALAR: dict[type[Operation], Emit] = {
    ll.NegOp: _neg,
    ll.Exp2Op: _unary(math.Exp2Op),
    ll.Log2Op: _unary(math.Log2Op),
    ll.SqrtOp: _unary(math.SqrtOp),
    ll.SinOp: _unary(math.SinOp),
    ll.ReciprocalOp: _reciprocal,
    ll.CastOp: _cast,
    ll.AddOp: _float_or_int(arith.AddfOp, arith.AddiOp),
    ll.MulOp: _float_or_int(arith.MulfOp, arith.MuliOp),
    ll.MaxOp: _max,
    ll.DivOp: _divide,
    ll.IDivOp: _idiv,
    ll.ModOp: _mod,
    ll.CmpLtOp: _compare("olt", "slt", "ult"),
    ll.CmpEqOp: _compare("oeq", "eq", "eq"),
    ll.WhereOp: _where,
}

__all__ = ["SCALAR", "BodyBuilder"]
