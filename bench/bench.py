#!/usr/bin/env python
"""irtensor side by side with numpy (and torch, when it imports), in one run.

    python bench/bench.py                      # all cases, all cores
    python bench/bench.py --quick              # small sizes, few repetitions (the test runs this)
    python bench/bench.py --cases sum_all,softmax --threads 1 --json out.json
    python bench/bench.py --threads-sweep      # 1 thread, then --threads (default: all cores)

Each thread count runs in a fresh child process of this script, with
IRTENSOR_THREADS, OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS set
before anything is imported (torch: `torch.set_num_threads`), and with a fresh,
empty IRTENSOR_CACHE_DIR, so irtensor's first call of a case pays the pipeline
and every compile (except kernels an earlier case of the same run compiled:
the `new` count says how many were compiled). See bench/README.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

EPS32 = float(np.finfo(np.float32).eps)

# --------------------------------------------------------------------------- cases

Arrays = Sequence[np.ndarray]


@dataclass
class Case:
    """One computation, written three times (irtensor, numpy, torch) with the same math."""

    name: str
    title: str
    make: Callable[[np.random.Generator], list[np.ndarray]]  # float32 inputs
    irtensor: Callable[[Sequence[Any]], Any]  # Tensor inputs -> lazy Tensor
    numpy: Callable[[Arrays], np.ndarray]  # dtype-generic: also run on float64 for the check
    torch: Callable[[Sequence[Any]], Any]
    scale: Callable[[Arrays, np.ndarray], np.ndarray]  # error scale, from float64 inputs and ref
    tol: float  # pass if |got - ref64| <= tol * scale everywhere
    reps: int
    bytes_moved: int = 0  # inputs + output, once
    flops: int = 0
    note: str = ""


def _ew_np(x: Arrays) -> np.ndarray:
    a, b, c = x
    return np.maximum(np.exp(a * b + c) * 0.5 - a, 0)


def _softmax_np(x: Arrays) -> np.ndarray:
    (a,) = x
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


BN_AXES = (0, 2, 3)


def _bn(x: Any, var: Callable[[Any], Any], axes: Any = BN_AXES) -> Any:
    return (x - x.mean(axes, keepdim=True)) / (var(x) + 1e-5).sqrt()


def _bn_np(x: Arrays, axes: Any = BN_AXES) -> np.ndarray:
    (a,) = x
    return (a - a.mean(axes, keepdims=True)) / np.sqrt(a.var(axes, keepdims=True) + 1e-5)


def _gn_shape(shape: Sequence[int]) -> tuple[int, int, int]:
    n, c, h, w = shape
    return n, 32, (c // 32) * h * w


def _gn_irtensor(x: Sequence[Any]) -> Any:
    (t,) = x
    g = t.reshape(*_gn_shape(t.shape))
    out = (g - g.mean(-1, keepdim=True)) / (g.var(-1, keepdim=True, correction=0) + 1e-5).sqrt()
    return out.reshape(*t.shape)


def _gn_np(x: Arrays) -> np.ndarray:
    (a,) = x
    return _bn_np([a.reshape(_gn_shape(a.shape))], axes=-1).reshape(a.shape)


def _gn_torch(x: Sequence[Any]) -> Any:
    (t,) = x
    g = t.reshape(*_gn_shape(t.shape))
    out = (g - g.mean(-1, keepdim=True)) / (g.var(-1, keepdim=True, correction=0) + 1e-5).sqrt()
    return out.reshape(t.shape)


def _seed_irtensor(_: Sequence[Any]) -> Any:
    from irtensor import Tensor

    x = Tensor.zeros(1)
    for i in range(5):
        x += i
    return x


def _seed_np(x: Arrays) -> np.ndarray:
    dtype = x[0].dtype if x else np.float32
    y = np.zeros(1, dtype)
    for i in range(5):
        y += i
    return y


def _seed_torch(_: Sequence[Any]) -> Any:
    import torch

    y = torch.zeros(1)
    for i in range(5):
        y += i
    return y


def _randn(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator], list[np.ndarray]]:
    return lambda rng: [rng.standard_normal(s, dtype=np.float32) for s in shapes]


def _abs_sum(axis: int | None) -> Callable[[Arrays, np.ndarray], np.ndarray]:
    return lambda x, ref: np.broadcast_to(np.abs(x[0]).sum(axis=axis), ref.shape)


def _matmul_scale(x: Arrays, ref: np.ndarray) -> np.ndarray:
    return np.abs(x[0]) @ np.abs(x[1])


def cases(quick: bool) -> list[Case]:
    """The cases of the shared targets.md; `quick`: small sizes, few repetitions."""
    n = 1 << 16 if quick else 1 << 24
    s = 256 if quick else 4096
    norm = (4, 64, 8, 8) if quick else (32, 64, 56, 56)
    mm = [128] if quick else [1024, 2048]  # quick: no matmul_big
    r = 3 if quick else None

    def reps(full: int) -> int:
        return r if r is not None else full

    f32 = 4
    out: list[Case] = [
        Case("ew_chain", f"((a*b+c).exp()*0.5-a).relu(), {n}",
             _randn((n,), (n,), (n,)),
             lambda x: ((x[0] * x[1] + x[2]).exp() * 0.5 - x[0]).relu(),
             _ew_np,
             lambda x: ((x[0] * x[1] + x[2]).exp() * 0.5 - x[0]).relu(),
             lambda x, ref: np.exp(x[0] * x[1] + x[2]) * 0.5 + np.abs(x[0]),
             1e-5, reps(15), bytes_moved=4 * n * f32),
        Case("sum_all", f"sum of {s}x{s}", _randn((s, s)),
             lambda x: x[0].sum(), lambda x: x[0].sum(), lambda x: x[0].sum(),
             _abs_sum(None), 1e-6, reps(30), bytes_moved=s * s * f32 + f32),
        Case("sum_axis1", f"sum over axis 1 of {s}x{s}", _randn((s, s)),
             lambda x: x[0].sum(1), lambda x: x[0].sum(1), lambda x: x[0].sum(1),
             _abs_sum(1), 1e-6, reps(30), bytes_moved=(s * s + s) * f32),
        Case("softmax", f"softmax over the last axis of {s}x{s}", _randn((s, s)),
             lambda x: x[0].softmax(-1), _softmax_np, lambda x: x[0].softmax(-1),
             lambda x, ref: ref, 1e-5, reps(15), bytes_moved=2 * s * s * f32),
    ]
    for name, k in zip(("matmul", "matmul_big"), mm, strict=False):
        out.append(Case(name, f"matmul {k}^3", _randn((k, k), (k, k)),
                        lambda x: x[0] @ x[1], lambda x: x[0] @ x[1], lambda x: x[0] @ x[1],
                        _matmul_scale, 1e-5, reps(10 if k <= 1024 else 5),
                        flops=2 * k * k * k))
    size = int(np.prod(norm))
    out += [
        Case("seed_loop", "x = zeros(1); for i in range(5): x += i", lambda rng: [],
             _seed_irtensor, _seed_np, _seed_torch,
             lambda x, ref: np.ones_like(ref), 0.0, reps(300)),
        Case("batchnorm", f"(x-mean)/sqrt(var+1e-5) over (0,2,3) of {norm}", _randn(norm),
             lambda x: _bn(x[0], lambda t: t.var(BN_AXES, keepdim=True, correction=0)),
             _bn_np,
             lambda x: _bn(x[0], lambda t: t.var(BN_AXES, keepdim=True, correction=0)),
             lambda x, ref: np.abs(ref) + 1, 1e-4, reps(20), bytes_moved=2 * size * f32),
        Case("groupnorm", f"same, 32 groups: reshape {_gn_shape(norm)}, over the last axis",
             _randn(norm), _gn_irtensor, _gn_np, _gn_torch,
             lambda x, ref: np.abs(ref) + 1, 1e-4, reps(20), bytes_moved=2 * size * f32),
    ]
    return out


# --------------------------------------------------------------------------- measuring


@dataclass
class Timing:
    """Seconds of one implementation's repetitions, and process CPU seconds alongside."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    realize: list[float] = field(default_factory=list)  # irtensor: graph build + realize only

    def median_ms(self) -> float | None:
        return statistics.median(self.wall) * 1e3 if self.wall else None

    def cpu_util(self) -> float | None:
        if not self.wall:
            return None
        return statistics.median(c / max(w, 1e-12) for c, w in zip(self.cpu, self.wall,
                                                                    strict=True))


