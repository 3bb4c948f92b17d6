"""Device llvm: the compiled kernels agree with the interpreter, and the cache works."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from xdsl.dialects.builtin import f32, f64, i1, i32, i64

from irtensor import Tensor, interp, ir, runtime
from irtensor.pipeline import Pipeline
from irtensor.runtime import cache, llvm_device
from irtensor.testing import Program, assert_same_results, programs

SRC = Path(__file__).resolve().parent.parent / "src"


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("IRTENSOR_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def on_llvm(program: Program) -> list[np.ndarray]:
    module = program.module.clone()
    Pipeline("hl-to-kernel").run(module)
    return llvm_device.run(module, program.inputs)


@given(programs(dialect="hl", dtypes=(f32, f64, i32, i64, i1), max_ops=6, max_dim=7))
def test_generated_programs_agree_with_the_interpreter(program: Program) -> None:
    want = interp.run(program.module, program.inputs)
    assert_same_results(on_llvm(program), want, rtol=2e-4, atol=2e-4)


def test_odd_sizes_agree_with_numpy() -> None:
    rng = np.random.default_rng(0)
    for n in (1, 7, 1023):
        a = rng.standard_normal((n, 5)).astype(np.float32)
        b = rng.standard_normal(5).astype(np.float32)
        ta, tb = Tensor(a, device="llvm"), Tensor(b, device="llvm")
        np.testing.assert_allclose(((ta * tb).exp() - ta).sum(1).numpy(),
                                   (np.exp(a * b) - a).sum(1), rtol=1e-5, atol=1e-5)
    empty = Tensor(np.zeros((0, 3), np.float32), device="llvm")
    assert (empty + 1).numpy().shape == (0, 3)
    np.testing.assert_array_equal(empty.sum(0).numpy(), np.zeros(3, np.float32))


def test_mlp_and_conv_net_match_numpy() -> None:
    rng = np.random.default_rng(1)
    x, w1, b1 = (rng.standard_normal(s).astype(np.float32) for s in ((8, 32), (32, 16), (16,)))
    w2 = rng.standard_normal((16, 4)).astype(np.float32)
    t = lambda a: Tensor(a, device="llvm")  # noqa: E731
    got = (t(x) @ t(w1) + t(b1)).relu().matmul(t(w2)).log_softmax().numpy()
    h = np.maximum(x @ w1 + b1, 0) @ w2
    want = h - h.max(1, keepdims=True)
    want = want - np.log(np.exp(want).sum(1, keepdims=True))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    img = rng.standard_normal((2, 3, 9, 9)).astype(np.float32)
    k = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    out = t(img).conv2d(t(k), padding=1).relu().max_pool2d().numpy()
    ref = Tensor(img, device="interp").conv2d(Tensor(k, device="interp"), padding=1).relu()
    np.testing.assert_allclose(out, ref.max_pool2d().numpy(), rtol=1e-4, atol=1e-4)


def test_threads_split_the_outer_loop_without_changing_results(
        monkeypatch: pytest.MonkeyPatch) -> None:
    a = np.random.default_rng(2).standard_normal((2048, 1024)).astype(np.float32)
    kernel = next(iter(kernels_of(EXP_RELU)))
    assert llvm_device.outer_loop(kernel) == (2048, True)  # 2M points: large enough to split
    results = []
    for n in ("1", "2"):
        monkeypatch.setenv("IRTENSOR_THREADS", n)
        results.append((Tensor(a, device="llvm").exp() * 2).numpy())
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_allclose(results[0], np.exp(a) * 2, rtol=1e-6)


def test_only_kernels_worth_a_thread_are_split() -> None:
    """A thread's piece costs a pool hand-off (0.1-0.2 ms): small kernels run on one,
    a contraction's products counted as 16 times cheaper than elementwise points."""
    assert [llvm_device.outer_loop(k)[1] for k in kernels_of(BATCH)] == [False, False]
    matmul = """
    func.func @main(%a: tensor<N x256xf32>, %b: tensor<256x256xf32>) -> tensor<N x256xf32> {
      %m = hl.matmul %a, %b : tensor<N x256xf32>, tensor<256x256xf32> -> tensor<N x256xf32>
      func.return %m : tensor<N x256xf32>
    }"""
    for rows, split in ((64, False), (512, True)):
        (kernel,) = kernels_of(matmul.replace("N x", f"{rows}x"))
        assert llvm_device.outer_loop(kernel) == (rows, split)


def test_a_repeated_program_runs_no_pipeline_and_compiles_nothing() -> None:
    a = Tensor(np.arange(6, dtype=np.float32), device="llvm")
    (a * 3 + 1).numpy()
    before = runtime.stats()
    for _ in range(3):
        (a * 3 + 1).numpy()
    after = runtime.stats()
    assert after["pipeline_runs"] == before["pipeline_runs"]
    assert after["kernels_compiled"] == before["kernels_compiled"]
    assert after["programs_cached"] == before["programs_cached"] + 3


