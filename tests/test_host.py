"""Schedules follow the host's vector registers (irtensor.host): the width read from the
CPU, the environment's override and its checks, and kernels scheduled for each width
giving the same results."""

from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
import pytest

from irtensor import Tensor, host


def test_the_detected_width_follows_the_cpu_features() -> None:
    features = llvm.get_host_cpu_features()
    want = 64 if features.get("avx512f") else 32 if features.get("avx") else 16
    assert host.detected_vector_bytes() == want


def test_without_the_override_the_host_width_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IRTENSOR_VECTOR_BYTES", raising=False)
    assert host.vector_bytes() == host.detected_vector_bytes()


@pytest.mark.parametrize("bad", ["48", "x", "0", "128"])
def test_a_bad_override_is_refused(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv("IRTENSOR_VECTOR_BYTES", bad)
    with pytest.raises(ValueError, match="IRTENSOR_VECTOR_BYTES must be one of 16, 32, 64"):
        host.vector_bytes()


@pytest.mark.parametrize("width", [16, 32, 64])
def test_each_width_gives_its_register_block_and_the_same_matmul(
        monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    monkeypatch.setenv("IRTENSOR_VECTOR_BYTES", str(width))
    rng = np.random.default_rng(width)
    a = rng.standard_normal((24, 40)).astype(np.float32)
    b = rng.standard_normal((40, 200)).astype(np.float32)
    out = Tensor(a, device="llvm") @ Tensor(b, device="llvm")
    [matmul] = [item.kernel for item in out.schedule()]
    assert matmul.schedule is not None
    assert matmul.schedule.values()["vector"] == 2 * width // 4  # two vectors of f32
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("width", [16, 32, 64])
def test_each_width_splits_a_row_sum_into_its_lanes(
        monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    monkeypatch.setenv("IRTENSOR_VECTOR_BYTES", str(width))
    x = np.random.default_rng(1).standard_normal((2, 1 << 16)).astype(np.float32)
    out = Tensor(x, device="llvm").sum(axis=1)
    partial = out.schedule()[0].kernel
    # four vectors of f32 lanes with AVX-512's 32 registers, two with 16 (4 spilled on AVX2)
    assert partial.sizes[-1] == (4 if width == 64 else 2) * width // 4
    np.testing.assert_allclose(out.numpy(), x.sum(axis=1), rtol=1e-5, atol=1e-4)
