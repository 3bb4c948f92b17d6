"""Running one case on every implementation: first call, warm-up, checks, and the
interleaved timed repetitions."""

from __future__ import annotations

import gc
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from irtensor.bench.cases import Case
from irtensor.bench.frameworks import Framework

# An implementation's call: the result as numpy, and when its realize finished.
Call = Callable[[], tuple[np.ndarray, float]]
BUSY = 0.25  # cores kept busy by other processes above which a measurement is suspect
BUDGET = 20.0  # seconds of timed repetitions one implementation may take in one case
RANK = {"irtensor-llvm": 0, "irtensor-opencl": 1, "torch": 2, "tinygrad": 3, "numpy": 4}


@dataclass
class Timing:
    """Seconds of one implementation's repetitions, and process CPU seconds alongside."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    realize: list[float] = field(default_factory=list)  # up to the end of the realize

    def median_ms(self) -> float:
        return statistics.median(self.wall) * 1e3

    def cpu_util(self) -> float:
        return statistics.median(c / max(w, 1e-12) for c, w in zip(self.cpu, self.wall,
                                                                    strict=True))


def check(got: Any, ref: np.ndarray, scale: np.ndarray, tol: float) -> dict[str, Any]:
    """{ok, worst_error (in units of `scale`), message} against the float64 reference."""
    got = np.asarray(got)
    if got.shape != ref.shape:
        return {"ok": False, "worst_error": None,
                "message": f"shape {got.shape}, expected {ref.shape}"}
    if got.dtype != np.float32:
        return {"ok": False, "worst_error": None, "message": f"dtype {got.dtype}, not float32"}
    err = np.abs(got.astype(np.float64) - ref)
    bad = ~(err <= tol * scale)  # NaN counts as bad
    worst = float(np.max(err / np.maximum(scale, 1e-300))) if err.size else 0.0
    if bad.any():
        return {"ok": False, "worst_error": worst,
                "message": f"{int(bad.sum())} of {bad.size} values off (worst {worst:.3g})"}
    return {"ok": True, "worst_error": worst, "message": ""}


# --------------------------------------------------------------------------- machine load


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
    """How many cores other processes kept busy over a stretch of time (0.0: quiet)."""

    def __init__(self) -> None:
        self.start = (time.perf_counter(), busy_seconds(), own_seconds())

    def cores(self) -> float | None:
        wall0, busy0, own0 = self.start
        busy1 = busy_seconds()
        if busy0 is None or busy1 is None:
            return None
        wall = max(time.perf_counter() - wall0, 1e-9)
        return max(0.0, (busy1 - busy0 - (own_seconds() - own0)) / wall)


def wait_for_quiet(limit: float) -> float | None:
    """Wait (up to `limit` seconds) until other processes use under BUSY cores for 1 s."""
    deadline = time.perf_counter() + limit
    while True:
        load = ForeignLoad()
        time.sleep(1.0)
        cores = load.cores()
        if cores is None or cores < BUSY or time.perf_counter() > deadline:
            return cores


# --------------------------------------------------------------------------- one case


def tensor_call(case: Case, fw: Framework, arrays: Sequence[np.ndarray]) -> Call:
    """The case on a tensor library: build the graph from realized inputs, realize, read."""
    inputs = [fw.tensor(a) for a in arrays]

    def call() -> tuple[np.ndarray, float]:
        out = fw.realize(case.fn(fw, inputs))
        realized = time.perf_counter()
        return np.asarray(fw.numpy(out)), realized

    return call


def numpy_call(case: Case, arrays: Sequence[np.ndarray]) -> Call:
    def call() -> tuple[np.ndarray, float]:
        out = np.asarray(case.numpy(arrays))
        return out, time.perf_counter()

    return call


def first_and_warm_up(call: Call, fw: Framework | None,
                      judge: Callable[[np.ndarray], dict[str, Any]],
                      budget: float = BUDGET) -> dict[str, Any]:
    """The first call (timed; for irtensor the pipeline and compiles, counted), two
    warm-up calls (one when the first call took over `budget` seconds), the kernels the
    last one launches (`warm_call`: its wall, CPU and realize seconds), and both results
    checked."""
    entry: dict[str, Any] = {}
    gc.collect()
    stats0 = fw.runtime_stats() if fw and fw.runtime_stats else None
    start = time.perf_counter()
    got, _ = call()
    entry["first_ms"] = (time.perf_counter() - start) * 1e3
    if fw and fw.runtime_stats and stats0 is not None:
        stats1 = fw.runtime_stats()
        entry["first_call_stats"] = {k: stats1[k] - stats0[k] for k in stats1}
        entry["kernels_compiled"] = int(entry["first_call_stats"]["kernels_compiled"])
    entry["checks"] = {"first": judge(got)}
    del got
    if entry["first_ms"] < budget * 1e3:
        call()
    before = fw.kernels_run() if fw and fw.kernels_run else None
    c0, start = time.process_time(), time.perf_counter()
    got, realized = call()
    entry["warm_s"] = time.perf_counter() - start
    entry["warm_call"] = [entry["warm_s"], time.process_time() - c0, realized - start]
    if fw and fw.kernels_run and before is not None:
        entry["kernels"] = fw.kernels_run() - before
    entry["checks"]["warm"] = judge(got)
    entry["ok"] = all(c["ok"] for c in entry["checks"].values())
    return entry


def measure(calls: dict[str, Call], reps: dict[str, int], large: bool) -> dict[str, Timing]:
    """Repetitions in which every implementation runs once, in a rotating order, until
    each has run its `reps`."""
    timings = {name: Timing() for name in calls}
    names = list(calls)
    for rep in range(max(reps.values(), default=0)):
        for name in names[rep % len(names):] + names[:rep % len(names)]:
            if rep >= reps[name]:
                continue
            if large:
                gc.collect()  # outside the timing; irtensor's graphs hold cycles
            c0, t0 = time.process_time(), time.perf_counter()
            _, realized = calls[name]()
            t1 = time.perf_counter()
            timings[name].wall.append(t1 - t0)
            timings[name].cpu.append(time.process_time() - c0)
            timings[name].realize.append(realized - t0)
    return timings


def measure_quietly(calls: dict[str, Call], reps: dict[str, int], large: bool,
                    quiet_wait: float) -> tuple[dict[str, Timing], float | None, int]:
    """measure(); with `quiet_wait`, repeat (twice at most) when other processes were busy
    and keep the quieter set. Returns the timings, the foreign load, the attempts."""
    load = ForeignLoad()
    timings, foreign = measure(calls, reps, large), load.cores()
    attempts = 1
    while quiet_wait > 0 and foreign is not None and foreign > BUSY and attempts < 3:
        wait_for_quiet(quiet_wait)
        load = ForeignLoad()
        again, foreign_again = measure(calls, reps, large), load.cores()
        attempts += 1
        if foreign_again is not None and foreign_again < foreign:
            timings, foreign = again, foreign_again
    return timings, foreign, attempts


def reference(case: Case, arrays: Sequence[np.ndarray]) -> Callable[[Any], dict[str, Any]]:
    """A judge of results: `check` against the case's numpy math in float64."""
    wide = [a.astype(np.float64) for a in arrays]
    ref = np.asarray(case.numpy(wide), np.float64)
    scale = np.asarray(case.scale(wide, ref), np.float64)
    return lambda got: check(got, ref, scale, case.tol)


