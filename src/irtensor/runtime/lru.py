"""Bounded in-memory caches: least recently used out, by bytes or by count.

The program cache (`realize`) and each device's compiled kernels are LRUs, so a loop that
builds a new program at each step (`x += i; x.realize()` with a new `i`) holds a bounded
amount of memory instead of growing by the program; what is remembered by op
(`cache.remembered`, the llvm plans) is dropped with the program that holds the ops. Each
LRU reads its limit from an environment variable at every insertion:

    IRTENSOR_PROGRAM_CACHE     realized programs kept for replay            (128)
    IRTENSOR_KERNEL_CACHE_MB   compiled kernels per device, estimated bytes (128 MB)

(the disk cache's own limit, IRTENSOR_DISK_CACHE_MB, is in `runtime.cache`). An evicted
value is only dropped by the cache: whoever still holds it (a program being run holds its
kernels) keeps it alive until done.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def env_limit(name: str, default: int, scale: int = 1) -> int:
    """The non-negative integer in environment variable `name` times `scale`; `default`
    times `scale` when it is unset or not a number."""
    value = os.environ.get(name, "").strip()
    return (int(value) if value.isdigit() else default) * scale


class LRU(Generic[K, V]):
    """A dict that forgets its least recently used entries once their sizes add up to more
    than `limit()` (size: `size_of(value)`, 1 each by default). The newest entry is kept
    even when it alone is over the limit, so a lookup right after `put` finds it; a limit
    of 0 keeps nothing. `on_evict(key, value)` runs for each entry pushed out by a newer
    one."""

    def __init__(self, limit: Callable[[], int], size_of: Callable[[V], int] = lambda _: 1,
                 on_evict: Callable[[K, V], None] | None = None):
        self.limit, self.size_of, self.on_evict = limit, size_of, on_evict
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: K) -> bool:
        return key in self._entries

    @property
    def total(self) -> int:
        """The sizes of the entries held, added up."""
        return self._total

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            self._entries.move_to_end(key)
            return found[0]

    def put(self, key: K, value: V) -> None:
        limit = self.limit()
        size = self.size_of(value)
        with self._lock:
            if (old := self._entries.pop(key, None)) is not None:
                self._total -= old[1]
            if limit <= 0:
                return
            self._entries[key] = (value, size)
            self._total += size
            evicted = self._shrink(limit)
        self._evicted(evicted)

    def _shrink(self, limit: int) -> list[tuple[K, V]]:
        evicted = []
        while self._total > limit and len(self._entries) > 1:
            key, (value, size) = self._entries.popitem(last=False)
            self._total -= size
            evicted.append((key, value))
        return evicted

    def _evicted(self, evicted: list[tuple[K, V]]) -> None:
        # Outside the lock: a callback may drop the last reference to something whose
        # finaliser (an execution engine's) takes a while, or touch another cache.
        self.evictions += len(evicted)
        if self.on_evict is not None:
            for key, value in evicted:
                self.on_evict(key, value)

    def pop(self, key: K) -> V | None:
        with self._lock:
            found = self._entries.pop(key, None)
            if found is None:
                return None
            self._total -= found[1]
            return found[0]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._total = 0

    def values(self) -> list[V]:
        with self._lock:
            return [value for value, _ in self._entries.values()]


__all__ = ["LRU", "env_limit"]
