"""The printed table of one run (one thread count)."""

from __future__ import annotations

import statistics
from typing import Any

HEAD = ["case", "implementation", "kernels (new)", "first call ms", "warm ms", "numpy/impl",
        "rate", "cpu", "other load", "check"]


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}" if value >= 0.01 else f"{value:.2g}"


def _kernels(entry: dict[str, Any]) -> str:
    if "kernels" not in entry:
        return "-"
    new = entry.get("kernels_compiled")
    return f"{entry['kernels']}" + (f" ({new})" if new is not None else "")


def _check(entry: dict[str, Any]) -> str:
    if "unavailable" in entry:
        return f"unavailable: {entry['unavailable']}"[:100]
    if "error" in entry:
        return f"ERROR {entry['error']}"[:100]
    failed = [f"{when}: {c['message']}" for when, c in entry["checks"].items() if not c["ok"]]
    return "ok" if not failed else "FAIL " + "; ".join(failed)


def impl_row(name: str, entry: dict[str, Any], reps: int) -> list[str]:
    if "ms" not in entry:
        return ["", name, *["-"] * (len(HEAD) - 3), _check(entry)]
    metric = entry.get("metric")
    ratio = entry.get("ratio_numpy")
    count = entry["reps"]
    plural = "s" if count > 1 else ""
    warm = _ms(entry["ms"]) + (f" ({count} rep{plural})" if count < reps else "")
    return ["", name, _kernels(entry), _ms(entry.get("first_ms")), warm,
            f"{ratio:.2f}" if ratio else "-",
            f"{metric[1]:.3g} {metric[0]}" if metric else "-",
            f"{entry['cpu_util']:.2f}", "", _check(entry)]


def case_rows(case: dict[str, Any]) -> list[list[str]]:
    rows = []
    for name, entry in case["impls"].items():
        rows.append(impl_row(name, entry, case.get("reps", 0)))
    if not rows:
        return [[case["name"], *["-"] * (len(HEAD) - 1)]]
    rows[0][0] = case["name"]
    load = case.get("foreign_load")
    rows[0][8] = ("-" if load is None else f"{load:.2f}") + (
        f" ({case['attempts']} tries)" if case.get("attempts", 1) > 1 else "")
    return rows


def markdown(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
             + " |" for row in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return lines


def norm_ratio(run: dict[str, Any]) -> str | None:
    """batchnorm-like time over groupnorm-like time, per implementation."""
    by_name = {c["name"]: c["impls"] for c in run["cases"]}
    if "batchnorm" not in by_name or "groupnorm" not in by_name:
        return None
    bn, gn = by_name["batchnorm"], by_name["groupnorm"]
    parts = [f"{name} {bn[name]['ms'] / gn[name]['ms']:.2f}" for name in bn
             if bn[name].get("ms") and gn.get(name, {}).get("ms")]
    return f"batchnorm / groupnorm time: {', '.join(parts)}" if parts else None


def compile_summary(run: dict[str, Any]) -> str | None:
    """Per irtensor device, the median over the cases of the compile seconds per kernel
    compiled in the first call."""
    per_device: dict[str, list[float]] = {}
    for case in run["cases"]:
        for name, entry in case["impls"].items():
            stats = entry.get("first_call_stats")
            if stats and stats.get("kernels_compiled"):
                per_kernel = stats["seconds_compiling"] / stats["kernels_compiled"] * 1e3
                per_device.setdefault(name, []).append(per_kernel)
    if not per_device:
        return None
    parts = [f"{name} {statistics.median(values):.0f} ms (over {len(values)} cases)"
             for name, values in per_device.items()]
    return f"compile time per new kernel, median: {', '.join(parts)}"


def warm_cache_summary(run: dict[str, Any]) -> str | None:
    """The second process's first calls, with the first one's disk caches."""
    second = run.get("warm_cache")
    if not second:
        return None
    first_ms: dict[str, list[float]] = {}
    compiled: dict[str, int] = {}
    for case in second["cases"]:
        for name, entry in case.get("impls", {}).items():
            if "first_ms" in entry:
                first_ms.setdefault(name, []).append(entry["first_ms"])
                stats = entry.get("first_call_stats", {})
                compiled[name] = compiled.get(name, 0) + int(stats.get("kernels_compiled", 0))
    parts = [f"{name} compiled {compiled[name]} kernels, first calls median "
             f"{statistics.median(values):.1f} ms" for name, values in first_ms.items()]
    failed = [c["name"] for c in second["cases"] if not c.get("ok")]
    return ("second process, warm disk cache: " + "; ".join(parts)
            + (f"; FAILED: {', '.join(failed)}" if failed else ""))


def table(run: dict[str, Any]) -> str:
    rows = [HEAD]
    for case in run["cases"]:
        rows += case_rows(case)
    lines = markdown(rows)
    for line in (norm_ratio(run), compile_summary(run), warm_cache_summary(run)):
        if line:
            lines.append(line)
    lines.append(f"process: import irtensor {run['import_ms']:.0f} ms, first tiny program "
                 f"(llvmlite start-up) {run['startup_ms']:.0f} ms; load average at the end "
                 f"{', '.join(f'{x:.2f}' for x in run['loadavg'])}")
    return "\n".join(lines)


def heading(run: dict[str, Any]) -> str:
    versions = ", ".join(f"{name} {info}" for name, info in run["frameworks"].items())
    return (f"{run['threads']} thread(s), {'quick' if run['quick'] else 'full'} sizes; "
            f"{versions}")
