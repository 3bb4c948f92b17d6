"""Device `llvm`: each kernel lowered to loops, to the llvm dialect, JIT-compiled, cached.

A kernel is compiled alone, as a module holding just that kernel (its printed
form is the cache key, with the target), so the same kernel in another program
or another process is not compiled again. The executor runs a program's
kernels in order on numpy buffers, splits the outermost loop across threads
when the schedule marks it parallel, and drops intermediates after their last
reader.
"""

from __future__ import annotations

import itertools
import os
import pickle
import sys
import threading
import time
import weakref
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Region, SSAValue

from irtensor import dtypes, ir
from irtensor.dialects.kernel import KernelOp
from irtensor.runtime import STATS, cache

MIN_POINTS_PER_THREAD = 1 << 15


@dataclass
class CompiledKernel:
    name: str
    function: Any  # backend.llvm_jit.KernelFunction
    outer_size: int
    splittable: bool
    jit: Any
    unit: str  # the kernel's compile unit, as text (DEBUG=3/4)


_MEMORY: dict[str, CompiledKernel] = {}
_LOCK = threading.Lock()


def threads() -> int:
    """IRTENSOR_THREADS, default all cores."""
    value = os.environ.get("IRTENSOR_THREADS", "")
    return max(1, int(value)) if value.isdigit() else max(1, os.cpu_count() or 1)


def debug_level() -> int:
    value = os.environ.get("DEBUG", "0")
    return int(value) if value.isdigit() else 0


def compile_unit(kernel: KernelOp) -> ModuleOp:
    """A module holding only `kernel`, in `@main(inputs) -> output`, with plain names."""
    arg_types = [v.type for v in kernel.inputs]
    block = Block(arg_types=arg_types)
    clone = kernel.clone(value_mapper=dict(zip(kernel.inputs, block.args, strict=True)))
    clone.res.name_hint = None
    block.add_op(clone)
    block.add_op(func.ReturnOp(clone.res))
    main = func.FuncOp("main", (arg_types, [clone.res.type]), Region(block))
    return ModuleOp([main])


def outer_loop(kernel: KernelOp) -> tuple[int, bool]:
    """The size of the outermost loop and whether threads may split it."""
    sizes = kernel.sizes
    if not sizes:
        return 1, False
    schedule = kernel.schedule
    outer = schedule.order_dims[0] if schedule is not None else 0
    parallel = schedule is not None and outer in schedule.parallel_dims
    points = int(np.prod(sizes))
    return sizes[outer], parallel and sizes[outer] > 1 and points >= 2 * MIN_POINTS_PER_THREAD


# A realized program is cached with its kernel ops, so each op remembers its compiled
# kernel: a replayed program prints and hashes nothing.
_BY_OP: weakref.WeakKeyDictionary[KernelOp, CompiledKernel] = weakref.WeakKeyDictionary()


def compile_kernel(kernel: KernelOp) -> CompiledKernel:
    if (known := _BY_OP.get(kernel)) is not None:
        STATS.cache_hits_memory += 1
        return known
    compiled = _compile_kernel(kernel)
    _BY_OP[kernel] = compiled
    return compiled


def _compile_kernel(kernel: KernelOp) -> CompiledKernel:
    from irtensor.backend import llvm_jit

    unit = compile_unit(kernel)
    text = ir.to_text(unit)
    key = cache.key_of(text, llvm_jit.target_description())
    with _LOCK:
        if key in _MEMORY:
            STATS.cache_hits_memory += 1
            return _MEMORY[key]
    outer_size, splittable = outer_loop(kernel)
    jit, name = _from_disk(key)
    if jit is None:
        jit, name = _compile(unit)
        if (code := jit.object_code()) is not None:
            cache.store(key, pickle.dumps({"object": code, "name": name,
                                           "signatures": jit.signatures,
                                           "llvm_ir": jit.llvm_ir,
                                           "optimized_ir": jit.optimized_ir}))
    compiled = CompiledKernel(kernel.sym_name.data, jit.function(name), outer_size, splittable,
                              jit, text)
    with _LOCK:
        _MEMORY[key] = compiled
    return compiled


def _from_disk(key: str) -> tuple[Any, str]:
    from irtensor.backend import llvm_jit

    payload = cache.load(key)
    if payload is None:
        return None, ""
    try:
        entry = pickle.loads(payload)
        jit = llvm_jit.load_object(entry["object"], entry["signatures"],
                                   llvm_ir_text=entry["llvm_ir"],
                                   optimized_ir=entry["optimized_ir"])
        jit.function(entry["name"])
    except Exception:  # a damaged entry is ignored and rebuilt
        return None, ""
    STATS.cache_hits_disk += 1
    return jit, entry["name"]


