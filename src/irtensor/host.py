"""What the kernel rung's schedulers ask of the host CPU: the width of its vector registers.

Schedules (vector widths, register blocks, reduction lanes) are chosen for the CPU the
program is compiled on: 64-byte vectors where it has AVX-512, 32 where it has AVX, else 16
(SSE, NEON). A register block of two vectors by six rows then holds 12 accumulators on
either (BLIS's 6x32 sgemm kernel on AVX-512, 6x16 on AVX2). AVX-512's block on a
16-register AVX2 CPU is 24 registers' worth: measured there, a 1024^3 matmul took 101 ms
against 60 with the host's block, and twice as long to compile. `IRTENSOR_VECTOR_BYTES`
(16, 32 or 64) fixes the width: the test suite pins it, so that the schedules its lit
files print do not depend on the machine. The register blocks' cache tiles follow the L2
size (`l2_bytes`, from Linux's sysfs; `IRTENSOR_L2_BYTES` fixes it, and the suite pins it
too).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

from irtensor.tile_state import enable_tile_data

VECTOR_BYTES_CHOICES = (16, 32, 64)


@functools.cache
def host_features() -> dict[str, bool] | None:
    """LLVM's reading of the host CPU's features ("avx512f": True, ...), or None without
    llvmlite or where the host LLVM cannot describe it."""
    try:
        import llvmlite.binding as llvm

        return dict(llvm.get_host_cpu_features())
    except Exception:
        return None


def _has(feature: str) -> bool:
    return bool((host_features() or {}).get(feature))


def _switch(name: str, default: Callable[[], bool]) -> bool:
    """Environment variable `name` (0 or 1), else what `default` says."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default()
    if value not in ("0", "1"):
        raise ValueError(f"{name} must be 0 or 1; got {value!r}")
    return value == "1"


@functools.cache
def detected_vector_bytes() -> int:
    """64 with AVX-512F, 32 with AVX, else 16, from LLVM's reading of the host CPU."""
    features = host_features()
    if features is None:  # no llvmlite, or a host LLVM cannot describe: the widest
        return 64
    if features.get("avx512f"):
        return 64
    if features.get("avx"):
        return 32
    return 16


def vector_registers() -> int:
    """The vector registers schedules count on: 32 with AVX-512 (64-byte vectors), else 16
    (AVX2 and SSE; NEON's 32 are counted as 16, the safe side)."""
    return 32 if vector_bytes() >= 64 else 16


DEFAULT_L2_BYTES = 1 << 20
DEFAULT_LLC_BYTES = 8 << 20


CACHE_INFO = "/sys/devices/system/cpu/cpu0/cache"


@functools.cache
def detected_l2_bytes() -> int:
    """The first CPU's level-2 data (or unified) cache in bytes, from Linux's sysfs."""
    return l2_bytes_from(CACHE_INFO)


def l2_bytes_from(root: str) -> int:
    """The level-2 data or unified cache a sysfs `cache` folder (`index0`, `index1`, ...
    each with `level`, `type`, `size`) describes; DEFAULT_L2_BYTES where it cannot be read
    (another OS, a container without sysfs)."""
    return caches_from(root).get(2, DEFAULT_L2_BYTES)


def caches_from(root: str) -> dict[int, int]:
    """The data or unified cache of each level a sysfs `cache` folder describes, in bytes
    by level; {} where it cannot be read."""
    found: dict[int, int] = {}
    try:
        for index in sorted(e for e in os.listdir(root) if e.startswith("index")):
            def read(name: str, index: str = index) -> str:
                with open(os.path.join(root, index, name)) as f:
                    return f.read().strip()

            if read("type") in ("Data", "Unified"):
                found.setdefault(int(read("level")), _size_in_bytes(read("size")))
    except (OSError, ValueError):
        return {}
    return found


@functools.cache
def detected_llc_bytes() -> int:
    """The first CPU's last-level cache in bytes (sysfs); DEFAULT_LLC_BYTES where unknown."""
    caches = caches_from(CACHE_INFO)
    return caches[max(caches)] if caches else DEFAULT_LLC_BYTES


def is_x86() -> bool:
    """Whether the host is an x86-64 CPU."""
    import platform

    return platform.machine().lower() in ("x86_64", "amd64")


def stream_bytes() -> int:
    """The smallest elementwise output stored non-temporally (`passes/loops/streaming.py`):
    `IRTENSOR_STREAM_BYTES` (0: never), else the last-level cache (`detected_llc_bytes`)
    on x86, whose non-temporal stores are ordered by a fence; 0 elsewhere."""
    value = os.environ.get("IRTENSOR_STREAM_BYTES", "").strip()
    if not value:
        return detected_llc_bytes() if is_x86() else 0
    if not value.isdigit():
        raise ValueError(f"IRTENSOR_STREAM_BYTES must be a byte count (0: never); "
                         f"got {value!r}")
    return int(value)


