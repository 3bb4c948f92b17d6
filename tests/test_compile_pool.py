"""Compile workers: kernels compiled in other processes run as those compiled here."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp, f64
from xdsl.passes import ModulePass

from irtensor import Tensor, ir, passes, runtime
from irtensor.dialects.kernel import KernelOp
from irtensor.passes import registry
from irtensor.pipeline import Pipeline, PipelineError
from irtensor.runtime import compile_pool, llvm_device, llvm_objects

# Four kernels none of which another test compiles (odd sizes).
PROGRAM = """
func.func @main(%a: tensor<37x29xf32>, %b: tensor<29x23xf32>) -> tensor<23xf32> {
  %e = hl.exp %a : tensor<37x29xf32>
  %m = hl.matmul %e, %b : tensor<37x29xf32>, tensor<29x23xf32> -> tensor<37x23xf32>
  %s = hl.softmax %m axis 1 : tensor<37x23xf32>
  %r = hl.sum %s axes [0] : tensor<37x23xf32> -> tensor<23xf32>
  func.return %r : tensor<23xf32>
}
"""


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(llvm_device, "_MEMORY", llvm_device.LRU(
        llvm_device.kernel_cache_bytes, lambda k: k.nbytes))


@pytest.fixture
def one_worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("IRTENSOR_COMPILE_WORKERS", "1")
    monkeypatch.setattr(compile_pool, "_POOL", [])
    yield
    for pool in compile_pool._POOL:
        pool.close()


def program(text: str = PROGRAM) -> ir.ModuleOp:
    module = ir.parse(text)
    Pipeline("hl-to-kernel").run(module)
    return module


def expected(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    m = np.exp(a.astype(np.float64)) @ b
    s = np.exp(m - m.max(1, keepdims=True))
    return (s / s.sum(1, keepdims=True)).sum(0)


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    return (rng.standard_normal((37, 29)).astype(np.float32) * 0.3,
            rng.standard_normal((29, 23)).astype(np.float32) * 0.3)


def kernels(module: ir.ModuleOp) -> list:
    from irtensor.dialects.kernel import KernelOp

    return [op for op in module.walk() if isinstance(op, KernelOp)]


def test_a_worker_takes_kernels_and_they_run_like_those_compiled_here(
        one_worker: None, monkeypatch: pytest.MonkeyPatch) -> None:
    module = program()
    ops = kernels(module)
    assert len(ops) >= compile_pool.MIN_KERNELS
    shared: list[compile_pool.Batch] = []
    share = compile_pool.CompilePool.share
    monkeypatch.setattr(compile_pool.CompilePool, "share",
                        lambda self, r: shared.append(share(self, r)) or shared[-1])
    started = llvm_device._start

    def slow_start(todo: object, executor: object) -> object:  # leave the worker some
        time.sleep(1.5)
        return started(todo, executor)  # type: ignore[arg-type]

    monkeypatch.setattr(llvm_device, "_start", slow_start)
    before = runtime.stats()["kernels_compiled"]
    a, b = inputs()
    got = llvm_device.run(module, [a, b])[0]
    np.testing.assert_allclose(got, expected(a, b), rtol=1e-4, atol=1e-5)
    assert runtime.stats()["kernels_compiled"] - before == len(ops)
    assert len(shared) == 1 and shared[0].remote, "the worker took no kernel"
    assert len(shared[0].remote) < len(ops), "this process took no kernel"
    assert all(shared[0].answers[i].result()[0]["status"] == "ok" for i in shared[0].remote)
    worker = compile_pool._POOL[0].workers[0]
    assert worker.process is not None and worker.process.poll() is None  # kept for later


def test_a_worker_that_dies_hands_its_kernels_back(one_worker: None,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def dead(self: object) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-c", "pass"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE)

    monkeypatch.setattr(compile_pool._Worker, "start_process", dead)
    started = llvm_device._start
    monkeypatch.setattr(llvm_device, "_start", lambda t, e: (time.sleep(0.5), started(t, e))[1])
    a, b = inputs()
    got = llvm_device.run(program(), [a, b])[0]
    np.testing.assert_allclose(got, expected(a, b), rtol=1e-4, atol=1e-5)
    assert compile_pool.pool() is None  # retired, not restarted


def test_a_stuck_worker_is_stopped_and_its_kernels_compiled_here(
        one_worker: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def stuck(self: object) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    monkeypatch.setattr(compile_pool._Worker, "start_process", stuck)
    monkeypatch.setattr(compile_pool, "ANSWER_TIMEOUT_S", 1.0)
    started = llvm_device._start
    monkeypatch.setattr(llvm_device, "_start", lambda t, e: (time.sleep(0.3), started(t, e))[1])
    a, b = inputs()
    begin = time.perf_counter()
    got = llvm_device.run(program(), [a, b])[0]
    np.testing.assert_allclose(got, expected(a, b), rtol=1e-4, atol=1e-5)
    assert time.perf_counter() - begin < 60
    assert compile_pool.pool() is None  # stopped, none started again


def test_a_worker_answers_requests_and_reports_errors() -> None:
    unit = llvm_device.compile_unit(kernels(program())[0])
    good = compile_pool.request(ir.to_text(unit), "device-llvm")
    bad = compile_pool.request("func.func @main( {", "device-llvm")
    worker = subprocess.Popen([sys.executable, "-m", "irtensor.runtime.compile_worker"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert worker.stdin is not None and worker.stdout is not None
    try:
        compile_pool.write_message(worker.stdin, good)
        answer, code = compile_pool.read_message(worker.stdout)
        compile_pool.write_message(worker.stdin, bad)
        error, _ = compile_pool.read_message(worker.stdout)
    finally:
        worker.stdin.close()
        assert worker.wait(timeout=60) == 0  # end of input ends it
    kernel = kernels(program())[0]
    assert answer["status"] == "ok" and answer["meta"]["function"] == \
        llvm_objects.function_name(kernel)
    assert code[:4] == b"\x7fELF"
    _, name = llvm_objects.loaded(answer["meta"], code, kernel)  # checked as a disk entry
    assert name == llvm_objects.function_name(kernel)
    assert error["status"] == "error" and "IRError" in error["message"]


def compile_in_worker(request: dict[str, Any], env: dict[str, str]
                      ) -> tuple[dict[str, Any], bytes]:
    """A worker started with `env` over this process's environment compiles `request`."""
    worker = subprocess.Popen([sys.executable, "-m", "irtensor.runtime.compile_worker"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              env={**os.environ, **env})
    assert worker.stdin is not None and worker.stdout is not None
    try:
        compile_pool.write_message(worker.stdin, request)
        answer, code = compile_pool.read_message(worker.stdout)
    finally:
        worker.stdin.close()
        assert worker.wait(timeout=60) == 0
    return answer, code


@pytest.mark.parametrize("level", ["1", None])
def test_a_worker_compiles_at_the_level_this_process_would(
        level: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    from irtensor.passes.llvm import opt_level

    if level is None:
        monkeypatch.delenv(opt_level.OPT_LEVEL_ENV, raising=False)
    else:
        monkeypatch.setenv(opt_level.OPT_LEVEL_ENV, level)
    kernel = kernels(program())[1]  # the matmul's vector block: O2 unless a level is fixed
    request = compile_pool.request(ir.to_text(llvm_device.compile_unit(kernel)), "device-llvm")
    answer, code = compile_in_worker(request, {opt_level.OPT_LEVEL_ENV: "3"})
    want = int(level) if level else 2  # this process's choice, not the worker's own 3
    assert answer["meta"]["opt_level"] == want
    jit, _ = llvm_objects.loaded(answer["meta"], code, kernel)
    assert jit.opt_level == want


def test_a_worker_streams_stores_as_this_process_would(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The streaming threshold set here, after the worker started with another, holds in
    the worker: its elementwise kernel of 4 MiB stores non-temporally."""
    monkeypatch.setenv("IRTENSOR_STREAM_BYTES", "4096")
    x = np.ones(1 << 20, np.float32)
    module = ir.parse("""
func.func @main(%x: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %y = hl.add %x, %x : tensor<1048576xf32>, tensor<1048576xf32> -> tensor<1048576xf32>
  func.return %y : tensor<1048576xf32>
}""")
    Pipeline("hl-to-kernel").run(module)
    (kernel,) = [op for op in module.walk() if isinstance(op, KernelOp)]
    request = compile_pool.request(ir.to_text(llvm_device.compile_unit(kernel)), "device-llvm")
    answer, code = compile_in_worker(request, {"IRTENSOR_STREAM_BYTES": "0"})
    assert "!nontemporal" in answer["meta"]["llvm_ir"]
    jit, name = llvm_objects.loaded(answer["meta"], code, kernel)
    out = np.empty_like(x)
    jit.function(name)(x, out, 0, x.size)
    np.testing.assert_array_equal(out, x + x)


def test_messages_are_plain_data_and_checked() -> None:
    import io

    stream = io.BytesIO()
    compile_pool.write_message(stream, {"status": "ok", "n": [1, 2]}, b"\x00code")
    whole = stream.getvalue()
    assert compile_pool.read_message(io.BytesIO(whole)) == ({"status": "ok", "n": [1, 2]},
                                                            b"\x00code")
    with pytest.raises(EOFError, match="inside a message"):
        compile_pool.read_message(io.BytesIO(whole[:-2]))
    with pytest.raises(EOFError, match="the stream ended"):
        compile_pool.read_message(io.BytesIO(b""))
    listed = io.BytesIO()
    compile_pool.write_message(listed, [1, 2])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a JSON object"):
        compile_pool.read_message(io.BytesIO(listed.getvalue()))


def test_small_batches_debug_and_a_user_pipeline_stay_here(one_worker: None) -> None:
    a = Tensor(np.arange(5, dtype=np.float32), device="llvm")
    (a * 2 + 1).numpy()  # one kernel: below MIN_KERNELS
    assert not compile_pool._POOL
    todo = [llvm_device._probe(op, {}) for op in kernels(program())]
    assert llvm_device._shareable(todo)  # type: ignore[arg-type]
    from irtensor import Context

    with Context(debug=1):
        assert not llvm_device._shareable(todo)  # type: ignore[arg-type]
    with Context(device_pipeline="device-llvm,cse"):
        assert not llvm_device._shareable([llvm_device._probe(kernels(program())[0], {})])  # type: ignore[list-item]


def test_the_worker_count_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_COMPILE_WORKERS", "two")
    with pytest.raises(ValueError, match="IRTENSOR_COMPILE_WORKERS must be a count"):
        compile_pool.worker_count()
    monkeypatch.setenv("IRTENSOR_COMPILE_WORKERS", "0")
    monkeypatch.setattr(compile_pool, "_POOL", [])
    assert compile_pool.pool() is None


@passes.register_pass
@dataclass(frozen=True)
class BreakLLVM(ModulePass):
    """test-break-llvm: give an llvm.load a wrong result type, as a buggy pass would."""

    name = "test-break-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        load = next(o for o in op.walk() if isinstance(o, llvm.LoadOp))
        load.results[0]._type = f64


def test_the_unverified_device_lowering_still_names_the_pass_that_broke_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """device-llvm's output is checked by LLVM's verifier, not xDSL's; when LLVM rejects
    it, the unit is lowered again with verification after each pass, naming the pass."""
    monkeypatch.setenv("IRTENSOR_COMPILE_WORKERS", "0")
    monkeypatch.setitem(registry._PIPELINES, "device-llvm",
                        "lower-kernels-to-loops,convert-to-llvm,test-break-llvm")
    module = program("""
func.func @main(%a: tensor<31x7xf32>) -> tensor<31x7xf32> {
  %e = hl.exp %a : tensor<31x7xf32>
  func.return %e : tensor<31x7xf32>
}
""")
    with pytest.raises(PipelineError, match="IR after pass 'test-break-llvm' does not verify"):
        llvm_device.run(module, [np.ones((31, 7), np.float32)])


def test_a_large_program_starts_the_workers_before_its_pipeline_runs(
        one_worker: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Realizing a program of WARM_WORKERS_OPS hl ops or more starts the workers before its
    pipeline runs, so that they have imported irtensor when its kernels are shared out; a
    small program starts none."""
    events: list[str] = []
    warm, share = compile_pool.CompilePool.warm, compile_pool.CompilePool.share
    monkeypatch.setattr(compile_pool.CompilePool, "warm",
                        lambda self: (events.append("warm"), warm(self))[1])
    monkeypatch.setattr(compile_pool.CompilePool, "share",
                        lambda self, r: (events.append("share"), share(self, r))[1])
    lowered = llvm_device.warm_workers_for
    monkeypatch.setattr(llvm_device, "warm_workers_for", lambda m: (
        events.append(f"ops {sum(1 for _ in m.walk())}"), lowered(m))[1])
    small = Tensor(np.arange(41, dtype=np.float32), device="llvm")  # no other test's size
    np.testing.assert_allclose((small * 3 - 2).numpy(), np.arange(41) * 3 - 2)
    assert events == ["ops 7"] and not compile_pool._POOL
    events.clear()
    rng = np.random.default_rng(7)
    x0 = rng.standard_normal((13, 19)).astype(np.float32)
    ws = [rng.standard_normal((19, 19)).astype(np.float32) * 0.3 for _ in range(8)]
    x, want = Tensor(x0, device="llvm"), x0.astype(np.float64)
    for i, w in enumerate(ws):
        x = (x @ Tensor(w, device="llvm") + i).relu().softmax(-1)
        m = np.maximum(want @ w + i, 0)
        e = np.exp(m - m.max(-1, keepdims=True))
        want = e / e.sum(-1, keepdims=True)
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-4, atol=1e-6)
    ops = int(events[0].split()[1])
    assert ops >= llvm_device.WARM_WORKERS_OPS and events[1:] == ["warm", "share"], events
    worker = compile_pool._POOL[0].workers[0]
    assert worker.process is not None and worker.process.poll() is None
