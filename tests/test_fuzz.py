"""irtensor fuzz: generated programs agree on every device, and a broken lowering is caught,
shrunk and written out as a reproducer that irtensor-opt runs."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from conftest import opencl_unavailable
from irtensor import ir, passes
from irtensor.dialects import hl
from irtensor.testing import Program
from irtensor.tools import cli, fuzz, opt
from irtensor.tools.fuzz_compare import NOISE_FACTOR, Expected, compare, expected
from irtensor.tools.fuzz_numpy import Check, check_interpreter

# A few hundred programs per device in CI; small programs keep it to about a minute.
CI_RUNS = [("llvm", 200), ("interp", 200), ("opencl", 100)]
CI_MAX_OPS = 5


@pytest.mark.parametrize(("device", "n"), CI_RUNS, ids=[d for d, _ in CI_RUNS])
def test_generated_programs_agree_with_the_interpreter(device: str, n: int) -> None:
    if device == "opencl" and (why := opencl_unavailable()) is not None:
        pytest.skip(f"no OpenCL device builds programs here: {why}")
    report = fuzz.fuzz(fuzz.Config(device, n, seed=0, max_ops=CI_MAX_OPS, shrink=False))
    failures = {f.outcome.label: f.outcome.detail for f in report.failures.values()}
    assert failures == {}
    assert report.generated == n and report.kinds == {"passed": n}


# A pass plugin that breaks the lowering of hl.matmul: decompose-hlops negates the product.
BROKEN_MATMUL = """
import sys
from irtensor import passes
from irtensor.dialects import hl

decompose = sys.modules[passes.get_pass("decompose-hlops").__module__]
right = decompose.STRUCTURED[hl.MatmulOp]
if not getattr(right, "broken", False):
    def wrong(b, op):
        return b.neg(right(b, op))
    wrong.broken = True
    decompose.STRUCTURED[hl.MatmulOp] = wrong
"""


def run_opt(command: str, capsys: pytest.CaptureFixture[str]) -> np.ndarray:
    """The numbers irtensor-opt prints for `command` (an irtensor-opt command line)."""
    argv = shlex.split(command)
    assert argv[0] == "irtensor-opt"
    assert opt.main(argv[1:]) == 0
    text = capsys.readouterr().out
    values = " ".join(line for line in text.splitlines() if not line.startswith("//"))
    numbers = re.findall(r"-?(?:\d+\.?\d*(?:e[-+]?\d+)?|nan|inf)|True|False", values)
    return np.array([1.0 if x == "True" else 0.0 if x == "False" else float(x) for x in numbers])


def test_a_broken_lowering_is_caught_shrunk_and_reproduced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    decompose = sys.modules[passes.get_pass("decompose-hlops").__module__]
    monkeypatch.setitem(decompose.STRUCTURED, hl.MatmulOp, decompose.STRUCTURED[hl.MatmulOp])
    plugin = tmp_path / "broken_matmul.py"
    plugin.write_text(BROKEN_MATMUL)
    argv = ["--device", "interp", "--n", "12", "--seed", "1", "--max-ops", "4",
            "--shrink-seconds", "3", "--load-pass-plugin", str(plugin), "--out", str(tmp_path)]
    assert fuzz.main(argv) == 1
    out = capsys.readouterr().out
    counts = dict(re.findall(r"^  (\w+) +(\d+)", out, re.MULTILINE))
    assert counts["generated"] == "12" and int(counts["mismatched"]) >= 1
    assert int(counts["passed"]) + int(counts["mismatched"]) == 12
    assert "mismatch hl.matmul" in out and "program, shrunk:" in out
    shrunk = ir.parse(out.split("program, shrunk:\n")[1].split("reproducer:")[0])
    ops = list(shrunk.body.block.first_op.body.block.ops)  # type: ignore[union-attr]
    assert "hl.matmul" in [op.name for op in ops]
    assert all(op.results[0].uses for op in ops[:-1])  # pruned: nothing unused is left
    repro = next(tmp_path.glob("*matmul*/repro.mlir"))
    device_command = out.split(f"reproducer: {repro}\n  ")[1].splitlines()[0]
    assert f"--load-pass-plugin {plugin}" in device_command
    header = repro.read_text().splitlines()
    assert header[1] == f"// {device_command}"
    reference_command = header[2].split(": ", 1)[1].split(" (also")[0]
    wrong, right = run_opt(device_command, capsys), run_opt(reference_command, capsys)
    assert wrong.shape == right.shape and not np.allclose(wrong, right, equal_nan=True)
    monkeypatch.undo()  # the lowering as it was, the reproducer agrees
    fixed = run_opt(device_command.replace(f" --load-pass-plugin {plugin}", ""), capsys)
    np.testing.assert_allclose(fixed, right, rtol=1e-2, atol=1e-2, equal_nan=True)


# Makes device interp hang on a program with a 7-element input and die on one with 5.
HANG_OR_DIE = """
import os, time
from irtensor import interp
right = interp.run
def run(module, inputs, fn="main"):
    if any(x.size == 7 for x in inputs):
        time.sleep(60)
    if any(x.size == 5 for x in inputs):
        os._exit(3)
    return right(module, inputs, fn)
