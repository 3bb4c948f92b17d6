"""Schedules follow the host's vector registers (irtensor.host): the width read from the
CPU, the environment's override and its checks, and kernels scheduled for each width
giving the same results."""

from __future__ import annotations

from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest

from conftest import device_param
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


@pytest.mark.parametrize("device", [device_param("llvm"), device_param("opencl")])
@pytest.mark.parametrize("width", [16, 32, 64])
def test_each_width_splits_a_row_sum_into_its_lanes(
        monkeypatch: pytest.MonkeyPatch, width: int, device: str) -> None:
    """split-reductions runs for every device: each runs the lanes the host's width gives."""
    monkeypatch.setenv("IRTENSOR_VECTOR_BYTES", str(width))
    x = np.random.default_rng(1).standard_normal((2, 1 << 16)).astype(np.float32)
    out = Tensor(x, device=device).sum(axis=1)
    partial = out.schedule()[0].kernel
    # four vectors of f32 lanes with AVX-512's 32 registers, two with 16 (4 spilled on AVX2)
    assert partial.sizes[-1] == (4 if width == 64 else 2) * width // 4
    np.testing.assert_allclose(out.numpy(), x.sum(axis=1), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("device", [device_param("llvm"), device_param("opencl")])
@pytest.mark.parametrize(("width", "co", "block"), [
    (16, 16, (8, 4)), (32, 8, (28, 3)), (64, 16, (28, 4)),
    (32, 16, (16, 5)),  # across 16 channels: 5 points of the row (and 3) by 16 channels
])
def test_a_short_rows_block_keeps_the_row_and_takes_fewer_rows(
        monkeypatch: pytest.MonkeyPatch, width: int, co: int, block: tuple[int, int],
        device: str) -> None:
    """A conv's 28-wide rows are one block across (at most 4 vectors); with AVX2's 8 lanes
    that is 4 vectors, 3 and a half of them used, and 4 rows of them would be 16 of the 16
    registers: the block keeps its 28 columns and takes 3 rows (of 12 accumulators). With
    two vectors of output channels, such a row (3 rows of it would spill) is blocked across
    the channels instead (`channel_column`)."""
    monkeypatch.setenv("IRTENSOR_VECTOR_BYTES", str(width))
    rng = np.random.default_rng(width)
    x = rng.standard_normal((2, 8, 28, 28)).astype(np.float32)
    w = rng.standard_normal((co, 8, 3, 3)).astype(np.float32)
    out = Tensor(x, device=device).conv2d(Tensor(w, device=device), padding=1)
    [conv] = [item.kernel for item in out.schedule() if item.kernel.reduction_dims]
    assert conv.schedule is not None
    values = conv.schedule.values()
    assert (values["vector"], values["unroll"]) == block
    windows = np.lib.stride_tricks.sliding_window_view(
        np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1))), (3, 3), axis=(2, 3))
    expected = np.einsum("nchwij,ocij->nohw", windows, w.astype(np.float64))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", [device_param("llvm"), device_param("opencl")])
@pytest.mark.parametrize(("width", "taps", "block"), [
    (16, 1, (8, 6)), (32, 1, (16, 6)), (64, 1, (49, 6)),  # 1x1: 6 channels of the points
    (32, 3, (16, 4)), (64, 3, (32, 7)),                    # 3x3: 4 + 3 points, all 7
])
def test_a_channel_blocks_points_and_channels_fit_the_registers(
        monkeypatch: pytest.MonkeyPatch, width: int, taps: int, block: tuple[int, int],
        device: str) -> None:
    """A 3 x 3 conv on a 7 x 7 map is blocked across its output channels: 2 vectors of
    channels by its row of 7 points where they fit (AVX-512's 32 registers); with 16
    registers, by at most the 5 points that leave 6 registers for the weight's vectors
    and the row's broadcasts, as evenly as such blocks cover the row (4 and 3). A 1x1
    conv is a matmul over its 49 points (conv-to-mul-sum): rows of 6 channels (the 4 left
    over one block) by 2 vectors of points with 16 registers (12 accumulators), by all 49
    (4 vectors, 24 accumulators) with AVX-512's 32."""
    monkeypatch.setenv("IRTENSOR_VECTOR_BYTES", str(width))
    rng = np.random.default_rng(width + taps)
    x = rng.standard_normal((2, 8, 7, 7)).astype(np.float32)
    w = rng.standard_normal((40, 8, taps, taps)).astype(np.float32)
    pad = taps // 2
    out = Tensor(x, device=device).conv2d(Tensor(w, device=device), padding=pad)
    [conv] = [item.kernel for item in out.schedule() if item.kernel.reduction_dims]
    assert conv.schedule is not None
    values = conv.schedule.values()
    assert (values["vector"], values["unroll"]) == block
    windows = np.lib.stride_tricks.sliding_window_view(
        np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad))), (taps, taps),
        axis=(2, 3))
    expected = np.einsum("nchwij,ocij->nohw", windows, w.astype(np.float64))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