def kernels_of(program: str) -> list:
    from irtensor import ir
    from irtensor.dialects.kernel import KernelOp

    module = ir.parse(program)
    Pipeline("hl-to-kernel").run(module)
    return [op for op in module.walk() if isinstance(op, KernelOp)]


EXP_RELU = """
func.func @main(%a: tensor<2048x1024xf32>) -> tensor<2048x1024xf32> {
  %e = hl.exp %a : tensor<2048x1024xf32>
  %r = hl.relu %e : tensor<2048x1024xf32>
  func.return %r : tensor<2048x1024xf32>
}
"""

BATCH = """
func.func @main(%a: tensor<64x48xf32>, %b: tensor<48x32xf32>) -> tensor<64x32xf32> {
  %e = hl.exp %a : tensor<64x48xf32>
  %m = hl.matmul %e, %b : tensor<64x48xf32>, tensor<48x32xf32> -> tensor<64x32xf32>
  %r = hl.relu %m : tensor<64x32xf32>
  func.return %r : tensor<64x32xf32>
}
"""


def test_a_batch_compiles_each_distinct_kernel_once_and_runs_like_one_at_a_time() -> None:
    kernels = kernels_of(BATCH)
    twice = [*kernels, kernels_of(BATCH)[0]]  # the same kernel again, as another op
    before = runtime.stats()["kernels_compiled"]
    batch = llvm_device.compile_kernels(twice)
    assert runtime.stats()["kernels_compiled"] == before + len(kernels)
    assert batch[-1] is batch[0]
    assert [k.name for k in batch] == [op.sym_name.data for op in twice]
    assert llvm_device.compile_kernels(twice) == batch  # remembered by the ops
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 48)).astype(np.float32)
    b = rng.standard_normal((48, 32)).astype(np.float32)
    module = ir.parse(BATCH)
    Pipeline("hl-to-kernel").run(module)
    np.testing.assert_allclose(llvm_device.run(module, [a, b])[0],
                               np.maximum(np.exp(a) @ b, 0), rtol=2e-5, atol=2e-4)


def test_a_batch_raises_what_a_kernel_s_compile_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    from irtensor.passes.llvm import jit as llvm_jit

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("LLVM refused the module")

    monkeypatch.setattr(llvm_jit, "_compile_text", broken)
    unseen = BATCH.replace("64x", "61x")  # kernels no cache holds
    with pytest.raises(RuntimeError, match="LLVM refused"):
        llvm_device.compile_kernels(kernels_of(unseen))


def test_a_forked_child_compiles_in_a_thread_of_its_own() -> None:
    llvm_device.compile_kernels(kernels_of(BATCH))  # the parent's compile thread exists
    code = textwrap.dedent("""
        import os, sys, numpy as np
        sys.path.insert(0, {src!r})
        from irtensor import Tensor
        from irtensor.runtime import llvm_device
        x = Tensor(np.arange(4, dtype=np.float32), device="llvm")
        (x + 1).numpy()
        pid = os.fork()
        if pid == 0:
            os._exit(0 if ((x * 5 - 2).numpy() == np.arange(4) * 5 - 2).all() else 3)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """).format(src=str(SRC))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0"]


SCRIPT = textwrap.dedent("""
    import sys, numpy as np
    sys.path.insert(0, {src!r})
    from irtensor import Tensor, runtime
    x = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4), device="llvm")
    y = ((x * 2).exp2() + x.sum(1, keepdim=True)).numpy()
    expected = np.exp2(np.arange(12, dtype=np.float32).reshape(3, 4) * 2)
    expected += np.arange(12, dtype=np.float32).reshape(3, 4).sum(1, keepdims=True)
    assert np.allclose(y, expected, rtol=1e-6), y
    s = runtime.stats()
    print(s["kernels_compiled"], s["cache_hits_disk"])
""")


def run_script(cache_dir: Path) -> tuple[int, int]:
    env = dict(os.environ, IRTENSOR_CACHE_DIR=str(cache_dir))
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(src=str(SRC))], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    compiled, disk = done.stdout.split()
    return int(compiled), int(disk)


def test_a_second_process_compiles_nothing(private_cache: Path) -> None:
    compiled, _ = run_script(private_cache)
    assert compiled >= 1
    assert run_script(private_cache) == (0, compiled)


def test_a_corrupt_cache_entry_is_rebuilt(private_cache: Path) -> None:
    compiled, _ = run_script(private_cache)
    entries = list(private_cache.glob("*.bin"))
    assert len(entries) == compiled
    for entry in entries:
        entry.write_bytes(entry.read_bytes()[: len(cache.MAGIC) + 70])  # truncated
    assert run_script(private_cache) == (compiled, 0)  # recompiled, still right


