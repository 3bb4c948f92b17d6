"""bf16 matmul and conv: exact products summed in f32, on `vdpbf16ps` where the host has it.

Properties: random bf16 matmuls (odd and even K, rows narrower than a vector, B's
run and A's uniform reads) and padded bf16 convs agree with the interpreter within
bf16 rounding on llvm with the paired dot (`IRTENSOR_BF16_DOT=1`, hosts with
AVX512-BF16), on llvm with widened FMAs (`IRTENSOR_BF16_DOT=0`) and on opencl.
Targeted: the loops each setting builds, the op's verifier, the cache key.
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import BFloat16Type, VectorType, f32
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

from conftest import device_param
from irtensor import host, ir
from irtensor.dialects.x86vector import DotBF16Op
from irtensor.interp import run
from irtensor.pipeline import Pipeline
from irtensor.runtime import llvm_device, opencl_device

BF16 = np.dtype(ml_dtypes.bfloat16)
NO_DOT = None if host.detected_bf16_dot() else "this CPU has no AVX512-BF16 (vdpbf16ps)"


def matmul_module(m: int, k: int, n: int) -> str:
    a, b, r = (f"tensor<{x}x{y}xbf16>" for x, y in ((m, k), (k, n), (m, n)))
    return f"""func.func @main(%a: {a}, %b: {b}) -> {r} {{
      %0 = hl.matmul %a, %b : {a}, {b} -> {r}
      func.return %0 : {r}
    }}"""


def conv_module(batch: int, ci: int, co: int, size: int) -> str:
    x, w = f"tensor<{batch}x{ci}x{size}x{size}xbf16>", f"tensor<{co}x{ci}x3x3xbf16>"
    r = f"tensor<{batch}x{co}x{size}x{size}xbf16>"
    return f"""func.func @main(%x: {x}, %w: {w}) -> {r} {{
      %0 = hl.conv2d %x, %w padding [1, 1, 1, 1] : {x}, {w} -> {r}
      func.return %0 : {r}
    }}"""


def kernels(text: str) -> ir.ModuleOp:
    module = ir.parse(text)
    Pipeline("hl-to-kernel").run(module)
    return module


def bf16_inputs(shapes: list[tuple[int, ...]], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(BF16) for s in shapes]


def assert_within_bf16_rounding(got: np.ndarray, want: np.ndarray, magnitude: np.ndarray,
                                terms: int) -> None:
    """Two f32 sums of the same exact products in different orders, each rounded to bf16:
    one bf16 step of the result apart, plus the f32 sums' own difference."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    tol = 2.0 ** -7 * np.abs(w) + terms * 2.0 ** -22 * magnitude + 1e-30
    assert np.all(np.abs(g - w) <= tol), float(np.max(np.abs(g - w) - tol))


def run_on(device: str, module: ir.ModuleOp, inputs: list[np.ndarray]) -> np.ndarray:
    """The result on `device`: "llvm" (the paired dot), "llvm-no-dot", "opencl"."""
    if device == "opencl":
        return opencl_device.run(module, inputs)[0]
    if device == "llvm" and NO_DOT is not None:
        pytest.skip(NO_DOT)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IRTENSOR_BF16_DOT", "1" if device == "llvm" else "0")
        return llvm_device.run(module, inputs)[0]


DEVICES = ["llvm", "llvm-no-dot", device_param("opencl")]


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 9), k=st.integers(1, 40), n=st.integers(1, 40), seed=st.integers(0, 99))
def test_bf16_matmuls_agree_with_the_interpreter(device: str, m: int, k: int, n: int,
                                                 seed: int) -> None:
    module = kernels(matmul_module(m, k, n))
    a, b = bf16_inputs([(m, k), (k, n)], seed)
    (want,) = run(module, [a, b])
    got = run_on(device, module, [a, b])
    magnitude = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    assert got.dtype == BF16
    assert_within_bf16_rounding(got, want, magnitude, k)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 2), ci=st.integers(1, 5), co=st.integers(1, 20),
       size=st.integers(1, 9), seed=st.integers(0, 99))