def write_cache_info(root: Path, files: dict[str, tuple[str, ...]]) -> str:
    (root / "uevent").write_text("")
    for index, (level, kind, size) in files.items():
        (root / index).mkdir()
        for name, text in (("level", level), ("type", kind), ("size", size)):
            (root / index / name).write_text(text + "\n")
    return str(root)


@pytest.mark.parametrize(("files", "want"), [
    ({"index0": ("1", "Data", "32K"), "index2": ("2", "Unified", "512K"),
      "index3": ("3", "Unified", "8192K")}, 512 << 10),
    ({"index1": ("1", "Instruction", "64K"), "index2": ("2", "Unified", "2M")}, 2 << 20),
    ({"index0": ("1", "Data", "48K")}, host.DEFAULT_L2_BYTES),         # no L2 described
    ({"index2": ("2", "Unified", "lots")}, host.DEFAULT_L2_BYTES),     # unreadable size
])
def test_the_l2_size_is_read_from_sysfs(tmp_path: Path, files: dict[str, tuple[str, ...]],
                                        want: int) -> None:
    assert host.l2_bytes_from(write_cache_info(tmp_path, files)) == want
    assert host.l2_bytes_from(str(tmp_path / "missing")) == host.DEFAULT_L2_BYTES


def test_every_cache_level_is_read_from_sysfs(tmp_path: Path) -> None:
    """Data and unified caches by level (the last level is the streaming threshold's
    default); instruction caches and an unreadable folder give nothing."""
    root = write_cache_info(tmp_path, {
        "index0": ("1", "Data", "48K"), "index1": ("1", "Instruction", "32K"),
        "index2": ("2", "Unified", "2048K"), "index3": ("3", "Unified", "260M")})
    assert host.caches_from(root) == {1: 48 << 10, 2: 2 << 20, 3: 260 << 20}
    assert host.caches_from(str(tmp_path / "missing")) == {}


def test_outputs_stream_past_the_last_level_cache_unless_told(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IRTENSOR_STREAM_BYTES", raising=False)
    caches = host.caches_from(host.CACHE_INFO)
    llc = caches[max(caches)] if caches else host.DEFAULT_LLC_BYTES
    assert host.detected_llc_bytes() == llc
    assert host.stream_bytes() == (llc if host.is_x86() else 0)
    monkeypatch.setenv("IRTENSOR_STREAM_BYTES", "0")
    assert host.stream_bytes() == 0
    for bad in ("x", "-1", "1e6"):
        monkeypatch.setenv("IRTENSOR_STREAM_BYTES", bad)
        with pytest.raises(ValueError, match="IRTENSOR_STREAM_BYTES must be a byte count"):
            host.stream_bytes()


def test_without_the_l2_override_the_host_l2_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IRTENSOR_L2_BYTES", raising=False)
    assert host.l2_bytes() == host.detected_l2_bytes() == host.l2_bytes_from(host.CACHE_INFO)


@pytest.mark.parametrize("bad", ["x", "1000", "-1"])
def test_a_bad_l2_override_is_refused(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv("IRTENSOR_L2_BYTES", bad)
    with pytest.raises(ValueError, match="IRTENSOR_L2_BYTES must be a byte count"):
        host.l2_bytes()


@pytest.mark.parametrize(("l2", "k_tile"), [(2 << 20, 512), (1 << 20, 512), (512 << 10, 256),
                                            (256 << 10, 128)])
def test_a_matmuls_reduction_tile_fits_half_the_l2(
        monkeypatch: pytest.MonkeyPatch, l2: int, k_tile: int) -> None:
    """B's tile (K tile x 256 columns of f32) takes at most half the L2; the result is the
    same whatever the tile."""
    monkeypatch.setenv("IRTENSOR_L2_BYTES", str(l2))
    rng = np.random.default_rng(l2 % 97)
    a = rng.standard_normal((12, 1100)).astype(np.float32)
    b = rng.standard_normal((1100, 300)).astype(np.float32)
    out = Tensor(a, device="llvm") @ Tensor(b, device="llvm")
    [matmul] = [item.kernel for item in out.schedule()]
    assert matmul.schedule is not None
    [k] = matmul.reduction_dims
    assert matmul.schedule.values()["tiles"][k] == k_tile
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-4, atol=1e-4)
