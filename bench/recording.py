"""Small programs at the speed of their kernels: the cost of recording and replaying.

    python bench/recording.py [--threads T] [--reps N]

Rows, each side by side in one run with numpy and torch eager (when torch imports):
- the seed's loop `x = zeros(1); for i in range(5): x += i` realized, warm (a cached
  program: record 11 nodes, look the program up, run its one kernel);
- the 784-256-256-10 MLP forward at batch 64, warm, and the time of its kernels alone
  (the lowered program run on its buffers, no Tensor call);
- a 1,000-step loop `w = (w - lr_i * w).realize()` whose learning rate changes every
  step: programs compiled, the median step, and its kernels' time per step;
- recording: 1,000 elementwise Tensor calls recorded, not run (microseconds a call).

The heading records the CPU model and its features. These machines are noisy: compare
the ratios within one run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from training import cpu_heading


def median_us(call: Callable[[], object], reps: int) -> float:
    call()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e6


def torch_module(threads: int) -> Any:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    return torch


def seed_rows(torch: Any, reps: int) -> dict[str, float]:
    from irtensor import Tensor

    def ours() -> object:
        x = Tensor.zeros(1)
        for i in range(5):
            x += i
        return x.numpy()

    def numpy() -> object:
        x = np.zeros(1, np.float32)
        for i in range(5):
            x += i
        return x

    out = {"irtensor": median_us(ours, reps), "numpy": median_us(numpy, reps)}
    if torch is not None:
        def eager() -> object:
            x = torch.zeros(1)
            for i in range(5):
                x += i
            return x.numpy()
        out["torch"] = median_us(eager, reps)
    return out


def kernels_alone(run: Callable[[], object]) -> Callable[[], object]:
    """A call that runs only the lowered program the last realize of `run` ran."""
    from irtensor.frontend import realize

    seen: list[tuple[Any, list[np.ndarray], str]] = []

    def observe(module: Any, arrays: list[np.ndarray], device: str, _: object) -> None:
        seen.append((module, list(arrays), device))

    realize.RUN_OBSERVERS.append(observe)
    try:
        run()
    finally:
        realize.RUN_OBSERVERS.remove(observe)
    module, arrays, device = seen[-1]
    return lambda: realize.run_lowered(module, arrays, device)


def mlp_rows(torch: Any, reps: int) -> dict[str, float]:
    from irtensor import Tensor

    rng = np.random.default_rng(0)
    ws = [rng.standard_normal(s).astype(np.float32) * 0.05
          for s in ((784, 256), (256, 256), (256, 10))]
    x = rng.standard_normal((64, 784)).astype(np.float32)
    w1, w2, w3 = (Tensor(w).realize() for w in ws)
    xt = Tensor(x).realize()

    def ours() -> object:
        return (((xt @ w1).relu() @ w2).relu() @ w3).numpy()

    def numpy() -> object:
        return np.maximum(np.maximum(x @ ws[0], 0) @ ws[1], 0) @ ws[2]

    out = {"irtensor": median_us(ours, reps), "kernels": median_us(kernels_alone(ours), reps),
           "numpy": median_us(numpy, reps)}
    if torch is not None:
        tx, (t1, t2, t3) = torch.from_numpy(x), (torch.from_numpy(w) for w in ws)
        out["torch"] = median_us(
            lambda: ((tx @ t1).relu() @ t2).relu().matmul(t3).numpy(), reps)
    return out


def schedule_rows(torch: Any, steps: int) -> dict[str, float]:
    from irtensor import Tensor
    from irtensor.runtime import STATS

    start = np.ones(1 << 16, np.float32)
    w = Tensor(start).realize()
    before = STATS.pipeline_runs
    times = []
    for i in range(steps):
        t0 = time.perf_counter()
        w = (w - (0.1 / (1 + i)) * w).realize()
        times.append(time.perf_counter() - t0)
    ours = float(np.median(times)) * 1e6  # the median step: a replay (the first two compile)
    compiled = STATS.pipeline_runs - before
    step = kernels_alone(lambda: (w - 0.5 * w).realize())

    t0 = time.perf_counter()
    a = start.copy()
    for i in range(steps):
        a = a - np.float32(0.1 / (1 + i)) * a
    numpy = (time.perf_counter() - t0) / steps * 1e6
    out = {"irtensor": ours, "compiled": float(compiled), "kernels": median_us(step, steps),
           "numpy": numpy}
    if torch is not None:
        t = torch.from_numpy(start.copy())
        t0 = time.perf_counter()
        for i in range(steps):
            t = t - (0.1 / (1 + i)) * t
        out["torch"] = (time.perf_counter() - t0) / steps * 1e6
    return out


def recording_rows(torch: Any, reps: int) -> dict[str, float]:
    from irtensor import Tensor

    a = Tensor(np.ones(16, np.float32))

    def ours() -> object:
        x = a
        for _ in range(500):
            x = x * 1.5 + 1.0
        return x

    out = {"irtensor": median_us(ours, reps) / 1000}
    if torch is not None:
        t = torch.ones(16)

        def eager() -> object:
            x = t
            for _ in range(500):
                x = x * 1.5 + 1.0
            return x
        out["torch"] = median_us(eager, reps) / 1000
    return out


def fmt(row: dict[str, float], key: str, ref: str = "irtensor") -> str:
    if key not in row:
        return "-"
    ratio = row[key] / row[ref] if key != ref else None
    return f"{row[key]:.1f}" + (f" ({ratio:.2f}x)" if ratio is not None else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--reps", type=int, default=300)
    args = parser.parse_args()
    os.environ.setdefault("IRTENSOR_THREADS", str(args.threads))
    torch = torch_module(args.threads)
    print(f"CPU: {cpu_heading()}; {args.threads} thread(s); "
          f"torch {torch.__version__ if torch is not None else 'absent'}")
    print("times in microseconds; (ratio): that column's time / irtensor's (> 1: irtensor "
          "is faster)\n")
    print("| case | irtensor | its kernels alone | numpy | torch eager | compiles |")
    print("|---|---|---|---|---|---|")
    seed = seed_rows(torch, args.reps)
    print(f"| seed loop, cached realize | {fmt(seed, 'irtensor')} | - | {fmt(seed, 'numpy')} | "
          f"{fmt(seed, 'torch')} | 0 |")
    mlp = mlp_rows(torch, args.reps)
    print(f"| MLP 784-256-256-10 forward, batch 64 | {fmt(mlp, 'irtensor')} | "
          f"{fmt(mlp, 'kernels')} | {fmt(mlp, 'numpy')} | {fmt(mlp, 'torch')} | 0 |")
    sched = schedule_rows(torch, 1000)
    print(f"| 1,000-step scalar schedule, median step (65,536 f32) | {fmt(sched, 'irtensor')} | "
          f"{fmt(sched, 'kernels')} | {fmt(sched, 'numpy')} | {fmt(sched, 'torch')} | "
          f"{int(sched['compiled'])} |")
    rec = recording_rows(torch, max(args.reps // 30, 5))
    print(f"| recording, per elementwise call (not run) | {fmt(rec, 'irtensor')} | - | - | "
          f"{fmt(rec, 'torch')} (runs it) | - |")


if __name__ == "__main__":
    main()
