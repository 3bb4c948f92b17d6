"""Training-step benchmark: irtensor (eager: one gradient program and one update
program a step, compiled once, replayed after) side by side with numpy (the same
MLP step written out by hand: forward, backward, Adam) and torch eager and
torch.compile when torch imports.

    python bench/training.py [--steps N] [--threads T]

Rows: the 784-256-256-10 MLP at batch 64 and the digits CNN of `irtensor demo
train` at batch 64, each a whole step (forward + backward + Adam). Columns: the
first step (compiling), the warm step time, steps per second, the ratios to numpy
and to torch eager (> 1: slower than it), irtensor's kernels per step. numpy's BLAS
and torch get the same thread count as irtensor. The heading records the CPU
model and its vector and matrix features. These machines are noisy: compare the
ratios within one run.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import numpy as np

MLP_SIZES = (784, 256, 256, 10)
BATCH = 64


def cpu_heading() -> str:
    from irtensor import host

    return host.cpu_description()


def timed_steps(step: Callable[[], object], steps: int) -> tuple[float, float]:
    """(first call seconds, median warm call seconds)."""
    start = time.perf_counter()
    step()
    first = time.perf_counter() - start
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return first, float(np.median(times))


# --------------------------------------------------------------------------- numpy


class NumpyMLP:
    """The MLP step by hand: relu layers, softmax cross-entropy, Adam (torch's formulas)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.params = []
        for fan_in, fan_out in pairwise(MLP_SIZES):
            bound = 1 / np.sqrt(fan_in)
            self.params += [rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32),
                            rng.uniform(-bound, bound, fan_out).astype(np.float32)]
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]
        self.t = 0

    def step(self, x: np.ndarray, y: np.ndarray, lr: float = 1e-3) -> float:
        acts, h = [x], x
        for i in range(0, len(self.params), 2):
            h = h @ self.params[i] + self.params[i + 1]
            if i + 2 < len(self.params):
                h = np.maximum(h, 0)
            acts.append(h)
        z = h - h.max(axis=1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        loss = float(-np.log(p[np.arange(len(y)), y]).mean())
        g = p
        g[np.arange(len(y)), y] -= 1
        g /= len(y)
        grads = [np.empty(0)] * len(self.params)
        for i in range(len(self.params) - 2, -1, -2):
            grads[i], grads[i + 1] = acts[i // 2].T @ g, g.sum(axis=0)
            if i:
                g = (g @ self.params[i].T) * (acts[i // 2] > 0)
        self.t += 1
        for k, (p_, g_) in enumerate(zip(self.params, grads, strict=True)):
            self.m[k] = 0.9 * self.m[k] + 0.1 * g_
            self.v[k] = 0.999 * self.v[k] + 0.001 * g_ * g_
            m_hat, v_hat = self.m[k] / (1 - 0.9 ** self.t), self.v[k] / (1 - 0.999 ** self.t)
            self.params[k] = p_ - lr * m_hat / (np.sqrt(v_hat) + 1e-8)
        return loss


# --------------------------------------------------------------------------- irtensor


def irtensor_mlp_step(rng: np.random.Generator, jitted: bool
                      ) -> tuple[Callable[[], object], Callable[[], int]]:
    from irtensor import Tensor, nn
    from irtensor.nn import optim
    from irtensor.nn.state import get_parameters
    from irtensor.runtime import STATS

    class MLP:
        def __init__(self) -> None:
            self.layers = [nn.Linear(a, b) for a, b in pairwise(MLP_SIZES)]

        def __call__(self, x: Tensor) -> Tensor:
            for layer in self.layers[:-1]:
                x = layer(x).relu()
            return self.layers[-1](x)

    model = MLP()
    opt = optim.Adam(get_parameters(model), lr=1e-3)
    x = rng.standard_normal((BATCH, MLP_SIZES[0])).astype(np.float32)
    y = rng.integers(0, 10, BATCH).astype(np.int32)
    return training_step(model, opt, x, y, jitted), lambda: STATS.kernels_run


def irtensor_cnn_step(rng: np.random.Generator, jitted: bool
                      ) -> tuple[Callable[[], object], Callable[[], int]]:
    from irtensor.nn import optim
    from irtensor.nn.state import get_parameters
    from irtensor.runtime import STATS
    from irtensor.tools.train_demo import DigitsNet

    model = DigitsNet()
    opt = optim.Adam(get_parameters(model), lr=3e-3)
    x = rng.random((BATCH, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 10, BATCH).astype(np.int32)
    return training_step(model, opt, x, y, jitted), lambda: STATS.kernels_run


def training_step(model: Callable, opt: object, x: np.ndarray, y: np.ndarray, jitted: bool
                  ) -> Callable[[], object]:
    from irtensor import Tensor, TinyJit

    def step(xt: Tensor, yt: Tensor) -> Tensor:
        opt.zero_grad()  # type: ignore[attr-defined]
        loss = model(xt).cross_entropy(yt)
        loss.backward()
        opt.step()  # type: ignore[attr-defined]
        return loss

    run = TinyJit(step) if jitted else step

    def call() -> float:
        with Tensor.train():
            return float(run(Tensor(x), Tensor(y)).item())

    return call


# --------------------------------------------------------------------------- torch


def torch_mlp(torch: Any) -> Any:
    layers: list[Any] = []
    for a, b in pairwise(MLP_SIZES):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1])


def torch_cnn(torch: Any) -> Any:
    """The digits CNN of `irtensor demo train` (DigitsNet), in torch."""
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 2 * 2, 10))


def torch_step(rng: np.random.Generator, model_name: str, compiled: bool, threads: int
               ) -> Callable[[], object] | None:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    model = torch_mlp(torch) if model_name.startswith("MLP") else torch_cnn(torch)
    lr = 1e-3 if model_name.startswith("MLP") else 3e-3
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    shape = (BATCH, MLP_SIZES[0]) if model_name.startswith("MLP") else (BATCH, 1, 8, 8)
    x = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, 10, BATCH))

    def step() -> float:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return float(loss)

    return torch.compile(step) if compiled else step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    os.environ.setdefault("IRTENSOR_THREADS", str(args.threads))
    from threadpoolctl import threadpool_limits

    blas_limits = threadpool_limits(args.threads)  # numpy's BLAS, as irtensor and torch
    rng = np.random.default_rng(0)
    numpy_mlp = NumpyMLP(rng)
    x = rng.standard_normal((BATCH, MLP_SIZES[0])).astype(np.float32)
    y = rng.integers(0, 10, BATCH)
    rows: list[tuple[str, str, float, float, str]] = []
    _, numpy_warm = timed_steps(lambda: numpy_mlp.step(x, y), args.steps)
    rows.append(("MLP 784-256-256-10", "numpy (by hand)", 0.0, numpy_warm, ""))
    for name, maker in (("MLP 784-256-256-10", irtensor_mlp_step),
                        ("digits CNN", irtensor_cnn_step)):
        for jitted in (False, True):
            step, kernels = maker(rng, jitted)
            first, warm = timed_steps(step, args.steps)
            before = kernels()
            step()
            how = "TinyJit" if jitted else "eager"
            rows.append((name, f"irtensor llvm ({how})", first, warm, str(kernels() - before)))
    for name in ("MLP 784-256-256-10", "digits CNN"):
        for compiled in (False, True):
            step = torch_step(rng, name, compiled, args.threads)
            label = "torch.compile" if compiled else "torch eager"
            if step is None:
                rows.append((name, f"{label}: not installed", 0, float("nan"), ""))
                continue
            try:
                first, warm = timed_steps(step, args.steps)
            except Exception as error:  # a peer that fails is a row, not a crash
                rows.append((name, f"{label}: failed ({type(error).__name__})", 0,
                             float("nan"), ""))
                continue
            rows.append((name, label, first, warm, ""))
    blas_limits.unregister()
    print(f"training step, batch {BATCH}, {args.threads} thread(s); {cpu_heading()}\n")
    print("| model | implementation | first step ms | warm step ms | steps/s | vs numpy | "
          "vs torch eager | kernels/step |")
    print("|---|---|---|---|---|---|---|---|")
    torch_eager = {model: warm for model, impl, _, warm, _ in rows if impl == "torch eager"}
    for model, impl, first, warm, kernels in rows:
        ratio = f"{warm / numpy_warm:.2f}" if model.startswith("MLP") and warm == warm else ""
        to_torch = f"{warm / torch_eager[model]:.2f}" if model in torch_eager else ""
        rate = f"{1 / warm:.0f}" if warm == warm else ""
        print(f"| {model} | {impl} | {first * 1e3:.0f} | {warm * 1e3:.2f} | "
              f"{rate} | {ratio} | {to_torch} | {kernels} |")


if __name__ == "__main__":
    main()
