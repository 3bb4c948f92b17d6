"""The buffer pool never hands out an array someone holds, and reuses the rest."""

from __future__ import annotations

import gc
import weakref

import numpy as np

from irtensor import Tensor
from irtensor.runtime import buffers
from irtensor.runtime.buffers import BufferPool


def test_a_held_array_is_not_reused_and_a_dropped_one_is() -> None:
    pool = BufferPool()
    a, address = pool.take((256, 1024), np.float32)
    b, other = pool.take((256, 1024), np.float32)
    assert address != other and a.ctypes.data == address
    del a
    c, again = pool.take((1024, 256), np.float32)  # same size, another shape
    assert again == address and c.shape == (1024, 256)
    assert pool.hits == 1 and pool.misses == 2
    del b, c


def test_a_view_keeps_its_array_reserved() -> None:
    pool = BufferPool()
    a = pool.empty((64, 64), np.float64)
    view = a[3:5, ::2]
    address = a.ctypes.data
    del a
    b = pool.empty((64, 64), np.float64)
    assert b.ctypes.data != address
    del view, b
    assert pool.empty((4096,), np.float64).ctypes.data == address


def test_the_limit_bounds_what_is_kept() -> None:
    pool = BufferPool(limit=3 << 20)
    held = [pool.empty((1 << 20,), np.uint8) for _ in range(5)]  # 5 MiB, 3 kept
    assert pool.pooled_bytes == 3 << 20
    del held
    pool.empty((2 << 20,), np.uint8)  # dropping free arrays makes room
    assert pool.pooled_bytes <= 3 << 20
    assert BufferPool(limit=0).empty((8,), np.int32).base is None  # no pool at all


def test_pointers_are_those_of_the_arrays() -> None:
    x = np.arange(10, dtype=np.int64)
    assert buffers.pointer(x) == x.ctypes.data == buffers.pointer(x)
    y = x[2:]
    assert buffers.pointer(y) == x.ctypes.data + 16


def test_results_given_to_the_user_stay_theirs() -> None:
    a = Tensor(np.arange(1 << 18, dtype=np.float32), device="llvm")
    first = (a * 2).numpy()
    second = (a * 3).numpy()
    first[:] = -1  # the caller's own copy: writing it changes nothing else
    np.testing.assert_array_equal(second, np.arange(1 << 18, dtype=np.float32) * 3)
    np.testing.assert_array_equal((a * 2).numpy(), np.arange(1 << 18, dtype=np.float32) * 2)
    assert first[0] == -1


def test_repeated_programs_reuse_their_buffers() -> None:
    a = Tensor(np.ones((512, 512), np.float32), device="llvm")

    def step() -> np.ndarray:
        return ((a * 2 + 1).exp().sum(1) + (a - 1).max(0)).numpy()

    want = step()
    for _ in range(2):  # the pool settles
        step()
        gc.collect()
    before = buffers.POOL.misses
    for _ in range(3):
        np.testing.assert_allclose(step(), want)
        gc.collect()
    assert buffers.POOL.misses == before  # every buffer came from the pool


def test_a_dropped_tensor_frees_its_buffer_at_once() -> None:
    from irtensor.frontend import realize

    a = Tensor(np.ones(1 << 16, np.float32), device="llvm")
    gc.disable()  # freed by reference counting alone, not by the collector
    try:
        held = []
        for _ in range(5):
            array = realize.buffer_of((a * 2).realize()._value)
            held.append(weakref.ref(array))
            del array
        assert all(ref() is None for ref in held)
    finally:
        gc.enable()


def test_a_lazy_value_outlives_the_tensor_that_realized_it() -> None:
    a = Tensor(np.arange(8, dtype=np.float32), device="llvm")
    b = a * 2
    c = b + 1  # recorded on b's lazy value
    b.realize()
    del b  # its buffer goes; c recomputes it
    gc.collect()
    np.testing.assert_array_equal(c.numpy(), np.arange(8, dtype=np.float32) * 2 + 1)