def timed_repetitions(case: Case, calls: dict[str, Call], impls: dict[str, dict[str, Any]],
                      budget: float, quiet_wait: float) -> tuple[float | None, int]:
    """Time the implementations side by side and add their figures to `impls`. One whose
    warm call was slow gets fewer repetitions (`budget` / warm call, one at least); one
    whose first call took over `budget` keeps its one warm call as its one repetition.
    Returns the foreign load and the attempts."""
    reps = {name: max(1, min(case.reps, int(budget / max(impls[name]["warm_s"], 1e-9))))
            for name in calls}
    slow = [name for name in calls if impls[name]["first_ms"] > budget * 1e3]
    for name in slow:
        reps[name] = 0
    large = case.bytes_moved + case.flops > 1 << 20
    timings, foreign, attempts = measure_quietly(calls, reps, large, quiet_wait)
    for name in slow:
        wall, cpu, realize = impls[name]["warm_call"]
        timings[name] = Timing([wall], [cpu], [realize])
    for name, timing in timings.items():
        impls[name].update(summary(case, timing))
    numpy_ms = impls.get("numpy", {}).get("ms")
    for entry in impls.values():
        if numpy_ms and entry.get("ms"):
            entry["ratio_numpy"] = numpy_ms / entry["ms"]
    return foreign, attempts


