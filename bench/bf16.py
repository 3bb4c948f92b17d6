"""bf16 matmul, conv2d and the MLP, side by side in one run: irtensor against torch and
numpy, at each thread count asked for.

    python bench/bf16.py [--threads 1,2] [--repeat N]

Columns: irtensor in bf16 as the host runs it (matmuls on AMX's tiles where the CPU
has them; the other blocks on `vdpbf16ps` where it pays, `host.bf16_dot_pays`, else
widened to f32 on FMAs), irtensor in bf16 with `IRTENSOR_AMX=0`, and with
`IRTENSOR_BF16_DOT=1` too (on `vdpbf16ps` where the CPU has it),
irtensor in f32, torch in bf16 (oneDNN) and f32, numpy in f32 (OpenBLAS; numpy has
no bf16 BLAS). Best-of-N warm times with GFLOP/s; the last column is torch bf16's
time over irtensor bf16's (> 1: irtensor is faster). Every bf16 result is checked
against a float64 reference of the same bf16 inputs (within bf16 rounding). The
heading records the CPU and its features. After the one-thread table, the matmul kernels
compiled at LLVM O2 and O3 side by side (compile and run times).
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
MLP = (784, 256, 256, 10)


def best(run: Callable[[], object], repeat: int) -> float:
    # torch's OpenMP and OpenBLAS's threads spin a while after their last call and would
    # take the other core from whatever runs next
    from convs import best as best_of

    return best_of(run, repeat, pause=0.5)


def conv_ref(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    from numpy.lib.stride_tricks import sliding_window_view

    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = sliding_window_view(padded, (3, 3), axis=(2, 3))
    n, c, oh, ow = win.shape[:4]
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * 9)
    return (cols @ w.reshape(w.shape[0], -1).T).reshape(n, oh, ow, -1).transpose(0, 3, 1, 2)


def mlp_ref(x: np.ndarray, *ws: np.ndarray) -> np.ndarray:
    for i, w in enumerate(ws):
        x = x @ w
        if i + 1 < len(ws):
            x = np.maximum(x, 0)
    return x


class Case:
    """One computation: its inputs, its flops, how each library runs it."""

    def __init__(self, name: str, shapes: list[tuple[int, ...]], flops: float, kind: str):
        self.name, self.flops, self.kind = name, flops, kind
        rng = np.random.default_rng(0)
        scale = [1.0] + [1.0 / np.sqrt(np.prod(s[:-1]) if kind == "mlp" else 1.0)
                         for s in shapes[1:]]
        self.inputs = [(rng.standard_normal(s) * k).astype(BF16) for s, k in zip(shapes, scale,
                                                                              strict=True)]

    def apply(self, xs: list[Any]) -> Any:
        if self.kind == "matmul":
            return xs[0] @ xs[1]
        if self.kind == "conv":
            return xs[0].conv2d(xs[1], padding=1)
        h = xs[0]
        for i, w in enumerate(xs[1:]):
            h = h @ w
            if i + 2 < len(xs):
                h = h.relu()
        return h

    def reference(self, xs: list[np.ndarray]) -> np.ndarray:
        if self.kind == "matmul":
            return xs[0] @ xs[1]
        if self.kind == "conv":
            return conv_ref(*xs)
        return mlp_ref(*xs)

    def torch_apply(self, torch: Any, xs: list[Any]) -> Any:
        if self.kind == "conv":
            return torch.nn.functional.conv2d(xs[0], xs[1], padding=1)
        if self.kind == "matmul":
            return xs[0] @ xs[1]
        h = xs[0]
        for i, w in enumerate(xs[1:]):
            h = h @ w
            if i + 2 < len(xs):
                h = torch.relu(h)
        return h


def cases() -> list[Case]:
    out = [Case(f"matmul {n}^3", [(n, n), (n, n)], 2.0 * n ** 3, "matmul") for n in (1024, 2048)]
    for b, c, h in ((8, 64, 56), (1, 256, 14)):
        out.append(Case(f"conv2d 3x3 b{b} {c}->{c} {h}x{h}", [(b, c, h, h), (c, c, 3, 3)],
                        2.0 * b * c * c * h * h * 9, "conv"))
    layers = list(itertools.pairwise(MLP))
    out.append(Case(f"MLP {'-'.join(map(str, MLP))} batch 64", [(64, MLP[0]), *layers],
                    2.0 * 64 * sum(a * b for a, b in layers), "mlp"))
    return out


def irtensor_time(case: Case, dtype: np.dtype, settings: dict[str, str], repeat: int
                  ) -> float:
    from irtensor import Tensor

    os.environ.update(settings)
    try:
        xs = [Tensor(x.astype(dtype)) for x in case.inputs]
        got = case.apply(xs).numpy()
        if dtype == BF16:
            check(case, got)
        return best(lambda: case.apply(xs).realize(), repeat)
    finally:
        for name in settings:
            os.environ.pop(name, None)


def check(case: Case, got: np.ndarray) -> None:
    """Within bf16 rounding of float64 on the same inputs (the MLP's hidden layers round
    to bf16 too, so it gets a looser bound)."""
    exact = case.reference([x.astype(np.float64) for x in case.inputs])
    scale = np.abs(exact).max()
    tol = (2.0 ** -7 if case.kind != "mlp" else 2.0 ** -5) * scale
    err = np.abs(got.astype(np.float64) - exact).max()
    assert err <= tol, f"{case.name}: error {err:.3g} > {tol:.3g}"


def torch_time(torch: Any, case: Case, dtype: Any, repeat: int) -> float:
    xs = [torch.from_numpy(x.astype(np.float32)).to(dtype) for x in case.inputs]
    with torch.no_grad():
        if dtype == torch.bfloat16:
            check(case, case.torch_apply(torch, xs).float().numpy())
        return best(lambda: case.torch_apply(torch, xs), repeat)


def numpy_time(case: Case, repeat: int) -> float:
    xs = [x.astype(np.float32) for x in case.inputs]
    return best(lambda: case.reference(xs), repeat)


def table(threads: int, torch: Any, repeat: int) -> None:
    from threadpoolctl import threadpool_limits

    from irtensor import host

    os.environ["IRTENSOR_THREADS"] = str(threads)
    with threadpool_limits(threads):
        if torch is not None:
            torch.set_num_threads(threads)
        print(f"\n{threads} thread(s)\n")
        print("| case | irtensor bf16 | irtensor bf16, no AMX | irtensor bf16, no AMX, dot | "
              "irtensor f32 | torch bf16 | torch f32 | numpy f32 | torch bf16 / irtensor bf16 |")
        print("|---|---|---|---|---|---|---|---|---|")
        for case in cases():
            times = {"bf16": irtensor_time(case, BF16, {}, repeat),
                     "no amx": irtensor_time(case, BF16, {"IRTENSOR_AMX": "0"}, repeat),
                     "dot": irtensor_time(case, BF16, {"IRTENSOR_AMX": "0",
                                                       "IRTENSOR_BF16_DOT": "1"}, repeat)
                     if host.detected_bf16_dot() else None,
                     "f32": irtensor_time(case, np.dtype(np.float32), {}, repeat),
                     "numpy": numpy_time(case, repeat)}
            if torch is not None:
                times["torch bf16"] = torch_time(torch, case, torch.bfloat16, repeat)
                times["torch f32"] = torch_time(torch, case, torch.float32, repeat)
            cells = [f"{1e3 * t:.2f} ms ({case.flops / t / 1e9:.0f} GFLOP/s)"
                     if (t := times.get(k)) is not None else "-"
                     for k in ("bf16", "no amx", "dot", "f32", "torch bf16", "torch f32",
                               "numpy")]
            ratio = times["torch bf16"] / times["bf16"] if "torch bf16" in times else None
            cells.append(f"{ratio:.2f}" if ratio is not None else "-")
            print(f"| {case.name} | " + " | ".join(cells) + " |", flush=True)


def compile_levels(repeat: int) -> None:
    """The bf16 matmul kernels compiled by LLVM at O2 and O3 side by side: compile time
    and best run time of each, on one thread (the device compiles every kernel at O3)."""
    import time

    from irtensor import Tensor, ir
    from irtensor.passes.llvm import jit

    print("\nLLVM level of the bf16 matmul kernel (one thread)\n")
    print("| case | O2 compile | O3 compile | O2 run | O3 run |")
    print("|---|---|---|---|---|")
    for case in cases()[:2]:
        a, b = case.inputs
        text = (Tensor(a) @ Tensor(b)).ir("loops")
        module = ir.parse(text)
        name = next(line.split("@")[1].split("(")[0] for line in text.splitlines()
                    if "irtensor.kernel" in line)
        out = np.empty((a.shape[0], b.shape[1]), BF16)
        compile_s, run_s = {}, {}
        for level in (2, 3):
            start = time.perf_counter()
            function = jit.compile_module(module, opt_level=level).function(name)
            compile_s[level] = time.perf_counter() - start
            args = (a, b, out, 0, a.shape[0])
            run_s[level] = best(lambda f=function, args=args: f(*args), repeat)
        print(f"| {case.name} | {1e3 * compile_s[2]:.0f} ms | "
              f"{1e3 * compile_s[3]:.0f} ms | {1e3 * run_s[2]:.2f} ms | "
              f"{1e3 * run_s[3]:.2f} ms |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--no-heading", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    from training import cpu_heading

    from irtensor import host

    try:
        import torch
    except ImportError:
        torch = None
    if not args.no_heading:
        print(f"bf16 matmul, conv2d and MLP; {cpu_heading()}; irtensor's bf16 dot "
              f"{'on (vdpbf16ps)' if host.bf16_dot() else 'off'}, AMX tiles "
              f"{'on' if host.amx() else 'off (no AMX)'}; torch "
              f"{torch.__version__ if torch is not None else 'not installed'}", flush=True)
    counts = [int(t) for t in args.threads.split(",")]
    if len(counts) == 1:
        table(counts[0], torch, args.repeat)
        if counts[0] == 1:
            compile_levels(args.repeat)
        return
    # each thread count in a process of its own: a program compiled for one count is
    # remembered by the process and would run again under the next
    for threads in counts:
        subprocess.run([sys.executable, __file__, "--threads", str(threads), "--repeat",
                        str(args.repeat), "--no-heading"], check=True)


if __name__ == "__main__":
    main()
