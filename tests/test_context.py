"""Your pipeline in every realize: `Tensor.realize(pipeline=...)`, `irtensor.Context`,
IRTENSOR_PIPELINE; and every stage of the ladder from `Tensor.ir`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context as XContext
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

import irtensor
from conftest import device_param
from irtensor import Tensor, passes
from irtensor.dialects import ll
from irtensor.passes import register_pass

CALLS: list[str] = []


@register_pass
@dataclass(frozen=True)
class AddBecomesMul(ModulePass):
    """test-add-becomes-mul: a deliberately wrong pass, so its effect shows in the numbers."""

    name = "test-add-becomes-mul"

    def apply(self, ctx: XContext, op: ModuleOp) -> None:
        CALLS.append(self.name)
        for add in [o for o in op.walk() if isinstance(o, ll.AddOp)]:
            Rewriter.replace_op(add, ll.MulOp(add.lhs, add.rhs))


CUSTOM = "hl-to-ll,test-add-becomes-mul,fuse,split-reductions,reorder-loops"


def three_plus_four() -> Tensor:
    return Tensor(np.full(3, 3.0, np.float32)) + Tensor(np.full(3, 4.0, np.float32))


def test_realize_runs_the_pipeline_it_is_given() -> None:
    CALLS.clear()
    assert three_plus_four().realize(pipeline=CUSTOM).numpy().tolist() == [12.0] * 3
    assert CALLS == ["test-add-becomes-mul"]
    assert three_plus_four().numpy().tolist() == [7.0] * 3  # the default pipeline again


def test_pass_objects_and_lists_are_pipelines_too() -> None:
    CALLS.clear()
    pipeline = ["hl-to-ll", AddBecomesMul(), "fuse"]
    assert three_plus_four().realize(pipeline=pipeline).numpy().tolist() == [12.0] * 3
    assert CALLS == ["test-add-becomes-mul"]


def test_a_context_chooses_for_every_realize_inside_it() -> None:
    CALLS.clear()
    with irtensor.Context(pipeline=CUSTOM):
        assert three_plus_four().numpy().tolist() == [12.0] * 3
        assert (three_plus_four() * 2).numpy().tolist() == [24.0] * 3
        with irtensor.Context(pipeline="default-llvm"):  # the innermost wins
            assert three_plus_four().numpy().tolist() == [7.0] * 3
    assert CALLS  # (the first program may have been compiled by an earlier test)
    assert three_plus_four().numpy().tolist() == [7.0] * 3


def test_the_program_cache_keeps_programs_of_different_pipelines_apart() -> None:
    CALLS.clear()
    for _ in range(3):
        assert three_plus_four().numpy().tolist() == [7.0] * 3
        assert three_plus_four().realize(pipeline=CUSTOM).numpy().tolist() == [12.0] * 3
    assert len(CALLS) <= 1  # compiled at most once (maybe by an earlier test), then replayed


def test_the_environment_chooses_when_no_context_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_PIPELINE", CUSTOM)
    assert three_plus_four().numpy().tolist() == [12.0] * 3
    with irtensor.Context(pipeline="default-llvm"):
        assert three_plus_four().numpy().tolist() == [7.0] * 3


def test_unknown_passes_are_refused_at_the_call() -> None:
    with pytest.raises(ValueError, match="unknown pass 'no-such-pass'"):
        irtensor.Context(pipeline="hl-to-ll,no-such-pass")
    with pytest.raises(ValueError, match=r"unknown pass 'fusee'.*did you mean 'fuse'"):
        three_plus_four().realize(pipeline="hl-to-ll,fusee")
    with pytest.raises(TypeError, match="expected a pipeline string"):
        three_plus_four().realize(pipeline=42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown device"):
        irtensor.Context(device="tpu")


def test_device_debug_trace_and_viz(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "run.html"
    with irtensor.Context(device="interp", debug=1, trace=True, viz=page) as ctx:
        x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
        assert x.device == "interp"
        assert x.relu().sum(axis=1).numpy().tolist() == [3.0, 12.0]
    assert "*** realize on interp" in capfd.readouterr().err
    assert ctx.trace.fired("decompose-hlops")["DecomposeElementwise"] >= 1  # type: ignore[union-attr]
    assert page.is_file() and "hl.relu" in page.read_text()


STAGE_MARKS = {
    "hl": "hl.sum", "ll": "ll.reduce sum", "kernel": "kernel.kernel", "loops": "scf.for",
    "llvm": "llvm.func", "llvm-ir": "define void", "llvm-ir-opt": "target triple",
    "asm": "ret", "opencl": "__kernel",
}


@pytest.mark.parametrize("stage", sorted(STAGE_MARKS))
def test_every_stage_of_the_ladder_prints(stage: str) -> None:
    from irtensor.runtime import opencl_device

    if stage == "opencl" and opencl_device.unavailable():
        pytest.skip(f"no OpenCL device: {opencl_device.unavailable()}")
    y = (Tensor(np.ones((4, 8), np.float32)) * 2).sum(axis=1)
    assert STAGE_MARKS[stage] in y.ir(stage)


def test_an_unknown_stage_names_the_stages() -> None:
    with pytest.raises(ValueError, match="unknown stage 'llvmir'; the stages are hl, ll"):
        Tensor.ones(2).ir("llvmir")


def test_the_kernel_stage_shows_the_chosen_pipeline() -> None:
    y = three_plus_four()
    assert "arith.mulf" in y.ir("kernel", pipeline=CUSTOM)
    assert "arith.addf" in y.ir("kernel")


# --------------------------------------------------------------------------- the device pipeline

DEVICE_CALLS: list[str] = []


@register_pass
@dataclass(frozen=True)
class AddfBecomesMulf(ModulePass):
    """test-addf-becomes-mulf: wrong on purpose, at the kernel and at the loop level."""

    name = "test-addf-becomes-mulf"

    def apply(self, ctx: XContext, op: ModuleOp) -> None:
        DEVICE_CALLS.append(self.name)
        for add in [o for o in op.walk() if isinstance(o, arith.AddfOp)]:
            Rewriter.replace_op(add, arith.MulfOp(add.lhs, add.rhs))


# Where each compiled device lets a kernel pass in: llvm after the loops, opencl before
# the OpenCL C is printed.
DEVICE_PIPELINES = {
    "llvm": "lower-kernels-to-loops,test-addf-becomes-mulf,convert-to-llvm",
    "opencl": "test-addf-becomes-mulf",
}


def five_plus_six(device: str) -> Tensor:  # numbers no other test of this file adds
    return (Tensor(np.full(5, 5.0, np.float32), device=device)
            + Tensor(np.full(5, 6.0, np.float32), device=device))


@pytest.mark.parametrize("device", [device_param("llvm"), device_param("opencl")])
def test_the_device_pipeline_is_chosen_per_call_per_context_and_by_the_environment(
        device: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("IRTENSOR_CACHE_DIR", str(tmp_path))  # no kernel from an earlier run
    custom = DEVICE_PIPELINES[device]
    DEVICE_CALLS.clear()
    assert five_plus_six(device).realize(device_pipeline=custom).numpy().tolist() == [30.0] * 5
    assert DEVICE_CALLS == ["test-addf-becomes-mulf"]  # once, on the one kernel
    assert five_plus_six(device).numpy().tolist() == [11.0] * 5  # device-<device> again
    with irtensor.Context(device_pipeline=custom):
        assert five_plus_six(device).numpy().tolist() == [30.0] * 5
        with irtensor.Context(device_pipeline=f"device-{device}"):
            assert five_plus_six(device).numpy().tolist() == [11.0] * 5
    monkeypatch.setenv("IRTENSOR_DEVICE_PIPELINE", custom)
    assert five_plus_six(device).numpy().tolist() == [30.0] * 5
    monkeypatch.delenv("IRTENSOR_DEVICE_PIPELINE")
    assert five_plus_six(device).numpy().tolist() == [11.0] * 5
    assert DEVICE_CALLS == ["test-addf-becomes-mulf"]  # programs and kernels kept apart


def test_the_device_pipelines_are_registered_and_listed() -> None:
    pipelines = passes.all_pipelines()
    assert pipelines["device-llvm"] == "lower-kernels-to-loops,convert-to-llvm"
    assert pipelines["device-opencl"] == ""
    assert "each kernel" in passes.describe("device-llvm")


def test_a_bad_device_pipeline_is_refused_at_the_call() -> None:
    with pytest.raises(ValueError, match="unknown pass 'no-such-pass'"):
        irtensor.Context(device_pipeline="lower-kernels-to-loops,no-such-pass")
    with pytest.raises(ValueError, match="unknown pass 'no-such-pass'"):
        five_plus_six("llvm").realize(device_pipeline="no-such-pass")


def test_a_device_pipeline_that_leaves_no_kernel_is_named(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_CACHE_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="device llvm: the device pipeline left 0 functions"):
        (Tensor(np.full(7, 7.0, np.float32)) * 7).realize(device_pipeline="canonicalize")


@pytest.mark.parametrize("stage", [s for s in STAGE_MARKS if s not in ("hl", "ll")])
def test_each_scheduled_kernel_prints_at_every_later_stage(stage: str) -> None:
    from irtensor.runtime import opencl_device

    if stage == "opencl" and opencl_device.unavailable():
        pytest.skip(f"no OpenCL device: {opencl_device.unavailable()}")
    y = (Tensor(np.ones((4, 8), np.float32)) * 2).sum(axis=1)
    z = (y.reshape(4, 1) - Tensor(np.ones((4, 8), np.float32))).exp()  # a second kernel
    items = z.schedule()
    assert len(items) == 2 and str(items[0]) == str(items[0].kernel)
    for item in items:
        text = item.ir(stage)
        assert STAGE_MARKS[stage] in text
        if stage not in ("llvm-ir-opt", "asm"):  # (LLVM may inline and rename)
            assert item.name in text
    with pytest.raises(ValueError, match="a kernel has no stage 'hl'; its stages are kernel"):
        items[0].ir("hl")


def test_the_llvm_stage_of_a_kernel_shows_the_device_pipeline() -> None:
    (item,) = five_plus_six("llvm").schedule()
    assert "llvm.fadd" in item.ir("llvm")
    with irtensor.Context(device_pipeline=DEVICE_PIPELINES["llvm"]):
        assert "llvm.fadd" not in item.ir("llvm") and "llvm.fmul" in item.ir("llvm")
        assert "fmul" in item.ir("llvm-ir")
