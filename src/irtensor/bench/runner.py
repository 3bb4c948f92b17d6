"""`irtensor bench`: the command line, the parent that starts one fresh child process per
thread count, and the child that runs the cases."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from irtensor import host
from irtensor.bench import cases as case_list
from irtensor.bench import frameworks, report
from irtensor.bench.measure import BUDGET, BUSY, first_calls, run_case

DEVICES = ("llvm", "opencl")
THREAD_VARS = ("IRTENSOR_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
               "MKL_NUM_THREADS", "POCL_MAX_PTHREAD_COUNT", "POCL_CPU_MAX_CU_COUNT")


# --------------------------------------------------------------------------- child


def load_frameworks(args: argparse.Namespace) -> tuple[list[frameworks.Framework],
                                                        dict[str, str], dict[str, str]]:
    """The implementations to run, the irtensor devices that cannot run here (with the
    reason), and every implementation's version line."""
    chosen: list[frameworks.Framework] = []
    unavailable: dict[str, str] = {}
    info: dict[str, str] = {"numpy": np.__version__}
    for device in args.devices:
        name = f"irtensor-{device}"
        start = time.perf_counter()
        why = frameworks.unavailable(device)
        if why is not None:
            unavailable[name] = why
            info[name] = f"unavailable ({why[:80]})"
            continue
        fw = frameworks.irtensor(device)
        chosen.append(fw)
        info[name] = fw.version + _device_name(device, time.perf_counter() - start)
    if args.peers:
        for fw in (frameworks.torch(args.threads), frameworks.tinygrad()):
            if fw is not None:
                chosen.append(fw)
                info[fw.name] = f"{fw.version} on {fw.device}"
    info.setdefault("torch", "not installed")
    info.setdefault("tinygrad", "not installed")
    return chosen, unavailable, info


def _device_name(device: str, startup_s: float) -> str:
    if device != "opencl":
        return ""
    from irtensor.runtime import opencl_device

    return (f" on {opencl_device.device().device.name} (context and probe build "
            f"{startup_s * 1e3:.0f} ms)")


def child(args: argparse.Namespace) -> int:
    """Run the cases in this process (the parent set the thread variables); write JSON."""
    t0 = time.perf_counter()
    import irtensor  # noqa: F401  (timed: the import is reported apart)
    from irtensor import Tensor
    from irtensor.runtime import cache, llvm_device

    import_ms = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    (Tensor([1.0, 2.0], device="llvm") * 3).numpy()  # llvmlite start-up, not any case's
    startup_ms = (time.perf_counter() - t0) * 1e3
    chosen, unavailable, info = load_frameworks(args)
    results = []
    for case in case_list.cases(args.quick):
        if args.cases and case.name not in args.cases:
            continue
        if args.reps:
            case.reps = args.reps
        sys.stderr.write(f"[{args.threads}T{' warm cache' if args.first_calls_only else ''}] "
                         f"{case.name} ...\n")
        start = time.perf_counter()
        try:
            if args.first_calls_only:
                result = first_calls(case, [f for f in chosen if f.runtime_stats])
            else:
                result = run_case(case, chosen, unavailable, args.quiet_wait, args.budget)
        except Exception as e:  # a broken case is reported, the others still run
            result = {"name": case.name, "title": case.title, "ok": False, "impls": {},
                      "error": f"{type(e).__name__}: {e}"}
        result["case_seconds"] = time.perf_counter() - start
        results.append(result)
    data = {"threads": args.threads, "irtensor_threads": llvm_device.threads(),
            "quick": args.quick, "import_ms": import_ms, "startup_ms": startup_ms,
            "frameworks": info, "cache_version": cache.VERSION, "loadavg": os.getloadavg(),
            "cases": results}
    Path(args.json).write_text(json.dumps(data, indent=1))
    return 0


# --------------------------------------------------------------------------- parent


def child_env(threads: int, tmp: Path) -> dict[str, str]:
    """The environment of a child: thread counts set before anything is imported, and
    empty kernel caches (irtensor's, PoCL's, tinygrad's)."""
    env = dict(os.environ)
    for var in THREAD_VARS:
        env[var] = str(threads)
    # OpenBLAS's idle threads spin for about 2^28 cycles after each call, taking a core
    # from whatever runs next: let them sleep.
    env.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    env["IRTENSOR_CACHE_DIR"] = str(tmp / "irtensor-cache")
    env["POCL_CACHE_DIR"] = str(tmp / "pocl-cache")
    env["CACHEDB"] = str(tmp / "tinygrad-cache.db")
    return env


def child_command(args: argparse.Namespace, threads: int, out: Path) -> list[str]:
    command = [sys.executable, "-m", "irtensor.bench", "--child", "--threads", str(threads),
               "--json", str(out), "--devices", ",".join(args.devices)]
    if args.quick:
        command.append("--quick")
    if args.cases:
        command += ["--cases", ",".join(args.cases)]
    if args.reps:
        command += ["--reps", str(args.reps)]
    if args.quiet_wait:
        command += ["--quiet-wait", str(args.quiet_wait)]
    command += ["--budget", str(args.budget)]
    if not args.peers:
        command.append("--no-peers")
    return command


