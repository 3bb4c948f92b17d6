"""The rewrite trace, pass statistics and fusion explanations say what the passes did."""

from __future__ import annotations

import numpy as np

from irtensor import Tensor
from irtensor.ir import parse
from irtensor.passes import trace
from irtensor.passes.kernel.explain import explain_fusion
from irtensor.pipeline import Instrumentation, Pipeline

RELU_SUM = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %r = hl.relu %x : tensor<4x8xf32>
  %s = hl.sum %r axes [1] : tensor<4x8xf32> -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}"""


def test_every_pattern_application_is_recorded_with_its_pass_and_op() -> None:
    module = parse(RELU_SUM)
    with trace.active() as recorded:
        Pipeline("hl-to-ll").run(module)
    assert recorded.fired("decompose-hlops") == {"DecomposeElementwise": 1,
                                                 "DecomposeStructured": 1}
    (made_max,) = recorded.made("ll.max")
    assert made_max.pass_name == "decompose-hlops" and made_max.pattern == "DecomposeElementwise"
    assert made_max.before.startswith("%r = hl.relu %x") and made_max.location == "<input>:3:3"
    assert any(a.startswith("%r_1 = ll.max %x, %r") for a in made_max.after)


def test_convert_to_llvm_is_traced_too() -> None:
    module = parse(RELU_SUM)
    Pipeline("hl-to-kernel,lower-kernels-to-loops").run(module)
    with trace.active() as recorded:
        Pipeline("convert-to-llvm").run(module)
    fired = recorded.fired("convert-to-llvm")
    assert fired["FuncToLLVMFunc"] >= 1 and sum(fired.values()) > 10


def test_nothing_is_recorded_without_a_trace() -> None:
    assert trace.current() is None
    report = Pipeline("hl-to-ll").run(parse(RELU_SUM))
    assert report.trace is None and all(not r.fired for r in report.records)


def test_pass_statistics_count_ops_and_patterns() -> None:
    inst = Instrumentation(pass_statistics=True, stream=_Sink())
    report = Pipeline("decompose-hlops,dce", inst).run(parse(RELU_SUM))
    decompose, dce = report.records
    # func, relu, sum, return -> func, const, max, reduce, reshape, return
    assert (decompose.ops_before, decompose.ops_after) == (4, 6)
    assert decompose.fired == {"DecomposeElementwise": 1, "DecomposeStructured": 1}
    assert dce.ops_before == dce.ops_after == 6 and dce.fired == {}
    assert "decompose-hlops: DecomposeElementwise 1, DecomposeStructured 1" in inst.stream.text


def test_explain_names_the_reason_of_each_boundary() -> None:
    shared = """
