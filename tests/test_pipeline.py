"""The pass registry and the instrumented pipeline, from Python."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irtensor import ir, passes
from irtensor.dialects import hl, ll
from irtensor.pipeline import Instrumentation, Pipeline, PipelineError

PROGRAM = """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = hl.neg %a : tensor<4xf32>
  %1 = hl.neg %0 : tensor<4xf32>
  %dead = hl.exp %a : tensor<4xf32>
  %dup = hl.neg %a : tensor<4xf32>
  %2 = hl.add %1, %dup : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}
"""


class NegNegToInput(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: hl.NegOp, rewriter: PatternRewriter) -> None:
        if isinstance(inner := op.input.owner, hl.NegOp):
            rewriter.replace(op, [], [inner.input])


@passes.register_pass
@dataclass(frozen=True)
class FoldNegNeg(ModulePass):
    """test-fold-neg-neg: rewrite hl.neg(hl.neg(x)) to x."""

    name = "test-fold-neg-neg"
    times: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for _ in range(self.times):
            PatternRewriteWalker(NegNegToInput()).rewrite_module(op)


@passes.register_pass
@dataclass(frozen=True)
class BreakTypes(ModulePass):
    """test-break-types: give an hl.neg a wrong result type, as a buggy pass would."""

    name = "test-break-types"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        neg = next(o for o in op.walk() if isinstance(o, hl.NegOp))
        neg.res._type = TensorType(f32, [5])


@passes.register_pass
@dataclass(frozen=True)
class Crash(ModulePass):
    """test-crash: raise, as a pass with a bug would."""

    name = "test-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise RuntimeError("boom")


passes.register_pipeline("test-cleanup", "test-fold-neg-neg,cse,dce")


def run(pipeline: str, **options: object) -> tuple[ModuleOp, str]:
    stream = io.StringIO()
    module = ir.parse(PROGRAM)
    Pipeline(pipeline, Instrumentation(stream=stream, **options)).run(module)  # type: ignore[arg-type]
    return module, stream.getvalue()


def ops_of(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk()][2:]


def test_registry_lists_xdsl_passes_and_ours() -> None:
    names = passes.all_passes()
    assert {"cse", "dce", "canonicalize", "test-fold-neg-neg"} <= set(names)
    description = passes.describe("test-fold-neg-neg")
    assert description == "rewrite hl.neg(hl.neg(x)) to x."
    assert passes.pass_options(FoldNegNeg) == [("times", "int", 1)]


def test_a_pipeline_string_runs_passes_in_order() -> None:
    module, _ = run("test-fold-neg-neg,cse,dce")
    assert ops_of(module) == ["hl.neg", "hl.add", "func.return"]


def test_named_pipelines_expand_in_place() -> None:
    pipeline = Pipeline("test-cleanup,canonicalize")
    assert str(pipeline) == "test-fold-neg-neg,cse,dce,canonicalize"


def test_pipelines_from_pass_objects_and_options() -> None:
    pipeline = Pipeline([FoldNegNeg(times=2), "dce"])
    assert str(pipeline) == "test-fold-neg-neg{times=2},dce"
    assert str(Pipeline("test-fold-neg-neg{times=3}")) == "test-fold-neg-neg{times=3}"


def test_print_ir_after_all_prints_every_stage() -> None:
    _, out = run("cse,dce", print_ir_after_all=True)
    assert out.count("// -----// IR Dump After") == 2
    assert "// -----// IR Dump After cse //----- //\nbuiltin.module {" in out


def test_print_ir_before_and_after_named_passes() -> None:
    _, out = run("cse,dce", print_ir_before=frozenset({"dce"}), print_ir_after=frozenset({"cse"}))
    assert "IR Dump Before dce" in out and "IR Dump After cse" in out
    assert "IR Dump After dce" not in out and "IR Dump Before cse" not in out


def test_print_ir_after_change_skips_passes_that_did_nothing() -> None:
    _, out = run("cse,cse,dce", print_ir_after_change=True)
    # the first cse merges the duplicate neg and drops the dead exp; the others find nothing
    assert out.count("IR Dump After") == 1 and "IR Dump After cse" in out


def test_dump_dir_has_one_numbered_file_per_stage(tmp_path: Path) -> None:
    run("cse,dce", dump_dir=tmp_path)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["00-input.mlir", "01-cse.mlir", "02-dce.mlir"]
    for f in files:  # every stage parses back
        ir.verify(ir.parse((tmp_path / f).read_text()))


def test_timing_reports_each_pass() -> None:
    _, out = run("cse,dce", timing=True)
    lines = out.splitlines()
    assert lines[0] == "===- pass timing -==="
    assert [line.split()[-1] for line in lines[2:]] == ["cse", "dce", "total"]


def test_a_pass_that_breaks_the_ir_is_named() -> None:
    with pytest.raises(PipelineError, match="IR after pass 'test-break-types' does not verify"):
        run("cse,test-break-types")


def test_verification_can_be_turned_off() -> None:
    module, _ = run("test-break-types", verify_each=False)
    assert "tensor<5xf32>" in ir.to_text(module)


def test_verified_at_end_still_names_the_pass_that_broke_the_ir() -> None:
    """A device pipeline verifies once at the end; on a failure it runs again, verifying
    after each pass, so the error names the pass, and the input was not consumed."""
    from irtensor.pipeline import run_verified_at_end

    with pytest.raises(PipelineError, match="IR after pass 'test-break-types' does not verify"):
        run_verified_at_end("cse,test-break-types,dce", ir.parse(PROGRAM))
    module = ir.parse(PROGRAM)
    run_verified_at_end("cse,dce", module)
    ir.verify(module)
    assert ops_of(module) == ops_of(run("cse,dce")[0])


def test_verified_at_end_blames_the_pass_that_broke_the_ir_not_the_one_that_failed_on_it(
) -> None:
    """Realizing runs the program's pipeline verified at the end: a pass that fails on IR an
    earlier pass broke is not named; the earlier one is, as with verification after each."""
    from irtensor.pipeline import run_verified_at_end

    with pytest.raises(PipelineError, match="IR after pass 'test-break-types' does not verify"):
        run_verified_at_end("cse,test-break-types,test-crash", ir.parse(PROGRAM))
    with pytest.raises(PipelineError, match="pass 'test-crash' failed: RuntimeError: boom"):
        run_verified_at_end("cse,test-crash", ir.parse(PROGRAM))


def test_a_crashing_pass_is_named_and_leaves_a_reproducer(tmp_path: Path) -> None:
    with pytest.raises(PipelineError, match="pass 'test-crash' failed: RuntimeError: boom"):
        run("cse,test-crash,dce", dump_dir=tmp_path)
    reproducer = (tmp_path / "reproducer.mlir").read_text()
    assert reproducer.startswith("// irtensor-opt reproducer.mlir -p 'test-crash,dce'\n")
    assert "hl.exp" not in reproducer  # the IR after cse, which the failing pass received


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("cse,nosuch", "unknown pass 'nosuch'"),
        ("test-fold-neg-neg{tims=2}", "pass 'test-fold-neg-neg'.*its options: times"),
        ("cse,,dce", "bad pipeline"),
        ("test-fold-neg-neg{times=", "bad pipeline"),
    ],
)
def test_bad_pipelines_are_rejected_with_a_message(spec: str, message: str) -> None:
    with pytest.raises(PipelineError, match=message):
        Pipeline(spec)


def test_a_misspelt_pass_gets_a_suggestion() -> None:
    with pytest.raises(PipelineError, match="did you mean 'canonicalize'"):
        Pipeline("canonicalise")


def test_a_pipeline_cannot_include_itself() -> None:
    passes.register_pipeline("test-loop", "cse,test-loop")
    with pytest.raises(PipelineError, match="includes itself"):
        Pipeline("test-loop")


def test_names_cannot_clash() -> None:
    with pytest.raises(passes.PassRegistryError):
        passes.register_pipeline("cse", "dce")


def test_load_pass_plugin(tmp_path: Path) -> None:
    plugin = tmp_path / "my_plugin.py"
    plugin.write_text(
        "from dataclasses import dataclass\n"
        "from xdsl.passes import ModulePass\n\n"
        "@dataclass(frozen=True)\n"
        "class Nothing(ModulePass):\n"
        '    """test-plugin-nothing: does nothing, loudly."""\n'
        '    name = "test-plugin-nothing"\n'
        "    def apply(self, ctx, op):\n"
        "        op.attributes['touched'] = __import__('xdsl').dialects.builtin.UnitAttr()\n"
    )
    assert passes.load_pass_plugin(plugin) == ["test-plugin-nothing"]
    module, _ = run("test-plugin-nothing")
    assert "touched" in module.attributes


def test_ops_built_in_python_verify() -> None:
    module = ir.parse("func.func @main(%a: tensor<2x3xf32>) { func.return }")
    a = module.body.block.first_op.body.block.args[0]  # type: ignore[union-attr]
    ops = [
        hl.SumOp(a, (1,), keepdim=True),
        hl.VarOp(a, (0,), correction=0),
        hl.PermuteOp(a, (1, 0)),
        ll.ReduceOp("max", a, (0, 1)),
        ll.PadOp(a, (1, 0), (0, 2), value=float("-inf")),
        ll.ConstOp(2.0, TensorType(f32, [2, 3])),
    ]
    for op in ops:
        op.verify()
    assert ll.ReduceOp("sum", a, (1,)).res.type == TensorType(f32, [2, 1])
    assert hl.VarOp(a, (0,), correction=0).correction.value.data == 0
