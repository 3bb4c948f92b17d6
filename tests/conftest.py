"""Helpers for the interpreter tests: run a one-op function, compare with a reference."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import settings

from irtensor import dtypes
from irtensor.interp import run
from irtensor.ir import parse
from irtensor.testing import RTOL, register_profiles

# Schedules follow the host's vector width (irtensor.host); the suite pins the widest, so the
# schedules the lit files and tests expect do not depend on the machine (subprocesses, such
# as the lit runs, inherit it). tests/test_host.py checks the host's own width.
os.environ.setdefault("IRTENSOR_VECTOR_BYTES", "64")
os.environ.setdefault("IRTENSOR_L2_BYTES", str(2 << 20))  # the register blocks' tiles too
os.environ.setdefault("IRTENSOR_STREAM_BYTES", str(8 << 20))  # and which outputs stream

register_profiles()
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


DEVICES = tuple(os.environ.get("IRTENSOR_TEST_DEVICES", "llvm,interp,opencl").split(","))


def opencl_unavailable() -> str | None:
    """Why the OpenCL tests cannot run here; with IRTENSOR_REQUIRE_OPENCL=1 (CI) that is
    an error instead of a skip."""
    from irtensor.runtime import opencl_device

    why = opencl_device.unavailable()
    if why is not None and os.environ.get("IRTENSOR_REQUIRE_OPENCL") == "1":
        raise RuntimeError(f"IRTENSOR_REQUIRE_OPENCL=1 but OpenCL cannot run here: {why}")
    return why


def device_param(device: str) -> Any:
    if device != "opencl":
        return device
    why = opencl_unavailable()
    return pytest.param(device, marks=pytest.mark.skipif(
        why is not None, reason=f"no OpenCL device builds programs here: {why}"))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The Tensor tests (test_tensor_*.py) run on every device: compiled and oracle."""
    if metafunc.module.__name__.startswith("test_tensor_"):
        metafunc.parametrize("tensor_device", [device_param(d) for d in DEVICES],
                             indirect=True)


@pytest.fixture(autouse=True)
def tensor_device(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str | None:
    device = getattr(request, "param", None)
    if device is not None:
        monkeypatch.setenv("IRTENSOR_DEVICE", device)
    return device

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
BF16 = np.dtype(ml_dtypes.bfloat16)
I32, I64, I1 = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.bool_)
FLOATS = [F32, F16, BF16, F64]
INTS = [I32, I64]
NAN, INF = math.nan, math.inf


def ttype(shape: Sequence[int], dtype: np.dtype) -> str:
    return str(dtypes.tensor_type(tuple(shape), dtypes.from_numpy(dtype)))


def run_op(op: str, inputs: Sequence[np.ndarray], result: str) -> np.ndarray:
    """Run `%r = <op>` in a function @main of `inputs`; in `op`, the arguments are
    %a0, %a1, ... and `{0}`, `{1}`, ... and `{r}` stand for their and the result's types."""
    types = [ttype(a.shape, a.dtype) for a in inputs]
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    line = op.format(*types, r=result)
    text = f"func.func @main({args}) -> {result} {{\n  %r = {line}\n  func.return %r : {result}\n}}"
    (out,) = run(parse(text), list(inputs))
    return out


def check(got: np.ndarray, want: np.ndarray, scale: float = 1.0) -> None:
    """Same dtype and shape; float values within the dtype's tolerance (NaN matches NaN)."""
    assert isinstance(got, np.ndarray)
    assert got.dtype == want.dtype, f"dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    if want.dtype in RTOL:
        tol = RTOL[want.dtype] * scale
        np.testing.assert_allclose(got.astype(F64), want.astype(F64), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


def expect(op: str, inputs: Sequence[np.ndarray], want: np.ndarray, scale: float = 1.0) -> None:
    check(run_op(op, inputs, ttype(want.shape, want.dtype)), want, scale)


def ident(value: object) -> str | None:
    """Test ids: the value's text, or pytest's default for functions."""
    return None if callable(value) else str(value)


def data(
    shape: Sequence[int], dtype: np.dtype, seed: int = 0, low: float = -3, high: float = 3
) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == I1:
        return np.asarray(rng.integers(0, 2, size=shape)).astype(I1)
    if dtype in INTS:
        return np.asarray(rng.integers(int(low), int(high) + 1, size=shape)).astype(dtype)
    return np.asarray(rng.uniform(low, high, size=shape)).astype(dtype)


def lit(values: Any, dtype: np.dtype) -> np.ndarray:
    return np.array(values, dtype=dtype)


@pytest.fixture(autouse=True, scope="session")
def session_kernel_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Compiled kernels go to a fresh folder: tests never read the user's cache."""
    os.environ.setdefault("IRTENSOR_CACHE_DIR", str(tmp_path_factory.mktemp("kernel-cache")))