def _size_in_bytes(text: str) -> int:
    """sysfs's cache size ("512K", "2048K", "1M") in bytes."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text and text[-1].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    return int(text)


def l2_bytes() -> int:
    """The L2 cache the register blocks' tiles are sized for: `IRTENSOR_L2_BYTES`, else the
    host's (`detected_l2_bytes`)."""
    value = os.environ.get("IRTENSOR_L2_BYTES", "").strip()
    if not value:
        return detected_l2_bytes()
    if not value.isdigit() or int(value) < 1 << 14:
        raise ValueError(f"IRTENSOR_L2_BYTES must be a byte count of at least 16384; "
                         f"got {value!r}")
    return int(value)


def vector_bytes() -> int:
    """The vector register width schedules are chosen for: `IRTENSOR_VECTOR_BYTES`, else
    the host's (`detected_vector_bytes`)."""
    value = os.environ.get("IRTENSOR_VECTOR_BYTES", "").strip()
    if not value:
        return detected_vector_bytes()
    if not value.isdigit() or int(value) not in VECTOR_BYTES_CHOICES:
        raise ValueError(f"IRTENSOR_VECTOR_BYTES must be one of 16, 32, 64; got {value!r}")
    return int(value)


def detected_bf16_dot() -> bool:
    """Whether the host has AVX512-BF16's `vdpbf16ps` (LLVM's feature `avx512bf16`)."""
    return _has("avx512bf16")


@functools.cache
def bf16_dot_pays() -> bool:
    """Whether the host's `vdpbf16ps` beats widening to f32 and FMAs: it has the
    instruction and no AMX. Measured (bench/bf16.py, one thread): on AMD Zen 4 and 5,
    which issue two `vdpbf16ps` a cycle, a bf16 matmul 1024^3 ran at 384 GFLOP/s on the
    dot against 234 widened; on an Intel Xeon with AMX (Emerald Rapids), which issues
    one, the dot's pairing shuffles made it slower everywhere: matmul 101 against 142,
    conv2d 58 against 92, the MLP 51 against 101 GFLOP/s. AMX marks the Intel cores that
    have both (Sapphire Rapids and later); their matmuls take the tiles anyway."""
    return detected_bf16_dot() and not _has("amx-tile")


def bf16_dot() -> bool:
    """Whether a bf16 matmul's or conv's register block multiplies on `vdpbf16ps`
    (`x86vector.avx512.dot`): `IRTENSOR_BF16_DOT` (0 or 1), else where it pays on the
    host (`bf16_dot_pays`). With it off, the block widens bf16 to f32 and multiplies on
    FMAs (the same products, summed in another order)."""
    return _switch("IRTENSOR_BF16_DOT", bf16_dot_pays)


@functools.cache
def detected_amx() -> bool:
    """Whether the host has AMX's tiles and bf16 products (LLVM's `amx-tile`, `amx-bf16`)
    and Linux lets this process use them."""
    return _has("amx-tile") and _has("amx-bf16") and enable_tile_data()


def amx() -> bool:
    """Whether a bf16 matmul multiplies on AMX's tiles (`tdpbf16ps`, `passes/loops/
    tile_block.py`): `IRTENSOR_AMX` (0 or 1), else the host's (`detected_amx`). 1 on a
    host without the tiles builds kernels that only a host with them can run."""
    return _switch("IRTENSOR_AMX", detected_amx)


def cpu_description() -> str:
    """The CPU's model name, LLVM's name for it and the features the kernels use, for
    every bench table ("AMD EPYC 9B45 (znver5; avx2, fma, avx512f, avx512bf16), 2 cores"):
    figures from different CPUs are never one table."""
    import platform

    from irtensor.passes.llvm.jit import host_target

    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f
                          if line.startswith("model name")), model)
    except OSError:
        pass
    target = host_target()
    wanted = ("avx2", "fma", "avx512f", "avx512bf16", "avx512fp16", "amx-tile", "amx-bf16")
    features = [f for f in wanted if target.has(f)]
    return f"{model} ({target.cpu}; {', '.join(features) or 'no AVX'}), {os.cpu_count()} cores"


def lowering_key() -> str:
    """What of the host the lowering of a kernel depends on besides LLVM's target (for
    compiled-kernel cache keys)."""
    return (f"vector-bytes={vector_bytes()} l2-bytes={l2_bytes()} bf16-dot={int(bf16_dot())} "
            f"amx={int(amx())} stream-bytes={stream_bytes()}")


__all__ = ["CACHE_INFO", "DEFAULT_L2_BYTES", "DEFAULT_LLC_BYTES", "VECTOR_BYTES_CHOICES", "amx",
           "bf16_dot", "bf16_dot_pays", "caches_from", "cpu_description", "detected_amx",
           "detected_bf16_dot", "detected_l2_bytes", "detected_llc_bytes",
           "detected_vector_bytes", "enable_tile_data", "host_features", "is_x86", "l2_bytes",
           "l2_bytes_from", "lowering_key", "stream_bytes", "vector_bytes", "vector_registers"]
