"""bf16 matmuls on AMX's tiles (`passes/loops/tile_block.py`, the `amx` dialect).

Properties: random bf16 matmuls the tiles take (K a multiple of 32, the columns of 16,
any rows, batched, with a bias and a relu in the epilogue) agree with the interpreter
within bf16 rounding on llvm with the tiles (hosts with AMX) and without them, and on
opencl (the same programs; OpenCL has no tiles). Targeted: which kernels the tiles
take, the ops' verifiers, the configuration bytes, the cache key.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.utils.exceptions import VerifyException

from conftest import device_param
from irtensor import Tensor, host, ir
from irtensor.dialects.amx import TileConfigOp, TileDotBF16Op, TileZeroOp
from irtensor.passes.llvm.patterns_amx import config_bytes
from irtensor.pipeline import Pipeline

BF16 = np.dtype(ml_dtypes.bfloat16)
NO_AMX = None if host.detected_amx() else \
    "this CPU has no AMX tiles (amx-tile, amx-bf16), or Linux did not grant their state"


def matmul_module(m: int, k: int, n: int, dtype: str = "bf16") -> str:
    a, b, r = (f"tensor<{x}x{y}x{dtype}>" for x, y in ((m, k), (k, n), (m, n)))
    return f"""func.func @main(%a: {a}, %b: {b}) -> {r} {{
      %0 = hl.matmul %a, %b : {a}, {b} -> {r}
      func.return %0 : {r}
    }}"""


def loops(text: str) -> str:
    module = ir.parse(text)
    Pipeline("hl-to-kernel").run(module)
    Pipeline("lower-kernels-to-loops").run(module)
    return ir.to_text(module)


def on(device: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The Tensor device for `device`: "llvm-amx" (skipped without AMX), "llvm" (the
    tiles off), "opencl"."""
    if device == "llvm-amx":
        if NO_AMX is not None:
            pytest.skip(NO_AMX)
        monkeypatch.setenv("IRTENSOR_AMX", "1")
        return "llvm"
    monkeypatch.setenv("IRTENSOR_AMX", "0")
    return device


@pytest.mark.parametrize("device", ["llvm-amx", "llvm", device_param("opencl")])
@settings(max_examples=10, deadline=None)
@given(batch=st.sampled_from([(), (2,)]), m=st.integers(1, 70),
       k=st.sampled_from([1, 17, 32, 64, 160, 784]), n=st.sampled_from([16, 48, 288]),
       epilogue=st.booleans(), seed=st.integers(0, 99))
def test_bf16_matmuls_on_tiles_agree_with_the_interpreter(
        device: str, batch: tuple[int, ...], m: int, k: int, n: int, epilogue: bool,
        seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal((*batch, *s)).astype(BF16) for s in ((m, k), (k, n)))
    bias = rng.standard_normal(n).astype(BF16)

    def program(dev: str) -> np.ndarray:
        x, w, c = (Tensor(v, device=dev) for v in (a, b, bias))
        y = x @ w
        return ((y + c).relu() if epilogue else y).numpy()

    with pytest.MonkeyPatch.context() as patch:
        got = program(on(device, patch))
    want = program("interp")
    assert got.dtype == BF16 and got.shape == (*batch, m, n)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    magnitude = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    # two f32 sums of the same exact products, each rounded to bf16 (the epilogue's add
    # and relu round once more, to the same bf16 on both sides but for the sums' ties)
    g, w = got.astype(np.float64), want.astype(np.float64)
    tol = 2.0 ** -7 * (np.abs(w) + np.abs(bias.astype(np.float64)) * epilogue) \
        + k * 2.0 ** -22 * magnitude + 1e-30
    assert np.all(np.abs(g - w) <= 2 * tol), float(np.max(np.abs(g - w) - 2 * tol))
    if not epilogue:
        assert np.all(np.abs(g - exact) <= 2.0 ** -8 * np.abs(exact) + k * 2.0 ** -22
                      * magnitude)


def test_two_threads_split_the_rows_on_tiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each thread's range of rows (not a multiple of 32) configures its own tiles."""
    device = on("llvm-amx", monkeypatch)
    monkeypatch.setenv("IRTENSOR_THREADS", "2")
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((150, 256)).astype(BF16), rng.standard_normal((256, 80)).astype(BF16)
    got = (Tensor(a, device=device) @ Tensor(b, device=device)).numpy().astype(np.float64)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    magnitude = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    assert np.all(np.abs(got - exact) <= 2.0 ** -8 * np.abs(exact) + 256 * 2.0 ** -22 * magnitude)