def check(got: Any, ref: np.ndarray, scale: np.ndarray, tol: float) -> tuple[bool, float, str]:
    """(passed, worst error in units of `scale`, message) against the float64 reference."""
    got = np.asarray(got)
    if got.shape != ref.shape:
        return False, float("inf"), f"shape {got.shape}, expected {ref.shape}"
    if got.dtype != np.float32:
        return False, float("inf"), f"dtype {got.dtype}, expected float32"
    err = np.abs(got.astype(np.float64) - ref)
    bad = ~(err <= tol * scale)  # NaN counts as bad
    worst = float(np.max(err / np.maximum(scale, 1e-300))) if err.size else 0.0
    if bad.any():
        return False, worst, f"{int(bad.sum())} of {bad.size} values off (worst {worst:.3g})"
    return True, worst, ""


def busy_seconds() -> float | None:
    """CPU seconds all processes of the machine have used (Linux /proc/stat), or None."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    ticks = [int(x) for x in fields]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def own_seconds() -> float:
    t = os.times()
    return t.user + t.system


class ForeignLoad:
    """How many cores other processes kept busy over a stretch of time (0.0 = a quiet machine)."""

    def __init__(self) -> None:
        self.start = (time.perf_counter(), busy_seconds(), own_seconds())

    def cores(self) -> float | None:
        wall0, busy0, own0 = self.start
        busy1 = busy_seconds()
        if busy0 is None or busy1 is None:
            return None
        wall = max(time.perf_counter() - wall0, 1e-9)
        return max(0.0, (busy1 - busy0 - (own_seconds() - own0)) / wall)


BUSY = 0.25  # cores kept busy by other processes above which a measurement is suspect


def wait_for_quiet(limit: float) -> float | None:
    """Wait (up to `limit` seconds) until other processes use under BUSY cores for 1 s."""
    deadline = time.perf_counter() + limit
    while True:
        load = ForeignLoad()
        time.sleep(1.0)
        cores = load.cores()
        if cores is None or cores < BUSY or time.perf_counter() > deadline:
            return cores


def measure(case: Case, impls: dict[str, Callable[[], Any]],
            tensors: Sequence[Any]) -> tuple[dict[str, Timing], float | None]:
    """`case.reps` interleaved repetitions of every implementation; the other processes' load."""
    timings = {impl: Timing() for impl in impls}
    names = list(impls)
    large = case.bytes_moved + case.flops > 1 << 20
    load = ForeignLoad()
    for rep in range(case.reps):
        order = names[rep % len(names):] + names[:rep % len(names)]  # rotating
        for impl in order:
            if large:
                gc.collect()  # outside the timing; irtensor's graphs hold cycles
            c0, t0 = time.process_time(), time.perf_counter()
            if impl == "irtensor":
                out = case.irtensor(tensors).realize()
                t_realized = time.perf_counter()
                out.numpy()
                timings[impl].realize.append(t_realized - t0)
            else:
                impls[impl]()
            timings[impl].wall.append(time.perf_counter() - t0)
            timings[impl].cpu.append(time.process_time() - c0)
    return timings, load.cores()


