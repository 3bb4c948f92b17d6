"""The kernel cache on disk holds plain data checked against the kernel asked for (never a
pickle, never another key's kernel), lives in a private folder of bounded size; the
in-memory caches are bounded too, and an evicted kernel's machine code is freed."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import pickle
import stat
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import opencl_unavailable
from irtensor import Tensor
from irtensor.frontend import realize
from irtensor.passes.llvm import jit as llvm_jit
from irtensor.passes.llvm import opt_level
from irtensor.runtime import STATS, cache, llvm_device, llvm_objects, opencl_device
from irtensor.runtime.lru import LRU, env_limit

needs_opencl = pytest.mark.skipif(
    opencl_unavailable() is not None,
    reason=f"no OpenCL device builds programs here: {opencl_unavailable()}")


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("IRTENSOR_CACHE_DIR", str(tmp_path / "cache"))
    forget_in_memory()
    return tmp_path / "cache"


def forget_in_memory() -> None:
    """What a new process starts with: no program or kernel in memory."""
    realize._PROGRAMS.clear()
    for device in (llvm_device, opencl_device):
        device._MEMORY.clear()
        device._BY_OP.clear()
    llvm_device._PLANS.clear()


X = np.arange(12, dtype=np.float32).reshape(3, 4)
Y = np.linspace(-1, 1, 5, dtype=np.float32)


def program_a(device: str) -> np.ndarray:
    return (Tensor(X, device=device) * 3 + 1).numpy()


def program_b(device: str) -> np.ndarray:
    return Tensor(Y, device=device).exp().sum(keepdim=True).numpy()


def check_a(got: np.ndarray) -> None:
    np.testing.assert_allclose(got, X * 3 + 1, rtol=1e-6)


def check_b(got: np.ndarray) -> None:
    np.testing.assert_allclose(got, np.exp(Y).sum(keepdims=True), rtol=1e-5)


def header(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    assert data.startswith(cache.MAGIC)
    line = data[len(cache.MAGIC) + 65:].partition(b"\n")[0]
    return json.loads(line)


def entries(folder: Path, name_of: Callable[[dict[str, Any]], str]) -> dict[str, Path]:
    """The folder's entries by the kernel they hold."""
    return {name_of(header(p)["meta"]): p for p in folder.glob("*.bin")}


def llvm_name(meta: dict[str, Any]) -> str:
    return str(meta["kernel"])


def opencl_name(meta: dict[str, Any]) -> str:
    return ",".join(meta["kernels"])


def payload(path: Path) -> bytes:
    body = path.read_bytes()[len(cache.MAGIC) + 65:]
    return body.partition(b"\n")[2]


def reseal(body: bytes) -> bytes:
    """An entry whose checksum fits `body` (what someone rewriting an entry would do)."""
    return cache.MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body


class Opens:
    """Unpickling this creates the file `path`: proof that something unpickled it."""

    def __init__(self, path: Path):
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.path), "w"))


def compiles(run: Callable[[], None]) -> int:
    """How many kernels `run` compiles, with nothing in memory beforehand."""
    forget_in_memory()
    before = STATS.kernels_compiled
    run()
    return STATS.kernels_compiled - before


DEVICES = [pytest.param("llvm", id="llvm"), pytest.param("opencl", marks=needs_opencl)]
NAMES = {"llvm": llvm_name, "opencl": opencl_name}
KINDS = {"llvm": llvm_objects.OBJECT_KIND, "opencl": opencl_device.BINARY_KIND}


def test_an_entry_is_plain_data_recording_its_key_kernel_and_signature(
        private_cache: Path) -> None:
    assert not private_cache.exists()
    check_a(program_a("llvm"))
    assert stat.S_IMODE(private_cache.stat().st_mode) == 0o700
    (path,) = private_cache.glob("*.bin")
    head = header(path)
    assert head["key"] == path.stem and head["kind"] == "llvm-object"
    assert head["version"] == cache.VERSION
    meta = head["meta"]
    assert meta["function"] == meta["kernel"] + "_0"
    assert [p[:3] for p in meta["signature"]] == [
        ["memref<3x4xf32>", True, False], ["memref<3x4xf32>", True, True],
        ["index", False, False], ["index", False, False]]
    # 3 x 4 points: a small kernel (no IR passes, machine code at O2)
    assert (meta["opt_level"], meta["codegen_level"]) == opt_level.kernel_levels(
        meta["llvm_ir"], small=True) == (0, 2)
    code = payload(path)
    assert len(code) == head["payload_bytes"] and llvm_jit.object_problem(code) == ""
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert compiles(lambda: check_a(program_a("llvm"))) == 0  # and it loads