def test_cache_entries_are_checked() -> None:
    cache.store("k", "test", {"n": 1}, b"payload")
    entry = cache.load("k", "test")
    assert entry is not None and (entry.meta, entry.payload) == ({"n": 1}, b"payload")
    assert cache.load("k", "other kind") is None  # and deleted
    cache.store("k", "test", {"n": 1}, b"payload")
    path = cache.cache_dir() / "k.bin"
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    assert cache.load("k", "test") is None
    assert not path.exists()


def test_debug_levels_show_realizes_kernels_schedules_ir_and_assembly(
        private_cache: Path) -> None:
    script = textwrap.dedent(f"""
        import sys, numpy as np
        sys.path.insert(0, {str(SRC)!r})
        from irtensor import Tensor
        x = Tensor(np.ones((64, 64), np.float32), device="llvm")
        (x.exp() * 2).sum(1).numpy()
    """)
    outputs = {}
    for level in ("1", "2", "3", "4", "5"):
        env = dict(os.environ, DEBUG=level, IRTENSOR_CACHE_DIR=str(private_cache))
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        outputs[level] = done.stderr
    assert "*** realize on llvm: 1 kernels" in outputs["1"] and "*** llvm" not in outputs["1"]
    assert "*** llvm r_64_64" in outputs["2"] and "GB/s" in outputs["2"]
    assert "schedule" in outputs["3"] and "<order [" in outputs["3"]
    assert "define void" in outputs["4"]  # the LLVM IR
    assert ".text" in outputs["5"] or "ret" in outputs["5"]  # the machine assembly


SPLIT_SUM = """
func.func @main(%x: tensor<128x8192xf32>) -> (tensor<f32>, tensor<128xf32>) {
  %s = hl.sum %x axes [0, 1] : tensor<128x8192xf32> -> tensor<f32>
  %r = hl.max %x axes [1] : tensor<128x8192xf32> -> tensor<128xf32>
  func.return %s, %r : tensor<f32>, tensor<128xf32>
}
"""


def test_split_reductions_run_on_llvm_like_the_interpreter() -> None:
    from irtensor import ir

    module = ir.parse(SPLIT_SUM)
    x = np.random.default_rng(3).standard_normal((128, 8192)).astype(np.float32)
    want = interp.run(module.clone(), [x])
    Pipeline("hl-to-kernel").run(module)
    assert sum(1 for op in module.walk() if op.name == "kernel.kernel") == 4  # both split
    got = llvm_device.run(module, [x])
    np.testing.assert_allclose(got[0], x.astype(np.float64).sum(), rtol=1e-5, atol=1e-2)
    np.testing.assert_array_equal(got[1], want[1])  # a split max is exact
    again = llvm_device.run(module, [x])  # the plan replays with pooled buffers
    np.testing.assert_array_equal(again[1], got[1])
    with pytest.raises(ValueError, match="input #0"):
        llvm_device.run(module, [x[:64]])


KEPT = """func.func @main(%x: tensor<2x8x7x7xf32>, %w: tensor<64x8x3x3xf32>, %s: tensor<64xf32>)
    -> tensor<2x64x7x7xf32> {
  %c = hl.conv2d %x, %w padding [1, 1, 1, 1]
      : tensor<2x8x7x7xf32>, tensor<64x8x3x3xf32> -> tensor<2x64x7x7xf32>
  %k = hl.exp %s : tensor<64xf32>
  %e = hl.reshape %k : tensor<64xf32> -> tensor<1x64x1x1xf32>
  %r = hl.mul %c, %e : tensor<2x64x7x7xf32>, tensor<1x64x1x1xf32> -> tensor<2x64x7x7xf32>
  func.return %r : tensor<2x64x7x7xf32>
}"""


def test_steps_of_constant_arguments_alone_are_kept_between_runs() -> None:
    """The weight and the scale are constant: the kernel that reads only them (the
    weight's channels-last copy for a conv blocked across its channels) runs once; a new
    array in the weight's place is copied again; the results match the interpreter."""
    module = ir.parse(KEPT)
    Pipeline("hl-to-kernel").run(module)
    rng = np.random.default_rng(0)
    x, w, s = (rng.standard_normal(shape).astype(np.float32)
               for shape in ((2, 8, 7, 7), (64, 8, 3, 3), (64,)))
    counts = []
    w3 = w * 3
    for inputs in ([x, w, s], [x * 2, w, s], [x, w3, s], [x * 2, w3, s]):
        before = runtime.STATS.kernels_run
        (got,) = llvm_device.run(module, inputs, constant=frozenset({1, 2}))
        counts.append(runtime.STATS.kernels_run - before)
        (want,) = interp.run(module, inputs)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)  # 72-term sums
    total = counts[0]
    assert total >= 2 and counts[1] < total  # the second run skips the kept copy
    assert counts[2] == total  # a new weight array: computed again
    assert counts[3] == counts[1]  # and kept again