def run_case(case: Case, torch_mod: Any, quiet_wait: float = 0.0) -> dict[str, Any]:
    import irtensor.runtime as rt
    from irtensor import Tensor

    rng = np.random.default_rng(0)
    arrays = case.make(rng)
    ref = case.numpy([a.astype(np.float64) for a in arrays])
    scale = np.asarray(case.scale([a.astype(np.float64) for a in arrays], ref), np.float64)
    tensors = [Tensor(a, device="llvm").realize() for a in arrays]
    torch_in = [torch_mod.from_numpy(a) for a in arrays] if torch_mod is not None else []
    result: dict[str, Any] = {"name": case.name, "title": case.title, "reps": case.reps,
                              "bytes_moved": case.bytes_moved, "flops": case.flops}
    checks: dict[str, dict[str, Any]] = {}

    def record(impl: str, got: Any) -> None:
        ok, worst, message = check(got, ref, scale, case.tol)
        checks[impl] = {"ok": ok, "worst_error": worst, "message": message}

    # irtensor's first call: recording, pipeline, compiles, run, copy out.
    gc.collect()
    if quiet_wait > 0:
        wait_for_quiet(quiet_wait)
    before = rt.stats()
    start = time.perf_counter()
    first = case.irtensor(tensors).numpy()
    result["irtensor_first_ms"] = (time.perf_counter() - start) * 1e3
    after = rt.stats()
    result["first_call_stats"] = {k: after[k] - before[k] for k in after}
    record("irtensor_first", first)
    del first
    result["kernels"] = len(case.irtensor(tensors).schedule())

    impls: dict[str, Callable[[], Any]] = {
        "irtensor": lambda: case.irtensor(tensors).numpy(),
        "numpy": lambda: case.numpy(arrays),
    }
    if torch_mod is not None:
        impls["torch"] = lambda: case.torch(torch_in).numpy()
    for impl in impls:  # warm-up, and the checked results
        for _ in range(2):
            got = impls[impl]()
        record(impl, got)
        del got
    timings, foreign = measure(case, impls, tensors)
    result["attempts"] = 1
    while quiet_wait > 0 and foreign is not None and foreign > BUSY and result["attempts"] < 3:
        wait_for_quiet(quiet_wait)  # the machine was shared: measure again, keep the quieter
        again, foreign_again = measure(case, impls, tensors)
        result["attempts"] += 1
        if foreign_again is not None and foreign_again < foreign:
            timings, foreign = again, foreign_again
    result["foreign_load"] = foreign
    warm = timings["irtensor"].median_ms()
    for impl, timing in timings.items():
        result[f"{impl}_ms"] = timing.median_ms()
        result[f"{impl}_min_ms"] = min(timing.wall) * 1e3
        result[f"{impl}_all_ms"] = [t * 1e3 for t in timing.wall]  # in repetition order
        result[f"{impl}_cpu_util"] = timing.cpu_util()
    result["irtensor_realize_ms"] = statistics.median(timings["irtensor"].realize) * 1e3
    for impl in ("numpy", "torch"):
        theirs = result.get(f"{impl}_ms")
        result[f"ratio_{impl}"] = theirs / warm if theirs and warm else None
    if warm:
        if case.flops:
            result["metric"] = ("GFLOP/s", case.flops / (warm * 1e-3) / 1e9)
        elif case.bytes_moved:
            result["metric"] = ("GB/s", case.bytes_moved / (warm * 1e-3) / 1e9)
    result["checks"] = checks
    result["ok"] = all(c["ok"] for c in checks.values())
    return result