# A missing codegen_level is the opt_level's (a kernel whose machine code was made at its level).
@pytest.mark.parametrize(("field", "level"), [("opt_level", None), ("opt_level", "3"),
                                              ("opt_level", 7), ("codegen_level", "3"),
                                              ("codegen_level", 7)])
def test_an_entry_loads_with_the_level_it_was_compiled_at_or_is_rebuilt(
        field: str, level: object, private_cache: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    import irtensor

    check_a(program_a("llvm"))
    (path,) = private_cache.glob("*.bin")
    meta = header(path)["meta"]
    forget_in_memory()
    with irtensor.Context(debug=3):
        assert compiles(lambda: check_a(program_a("llvm"))) == 0
    assert f"LLVM O{meta['opt_level']} (machine code O{meta['codegen_level']})\n" \
        in capsys.readouterr().err
    forged = {k: v for k, v in meta.items() if k != field}
    if level is not None:
        forged[field] = level
    path.write_bytes(cache.encode(path.stem, llvm_objects.OBJECT_KIND, forged, payload(path)))
    assert compiles(lambda: check_a(program_a("llvm"))) == 1


def varied_programs() -> list[np.ndarray]:
    """Kernels of every shape of signature: matmul and conv (register blocks), reductions,
    bool, int and half-precision buffers, a rank-0 result."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((8, 16), np.float32), rng.standard_normal((16, 4), np.float32)
    img = rng.standard_normal((1, 2, 6, 6), np.float32)
    w = rng.standard_normal((3, 2, 3, 3), np.float32)
    t = lambda v: Tensor(v, device="llvm")  # noqa: E731
    return [(t(a) @ t(b)).numpy(), t(img).conv2d(t(w), padding=1).numpy(),
            t(a).softmax(-1).numpy(), (t(a) > 0).where(t(a), 0.0).numpy(),
            (t(np.arange(6, dtype=np.int32)) * 3 % 4).numpy(), t(a).sum().numpy(),
            t(a.astype(np.float16)).exp().numpy(), (t(a) > 0).numpy()]


def test_every_kind_of_kernel_is_stored_and_loads_in_a_new_process() -> None:
    first = varied_programs()
    before = STATS.cache_hits_disk
    assert compiles(lambda: [np.testing.assert_array_equal(x, y)
                             for x, y in zip(first, varied_programs(), strict=True)]) == 0
    assert STATS.cache_hits_disk - before >= len(first)


@pytest.mark.parametrize("device", DEVICES)
def test_a_pickle_in_an_entry_is_never_unpickled(
        device: str, private_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    check_a(program_a(device))
    (path,) = private_cache.glob("*.bin")
    meta = header(path)["meta"]
    marker = tmp_path / "unpickled"
    bomb = pickle.dumps(Opens(marker))
    old_format = b"IRTK1\n" + hashlib.sha256(bomb).hexdigest().encode() + bomb
    resealed = cache.encode(path.stem, KINDS[device], meta, bomb)
    monkeypatch.setenv("DEBUG", "1")
    for forged in (old_format, resealed, cache.encode(path.stem, KINDS[device], meta,
                                                      b"\x7fELF" + bomb)):
        path.write_bytes(forged)
        capsys.readouterr()
        assert compiles(lambda: check_a(program_a(device))) == 1
        assert "*** kernel cache: discarded entry" in capsys.readouterr().err
        assert not marker.exists()
        assert payload(path) != bomb and header(path)["kind"] == KINDS[device]  # rebuilt
    assert compiles(lambda: check_a(program_a(device))) == 0


@pytest.mark.parametrize("device", DEVICES)
def test_entries_swapped_between_keys_are_rebuilt(
        device: str, private_cache: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    check_a(program_a(device))
    check_b(program_b(device))
    found = entries(private_cache, NAMES[device])
    assert len(found) == 2
    (name_a, path_a), (name_b, path_b) = sorted(found.items())
    monkeypatch.setenv("DEBUG", "1")

    def both() -> None:
        check_a(program_a(device))
        check_b(program_b(device))

    blob_a, blob_b = path_a.read_bytes(), path_b.read_bytes()
    path_a.write_bytes(blob_b)
    path_b.write_bytes(blob_a)
    capsys.readouterr()
    assert compiles(both) == 2
    assert capsys.readouterr().err.count("its key is") == 2
    # Rewritten under the other key, each is still another kernel: caught by its record
    meta_a, meta_b = header(path_a)["meta"], header(path_b)["meta"]
    code_a, code_b = payload(path_a), payload(path_b)
    path_a.write_bytes(cache.encode(path_a.stem, KINDS[device], meta_b, code_b))
    path_b.write_bytes(cache.encode(path_b.stem, KINDS[device], meta_a, code_a))
    assert compiles(both) == 2
    assert compiles(both) == 0
    assert {name_a, name_b} == set(entries(private_cache, NAMES[device]))


def test_an_entry_claiming_the_kernel_with_another_signature_is_rebuilt(
        private_cache: Path) -> None:
    # b's object code (a kernel of other shapes) filed as a's: run, it would write where
    # a's buffers end
    check_a(program_a("llvm"))
    check_b(program_b("llvm"))
    (_, path_a), (_, path_b) = sorted(entries(private_cache, llvm_name).items())
    meta_a, meta_b = header(path_a)["meta"], header(path_b)["meta"]
    forged = dict(meta_b, kernel=meta_a["kernel"], function=meta_a["function"])
    path_a.write_bytes(cache.encode(path_a.stem, llvm_objects.OBJECT_KIND, forged,
                                    payload(path_b)))
    assert compiles(lambda: check_a(program_a("llvm"))) == 1


@pytest.mark.parametrize("device", DEVICES)
def test_a_truncated_or_garbled_header_is_discarded(device: str, private_cache: Path) -> None:
    check_a(program_a(device))
    (path,) = private_cache.glob("*.bin")
    good = path.read_bytes()
    start = len(cache.MAGIC) + 65
    garbled_json = reseal(b'{"key": "' + path.stem.encode() + b'", "kind\n' + payload(path))
    not_a_dict = reseal(b"[1, 2]\n" + payload(path))
    for bad in (good[:start + 40], good[:start] + b"#" + good[start + 1:], garbled_json,
                not_a_dict, b""):
        path.write_bytes(bad)
        assert compiles(lambda: check_a(program_a(device))) == 1
        assert header(path)["kind"] == KINDS[device]  # rebuilt


def test_a_folder_others_may_write_is_not_used(private_cache: Path) -> None:
    private_cache.mkdir(mode=0o700)
    private_cache.chmod(0o777)
    with pytest.warns(RuntimeWarning, match="others may write to it"):
        check_a(program_a("llvm"))
    assert list(private_cache.iterdir()) == []
    assert compiles(lambda: check_a(program_a("llvm"))) == 1


def test_the_folder_keeps_to_its_size_limit_least_recently_used_out(
        private_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_DISK_CACHE_MB", "1")
    long_ago = time.time() - 10_000
    for i in range(30):
        cache.store(f"k{i}", "test", {"i": i}, bytes(100_000))
        os.utime(private_cache / f"k{i}.bin", (long_ago + i, long_ago + i))
        if i == 5:
            assert cache.load("k0", "test") is not None  # used: now the newest
    sizes = [p.stat().st_size for p in private_cache.glob("*.bin")]
    assert sum(sizes) <= 1 << 20 and len(sizes) >= 8
    assert cache.load("k29", "test") is not None and cache.load("k0", "test") is not None
    assert cache.load("k1", "test") is None  # the least recently used went first
    monkeypatch.setenv("IRTENSOR_DISK_CACHE_MB", "0")
    cache.store("none", "test", {}, b"")
    assert not (private_cache / "none.bin").exists()


# --------------------------------------------------------------------------- memory


def test_lru_keeps_to_its_limit_by_size_newest_kept() -> None:
    evicted: list[str] = []
    limit = [10]
    lru: LRU[str, bytes] = LRU(lambda: limit[0], len, lambda k, _: evicted.append(k))
    for key in "abc":
        lru.put(key, bytes(4))
    assert evicted == ["a"] and len(lru) == 2 and lru.total == 8
    assert lru.get("b") == bytes(4)  # b is now the most recent
    lru.put("d", bytes(4))
    assert evicted == ["a", "c"] and lru.get("c") is None
    lru.put("huge", bytes(50))  # over the limit alone: kept, everything else goes
    assert len(lru) == 1 and lru.get("huge") is not None
    limit[0] = 0
    lru.put("e", b"x")
    assert lru.get("e") is None


def test_env_limit_reads_a_count_or_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_TEST_LIMIT", "3")
    assert env_limit("IRTENSOR_TEST_LIMIT", 7, 1 << 20) == 3 << 20
    monkeypatch.setenv("IRTENSOR_TEST_LIMIT", "lots")
    assert env_limit("IRTENSOR_TEST_LIMIT", 7) == 7


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def live_jit_modules() -> int:
    return sum(isinstance(o, llvm_jit.JitModule) for o in gc.get_objects())


def test_an_evicted_kernel_frees_its_machine_code_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_PROGRAM_CACHE", "1")
    monkeypatch.setenv("IRTENSOR_KERNEL_CACHE_MB", "0")  # kept only by programs
    x = Tensor(np.zeros(1, np.float32), device="llvm")
    (x + 1000).realize()
    (first,) = llvm_device._BY_OP.values()
    engine = weakref.ref(first.jit.engine)  # llvmlite disposes of the MCJIT engine when
    held = llvm_device.compile_kernel(next(iter(llvm_device._BY_OP)))  # it is collected
    del first
    gc.disable()  # freed by reference counts alone, not by a later collection
    try:
        for i in range(6):
            assert (x + i).item() == i
        assert len(llvm_device._MEMORY) == 0 and engine() is held.jit.engine
        out = np.empty(1, np.float32)  # a holder keeps it, and it still runs
        llvm_device.call(held, [np.full(1, 5, np.float32)], out)
        assert out[0] == 1005
        del held
        assert engine() is None
    finally:
        gc.enable()


def test_many_distinct_programs_stay_under_a_memory_ceiling(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each step a new program (a new shape) with a new kernel: before the caches were
    bounded, a loop like this held about 0.9 MB per step. What remains per step is what
    llvmlite and LLVM leak per compile, about 0.08 MB."""
    monkeypatch.setenv("IRTENSOR_PROGRAM_CACHE", "8")
    monkeypatch.setenv("IRTENSOR_KERNEL_CACHE_MB", "1")
    gc.collect()
    others = live_jit_modules()  # held by earlier tests in this process
    steps, warm = 300, 50
    start = 0.0
    evictions = realize._PROGRAMS.evictions
    for i in range(steps):
        y = (Tensor(np.full(i + 1, i, np.float32), device="llvm") * 2).realize()
        assert y.numpy()[-1] == 2 * i
        if i == warm:
            gc.collect()
            start = rss_mb()
    gc.collect()
    growth = rss_mb() - start
    assert len(realize._PROGRAMS) == 8 and realize._PROGRAMS.evictions - evictions >= steps - 8
    assert llvm_device._MEMORY.total <= 1 << 20 and len(llvm_device._MEMORY) <= 16
    assert len(llvm_device._PLANS) <= 8 and len(llvm_device._BY_OP) <= 8
    assert live_jit_modules() - others <= 8 + len(llvm_device._MEMORY)
    assert growth < 60, f"RSS grew {growth:.1f} MB over {steps - warm} programs"


@needs_opencl
def test_opencl_kernels_in_memory_keep_to_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_KERNEL_CACHE_MB", "1")
    monkeypatch.setenv("IRTENSOR_PROGRAM_CACHE", "4")
    for i in range(40):  # a new shape, a new program, each step
        x = Tensor(np.full(i + 1, i, np.float32), device="opencl")
        assert (x * 2).numpy().tolist() == [2 * i] * (i + 1)
    assert opencl_device._MEMORY.evictions > 0 and opencl_device._MEMORY.total <= 1 << 20
    assert len(opencl_device._BY_OP) <= 4
