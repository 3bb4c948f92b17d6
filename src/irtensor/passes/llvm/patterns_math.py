"""`math` -> `llvm` patterns of `convert-to-llvm`: vector math and LLVM intrinsics.

`exp2 exp log2 log sin cos` on f32 (and on f16/bf16, which compute in f32), and
`exp2 exp` on f64, become polynomials in plain LLVM arithmetic
(`llvm_vector_math`), which the loop vectorizer vectorizes; LLVM's intrinsics
would become one libm call per vector lane. Everything else keeps the intrinsics:

f32 and f64 call the intrinsic of their type (`llvm.intr.exp2 : f32` becomes
`llvm.exp2.f32`, which LLVM lowers to an instruction or to libm's `exp2f`, as
numpy calls libm). f16 and bf16 compute in f32 and round the result to their
type, which is what numpy (and ml_dtypes) do for half-precision ufuncs; this
also keeps LLVM from asking for f16 library functions the JIT cannot resolve.
"""

from __future__ import annotations

from xdsl.dialects import llvm, math
from xdsl.dialects.builtin import f32, f64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from irtensor.passes.llvm.lowering import Emitter
from irtensor.passes.llvm.patterns_arith import compute_type, from_compute, to_compute
from irtensor.passes.llvm.vector_math import F32_VECTOR_MATH, F64_VECTOR_MATH, QuietEmitter

# math op -> the llvm dialect's own intrinsic op, and the intrinsic's name
UNARY_OPS: dict[type[Operation], tuple[type[Operation], str]] = {
    math.Exp2Op: (llvm.FExp2Op, "exp2"),
    math.Log2Op: (llvm.FLog2Op, "log2"),
    math.SqrtOp: (llvm.FSqrtOp, "sqrt"),
    math.SinOp: (llvm.FSinOp, "sin"),
    math.CosOp: (llvm.FCosOp, "cos"),
    math.ExpOp: (llvm.FExpOp, "exp"),
    math.LogOp: (llvm.FLogOp, "log"),
    math.FloorOp: (llvm.FFloorOp, "floor"),
    math.CeilOp: (llvm.FCeilOp, "ceil"),
}

# math op -> an intrinsic the llvm dialect has no op for (llvm.call_intrinsic)
UNARY_INTRINSICS: dict[type[Operation], str] = {
    math.TanhOp: "tanh",
    math.TruncOp: "trunc",
    math.RoundOp: "round",
    math.RoundEvenOp: "roundeven",
}

BINARY_OPS: dict[type[Operation], tuple[type[Operation], str]] = {
    math.PowFOp: (llvm.FPowOp, "pow"),
    math.CopySignOp: (llvm.FCopySignOp, "copysign"),
}


def _suffix(t: object) -> str:
    return "f64" if str(t) == "f64" else "f32"


def intrinsic_op(e: Emitter, op: tuple[type[Operation], str], args: list[SSAValue],
                 t: Attribute) -> SSAValue:
    """The llvm dialect's intrinsic op on f32; on f64 `llvm.call_intrinsic` of the mangled
    name: xDSL exports those ops under unmangled names (`llvm.fabs`), so a module with
    both an f32 and an f64 use would declare one name with two types."""
    cls, name = op
    if t == f64:
        return e.intrinsic(f"llvm.{name}.f64", args, t)
    if cls is llvm.FAbsOp:
        return e.emit(llvm.FAbsOp(args[0], t))
    return e.emit(cls(*args))  # type: ignore[call-arg]


class UnaryMathToLLVM(RewritePattern):
    """exp2 exp log2 log sin cos on f32, exp2 exp on f64 -> vector math; the others
    and sqrt floor ceil tanh trunc round roundeven absf rsqrt -> llvm intrinsics
    (f16/bf16 computed in f32 and rounded back)."""

    op_types = (*UNARY_OPS, *UNARY_INTRINSICS, math.AbsFOp, math.RsqrtOp)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not (type(op) in UNARY_OPS or type(op) in UNARY_INTRINSICS
                or isinstance(op, math.AbsFOp | math.RsqrtOp)):
            return
        e = Emitter(rewriter, op)
        t = op.results[0].type
        x = to_compute(e, e.value(op.operands[0]), t)
        ct = compute_type(t)
        vector_math = (F32_VECTOR_MATH if ct == f32 else F64_VECTOR_MATH).get(type(op))
        if vector_math is not None:
            result = vector_math(QuietEmitter(rewriter, op), x)
        elif isinstance(op, math.AbsFOp):
            result = intrinsic_op(e, (llvm.FAbsOp, "fabs"), [x], ct)
        elif isinstance(op, math.RsqrtOp):
            one = e.float_const(1.0, ct)
            root = intrinsic_op(e, UNARY_OPS[math.SqrtOp], [x], ct)
            result = e.emit(llvm.FDivOp(one, root))
        elif type(op) in UNARY_OPS:
            result = intrinsic_op(e, UNARY_OPS[type(op)], [x], ct)
        else:
            name = f"llvm.{UNARY_INTRINSICS[type(op)]}.{_suffix(ct)}"
            result = e.intrinsic(name, [x], ct)
        e.finish(from_compute(e, result, t))


class BinaryMathToLLVM(RewritePattern):
    """powf copysign -> llvm.intr.pow llvm.intr.copysign."""

    op_types = tuple(BINARY_OPS)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        new = BINARY_OPS.get(type(op))
        if new is None:
            return
        e = Emitter(rewriter, op)
        t = op.results[0].type
        a, b = (to_compute(e, v, t) for v in e.values(op.operands))
        e.finish(from_compute(e, intrinsic_op(e, new, [a, b], compute_type(t)), t))


class FmaToLLVM(RewritePattern):
    """math.fma -> llvm.intr.fma (one rounding; f16/bf16 round the f32 result)."""

    op_types = (math.FmaOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.FmaOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        t = op.result.type
        a, b, c = (to_compute(e, v, t) for v in e.values(op.operands))
        e.finish(from_compute(e, e.emit(llvm.FMAOp(a, b, c)), t))


def math_patterns() -> list[RewritePattern]:
    return [UnaryMathToLLVM(), BinaryMathToLLVM(), FmaToLLVM()]


__all__ = ["math_patterns"]