def child(args: argparse.Namespace) -> int:
    """Run the cases in this process (the parent set the thread variables) and write JSON."""
    t0 = time.perf_counter()
    import irtensor
    from irtensor import Tensor
    from irtensor.runtime import llvm_device

    import_ms = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    (Tensor([1.0, 2.0], device="llvm") * 3).numpy()  # llvmlite start-up, not any case's
    startup_ms = (time.perf_counter() - t0) * 1e3
    torch_mod: Any = None
    try:
        import torch

        torch.set_num_threads(args.threads)
        torch_mod = torch
    except ImportError:
        pass
    selected = [c for c in cases(args.quick) if not args.cases or c.name in args.cases]
    results = []
    for case in selected:
        if args.reps:
            case.reps = args.reps
        sys.stderr.write(f"[{args.threads}T] {case.name} ...\n")
        start = time.perf_counter()
        try:
            result = run_case(case, torch_mod, args.quiet_wait)
        except Exception as e:  # a broken case is reported, the others still run
            result = {"name": case.name, "title": case.title, "ok": False,
                      "error": f"{type(e).__name__}: {e}"}
        result["case_seconds"] = time.perf_counter() - start
        results.append(result)
    data = {
        "threads": args.threads,
        "irtensor_threads": llvm_device.threads(),
        "quick": args.quick,
        "import_ms": import_ms,
        "startup_ms": startup_ms,
        "numpy": np.__version__,
        "torch": getattr(torch_mod, "__version__", None),
        "irtensor": getattr(irtensor, "__version__", None),
        "loadavg": os.getloadavg(),
        "cases": results,
    }
    Path(args.json).write_text(json.dumps(data, indent=1))
    return 0


# --------------------------------------------------------------------------- reporting


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}" if value >= 0.01 else f"{value:.2g}"


def table(run: dict[str, Any]) -> str:
    head = ["case", "kernels (new)", "irt first ms", "irt warm ms", "irt realize ms",
            "numpy ms", "torch ms", "numpy/irt", "irt rate", "irt cpu", "other load",
            "check"]
    rows = [head]
    for r in run["cases"]:
        if "error" in r:
            rows.append([r["name"], *["-"] * (len(head) - 2), f"ERROR {r['error'][:60]}"])
            continue
        compiled = r["first_call_stats"]["kernels_compiled"]
        metric = r.get("metric")
        failed = [f"{impl}: {c['message']}" for impl, c in r["checks"].items() if not c["ok"]]
        rows.append([
            r["name"], f"{r['kernels']} ({compiled})", _ms(r["irtensor_first_ms"]),
            _ms(r["irtensor_ms"]), _ms(r["irtensor_realize_ms"]), _ms(r["numpy_ms"]),
            _ms(r.get("torch_ms")),
            f"{r['ratio_numpy']:.2f}" if r.get("ratio_numpy") else "-",
            f"{metric[1]:.3g} {metric[0]}" if metric else "-",
            f"{r['irtensor_cpu_util']:.2f}",
            ("-" if r.get("foreign_load") is None else f"{r['foreign_load']:.2f}")
            + (f" ({r['attempts']} tries)" if r.get("attempts", 1) > 1 else ""),
            "ok" if not failed else "FAIL " + "; ".join(failed),
        ])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |"
             for row in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    by_name = {r["name"]: r for r in run["cases"] if "error" not in r}
    if "batchnorm" in by_name and "groupnorm" in by_name:
        bn, gn = by_name["batchnorm"], by_name["groupnorm"]
        parts = [f"{impl} {bn[f'{impl}_ms'] / gn[f'{impl}_ms']:.2f}"
                 for impl in ("irtensor", "numpy", "torch")
                 if bn.get(f"{impl}_ms") and gn.get(f"{impl}_ms")]
        lines.append(f"batchnorm / groupnorm time: {', '.join(parts)}")
    lines.append(f"process: import irtensor {run['import_ms']:.0f} ms, first tiny program "
                 f"(llvmlite start-up) {run['startup_ms']:.0f} ms; load average at the end "
                 f"{', '.join(f'{x:.2f}' for x in run['loadavg'])}")
    return "\n".join(lines)


