#!/usr/bin/env python
"""Memory over many distinct programs: the README's loop `x += i; x.realize()`, where each
step is a new program with a new kernel. Prints the process's resident memory (RSS, from
/proc/self/statm) and what the runtime's caches hold every `--every` steps.

    python bench/memory.py                       # 10,000 programs on llvm
    python bench/memory.py --programs 2000 --device interp
    IRTENSOR_PROGRAM_CACHE=8 IRTENSOR_KERNEL_CACHE_MB=4 python bench/memory.py

The kernel cache goes to a new folder, removed afterwards, so every step compiles.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

try:
    import irtensor  # noqa: F401
except ImportError:  # run from a checkout that is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def cached() -> str:
    from irtensor.frontend import realize
    from irtensor.runtime import llvm_device

    kernels = llvm_device._MEMORY
    held = getattr(kernels, "total", None)
    size = f", {held / 2**20:.1f} MB est." if held is not None else ""
    return f"programs {len(realize._PROGRAMS)}, llvm kernels {len(kernels)}{size}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=10_000)
    parser.add_argument("--device", default="llvm", choices=("llvm", "interp", "opencl"))
    parser.add_argument("--every", type=int, default=500)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="irtensor-memory-")
    os.environ["IRTENSOR_CACHE_DIR"] = folder
    try:
        import numpy as np

        from irtensor import Tensor
        from irtensor.runtime import stats

        x = Tensor.zeros(1, device=args.device).realize()
        start, began = rss_mb(), time.perf_counter()
        print(f"{'programs':>8} {'RSS +MB':>8} {'MB/program':>10} {'s':>7}  caches")
        for i in range(args.programs):
            x += i
            x.realize()
            if (i + 1) % args.every == 0 or i + 1 == args.programs:
                gc.collect()
                grown = rss_mb() - start
                print(f"{i + 1:>8} {grown:>8.1f} {grown / (i + 1):>10.3f} "
                      f"{time.perf_counter() - began:>7.1f}  {cached()}", flush=True)
        want = np.float32(0)
        for i in range(args.programs):  # the same float32 additions, in order
            want = np.float32(want + np.float32(i))
        assert x.item() == want, (x.item(), want)
        print(f"kernels compiled: {stats()['kernels_compiled']}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
