"""The `grad` pass: append the vector-Jacobian product of an `ll` function.

    irtensor-opt -p 'decompose-hlops,conv-to-mul-sum,grad{wrt=0,1}' model.mlir

For each `func.func @f` with one result (or only `@<func>` when `func` is given)
it appends `@f_grad`. Its arguments are `@f`'s, then, with `seed=arg`, a cotangent
of the result's type (otherwise the cotangent is ones: the gradient of a sum of the
result). It returns `@f`'s result, then one cotangent per argument in `wrt` (every
float argument when `wrt` is empty), each of its argument's type: an argument the
result does not depend on gets zeros.

Reverse mode: `@f`'s ops are cloned, then visited last to first; each op's rule
(`vjp_rules.VJP_RULES`, one per `ll` op type) turns the cotangent of its result into
cotangents of its operands, and cotangents of a value used more than once add up.
The gradient program is plain `ll`: `fuse` merges forward and backward kernels like
those of any program.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import region_dce

from irtensor.passes.autodiff.vjp_rules import VJP_RULES, differentiable
from irtensor.passes.registry import PassInputError, register_pass
from irtensor.passes.rewrite.ll_builder import LLBuilder


class _Inserter:
    """What `LLBuilder` needs of a rewriter: insert before one op, name the results."""

    def __init__(self, before: Operation):
        self.point = InsertPoint.before(before)
        self.name_hint: str | None = None

    def insert(self, op: Operation) -> None:
        Rewriter.insert_op(op, self.point)
        for r in op.results:
            if self.name_hint and r.name_hint is None:
                r.name_hint = self.name_hint


def cotangent_name(value: SSAValue | None) -> str | None:
    """`%dx` for the cotangent of `%x`."""
    return f"d{value.name_hint}" if value is not None and value.name_hint else None


def grad_error(f: func.FuncOp, problem: str) -> PassInputError:
    return PassInputError(f"grad: @{f.sym_name.data}: {problem}")


def chosen_arguments(f: func.FuncOp, wrt: tuple[int, ...]) -> list[int]:
    args = f.body.block.args
    if not wrt:
        return [i for i, a in enumerate(args) if differentiable(a)]
    for i in wrt:
        if not 0 <= i < len(args):
            raise grad_error(f, f"wrt={i} is not an argument index (it has {len(args)})")
        if not differentiable(args[i]):
            raise grad_error(f, f"argument {i} has type {args[i].type}; only float tensors "
                                "have a gradient")
    return list(wrt)


def clone_for_gradient(f: func.FuncOp, seed_argument: bool) -> tuple[func.FuncOp, SSAValue | None]:
    """`@f` copied as `@f_grad` (with a cotangent argument last if asked)."""
    copy = f.clone()
    copy.sym_name = StringAttr(f"{f.sym_name.data}_grad")
    seed = None
    if seed_argument:
        result_type = f.function_type.outputs.data[0]
        seed = copy.body.block.insert_arg(result_type, len(copy.body.block.args))
        seed.name_hint = "seed"
    return copy, seed


def accumulate(b: LLBuilder, cotangents: dict[SSAValue, SSAValue], value: SSAValue,
               g: SSAValue) -> None:
    if value in cotangents:
        cotangents[value] = b.add(cotangents[value], g)
    else:
        cotangents[value] = g


def dependents(ops: list[Operation], sources: list[SSAValue]) -> set[SSAValue]:
    """The values computed (in `ops`, in order) from any of `sources`."""
    reached = set(sources)
    for op in ops:
        if any(v in reached for v in op.operands):
            reached.update(op.results)
    return reached


def backward(ops: list[Operation], cotangents: dict[SSAValue, SSAValue], b: LLBuilder,
             where: func.FuncOp, wanted: set[SSAValue]) -> None:
    """Visit `ops` last to first, turning result cotangents into operand ones (only
    for operands in `wanted`: those that depend on a chosen argument)."""
    for op in reversed(ops):
        if not op.results or op.results[0] not in cotangents:
            continue
        if type(op) not in VJP_RULES:
            raise grad_error(where, f"no gradient rule for {op.name} (run decompose-hlops "
                                    "and conv-to-mul-sum first, or register_vjp one)")
        _, rule = VJP_RULES[type(op)]
        b.rewriter.name_hint = cotangent_name(next(
            (v for v in op.operands if v in wanted and v.name_hint), None))
        for operand, g in zip(op.operands, rule(op, cotangents[op.results[0]], b), strict=True):
            if g is not None and operand in wanted and differentiable(operand):
                accumulate(b, cotangents, operand, g)


def zeros_like(b: LLBuilder, value: SSAValue) -> SSAValue:
    b.rewriter.name_hint = cotangent_name(value)
    return b.const(0.0, value)


def append_gradient(module: ModuleOp, f: func.FuncOp, wrt: tuple[int, ...],
                    seed_argument: bool) -> func.FuncOp:
    """Build `@f_grad` after `@f` in `module` and return it."""
    if len(f.function_type.outputs.data) != 1:
        raise grad_error(f, f"has {len(f.function_type.outputs.data)} results; grad needs one")
    chosen = chosen_arguments(f, wrt)
    copy, seed = clone_for_gradient(f, seed_argument)
    block = copy.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    result = ret.operands[0]
    if not differentiable(result):
        raise grad_error(f, f"its result has type {result.type}; grad needs a float result")
    b = LLBuilder(_Inserter(ret))  # type: ignore[arg-type]
    b.rewriter.name_hint = cotangent_name(result)
    cotangents = {result: seed if seed is not None else b.const(1.0, result)}
    forward = [op for op in block.ops if op is not ret]
    args = block.args
    backward(forward, cotangents, b, f, dependents(forward, [args[i] for i in chosen]))
    grads = [cotangents.get(args[i]) or zeros_like(b, args[i]) for i in chosen]
    new_ret = func.ReturnOp(result, *grads)
    block.insert_op_before(new_ret, ret)
    block.erase_op(ret)
    region_dce(copy.body)  # the cotangents of operands nothing asked for
    copy.function_type = FunctionType.from_lists(
        [a.type for a in block.args], [result.type, *(g.type for g in grads)])
    module.body.block.insert_op_after(copy, f)
    return copy


@register_pass
@dataclass(frozen=True)
class GradPass(ModulePass):
    """grad: append `@f_grad`, the result and its gradient with respect to the `wrt`
    arguments (all float arguments when empty), of each one-result `ll` function `@f`
    (only `@<func>` when given). `seed=arg` adds the result's cotangent as the last
    argument; `seed=ones` (the default) differentiates the sum of the result."""

    name = "grad"

    wrt: tuple[int, ...] = field(default=())
    func: str = ""
    seed: str = "ones"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.seed not in ("ones", "arg"):
            raise PassInputError(f"grad: seed={self.seed!r}; expected 'ones' or 'arg'")
        functions = [f for f in op.body.block.ops if isinstance(f, func.FuncOp)
                     and not f.sym_name.data.endswith("_grad")
                     and (not self.func or f.sym_name.data == self.func)]
        if self.func and not functions:
            raise PassInputError(f"grad: no function @{self.func} in the module")
        for f in functions:
            append_gradient(op, f, self.wrt, self.seed == "arg")


__all__ = ["GradPass", "append_gradient"]
