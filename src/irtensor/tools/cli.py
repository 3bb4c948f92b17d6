"""`irtensor demo`: a small MLP and conv net, compiled, checked, and shown at every stage;
`irtensor bench`: the benchmark suite (`irtensor.bench`);
`irtensor fuzz`: random programs on a device against the interpreter (`tools/fuzz.py`).

    irtensor demo              # the walk-through
    irtensor demo --stages     # also both models' IR at hl, ll, kernel, loops, llvm-ir
    irtensor bench --quick     # every benchmark case at small sizes (see bench/README.md)
    irtensor fuzz --device llvm --n 200 --seed 0
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np


def mlp(t: Callable[[np.ndarray], object], x: np.ndarray, params: dict[str, np.ndarray]):  # type: ignore[no-untyped-def]
    h = (t(x) @ t(params["w1"]) + t(params["b1"])).relu()  # type: ignore[operator]
    return (h @ t(params["w2"]) + t(params["b2"])).log_softmax()


def mlp_numpy(x: np.ndarray, p: dict[str, np.ndarray]) -> np.ndarray:
    h = np.maximum(x @ p["w1"] + p["b1"], 0) @ p["w2"] + p["b2"]
    h = h - h.max(1, keepdims=True)
    return h - np.log(np.exp(h).sum(1, keepdims=True))


def convnet(t: Callable[[np.ndarray], object], x: np.ndarray, p: dict[str, np.ndarray]):  # type: ignore[no-untyped-def]
    y = t(x).conv2d(t(p["k"]), t(p["kb"]), padding=1).relu().max_pool2d()  # type: ignore[attr-defined]
    return y.flatten(1).linear(t(p["fc"])).softmax()


def convnet_numpy(x: np.ndarray, p: dict[str, np.ndarray]) -> np.ndarray:
    n, _, h, w = x.shape
    k = p["k"]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, k.shape[0], h, w), np.float32)
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + w], k[:, :, i, j])
    out = np.maximum(out + p["kb"][None, :, None, None], 0)
    pooled = out.reshape(n, k.shape[0], h // 2, 2, w // 2, 2).max((3, 5))
    z = pooled.reshape(n, -1) @ p["fc"]
    z = np.exp(z - z.max(1, keepdims=True))
    return z / z.sum(1, keepdims=True)


def parameters(rng: np.random.Generator) -> dict[str, np.ndarray]:
    def r(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)

    return {"w1": r(784, 256), "b1": r(256), "w2": r(256, 10), "b2": r(10),
            "k": r(8, 3, 3, 3), "kb": r(8), "fc": r(8 * 8 * 8, 10)}


def run_model(name: str, model, reference, x: np.ndarray, p: dict[str, np.ndarray],  # type: ignore[no-untyped-def]
              device: str) -> None:
    from irtensor import Tensor, runtime

    def t(a: np.ndarray) -> object:
        return Tensor(a, device=device)

    before = runtime.stats()
    start = time.perf_counter()
    first = model(t, x, p).numpy()
    first_ms = (time.perf_counter() - start) * 1e3
    compiled = runtime.stats()["kernels_compiled"] - before["kernels_compiled"]
    times = []
    for _ in range(5):
        start = time.perf_counter()
        model(t, x, p).numpy()
        times.append((time.perf_counter() - start) * 1e3)
    want = reference(x, p)
    ok = np.allclose(first, want, rtol=1e-4, atol=1e-5)
    kernels = len(model(t, x, p).schedule())
    print(f"  {name:<9} on {device:<6}: {kernels} kernels ({compiled} compiled), first call "
          f"{first_ms:8.1f} ms, cached {np.median(times):7.2f} ms, "
          f"{'matches numpy' if ok else 'DIFFERS FROM NUMPY'}")
    if not ok:
        raise SystemExit(f"{name} on {device} does not match numpy")


STAGES_SHOWN = ("hl", "ll", "kernel", "loops", "llvm-ir")


def show_stages(name: str, model, x: np.ndarray, p: dict[str, np.ndarray]) -> None:  # type: ignore[no-untyped-def]
    """The model's program at each stage, for a batch of 4 (the stages do not depend on it
    but for the shapes they print)."""
    from irtensor import Tensor

    batch = x[:4]
    y = model(lambda a: Tensor(a), batch, p)
    for stage in STAGES_SHOWN:
        how = " as LLVM IR" if stage == "llvm-ir" else ""
        print(f"\n// ===== the {name} at stage {stage}{how} (batch {len(batch)}) =====")
        print(y.ir(stage))


def demo(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="irtensor demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stages", action="store_true", help="print the IR at every stage")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    p = parameters(rng)
    x_mlp = rng.standard_normal((64, 784)).astype(np.float32)
    x_img = rng.standard_normal((4, 3, 16, 16)).astype(np.float32)
    print("irtensor demo: two models written with Tensor, compiled and checked against numpy"
          f" (the MLP at batch {len(x_mlp)}, the conv net at batch {len(x_img)})")
    from irtensor.runtime import opencl_device

    why = opencl_device.unavailable()
    for device in ("llvm", "interp", *(("opencl",) if why is None else ())):
        run_model("MLP", mlp, mlp_numpy, x_mlp, p, device)
        run_model("conv net", convnet, convnet_numpy, x_img, p, device)
    if why is not None:
        print(f"  (device opencl skipped: no OpenCL device builds programs here: {why})")
    if args.stages:
        show_stages("MLP", mlp, x_mlp, p)
        show_stages("conv net", convnet, x_img, p)
    print("\nThe MLP's kernels on llvm (DEBUG=2):")
    os.environ["DEBUG"] = "2"
    from irtensor import Tensor

    mlp(lambda a: Tensor(a, device="llvm"), x_mlp, p).numpy()  # type: ignore[arg-type]
    sys.stderr.flush()
    return 0


USAGE = """usage: irtensor demo [--stages]      the walk-through
       irtensor demo train [--epochs N] a small CNN trained on scikit-learn's digits
       irtensor viz FILE.mlir -o F.html  every stage, the kernel graph and table as one page
       irtensor bench [--quick] ...    irtensor side by side with numpy, torch, tinygrad
                                       (irtensor bench --help)
       irtensor fuzz --device D --n N --seed S
                                       random programs on device D against the interpreter
                                       (irtensor fuzz --help)
irtensor-opt is the IR driver."""


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "viz":
        from irtensor.tools import viz

        return viz.main(argv[1:])
    if argv and argv[0] == "bench":
        from irtensor.bench import main as bench

        return bench(argv[1:])
    if argv and argv[0] == "fuzz":
        from irtensor.tools.fuzz import main as fuzz

        return fuzz(argv[1:])
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    if argv[0] != "demo":
        print(f"irtensor: error: unknown command {argv[0]!r}\n{USAGE}", file=sys.stderr)
        return 2
    if argv[1:2] == ["train"]:
        from irtensor.tools import train_demo

        return train_demo.main(argv[2:])
    return demo(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
