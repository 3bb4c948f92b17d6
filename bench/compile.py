"""Compile-time benchmark: a training step's first (compiling) call with the compile
workers and without them, side by side in one run.

    python bench/compile.py [--reps N] [--threads T] [--baseline SRC] [--resnet]

Each measurement is a fresh process with an empty kernel cache, so every kernel is
compiled: the MLP's and the digits CNN's eager first step (`bench/training.py`).
Rows: `IRTENSOR_COMPILE_WORKERS` unset (one worker per core but one, and LLVM in a
thread of its own while the next kernel is lowered) and `0` (the thread only). The
runs alternate between the two settings; the table gives the median and range of
each and the ratio of the medians. The heading records the CPU model and features.
`--resnet` adds a column: import and first run of the ResNet-50 onnx ships (its light
model, batch 1, `irtensor.onnx.Program`). `--small` adds one for 24 small programs
(exp, relu, a matmul, softmax and a sum on n x 7 tensors, n = 2..25: a test suite's or
an interactive session's sizes), each compiling its kernels anew, with the
milliseconds per kernel compiled.

`--baseline SRC` adds the same two rows for another irtensor source tree (the `src`
folder of a checkout of an earlier commit, `git worktree add /tmp/base <commit>`),
run by the same interpreter in the same alternation, so a change's effect on compile
time is measured side by side with it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

ONE_RUN = """
import json, sys, time
sys.path.insert(0, {here!r})
import numpy as np
from training import irtensor_cnn_step, irtensor_mlp_step
from irtensor import runtime
seconds = {{}}
for name, maker in (("mlp", irtensor_mlp_step), ("cnn", irtensor_cnn_step)):
    step, _ = maker(np.random.default_rng(0), False)
    start = time.perf_counter()
    step()
    seconds[name] = time.perf_counter() - start
if {resnet!r}:
    import onnx
    from pathlib import Path
    from irtensor.onnx import Program
    start = time.perf_counter()
    light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    model = onnx.load(str(light / "light_resnet50.onnx"))
    Program(model, "llvm").run([np.zeros((1, 3, 224, 224), np.float32)])
    seconds["resnet50"] = time.perf_counter() - start
seconds["kernels"] = runtime.stats()["kernels_compiled"]
if {small!r}:
    import irtensor as it
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    for n in range(2, 26):
        a = it.Tensor(rng.standard_normal((n, 7)).astype(np.float32))
        b = it.Tensor(rng.standard_normal((7, n)).astype(np.float32))
        ((a.exp() * 2 + 1).relu() @ b).softmax(-1).sum(0).numpy()
    seconds["small"] = time.perf_counter() - start
    seconds["small_kernels"] = runtime.stats()["kernels_compiled"] - seconds["kernels"]
print(json.dumps(seconds))
"""

SETTINGS = (("workers (default)", None), ("no workers (IRTENSOR_COMPILE_WORKERS=0)", "0"))


def one_run(workers: str | None, threads: int, source: str | None = None,
            resnet: bool = False, small: bool = False) -> dict[str, float]:
    env = dict(os.environ, IRTENSOR_THREADS=str(threads))
    env.pop("IRTENSOR_COMPILE_WORKERS", None)
    if source is not None:  # ahead of the installed irtensor
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")]))
    if workers is not None:
        env["IRTENSOR_COMPILE_WORKERS"] = workers
    with tempfile.TemporaryDirectory() as cache:
        env["IRTENSOR_CACHE_DIR"] = cache
        done = subprocess.run([sys.executable, "-c", ONE_RUN.format(here=str(HERE), resnet=resnet,
                                                                small=small)],
                              env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"a measurement failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--baseline", help="another irtensor checkout's src folder")
    parser.add_argument("--resnet", action="store_true",
                        help="also ResNet-50's import and first run (needs onnx)")
    parser.add_argument("--small", action="store_true",
                        help="also 24 small programs' first runs")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from training import cpu_heading

    trees: list[tuple[str, str | None]] = [("", None)]
    if args.baseline:
        source = str(Path(args.baseline).resolve())
        if not (Path(source) / "irtensor" / "__init__.py").is_file():
            sys.exit(f"--baseline: {source} has no irtensor package")
        trees.append((" [baseline]", source))
    rows = [(label + suffix, workers, source) for suffix, source in trees
            for label, workers in SETTINGS]
    runs: dict[str, list[dict[str, float]]] = {label: [] for label, _, _ in rows}
    for _ in range(args.reps):
        for label, workers, source in rows:
            runs[label].append(one_run(workers, args.threads, source, args.resnet,
                                      args.small))
    print(f"first (compiling) eager training step, {args.reps} runs each, alternating, "
          f"{args.threads} thread(s); {cpu_heading()}\n")
    models = {"mlp": "MLP first step", "cnn": "CNN first step"}
    if args.resnet:
        models["resnet50"] = "ResNet-50 import + first run"
    if args.small:
        models["small"] = "24 small programs"
    print("| kernel compiles | kernels | " + " | ".join(f"{m} s" for m in models.values())
          + " | " + " | ".join(f"{m.split()[0]} vs no workers" for m in models.values())
          + " |")
    print("|---|---|" + "---|" * (2 * len(models)))
    base = {m: float(np.median([r[m] for r in runs[rows[1][0]]])) for m in models}
    for label, _, _ in rows:
        cells = []
        for model in models:
            values = [r[model] for r in runs[label]]
            cells.append(f"{np.median(values):.2f} ({min(values):.2f}-{max(values):.2f})")
        ratios = [f"{float(np.median([r[m] for r in runs[label]])) / base[m]:.2f}"
                  for m in models]
        kernels = int(runs[label][0]["kernels"])
        if args.small:
            made = float(np.median([r["small_kernels"] for r in runs[label]]))
            cells[-1] += f", {1e3 * float(np.median(values)) / made:.1f} ms a kernel"
        print(f"| {label} | {kernels} | {' | '.join(cells)} | {' | '.join(ratios)} |")

if __name__ == "__main__":
    main()