def test_padded_bf16_convs_agree_with_the_interpreter(device: str, batch: int, ci: int,
                                                      co: int, size: int, seed: int) -> None:
    module = kernels(conv_module(batch, ci, co, size))
    x, w = bf16_inputs([(batch, ci, size, size), (co, ci, 3, 3)], seed)
    (want,) = run(module, [x, w])
    got = run_on(device, module, [x, w])
    (magnitude,) = run(kernels(conv_module(batch, ci, co, size).replace("bf16", "f32")),
                       [np.abs(x.astype(np.float32)), np.abs(w.astype(np.float32))])
    assert_within_bf16_rounding(got, want, magnitude.astype(np.float64), 9 * ci)


def test_the_products_are_exact_in_f32() -> None:
    """The kernel multiplies the widened operands (not bf16 products rounded to 8 bits):
    (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14 is kept until the sum's one rounding."""
    module = kernels(matmul_module(1, 2, 1))
    a = np.array([[1 + 2 ** -7, 2.0 ** -8]], dtype=BF16)
    b = np.array([[1 + 2 ** -7], [1.0]], dtype=BF16)
    # exact: 1 + 2^-6 + 2^-14 + 2^-8; bf16 products would give 1 + 2^-6 (+ 2^-8 = 1.0195)
    (want,) = run(module, [a, b])
    assert float(want[0, 0]) == float(np.float32(1 + 2 ** -6 + 2 ** -14 + 2 ** -8).astype(BF16))
    kernel_text = ir.to_text(module)
    assert "arith.mulf" in kernel_text and "bf16 to f32" in kernel_text


