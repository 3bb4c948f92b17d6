"""The kernels the channel blocks, tiled copies and register-block rows are for, side by
side in one run: irtensor (llvm) against torch and numpy.

    python bench/convs.py [--threads N] [--repeat N]

Rows: ResNet-50's conv shapes at batch 1 (conv + bias + residual + relu, the
epilogue its blocks carry; the time includes the weight's channels-last copy, which
runs on every call), a conv and a matmul whose input is computed (a batch norm's
affine and relu before a 3x3 conv, relu(a) @ b: computed once, not per tap or per
column), a 2048 x 1024 f32 transpose, and a batch-1 256x512x256 matmul.
Columns: best-of-N warm times and GFLOP/s (GB/s for the copy), and the ratio of each
peer's time to irtensor's (> 1: irtensor is faster). numpy's convs are im2col + BLAS
(sliding-window view, one matmul). The heading records the CPU and its features.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

# (name, N, C_in, H, C_out, kernel, stride, pad)
CONVS = (
    ("3x3 512->512, 7x7 map", 1, 512, 7, 512, 3, 1, 1),
    ("3x3 256->256, 14x14 map", 1, 256, 14, 256, 3, 1, 1),
    ("3x3 128->128, 28x28 map", 1, 128, 28, 128, 3, 1, 1),
    ("3x3 64->64, 56x56 map", 1, 64, 56, 64, 3, 1, 1),
    ("1x1 1024->2048, 7x7 map", 1, 1024, 7, 2048, 1, 1, 0),
    ("1x1 512->1024, 14x14 map", 1, 512, 14, 1024, 1, 1, 0),
    ("1x1 64->256, 56x56 map", 1, 64, 56, 256, 1, 1, 0),
    ("7x7 stride 2 3->64, 224 (stem)", 1, 3, 224, 64, 7, 2, 3),
)


def best(run: Callable[[], object], repeat: int, pause: float = 0.0) -> float:
    """The fastest of `repeat` timed calls after a warm-up, `pause` seconds after it."""
    run()
    time.sleep(pause)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def numpy_conv(x: np.ndarray, w: np.ndarray, b: np.ndarray, r: np.ndarray, stride: int,
               pad: int) -> np.ndarray:
    from numpy.lib.stride_tricks import sliding_window_view

    k = w.shape[-1]
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = sliding_window_view(padded, (k, k), axis=(2, 3))[:, :, ::stride, ::stride]
    n, c, oh, ow = win.shape[:4]
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * k * k)
    out = (cols @ w.reshape(w.shape[0], -1).T).reshape(n, oh, ow, -1).transpose(0, 3, 1, 2)
    return np.maximum(out + b[None, :, None, None] + r, 0)


def row(name: str, work: float, unit: str, times: dict[str, float]) -> str:
    mine = times["irtensor"]
    cells = [f"{1e3 * mine:.2f} ms ({work / mine / 1e9:.1f} {unit})"]
    for peer in ("torch", "numpy"):
        t = times.get(peer)
        cells.append("" if t is None else f"{1e3 * t:.2f} ms ({t / mine:.2f}x)")
    return f"| {name} | " + " | ".join(cells) + " |"


def conv_row(spec: tuple, torch: object, repeat: int) -> str:
    from irtensor import Tensor

    name, n, ci, h, co, k, stride, pad = spec
    rng = np.random.default_rng(0)
    oh = (h + 2 * pad - k) // stride + 1
    x = rng.standard_normal((n, ci, h, h), dtype=np.float32)
    w = rng.standard_normal((co, ci, k, k), dtype=np.float32)
    b = rng.standard_normal(co, dtype=np.float32)
    r = rng.standard_normal((n, co, oh, oh), dtype=np.float32)
    X, W, B, R = (Tensor(a) for a in (x, w, b, r))
    want = numpy_conv(x, w, b, r, stride, pad)
    got = (X.conv2d(W, B, stride=stride, padding=pad) + R).relu().numpy()
    assert np.allclose(got, want, rtol=1e-3, atol=1e-3 * np.sqrt(ci * k * k)), name
    times = {"irtensor": best(lambda: (X.conv2d(W, B, stride=stride, padding=pad) + R)
                              .relu().realize(), repeat),
             "numpy": best(lambda: numpy_conv(x, w, b, r, stride, pad), repeat)}
    if torch is not None:
        F = torch.nn.functional  # type: ignore[attr-defined]
        tx, tw, tb, tr = (torch.from_numpy(a) for a in (x, w, b, r))  # type: ignore[attr-defined]
        times["torch"] = best(lambda: torch.relu(  # type: ignore[attr-defined]
            F.conv2d(tx, tw, tb, stride=stride, padding=pad) + tr), repeat)
    return row(name, 2.0 * n * co * ci * k * k * oh * oh, "GFLOP/s", times)


def computed_input_rows(torch: object, repeat: int) -> list[str]:
    """relu(x * s + t) into a 3x3 conv (64 channels, 56x56, batch 8), and relu(a) @ b
    (1024^3): the computed input is read at every tap or column."""
    from irtensor import Tensor

    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 64, 56, 56), dtype=np.float32)
    s, t = (rng.standard_normal((1, 64, 1, 1), dtype=np.float32) for _ in range(2))
    w = rng.standard_normal((64, 64, 3, 3), dtype=np.float32) * 0.05
    X, S, T, W = (Tensor(v) for v in (x, s, t, w))
    zero = np.zeros(64, np.float32)
    r = np.zeros((8, 64, 56, 56), np.float32)

    def numpy_bn_conv() -> np.ndarray:
        return numpy_conv(np.maximum(x * s + t, 0), w, zero, r, 1, 1)

    def mine() -> object:
        return (X * S + T).relu().conv2d(W, padding=1).relu()  # numpy_conv's relu too

    assert np.allclose(mine().numpy(), numpy_bn_conv(), rtol=1e-3, atol=1e-2)
    times = {"irtensor": best(lambda: mine().realize(), repeat),
             "numpy": best(numpy_bn_conv, repeat)}
    a, b = (rng.standard_normal((1024, 1024), dtype=np.float32) for _ in range(2))
    A, B = Tensor(a), Tensor(b)
    assert np.allclose((A.relu() @ B).numpy(), np.maximum(a, 0) @ b, rtol=1e-3, atol=1e-2)
    mm = {"irtensor": best(lambda: (A.relu() @ B).realize(), repeat),
          "numpy": best(lambda: np.maximum(a, 0) @ b, repeat)}
    if torch is not None:
        F = torch.nn.functional  # type: ignore[attr-defined]
        tx, ts, tt, tw = (torch.from_numpy(v) for v in (x, s, t, w))  # type: ignore[attr-defined]
        times["torch"] = best(lambda: torch.relu(F.conv2d(  # type: ignore[attr-defined]
            torch.relu(tx * ts + tt), tw, padding=1)), repeat)  # type: ignore[attr-defined]
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)  # type: ignore[attr-defined]
        mm["torch"] = best(lambda: torch.relu(ta) @ tb, repeat)  # type: ignore[attr-defined]
    return [row("relu(x * s + t) -> 3x3 64->64 -> relu, 56x56, batch 8",
                2.0 * 8 * 64 * 64 * 9 * 56 * 56, "GFLOP/s", times),
            row("relu(a) @ b, 1024^3", 2.0 * 1024**3, "GFLOP/s", mm)]


def transpose_row(torch: object, repeat: int) -> str:
    from irtensor import Tensor

    a = np.random.default_rng(1).standard_normal((2048, 1024), dtype=np.float32)
    A = Tensor(a)
    assert np.array_equal(A.T.contiguous().numpy(), a.T)
    out = np.empty((1024, 2048), np.float32)
    times = {"irtensor": best(lambda: A.T.contiguous().realize(), repeat),
             "numpy": best(lambda: np.copyto(out, a.T), repeat)}
    if torch is not None:
        ta = torch.from_numpy(a)  # type: ignore[attr-defined]
        times["torch"] = best(lambda: ta.t().contiguous(), repeat)
    return row("transpose 2048x1024 f32", 2.0 * a.nbytes, "GB/s", times)


def batch1_matmul_row(torch: object, repeat: int) -> str:
    from irtensor import Tensor

    rng = np.random.default_rng(2)
    a = rng.standard_normal((1, 256, 512), dtype=np.float32)
    b = rng.standard_normal((1, 512, 256), dtype=np.float32)
    A, B = Tensor(a), Tensor(b)
    assert np.allclose((A @ B).numpy(), a @ b, rtol=1e-3, atol=1e-3)
    times = {"irtensor": best(lambda: (A @ B).realize(), repeat),
             "numpy": best(lambda: a @ b, repeat)}
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)  # type: ignore[attr-defined]
        times["torch"] = best(lambda: ta @ tb, repeat)
    return row("matmul 1x256x512 @ 1x512x256", 2.0 * 256 * 512 * 256, "GFLOP/s", times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=7)
    args = p.parse_args()
    os.environ["IRTENSOR_THREADS"] = str(args.threads)
    sys.path.insert(0, str(Path(__file__).parent))
    from threadpoolctl import threadpool_limits
    from training import cpu_heading

    blas_limits = threadpool_limits(args.threads)  # numpy's BLAS, as irtensor and torch

    try:
        import torch

        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    print(f"convs, copies and a batch-1 matmul, {args.threads} thread(s); {cpu_heading()}\n")
    print("| case | irtensor | torch (its time / irtensor's) | numpy (its time / irtensor's) |")
    print("|---|---|---|---|")
    for spec in CONVS:
        print(conv_row(spec, torch, args.repeat), flush=True)
    for line in computed_input_rows(torch, args.repeat):
        print(line, flush=True)
    print(transpose_row(torch, args.repeat), flush=True)
    print(batch1_matmul_row(torch, args.repeat), flush=True)
    blas_limits.unregister()


if __name__ == "__main__":
    main()