def run_case(case: Case, frameworks: Sequence[Framework], unavailable: dict[str, str],
             quiet_wait: float = 0.0, budget: float = BUDGET) -> dict[str, Any]:
    """Every implementation of `case`, side by side (numpy's first call last); the
    JSON-ready result."""
    arrays = case.make(np.random.default_rng(0))
    judge = reference(case, arrays)
    impls: dict[str, dict[str, Any]] = {name: {"unavailable": why}
                                        for name, why in unavailable.items()}
    calls: dict[str, Call] = {}
    if quiet_wait > 0:
        wait_for_quiet(quiet_wait)
    for fw in [*frameworks, None]:
        name = fw.name if fw else "numpy"
        try:
            call = tensor_call(case, fw, arrays) if fw else numpy_call(case, arrays)
            impls[name] = first_and_warm_up(call, fw, judge, budget)
            calls[name] = call
        except Exception as e:  # reported; the other implementations still run
            impls[name] = {"ok": False, "error": f"{type(e).__name__}: {e}"[:500]}
    foreign, attempts = timed_repetitions(case, calls, impls, budget, quiet_wait)
    impls = dict(sorted(impls.items(), key=lambda item: RANK.get(item[0], 2)))
    return {"name": case.name, "title": case.title, "reps": case.reps,
            "bytes_moved": case.bytes_moved, "flops": case.flops, "impls": impls,
            "foreign_load": foreign, "attempts": attempts,
            "ok": all(e.get("ok", False) for name, e in impls.items()
                      if counts(name) and "unavailable" not in e)}


def first_calls(case: Case, frameworks: Sequence[Framework]) -> dict[str, Any]:
    """Only the first call of `case` on each framework: timed, counted and checked (the
    run in a second process, with the first process's disk caches)."""
    arrays = case.make(np.random.default_rng(0))
    judge = reference(case, arrays)
    impls: dict[str, Any] = {}
    for fw in frameworks:
        try:
            call = tensor_call(case, fw, arrays)
            gc.collect()
            stats0 = fw.runtime_stats() if fw.runtime_stats else {}
            start = time.perf_counter()
            got, _ = call()
            entry: dict[str, Any] = {"first_ms": (time.perf_counter() - start) * 1e3}
            if fw.runtime_stats:
                stats1 = fw.runtime_stats()
                entry["first_call_stats"] = {k: stats1[k] - stats0[k] for k in stats1}
            entry.update(judge(got))
        except Exception as e:
            entry = {"ok": False, "error": f"{type(e).__name__}: {e}"[:500]}
        impls[fw.name] = entry
    return {"name": case.name, "impls": impls,
            "ok": all(e["ok"] for name, e in impls.items() if counts(name))}


def counts(impl: str) -> bool:
    """Whether `impl`'s failure fails the run: irtensor's and numpy's do, the peers' are
    only reported."""
    return impl.startswith("irtensor") or impl == "numpy"


def summary(case: Case, timing: Timing) -> dict[str, Any]:
    ms = timing.median_ms()
    out: dict[str, Any] = {"ms": ms, "reps": len(timing.wall), "min_ms": min(timing.wall) * 1e3,
                           "all_ms": [t * 1e3 for t in timing.wall],
                           "realize_ms": statistics.median(timing.realize) * 1e3,
                           "cpu_util": timing.cpu_util()}
    if case.flops:
        out["metric"] = ["GFLOP/s", case.flops / (ms * 1e-3) / 1e9]
    elif case.bytes_moved:
        out["metric"] = ["GB/s", case.bytes_moved / (ms * 1e-3) / 1e9]
    return out