@pytest.mark.parametrize("dot", ["1", "0"])
def test_the_loops_pair_k_on_the_dot_or_widen_to_f32(dot: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """K = 33: a pairs loop of 16 steps of 2 and the last k on FMAs (dot); or one loop
    over k of widened rows (no dot). Both round each row to bf16 as a vector."""
    monkeypatch.setenv("IRTENSOR_BF16_DOT", dot)
    monkeypatch.setenv("IRTENSOR_AMX", "0")  # the vector block, not AMX's tiles
    module = kernels(matmul_module(12, 33, 64))
    Pipeline("lower-kernels-to-loops").run(module)
    text = ir.to_text(module)
    if dot == "1":
        # 4 vectors of 16 columns in each row of the 6-row blocks and of the 1-row
        # blocks (the rows are the threads' range, its length known when it runs)
        assert text.count("x86vector.avx512.dot") == (6 + 1) * 4
        assert "step %c2 iter_args" in text
    else:
        assert "x86vector" not in text
        assert "arith.extf %" in text and ": vector<64xbf16> to vector<64xf32>" in text
    assert ": vector<16xf32> to vector<16xbf16>" in text or \
        ": vector<64xf32> to vector<64xbf16>" in text  # each row's rounding, after the sums


def test_the_dot_op_verifies_its_shapes() -> None:
    block = Block(arg_types=[VectorType(f32, [16]), VectorType(BFloat16Type(), [32]),
                             VectorType(BFloat16Type(), [16])])
    acc, pairs, short = block.args
    DotBF16Op(acc, pairs, pairs).verify()
    with pytest.raises(VerifyException, match="operand"):
        DotBF16Op(acc, short, short).verify()
    block12 = Block(arg_types=[VectorType(f32, [12]), VectorType(BFloat16Type(), [24])])
    with pytest.raises(VerifyException, match="4, 8 or 16 f32"):
        DotBF16Op(block12.args[0], block12.args[1], block12.args[1]).verify()


def test_the_default_is_the_dot_where_it_pays(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset, IRTENSOR_BF16_DOT follows `bf16_dot_pays`: only a host with the instruction,
    and not one of the Intel cores (with AMX) where widening measured faster."""
    monkeypatch.delenv("IRTENSOR_BF16_DOT", raising=False)
    assert host.bf16_dot() == host.bf16_dot_pays()
    assert not host.bf16_dot_pays() or host.detected_bf16_dot()
    import llvmlite.binding as llvm

    if llvm.get_host_cpu_features().get("amx-tile"):
        assert not host.bf16_dot_pays()


def test_the_compiled_kernel_cache_tells_the_settings_apart(
        monkeypatch: pytest.MonkeyPatch) -> None:
    keys = set()
    for value in ("0", "1"):
        monkeypatch.setenv("IRTENSOR_BF16_DOT", value)
        keys.add(host.lowering_key())
    assert len(keys) == 2
    monkeypatch.setenv("IRTENSOR_BF16_DOT", "yes")
    with pytest.raises(ValueError, match="0 or 1"):
        host.bf16_dot()


def test_a_bf16_conv_block_fits_its_f32_accumulators_and_pairs_its_channels(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A 3x3 conv over 56-wide rows is blocked across its 64 output channels: counted in
    bf16 lanes that was 8 rows of 64 channels, 32 f32 vectors (all of AVX-512's
    registers); within 3/4 of them it is 8 x 32. kw = 3 is odd, so the input channels
    (64) are the paired loop, innermost, and no k is left to the FMAs."""
    monkeypatch.setenv("IRTENSOR_BF16_DOT", "1")
    module = kernels(conv_module(2, 64, 64, 56))
    text = ir.to_text(module)
    assert "vector 32, unroll 8" in text
    Pipeline("lower-kernels-to-loops").run(module)
    loops = ir.to_text(module)
    # the channel loop (%i3, or %i3_1 after the weight copy's own loop over it)
    assert re.search(r"scf.for %i3(_\d+)? = %c0 to %c64 step %c2 iter_args", loops)
    assert "x86vector.avx512.dot" in loops
    assert "vector<16xbf16> to vector<16xf32>" not in loops


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k", [1, 2])
def test_rows_round_to_bf16_as_the_interpreter_does(device: str, k: int) -> None:
    """Each output is one exact product (B's second row is zeros): the vector rounding
    of a row gives the interpreter's bits for ties (to even), NaN (the quiet 0x7fc0 with
    its sign), infinities, signed zeros and values past bf16's largest finite."""
    a_col = np.array([1.0, 1 + 2 ** -7, -(1 + 3 * 2 ** -7), np.nan, -np.inf, -0.0, 3e38, 1e-30],
                     dtype=np.float32)
    b_row = np.array([1.0, 1 + 2 ** -7, -1.0, 2.0 ** 127, 0.0, np.nan] + [0.5] * 10,
                     dtype=np.float32)
    a = np.zeros((a_col.size, k), BF16)
    a[:, 0] = a_col.astype(BF16)
    b = np.zeros((k, b_row.size), BF16)
    b[0] = b_row.astype(BF16)
    module = kernels(matmul_module(a_col.size, k, b_row.size))
    (want,) = run(module, [a, b])
    got = run_on(device, module, [a, b])
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("ci", "size"), [(8, 7), (3, 5)])
def test_convs_blocked_across_their_channels_agree_with_the_interpreter(
        device: str, ci: int, size: int) -> None:
    """64 output channels over short rows: a channel block, its rows stored lane by lane
    through a bf16 stack row (ci = 3: an odd channel count pairs kw's 3 with a tail)."""
    module = kernels(conv_module(1, ci, 64, size))
    assert "vector 32" in ir.to_text(module)  # blocked across the channels
    x, w = bf16_inputs([(1, ci, size, size), (64, ci, 3, 3)], 7)
    (want,) = run(module, [x, w])
    got = run_on(device, module, [x, w])
    (magnitude,) = run(kernels(conv_module(1, ci, 64, size).replace("bf16", "f32")),
                       [np.abs(x.astype(np.float32)), np.abs(w.astype(np.float32))])
    assert_within_bf16_rounding(got, want, magnitude.astype(np.float64), 9 * ci)