interp.run = run
"""


def test_a_hang_or_a_crash_of_the_device_costs_one_program(tmp_path: Path) -> None:
    plugin = tmp_path / "hang_or_die.py"
    plugin.write_text(HANG_OR_DIE)

    def program(n: int) -> Program:
        text = ("func.func @main(%x: tensor<Nxf32>) -> tensor<Nxf32> {\n"
                "  %0 = hl.exp %x : tensor<Nxf32>\n  func.return %0 : tensor<Nxf32>\n}")
        return Program(ir.parse(text.replace("N", str(n))), [np.zeros(n, np.float32)])

    worker = fuzz.Worker("interp", timeout=2.0, plugins=[str(plugin)])
    try:
        hung = fuzz.check_program(program(7), worker)
        assert hung.signature == ("error", "device", "timeout", "")
        assert hung.detail == "no result after 2 s"
        died = fuzz.check_program(program(5), worker)
        assert died.signature == ("error", "device", "crash", "exit status 3")
        assert fuzz.check_program(program(3), worker) == fuzz.PASSED
    finally:
        worker.stop()


def test_the_same_seed_draws_the_same_programs() -> None:
    def drawn(seed: int) -> list[str]:
        texts: list[str] = []
        fuzz.explore(30, seed, 6, lambda p: texts.append(str(p) + repr(p.inputs)))
        return texts

    first = drawn(4)
    assert len(first) == 30 and drawn(4) == first
    assert drawn(5) != first


def test_programs_cover_every_dtype_family_and_degenerate_shape() -> None:
    names: set[str] = set()
    types: set[str] = set()

    def record(program: Program) -> None:
        for op in program.module.walk():
            names.add(op.name)
            types.update(str(r.type) for r in op.results)
        types.update(str(a.type) for a in program.module.body.block.first_op.body.block.args)  # type: ignore[union-attr]

    fuzz.explore(400, 0, 8, record)
    wanted = {"hl.matmul", "hl.conv2d", "hl.max_pool2d", "hl.avg_pool2d", "hl.softmax",
              "hl.log_softmax", "hl.layer_norm", "hl.batch_norm", "hl.group_norm", "hl.var",
              "hl.concat", "hl.pow", "hl.div", "hl.idiv", "hl.mod", "hl.not", "hl.and",
              "hl.where", "hl.cast", "hl.reshape", "hl.slice", "hl.pad", "hl.flip",
              "hl.permute", "hl.broadcast_to", "hl.sum", "hl.max", "hl.min", "hl.mean"}
    assert wanted - names == set()
    text = " ".join(types)
    for element in ("f16", "bf16", "f32", "f64", "i32", "i64", "i1"):
        assert re.search(rf"[<x]{element}>", text), element
    assert re.search(r"tensor<(\d+x)*0x", text) and "tensor<1x" in text
    assert re.search(r"tensor<[a-z]", text)  # rank 0


def test_the_interpreter_check_names_the_op_it_catches() -> None:
    module = ir.parse("""
func.func @main(%a: tensor<3x4xf32>, %b: tensor<4x2xf32>) -> tensor<3x2xf32> {
  %0 = hl.exp %a : tensor<3x4xf32>
  %1 = hl.matmul %0, %b : tensor<3x4xf32>, tensor<4x2xf32> -> tensor<3x2xf32>
  %2 = hl.softmax %1 axis 1 : tensor<3x2xf32>
  func.return %2 : tensor<3x2xf32>
}""")
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (4, 2))]
    assert check_interpreter(module, inputs) == Check(None, overflow=False)
    from irtensor import interp

    for k, name in enumerate(("hl.exp", "hl.matmul", "hl.softmax")):
        def off(m: object, xs: list[np.ndarray], k: int = k) -> list[np.ndarray]:
            outs = interp.run(m, xs)  # type: ignore[arg-type]
            outs[k] = (outs[k] * np.float32(1 + 1e-4)).astype(np.float32)
            return outs

        problem = check_interpreter(module, inputs, off).problem
        assert problem is not None and problem.startswith(f"{name} on "), problem

    def nan(m: object, xs: list[np.ndarray]) -> list[np.ndarray]:
        outs = interp.run(m, xs)  # type: ignore[arg-type]
        outs[2][0, 0] = np.nan
        return outs

    problem = check_interpreter(module, inputs, nan).problem
    assert problem is not None and "hl.softmax" in problem and "at [0, 0]: nan" in problem


def test_the_interpreter_check_takes_powers_as_the_interpreter_defines_them() -> None:
    """(-inf) ** 0.5 is inf for numpy's array power (C99) and the interpreter, nan for
    numpy's 0-d power: the check of a 0-d pow uses the array form (a fuzz run flagged
    the interpreter here before)."""
    module = ir.parse("""
