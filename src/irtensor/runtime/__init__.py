"""The runtime: compiled-kernel cache, buffers, the executor, and counters.

`irtensor.runtime.stats()` returns what the runtime has done in this process:
kernels run and compiled, cache hits in memory and on disk, pipeline runs,
programs replayed from the program cache, and seconds spent compiling.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Stats:
    kernels_run: int = 0
    kernels_compiled: int = 0
    cache_hits_memory: int = 0
    cache_hits_disk: int = 0
    pipeline_runs: int = 0
    programs_cached: int = 0
    seconds_compiling: float = 0.0


STATS = Stats()


def stats() -> dict[str, int | float]:
    """A copy of the counters (see `Stats`)."""
    return asdict(STATS)


def reset_stats() -> None:
    for name, value in asdict(Stats()).items():
        setattr(STATS, name, value)


__all__ = ["STATS", "Stats", "reset_stats", "stats"]