def _compile(unit: ModuleOp) -> tuple[Any, str]:
    from irtensor.backend import llvm_jit
    from irtensor.pipeline import Pipeline

    start = time.perf_counter()
    Pipeline("lower-kernels-to-loops").run(unit)
    names = [f.sym_name.data for f in unit.walk() if isinstance(f, func.FuncOp)
             and "irtensor.kernel" in f.attributes]
    jit = llvm_jit.compile_module(unit)
    STATS.kernels_compiled += 1
    STATS.seconds_compiling += time.perf_counter() - start
    return jit, names[0]


def call(kernel: CompiledKernel, arrays: Sequence[np.ndarray], out: np.ndarray) -> None:
    """Run the kernel, its outermost loop split across threads where allowed."""
    n = kernel.outer_size
    workers = min(threads(), n) if kernel.splittable else 1
    if workers <= 1:
        kernel.function(*arrays, out, 0, n)
        return
    bounds = [round(i * n / workers) for i in range(workers + 1)]
    chunks = [(lo, hi) for lo, hi in itertools.pairwise(bounds) if hi > lo]
    pool = _pool(workers)  # ctypes drops the GIL for each call, so the chunks run at once
    jobs = [pool.submit(kernel.function, *arrays, out, lo, hi) for lo, hi in chunks[1:]]
    kernel.function(*arrays, out, *chunks[0])  # this thread takes the first chunk
    for job in jobs:
        job.result()


_POOLS: dict[int, ThreadPoolExecutor] = {}


def _pool(workers: int) -> ThreadPoolExecutor:
    """A pool kept for the process: starting threads per kernel call costs milliseconds."""
    with _LOCK:
        if workers not in _POOLS:
            _POOLS[workers] = ThreadPoolExecutor(workers - 1 or 1,
                                                 thread_name_prefix="irtensor")
        return _POOLS[workers]


def run(module: ModuleOp, inputs: Sequence[np.ndarray], fn: str = "main") -> list[np.ndarray]:
    """Execute `@fn` of a kernel-level module on numpy arrays."""
    main = next((op for op in module.walk()
                 if isinstance(op, func.FuncOp) and op.sym_name.data == fn), None)
    if main is None:
        raise ValueError(f"no function @{fn} in the module")
    ops = list(main.body.block.ops)
    last_use = {}
    for index, op in enumerate(ops):
        for v in op.operands:
            last_use[v] = index
    env: dict[SSAValue, np.ndarray] = {
        arg: np.asarray(x, order="C") for arg, x in zip(main.body.block.args, inputs, strict=True)
    }
    level = debug_level()
    for index, op in enumerate(ops):
        if isinstance(op, func.ReturnOp):
            return [env[v] for v in op.operands]
        if not isinstance(op, KernelOp):
            raise TypeError(f"device llvm cannot run {op.name}; expected kernel.kernel ops")
        compiled = compile_kernel(op)
        t = op.res.type
        assert isinstance(t, TensorType)
        out = np.empty(tuple(t.get_shape()), dtypes.to_numpy(t.element_type))
        args = [env[v] for v in op.inputs]
        start = time.perf_counter()
        call(compiled, args, out)
        STATS.kernels_run += 1
        if level >= 2:
            _report(op, compiled, args, out, time.perf_counter() - start, level)
        env[op.res] = out
        for v in op.operands:  # free what no later op reads
            if last_use.get(v) == index and v not in main.body.block.args:
                env.pop(v, None)
    raise ValueError("@main has no func.return")


def _report(op: KernelOp, kernel: CompiledKernel, args: Sequence[np.ndarray], out: np.ndarray,
            seconds: float, level: int) -> None:
    points = int(np.prod(op.sizes)) if op.sizes else 1
    body_ops = sum(1 for _ in op.body.walk()) - 1 + (1 if op.reduction_dims else 0)
    moved = sum(a.nbytes for a in args) + out.nbytes
    seconds = max(seconds, 1e-9)
    sys.stderr.write(
        f"*** llvm {kernel.name:<24} {list(op.sizes)!s:<24} {seconds * 1e3:9.3f} ms "
        f"{points * body_ops / seconds / 1e9:8.2f} GFLOP/s {moved / seconds / 1e9:8.2f} GB/s\n"
    )
    if level >= 3 and op.schedule is not None:
        sys.stderr.write(f"    schedule {op.schedule}\n")
    if level >= 4:
        sys.stderr.write(kernel.jit.llvm_ir + "\n")
    if level >= 5:
        sys.stderr.write(kernel.jit.assembly() + "\n")