func.func @main(%a: tensor<2xf64>, %b: tensor<2xf64>) -> tensor<f64> {
  %0 = hl.matmul %b, %a : tensor<2xf64>, tensor<2xf64> -> tensor<f64>
  %1 = ll.const 0.5 : tensor<f64>
  %2 = hl.pow %0, %1 : tensor<f64>, tensor<f64> -> tensor<f64>
  func.return %2 : tensor<f64>
}""")
    inputs = [np.array([-2.6, -np.inf]), np.array([-1.5, 2.75])]
    assert check_interpreter(module, inputs) == Check(None, overflow=False)


def test_tolerances_follow_the_dtype_noise_and_nans() -> None:
    w = np.array([1.0, 2.0, np.nan], np.float32)
    quiet = Expected([w], [np.zeros(3)], [np.zeros(3, bool)])
    assert compare([w * np.float32(1 + 1e-6)], quiet) is None  # within f32's 2e-6
    far = compare([w * np.float32(1 + 1e-4)], quiet)
    assert far is not None and "2 of 3 elements differ; at [0]" in far
    moved_nan = compare([np.array([1.0, np.nan, np.nan], np.float32)], quiet)
    assert moved_nan is not None and "at [1]: got nan, expected 2" in moved_nan
    assert compare([w.astype(np.float64)], quiet) == "result #0: float64[3], expected float32[3]"
    noisy = Expected([w], [np.array([0.0, 0.1, 0.0])], [np.zeros(3, bool)])
    allowed = 0.1 * NOISE_FACTOR
    assert compare([np.array([1.0, 2 + 0.9 * allowed, np.nan], np.float32)], noisy) is None
    assert compare([np.array([1.0, 2 + 1.1 * allowed, np.nan], np.float32)], noisy) is not None
    flags = np.array([True, False])
    boundary = Expected([np.array([3, 1], np.int32)], [np.zeros(2)], [flags])
    assert compare([np.array([2, 1], np.int32)], boundary) is None
    assert compare([np.array([3, 2], np.int32)], boundary) is not None


def test_a_subnormal_result_may_be_off_by_half_its_spacing() -> None:
    module = ir.parse("""
func.func @main(%a: tensor<1xf16>) -> tensor<f16> {
  %0 = hl.matmul %a, %a : tensor<1xf16>, tensor<1xf16> -> tensor<f16>
  func.return %0 : tensor<f16>
}""")
    a = np.array([0.00246048], np.float16)  # a*a = 6.054e-6 rounds to the subnormal 6.080e-6
    assert check_interpreter(module, [a]).problem is None


def test_where_partial_sums_may_overflow_nan_and_inf_may_come_out_either_way() -> None:
    module = ir.parse("""
