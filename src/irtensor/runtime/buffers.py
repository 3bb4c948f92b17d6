"""A caching allocator for large buffers, and raw pointers computed once per buffer.

A fresh 64 MiB numpy array is an `mmap`: its 16k pages fault in (and are zeroed
by the kernel) on first touch, about 7 ms, as long as a memory-bound kernel
over it. The pool keeps large arrays for reuse instead. It never hands out an
array that someone still holds: a pooled array is free only when the pool's
own reference is the only one left (`sys.getrefcount`), so an output given to
the user, a view of it, or a realized tensor's buffer stays untouched until it
is dropped. Every array the pool gives out is a view of a flat pooled array,
so views the user makes keep that flat array referenced too.

Small arrays are pooled too, for their pointers: a pooled array's address is
computed once (`pointer`), where `ndarray.ctypes.data` costs about a microsecond
per call. At most MAX_PER_SIZE arrays of one size are tracked, so that holding
many results never makes allocation slow.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import weakref
from collections.abc import Sequence

import numpy as np

MAX_PER_SIZE = 32  # arrays of one dtype and size the pool tracks at most
LIMIT_BYTES = int(os.environ.get("IRTENSOR_POOL_BYTES", str(4 << 30)))  # 0: no pool


def _base_refcount() -> int:
    """The count `sys.getrefcount` reports for an object only a list holds."""
    held = [object()]
    return sys.getrefcount(held[0])


_FREE_COUNT = _base_refcount()


class BufferPool:
    """Flat arrays by (dtype, element count); see the module docstring."""

    def __init__(self, limit: int = LIMIT_BYTES):
        self.limit = limit
        self._arrays: dict[tuple[str, int], list[np.ndarray]] = {}
        self._pointers: dict[tuple[str, int], list[int]] = {}  # their addresses, in step
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def pooled_bytes(self) -> int:
        return self._bytes

    def empty(self, shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
        """An uninitialised C-contiguous array: a free pooled one where there is one."""
        return self.take(shape, dtype)[0]

    def take(self, shape: Sequence[int], dtype: np.dtype) -> tuple[np.ndarray, int]:
        """`empty(shape, dtype)` and the address of its first element."""
        dtype = np.dtype(dtype)
        count = math.prod(shape)
        if self.limit <= 0:
            array = np.empty(shape, dtype)
            return array, array.ctypes.data
        key = (dtype.str, count)
        with self._lock:
            arrays = self._arrays.setdefault(key, [])
            for i in range(len(arrays)):
                if sys.getrefcount(arrays[i]) == _FREE_COUNT:
                    self.hits += 1
                    return arrays[i].reshape(shape), self._pointers[key][i]
            self.misses += 1
            flat = np.empty(count, dtype)
            address = flat.ctypes.data
            if len(arrays) < MAX_PER_SIZE and self._make_room(flat.nbytes):
                arrays.append(flat)
                self._pointers.setdefault(key, []).append(address)
                self._bytes += flat.nbytes
        return flat.reshape(shape), address

    def _make_room(self, nbytes: int) -> bool:
        """Drop free arrays until `nbytes` more fit under the limit; False if they do not."""
        if self._bytes + nbytes <= self.limit:
            return True
        for key, arrays in self._arrays.items():
            for i in reversed(range(len(arrays))):
                if sys.getrefcount(arrays[i]) == _FREE_COUNT:
                    self._bytes -= arrays[i].nbytes
                    del arrays[i]
                    del self._pointers[key][i]
                    if self._bytes + nbytes <= self.limit:
                        return True
        return False

    def clear(self) -> None:
        """Forget every pooled array (those in use stay valid: their holders own them)."""
        with self._lock:
            self._arrays.clear()
            self._pointers.clear()
            self._bytes = 0


POOL = BufferPool()


def empty(shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
    return POOL.empty(shape, dtype)


# Raw data pointers by array id; `ndarray.ctypes.data` costs about a microsecond.
_POINTERS: dict[int, tuple[weakref.ref[np.ndarray], int]] = {}


def pointer(array: np.ndarray) -> int:
    """The address of `array`'s first element, computed once per array (for a view the
    pool gave out, once per pooled array: its views start where it starts)."""
    key = id(array)
    entry = _POINTERS.get(key)
    if entry is not None and entry[0]() is array:
        return entry[1]
    address = array.ctypes.data
    _POINTERS[key] = (weakref.ref(array, lambda _, k=key: _forget(k)), address)
    return address


def _forget(key: int) -> None:
    entry = _POINTERS.get(key)
    if entry is not None and entry[0]() is None:
        del _POINTERS[key]


__all__ = ["POOL", "BufferPool", "empty", "pointer"]