def parent(args: argparse.Namespace) -> int:
    counts = [1, args.threads] if args.threads_sweep and args.threads != 1 else [args.threads]
    runs = []
    for threads in counts:
        with tempfile.TemporaryDirectory(prefix="irtensor-bench-") as tmp:
            out = Path(tmp) / "run.json"
            env = dict(os.environ)
            for var in ("IRTENSOR_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                        "MKL_NUM_THREADS"):
                env[var] = str(threads)
            # OpenBLAS's idle threads spin for about 2^28 cycles after each call, taking a core
            # from whatever runs next (irtensor's second thread at 2 threads): let them sleep.
            env.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
            env["IRTENSOR_CACHE_DIR"] = str(Path(tmp) / "kernel-cache")
            env["IRTENSOR_DEVICE"] = "llvm"
            command = [sys.executable, __file__, "--child", "--threads", str(threads),
                       "--json", str(out)]
            if args.quick:
                command.append("--quick")
            if args.cases:
                command += ["--cases", ",".join(args.cases)]
            if args.reps:
                command += ["--reps", str(args.reps)]
            if args.quiet_wait:
                command += ["--quiet-wait", str(args.quiet_wait)]
            done = subprocess.run(command, env=env, check=False)
            if done.returncode != 0 or not out.exists():
                sys.stderr.write(f"the {threads}-thread run failed (exit {done.returncode})\n")
                return 2
            runs.append(json.loads(out.read_text()))
            shutil.rmtree(Path(tmp) / "kernel-cache", ignore_errors=True)
    for run in runs:
        print(f"\n{run['threads']} thread(s), {'quick' if run['quick'] else 'full'} sizes; "
              f"numpy {run['numpy']}, torch {run['torch'] or 'not installed'}; "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores")
        print(table(run))
    if args.json:
        meta = {"argv": sys.argv[1:], "cpu_count": os.cpu_count(), "commit": _commit(),
                "when": time.strftime("%Y-%m-%d %H:%M:%S")}
        Path(args.json).write_text(json.dumps({"meta": meta, "runs": runs}, indent=1))
    failed = [r["name"] for run in runs for r in run["cases"] if not r["ok"]]
    if failed:
        print(f"\nFAILED: {', '.join(failed)}")
        return 1
    return 0


def _commit() -> str | None:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=Path(__file__).parent, check=False)
    except OSError:
        return None
    return done.stdout.strip() or None


def main(argv: Sequence[str] | None = None) -> int:
    names = [c.name for c in cases(quick=False)]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes, few repetitions")
    p.add_argument("--cases", type=lambda s: [x for x in s.split(",") if x],
                   help=f"comma-separated subset of: {', '.join(names)}")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="IRTENSOR_THREADS (and BLAS/torch threads); default all cores")
    p.add_argument("--threads-sweep", action="store_true",
                   help="also run everything with 1 thread")
    p.add_argument("--reps", type=int, help="repetitions per case (overrides the defaults)")
    p.add_argument("--quiet-wait", type=float, default=0.0, metavar="SECONDS",
                   help="before each case, wait up to this long for other processes to use "
                        f"under {BUSY} cores; if they used more during the repetitions, "
                        "repeat them (twice at most) and keep the quieter set")
    p.add_argument("--json", help="write the results to this file")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.threads = max(1, args.threads)
    if args.cases:
        unknown = [c for c in args.cases if c not in names]
        if unknown:
            p.error(f"unknown case(s) {', '.join(unknown)}; the cases are {', '.join(names)}")
    if args.child:
        return child(args)
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())