func.func @main(%a: tensor<1x3xf16>, %b: tensor<3xf16>) -> tensor<1xf16> {
  %0 = hl.matmul %a, %b : tensor<1x3xf16>, tensor<3xf16> -> tensor<1xf16>
  func.return %0 : tensor<1xf16>
}""")
    a = np.array([[2.0, 3.0, 1.0]], np.float16)
    small = check_interpreter(module, [a, np.array([1.0, 1.0, 1.0], np.float16)])
    assert small == Check(None, overflow=False)
    # 2 * 60000 overflows f16; with the -inf, one order of the sum gives -inf, another NaN
    huge = [a, np.array([60000.0, -np.inf, 1.0], np.float16)]
    assert check_interpreter(module, huge).overflow
    want = expected(module, huge)
    # which of the two comes out depends on the interpreter's order of the sum (half sums
    # accumulate in f32): the point is that the other is not a mismatch under overflow
    assert np.isneginf(want.values[0][0]) or np.isnan(want.values[0][0])
    other = np.array([np.nan if np.isneginf(want.values[0][0]) else -np.inf], np.float16)
    want.overflow = True
    assert compare([other], want) is None
    finite = Expected([np.array([1.0], np.float16)], [np.zeros(1)], [np.zeros(1, bool)], True)
    assert compare([np.array([2.0], np.float16)], finite) is not None  # finite stays checked


def test_a_sum_may_round_at_every_term_in_its_own_type() -> None:
    """A kernel may add f16 products one by one in f16; numpy's matmul rounds once."""
    module = ir.parse("""
func.func @main(%a: tensor<8x16xf16>, %b: tensor<16x3xf16>) -> tensor<8x3xf16> {
  %0 = hl.matmul %a, %b : tensor<8x16xf16>, tensor<16x3xf16> -> tensor<8x3xf16>
  func.return %0 : tensor<8x3xf16>
}""")

    def one_by_one(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = np.zeros((a.shape[0], b.shape[1]), np.float16)
        for k in range(a.shape[1]):
            out = (out + a[:, k:k + 1] * b[k:k + 1, :]).astype(np.float16)
        return out

    rng = np.random.default_rng(0)
    inputs, apart = [], 0.0
    while apart < 4:  # inputs where the two orders end 4 ulps or more apart
        inputs = [(rng.standard_normal(s) * 2).astype(np.float16) for s in ((8, 16), (16, 3))]
        got, want = one_by_one(*inputs), inputs[0] @ inputs[1]
        apart = float(np.max(np.abs(got.astype(float) - want) / np.spacing(np.abs(want))))
    wanted = expected(module, inputs)
    assert compare([got], wanted) is None
    assert compare([(got * np.float16(1.05)).astype(np.float16)], wanted) is not None


def test_rounding_noise_of_the_program_itself_is_measured() -> None:
    module = ir.parse("""func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = hl.sum %x axes [0] : tensor<3xf32> -> tensor<f32>
  func.return %0 : tensor<f32>
}""")
    big = np.array([1e8, 1.0, -1e8], np.float32)
    want = expected(module, [big])
    # f32 loses the 1, and a few ulps on 1e8 move the sum by tens: noise of that size
    assert float(want.values[0]) == 0.0 and 1.0 <= float(want.noise[0]) < 100.0
    assert compare([np.array(1.0, np.float32)], want) is None  # another order of the sum
    assert compare([np.array(1000.0, np.float32)], want) is not None
    small = np.array([1.0, 2.0, 3.0], np.float32)
    assert float(expected(module, [small]).noise[0]) < 1e-5


def test_a_crashing_pass_is_an_error_named_by_the_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(self: object, ctx: object, op: object) -> None:
        raise ValueError("no")

    monkeypatch.setattr(passes.get_pass("fuse"), "apply", crash)
    module = ir.parse("""func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = hl.exp %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}""")
    outcome = fuzz.check_program(Program(module, [np.ones(2, np.float32)]),
                                 fuzz.in_process("interp"))
    assert outcome.kind == "error"
    assert outcome.signature == ("error", "pipeline", "ValueError", "pass fuse")
    assert outcome.detail == "PipelineError: pass 'fuse' failed: ValueError: no"


def test_prune_drops_unused_ops_and_arguments() -> None:
    module = ir.parse("""
func.func @main(%a: tensor<2xf32>, %b: tensor<3xi32>, %c: tensor<2xf32>)
    -> tensor<2xf32> {
  %0 = hl.neg %b : tensor<3xi32>
  %1 = hl.add %c, %c : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  func.return %1 : tensor<2xf32>
}""")
    a, b, c = np.zeros(2, np.float32), np.zeros(3, np.int32), np.ones(2, np.float32)
    pruned = fuzz.prune(Program(module, [a, b, c]))
    text = ir.to_text(pruned.module)
    assert "hl.neg" not in text and "tensor<3xi32>" not in text and "hl.add" in text
    assert len(pruned.inputs) == 1 and pruned.inputs[0] is c


def test_exit_codes_and_the_irtensor_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["fuzz", "--device", "interp", "--n", "5", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "device interp, seed 2: 5 programs" in out and re.search(r"passed +5\n", out)
    for bad, message in ((["--n", "0"], "--n must be at least 1, got 0"),
                         (["--device", "gpu"], "invalid choice: 'gpu'"),
                         (["--seed", "x"], "invalid int value: 'x'")):
        with pytest.raises(SystemExit) as e:
            fuzz.main(bad)
        assert e.value.code == 2
        assert message in capsys.readouterr().err


def test_opencl_without_a_device_is_a_usage_error(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from irtensor.runtime import opencl_device

    monkeypatch.setattr(opencl_device, "unavailable", lambda: "no platforms")
    assert fuzz.main(["--device", "opencl", "--n", "3"]) == 2
    assert capsys.readouterr().err == (
        "error: --device opencl: no OpenCL device builds programs here: no platforms\n")


def test_irtensor_opt_reads_bf16_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    (tmp_path / "neg.mlir").write_text("""func.func @main(%x: tensor<2xbf16>) -> tensor<2xbf16> {
  %0 = hl.neg %x : tensor<2xbf16>
  func.return %0 : tensor<2xbf16>
}""")
    np.save(tmp_path / "x.npy", np.array([1.5, -2.0], ml_dtypes.bfloat16))  # stored as 'V2'
    assert opt.main([str(tmp_path / "neg.mlir"), "--run", "--input",
                     f"x={tmp_path / 'x.npy'}"]) == 0
    assert "[-1.5, 2]" in capsys.readouterr().out.replace(".,", ",").replace(".]", "]")