def parent(args: argparse.Namespace) -> int:
    counts = [1, args.threads] if args.threads_sweep and args.threads != 1 else [args.threads]
    runs: list[dict[str, Any]] = []
    for threads in counts:
        with tempfile.TemporaryDirectory(prefix="irtensor-bench-") as name:
            tmp = Path(name)
            out = tmp / "run.json"
            done = subprocess.run(child_command(args, threads, out),
                                  env=child_env(threads, tmp), check=False)
            if done.returncode != 0 or not out.exists():
                sys.stderr.write(f"the {threads}-thread run failed (exit {done.returncode})\n")
                return 2
            run = json.loads(out.read_text())
            if args.warm_cache:
                second = warm_cache_run(args, threads, tmp)
                if second is None:
                    return 2
                run["warm_cache"] = second
            runs.append(run)
            shutil.rmtree(tmp / "irtensor-cache", ignore_errors=True)
    for run in runs:
        print(f"\n{report.heading(run)}; {host.cpu_description()}")
        print(report.table(run))
    if args.json:
        meta = {"argv": sys.argv[1:], "cpu_count": os.cpu_count(), "commit": _commit(),
                "cpu": host.cpu_description(),
                "when": time.strftime("%Y-%m-%d %H:%M:%S")}
        Path(args.json).write_text(json.dumps({"meta": meta, "runs": runs}, indent=1))
    failed = [r["name"] for run in runs
              for r in run["cases"] + run.get("warm_cache", {}).get("cases", []) if not r["ok"]]
    if failed:
        print(f"\nFAILED: {', '.join(failed)}")
        return 1
    return 0


def warm_cache_run(args: argparse.Namespace, threads: int, tmp: Path) -> dict[str, Any] | None:
    """A second child with the first one's disk caches: only irtensor's first calls."""
    out = tmp / "warm-cache.json"
    command = [*child_command(args, threads, out), "--first-calls-only"]
    done = subprocess.run(command, env=child_env(threads, tmp), check=False)
    if done.returncode != 0 or not out.exists():
        sys.stderr.write(f"the {threads}-thread warm-cache run failed (exit {done.returncode})\n")
        return None
    return json.loads(out.read_text())


def _commit() -> str | None:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=Path(__file__).parent, check=False)
    except OSError:
        return None
    return done.stdout.strip() or None


# --------------------------------------------------------------------------- command line


def _list(text: str) -> list[str]:
    return [x for x in text.split(",") if x]


def parser(prog: str = "irtensor bench") -> argparse.ArgumentParser:
    names = case_list.names()
    p = argparse.ArgumentParser(
        prog=prog, description="irtensor (devices llvm and opencl) side by side with numpy, "
        "and torch and tinygrad when they import, on a fixed set of cases.")
    p.add_argument("--quick", action="store_true",
                   help="small sizes, 3 repetitions, no matmul_big (a smoke run)")
    p.add_argument("--cases", type=_list, help=f"comma-separated subset of: {', '.join(names)}")
    p.add_argument("--devices", type=_list, default=list(DEVICES),
                   help="irtensor devices to run, comma-separated (default: llvm,opencl)")
    p.add_argument("--no-peers", dest="peers", action="store_false",
                   help="leave out torch and tinygrad even when they import")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="IRTENSOR_THREADS (and BLAS, torch and PoCL threads); default all cores")
    p.add_argument("--threads-sweep", action="store_true",
                   help="run everything with 1 thread, then with --threads")
    p.add_argument("--reps", type=int, help="repetitions per case (overrides the defaults)")
    p.add_argument("--budget", type=float, default=BUDGET, metavar="SECONDS",
                   help="timed seconds one implementation may take in one case: a slower "
                        f"one runs fewer repetitions, one at least (default {BUDGET:g})")
    p.add_argument("--quiet-wait", type=float, default=0.0, metavar="SECONDS",
                   help="before each case, wait up to this long for other processes to use "
                        f"under {BUSY} cores; if they used more during the repetitions, "
                        "repeat them (twice at most) and keep the quieter set")
    p.add_argument("--warm-cache", action="store_true",
                   help="then start a second process with the first one's disk caches and "
                        "time irtensor's first calls again (they should compile nothing)")
    p.add_argument("--json", help="write the results to this file")
    p.add_argument("--first-calls-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    return p


def main(argv: Sequence[str] | None = None, prog: str = "irtensor bench") -> int:
    p = parser(prog)
    args = p.parse_args(argv)
    args.threads = max(1, args.threads)
    unknown = [c for c in args.cases or [] if c not in case_list.names()]
    if unknown:
        p.error(f"unknown case(s) {', '.join(unknown)}; the cases are "
                f"{', '.join(case_list.names())}")
    bad = [d for d in args.devices if d not in DEVICES]
    if bad:
        p.error(f"unknown device(s) {', '.join(bad)}; the devices are {', '.join(DEVICES)}")
    if args.child:
        if not args.json:
            p.error("--child needs --json")
        return child(args)
    return parent(args)