@pytest.mark.parametrize(("m", "k", "n", "dtype", "tiles"), [
    (64, 64, 64, "bf16", True),
    (5, 4096, 16, "bf16", True),     # 128 steps of 32: the most one accumulator takes
    (5, 4128, 16, "bf16", False),    # 129 steps
    (64, 49, 64, "bf16", True),      # K padded to 64
    (64, 64, 24, "bf16", False),     # columns not a multiple of 16
    (64, 64, 64, "f32", False),
])
def test_which_matmuls_take_the_tiles(m: int, k: int, n: int, dtype: str, tiles: bool,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_AMX", "1")
    text = loops(matmul_module(m, k, n, dtype))
    assert ("amx.tile_dot_bf16" in text) == tiles
    if tiles:
        assert text.count("amx.tile_dot_bf16") == 4
        assert text.count("amx.tile_config") == 1 and text.count("amx.tile_release") == 1
    monkeypatch.setenv("IRTENSOR_AMX", "0")
    assert "amx." not in loops(matmul_module(m, k, n, dtype))


def test_a_linear_layer_packs_w_transposed_then_takes_the_tiles(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """x @ w.T reads w down its rows, not in runs along the columns; pack-operands copies
    w.T first (its own kernel), and the matmul then reads the copy in runs and takes the
    tiles."""
    monkeypatch.setenv("IRTENSOR_AMX", "1")
    x = Tensor(np.ones((64, 128), BF16), device="llvm")
    w = Tensor(np.ones((96, 128), BF16), device="llvm")
    text = (x @ w.T).ir("loops")
    assert text.count("irtensor.kernel") == 2 and text.count("amx.tile_dot_bf16") == 4


def test_the_ops_verify_their_tiles() -> None:
    TileConfigOp([(16, 64), (8, 32)]).verify()
    with pytest.raises(VerifyException, match="rows"):
        TileConfigOp([(17, 64)]).verify()
    with pytest.raises(VerifyException, match="multiple of 4"):
        TileConfigOp([(16, 30)]).verify()
    with pytest.raises(VerifyException, match="tile register 0-7"):
        TileZeroOp(8)
    with pytest.raises(VerifyException, match="three different tiles"):
        TileDotBF16Op(0, 0, 1).verify()
    bad_rows = """func.func @f(%b: memref<16x16xbf16>, %i: index) {
      amx.tile_load 4, %b[%i] : memref<16x16xbf16>
      func.return
    }"""
    with pytest.raises(VerifyException, match="rows must be 64 bytes"):
        ir.parse(bad_rows).verify()


def test_the_configuration_bytes() -> None:
    config = config_bytes([(16, 64), (8, 32)])
    assert len(config) == 64 and config[0] == 1
    assert config[16:20] == [64, 0, 32, 0] and config[48:50] == [16, 8]
    assert not any(config[1:16]) and not any(config[20:48]) and not any(config[50:])


def test_the_compiled_kernel_cache_tells_the_settings_apart(
        monkeypatch: pytest.MonkeyPatch) -> None:
    keys = set()
    for value in ("0", "1"):
        monkeypatch.setenv("IRTENSOR_AMX", value)
        keys.add(host.lowering_key())
    assert len(keys) == 2
    monkeypatch.setenv("IRTENSOR_AMX", "on")
    with pytest.raises(ValueError, match="0 or 1"):
        host.amx()


def test_a_forced_tile_kernel_is_refused_where_the_cpu_has_no_tiles(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """IRTENSOR_AMX=1 on a host without AMX builds kernels it cannot run: compiling one
    raises a clear error instead of LLVM stopping the process (or SIGILL at the call)."""
    from irtensor.passes.llvm import jit

    monkeypatch.setenv("IRTENSOR_AMX", "1")
    tiles = ir.parse(loops(matmul_module(32, 64, 32)))
    target = jit.host_target()
    monkeypatch.setattr(type(target), "has", lambda self, feature: not feature.startswith("amx"))
    with pytest.raises(NotImplementedError, match="AMX tiles"):
        jit.compile_module(tiles)


def test_debug_3_says_a_kernel_runs_on_tiles(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    import irtensor

    device = on("llvm-amx", monkeypatch)
    a = np.ones((64, 64), BF16)
    with irtensor.Context(debug=3):
        (Tensor(a, device=device) @ Tensor(a, device=device)).numpy()
        (Tensor(a.astype(np.float32), device=device)
         @ Tensor(a.astype(np.float32), device=device)).numpy()
    lines = [line for line in capsys.readouterr().err.splitlines() if "    schedule" in line]
    assert any(line.endswith("; on AMX tiles, LLVM O3") for line in lines)
    assert any(line.endswith(">, LLVM O2") and "AMX" not in line for line in lines)