func.func @main(%x: tensor<64x64xf32>) -> tensor<64xf32> {
  %e = hl.exp %x : tensor<64x64xf32>
  %l = hl.log %e : tensor<64x64xf32>
  %m = hl.mul %e, %l : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %s = hl.sum %m axes [1] : tensor<64x64xf32> -> tensor<64xf32>
  %t = hl.max %m axes [1] : tensor<64x64xf32> -> tensor<64xf32>
  %r = hl.add %s, %t : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  func.return %r : tensor<64xf32>
}"""
    # exp, log and mul are cheap to recompute in both reductions; the add of two
    # reductions computes one of them first.
    assert explain_fusion(parse(shared)) == (
        "@main: 2 kernels\n"
        "#1 @r_64_64  space [64, 64], max over dims [1]\n"
        "    reads: argument %x\n"
        "    a kernel of its own because 'll.add' combines two reductions: one reduction per "
        "kernel\n"
        "#2 @r_64_64  space [64, 64], sum over dims [1] with an epilogue\n"
        "    reads: argument %x, kernel #1 @r_64_64\n"
        "    a kernel of its own because a result of the function\n")


def test_explain_says_when_a_value_is_too_costly_to_recompute() -> None:
    costly = """
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = hl.exp %x : tensor<16xf32>
  %b = hl.sin %a : tensor<16xf32>
  %c = hl.cos %b : tensor<16xf32>
  %d = hl.exp %c : tensor<16xf32>
  %e = hl.mul %d, %d : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  func.return %e : tensor<16xf32>
}"""
    text = explain_fusion(parse(costly))
    assert text.startswith("@main: 2 kernels\n")
    assert "has 2 consumers and recomputing it costs" in text
    assert "(limit recompute-limit=8)" in text


def test_a_tensor_explains_its_kernels() -> None:
    x = Tensor(np.ones((8, 16), np.float32))
    text = x.softmax().explain()
    assert text.startswith("@main: ")
    assert text.count("a kernel of its own because") == int(text.split()[1])


class _Sink:
    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> int:
        self.text += s
        return len(s)


SUB_THEN_EXP = """
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %one = ll.const 1.0 : tensor<4xf32>
  %d = hl.sub %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %m = hl.mul %d, %one : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %e = hl.exp %m : tensor<4xf32>
  func.return %e : tensor<4xf32>
}"""


def test_ops_a_pattern_inserts_take_the_location_of_the_op_it_matched() -> None:
    from irtensor.ir import location

    module = parse(SUB_THEN_EXP, name="prog.mlir")
    Pipeline("decompose-hlops").run(module)
    where = {op.name: location(op) for op in module.walk() if op.name.startswith("ll.")}
    assert where["ll.neg"] == "prog.mlir:4:3"  # from hl.sub
    assert where["ll.exp2"] == "prog.mlir:6:3"  # from hl.exp
    with trace.active() as recorded:  # a later pass's event names the source line too
        Pipeline("fold-constants").run(module)
    assert [(e.pattern, e.location) for e in recorded.events] == [("MulOne", "prog.mlir:5:3")]


def test_the_dispatching_applier_tries_only_the_patterns_for_an_op() -> None:
    """Patterns that declare `op_types` see only those ops, the others see every op, and
    the first that rewrites wins, in order (GreedyRewritePatternApplier's rule)."""
    from xdsl.dialects import arith, func
    from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

    seen: dict[str, list[str]] = {"adds": [], "any": [], "late": []}

    class SeesAdds(RewritePattern):
        op_types = (arith.AddfOp,)

        def match_and_rewrite(self, op, rewriter: PatternRewriter, /) -> None:  # type: ignore[no-untyped-def]
            seen["adds"].append(op.name)
            rewriter.replace(op, arith.SubfOp(op.operands[0], op.operands[1]))

    class SeesAny(RewritePattern):
        def match_and_rewrite(self, op, rewriter: PatternRewriter, /) -> None:  # type: ignore[no-untyped-def]
            seen["any"].append(op.name)

    class Late(RewritePattern):
        op_types = (arith.AddfOp, arith.MulfOp)

        def match_and_rewrite(self, op, rewriter: PatternRewriter, /) -> None:  # type: ignore[no-untyped-def]
            seen["late"].append(op.name)

    module = parse("""
func.func @f(%a: f32, %b: f32) -> f32 {
  %s = arith.addf %a, %b : f32
  %m = arith.mulf %s, %b : f32
  func.return %m : f32
}""")
    trace.rewrite_module(module, [SeesAdds(), SeesAny(), Late()])
    ops = [op.name for op in module.walk() if not isinstance(op, func.FuncOp)][1:]
    assert ops == ["arith.subf", "arith.mulf", "func.return"]
    assert seen["adds"] == ["arith.addf"]  # once: it rewrote, so no later pattern saw it
    assert "arith.addf" not in seen["late"] and "arith.mulf" in seen["late"]
    assert {"arith.mulf", "func.return", "arith.subf"} <= set(seen["any"])


def test_a_conversion_visits_each_op_once_and_what_its_rewrites_insert() -> None:
    """`convert_module`: each op once in walk order, the ops a rewrite inserted right after
    it (so a chain of conversions finishes in one sweep), dead ops erased, and no second
    sweep over what the patterns made. An op a pattern declined while others changed gets
    xDSL's walker after all."""
    from xdsl.dialects import arith
    from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

    tried: list[str] = []

    class AddToSub(RewritePattern):
        op_types = (arith.AddfOp,)

        def match_and_rewrite(self, op, rewriter: PatternRewriter, /) -> None:  # type: ignore[no-untyped-def]
            tried.append(op.name)
            rewriter.replace(op, arith.SubfOp(op.operands[0], op.operands[1]))

    class SubToMul(RewritePattern):
        op_types = (arith.SubfOp,)

        def match_and_rewrite(self, op, rewriter: PatternRewriter, /) -> None:  # type: ignore[no-untyped-def]
            tried.append(op.name)
            rewriter.replace(op, arith.MulfOp(op.operands[0], op.operands[1]))

    class DivToMulLater(RewritePattern):
        """Declines each div the first time it sees it."""

        op_types = (arith.DivfOp,)
        seen: set[int] = set()

        def match_and_rewrite(self, op, rewriter: PatternRewriter, /) -> None:  # type: ignore[no-untyped-def]
            tried.append(op.name)
            if id(op) in self.seen:
                rewriter.replace(op, arith.MulfOp(op.operands[0], op.operands[1]))
            self.seen.add(id(op))

    program = """
func.func @f(%a: f32, %b: f32) -> f32 {
  %s = arith.addf %a, %b : f32
  %unused = arith.addf %a, %a : f32
  %m = arith.mulf %s, %b : f32
  func.return %m : f32
}"""
    module = parse(program)
    trace.convert_module(module, [AddToSub(), SubToMul()])
    ops = [op.name for op in module.walk()][2:]
    assert ops == ["arith.mulf", "arith.mulf", "func.return"]  # the unused add erased
    assert tried == ["arith.addf", "arith.subf"]  # the unused add was dead: not tried

    tried.clear()
    module = parse(program.replace("%m = arith.mulf", "%m = arith.divf"))
    trace.convert_module(module, [AddToSub(), SubToMul(), DivToMulLater()])
    assert [op.name for op in module.walk()][2:] == ["arith.mulf", "arith.mulf", "func.return"]
    assert tried.count("arith.divf") == 2  # declined in the sweep, converted by the walker
