"""Device `llvm`: each kernel lowered to loops, to the llvm dialect, JIT-compiled, cached.

A kernel is compiled alone, as a module holding just that kernel (its printed
form is the cache key, with the target), so the same kernel in another program
or another process is not compiled again. Compiled kernels are kept in memory up
to `IRTENSOR_KERNEL_CACHE_MB` (an estimate: the object code, its IR texts and what
an execution engine costs) and on disk as object code with the kernel's name and
signature, checked against the kernel asked for before the code is loaded
(`runtime.cache`). A program's new kernels compile on every core
(`compile_kernels`). The executor runs a program's kernels in order on numpy
buffers, splits the outermost loop across threads when the schedule marks it
parallel, and drops intermediates after their last reader.
"""

from __future__ import annotations

import itertools
import os
import statistics
import threading
import time
import weakref
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass

from irtensor import dtypes, host, ir, settings
from irtensor.dialects._base import element_of, shape_of
from irtensor.dialects.kernel import KernelOp, ScheduleAttr
from irtensor.passes.kernel.kernel_facts import is_contraction
from irtensor.runtime import STATS, buffers, cache, llvm_objects, search
from irtensor.runtime.kept import KeptResults
from irtensor.runtime.kernel_report import report
from irtensor.runtime.lru import LRU, env_limit

# A kernel is split across threads only when each thread gets this much: handing a piece
# to the pool and waiting for it costs 0.1-0.2 ms (on a 2-vCPU Zen 3, `a * b + a` over 1M
# f32 took 0.25 ms on one thread and 0.31-0.34 on two; over 4M, 1.9 against 1.2-1.5). A
# contraction's point is one FMA of a register block, about 16 times cheaper: the MLP's
# 64 x 256 x 256 layer took 0.16 ms on one thread and 0.27-0.29 on two.
MIN_POINTS_PER_THREAD = 1 << 20
MIN_PRODUCTS_PER_THREAD = 1 << 24
KERNEL_CACHE_MB = 128
# What a kernel loaded from its object code holds beyond the object and its IR texts (the
# MCJIT engine's target machine and sections, the Python objects): measured as RSS per
# kernel kept, about 60 KiB.
ENGINE_BYTES = 64 << 10


@dataclass
class CompiledKernel:
    name: str
    function: Any  # backend.llvm_jit.KernelFunction
    outer_size: int
    splittable: bool
    jit: Any
    unit: str  # the kernel's compile unit, as text (DEBUG=3/4)

    @property
    def nbytes(self) -> int:
        """An estimate of the memory the kernel holds."""
        jit = self.jit
        return (ENGINE_BYTES + len(jit.object_code() or b"") + len(jit.llvm_ir)
                + len(jit.optimized_ir) + len(self.unit))


def kernel_cache_bytes() -> int:
    """IRTENSOR_KERNEL_CACHE_MB, in bytes: what each device's compiled kernels may hold."""
    return env_limit("IRTENSOR_KERNEL_CACHE_MB", KERNEL_CACHE_MB, 1 << 20)


# Compiled kernels by cache key. A kernel a live program still holds stays alive when it
# is pushed out; its machine code goes with the last reference (JitModule's engine).
_MEMORY: LRU[str, CompiledKernel] = LRU(kernel_cache_bytes, lambda k: k.nbytes)
_LOCK = threading.Lock()


def threads() -> int:
    """IRTENSOR_THREADS, default all cores."""
    value = os.environ.get("IRTENSOR_THREADS", "")
    return max(1, int(value)) if value.isdigit() else max(1, os.cpu_count() or 1)


def debug_level() -> int:
    """DEBUG, or the innermost `irtensor.Context(debug=...)`."""
    return settings.debug_level()


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
    enough = MIN_PRODUCTS_PER_THREAD if is_contraction(kernel) else MIN_POINTS_PER_THREAD
    return sizes[outer], parallel and sizes[outer] > 1 and points >= 2 * enough


# A realized program is cached with its kernel ops, so each op remembers its compiled
# kernel: a replayed program prints and hashes nothing.
_BY_OP: weakref.WeakKeyDictionary[KernelOp, CompiledKernel] = weakref.WeakKeyDictionary()


def compile_kernel(kernel: KernelOp) -> CompiledKernel:
    return compile_kernels([kernel])[0]


def forget(module: ModuleOp) -> None:
    """Drop what this device remembers by the ops of `module` (the program cache let it
    go): its plans and its kernels' compiled code, unless another holder keeps them."""
    _PLANS.pop(module, None)
    for op in module.walk():
        if isinstance(op, KernelOp):
            _BY_OP.pop(op, None)


def compile_kernels(kernels: Sequence[KernelOp]) -> list[CompiledKernel]:
    """`compile_kernel` of each. The new ones compile on every core: shared with the compile
    workers when there are enough (`runtime.compile_pool`), and here as a pipeline, LLVM
    compiling one kernel in a thread while this one lowers the next (the lowering is
    Python; LLVM's calls release the GIL). A kernel that occurs twice compiles once."""
    found: list[CompiledKernel | str] = []  # compiled, or the key of a kernel to compile
    todo: dict[str, _Todo] = {}
    for op in kernels:
        if (known := _BY_OP.get(op)) is not None:
            STATS.cache_hits_memory += 1
            found.append(known)
            continue
        probe = _probe(op, todo)
        if isinstance(probe, _Todo):
            todo.setdefault(probe.key, probe)
            probe = probe.key
        found.append(probe)
    made = _compile_all(list(todo.values()))
    compiled = [made[slot] if isinstance(slot, str) else slot for slot in found]
    for op, kernel in zip(kernels, compiled, strict=True):
        _BY_OP[op] = kernel
    return compiled


@dataclass
class _Todo:
    """A kernel no cache holds: its compile unit, as text (the cache key's source)."""

    kernel: KernelOp
    unit: ModuleOp
    text: str
    key: str
    lowering: settings.PipelineLike


@dataclass
class _Pending:
    """A kernel lowered to LLVM IR here whose machine code is being made."""

    todo: _Todo
    name: str
    jit: Future[Any]
    lowering_seconds: float


@dataclass
class _Remote:
    """A kernel a compile worker took."""

    todo: _Todo
    answer: Future[tuple[dict[str, Any], bytes]]


_COMPILERS: list[ThreadPoolExecutor] = []
# A forked child has no thread behind the parent's executor: it would wait forever.
os.register_at_fork(after_in_child=_COMPILERS.clear)


def _compiler() -> ThreadPoolExecutor:
    with _LOCK:
        if not _COMPILERS:
            _COMPILERS.append(ThreadPoolExecutor(1, thread_name_prefix="irtensor-llvm"))
    return _COMPILERS[0]


def _probe(kernel: KernelOp, todo: dict[str, _Todo]) -> CompiledKernel | _Todo:
    """The kernel from the memory or disk cache, else what compiling it takes."""
    from irtensor.passes.llvm import jit as llvm_jit

    unit = compile_unit(kernel)
    text = ir.to_text(unit)
    lowering = settings.device_pipeline_for("llvm")
    key = cache.key_of(text, llvm_jit.target_description(), host.lowering_key(),
                       repr(settings.pipeline_key(lowering)))
    if (same := todo.get(key)) is not None:
        return same
    if (known := _MEMORY.get(key)) is not None:
        STATS.cache_hits_memory += 1
        return known
    jit, name = llvm_objects.from_disk(key, kernel)
    if jit is not None:
        return _compiled(kernel, jit, name, text, key)
    return _Todo(kernel, unit, text, key, lowering)


def _compile_all(todo: list[_Todo]) -> dict[str, CompiledKernel]:
    from irtensor.runtime import compile_pool

    pending: list[_Pending | _Remote] = []
    workers = compile_pool.pool() if len(todo) >= compile_pool.MIN_KERNELS \
        and _shareable(todo) else None
    todo = sorted(todo, key=lambda t: -compile_pool.compile_cost(t.kernel))
    if workers is None:
        pending = [_start(t, _compiler()) for t in todo]
    else:
        batch = workers.share([compile_pool.request(t.text, str(t.lowering)) for t in todo])
        while (index := batch.take()) is not None:
            pending.append(_start(todo[index], _compiler()))
            # LLVM compiles in one thread here: with more than one kernel queued for it, the
            # workers take the next (ResNet-50 waited 1.8 s for that queue at the end).
            if len(pending) >= 2:
                wait([pending[-2].jit])  # type: ignore[union-attr]
        pending += [_Remote(todo[i], batch.answers[i]) for i in sorted(batch.remote)]
    return {p.todo.key: _finish(p) for p in pending}


# An hl program of this many ops is likely to have compile_pool.MIN_KERNELS kernels or more
# to compile (ResNet-50's: 234 ops, 102 kernels; an MLP's training step: two programs of 97
# and 155 ops, 41 kernels).
WARM_WORKERS_OPS = 32


def warm_workers_for(program: ModuleOp) -> None:
    """Start the compile workers while a large program's pipeline runs, so they have
    imported irtensor by the time its kernels are shared out (a second or so, on a core
    the pipeline leaves idle). Not for what would compile here anyway (`_shareable`)."""
    from irtensor.runtime import compile_pool

    if settings.device_pipeline_for("llvm") != CHECKED_BY_LLVM or debug_level() != 0 \
            or settings.active_trace() is not None:
        return
    if sum(1 for _ in program.walk()) >= WARM_WORKERS_OPS and \
            (workers := compile_pool.pool()) is not None:
        workers.warm()


def _shareable(todo: list[_Todo]) -> bool:
    """Whether a worker would lower these kernels as this process does: the registered
    device pipeline (a user's passes exist only here), no trace or debug output."""
    return all(t.lowering == "device-llvm" for t in todo) and debug_level() == 0 \
        and settings.active_trace() is None


def _start(todo: _Todo, executor: ThreadPoolExecutor | None) -> _Pending:
    """Lower the kernel here and hand it to LLVM (`executor`; None: compiled at once)."""
    from irtensor.passes.llvm import jit as llvm_jit

    start = time.perf_counter()
    name = lower_unit(todo.unit, todo.lowering)
    try:
        future = llvm_jit.compile_module_later(todo.unit, executor)
    except Exception:
        _name_the_pass(todo)
        raise
    return _Pending(todo, name, future, time.perf_counter() - start)


def _name_the_pass(todo: _Todo) -> None:
    """After LLVM (or the export to LLVM IR) rejected what the unverified `device-llvm` made
    of a unit: lower the unit again from its text, verifying after each pass, so that the
    error names the pass that broke the IR. Returns when every pass's output verifies
    (the caller's error stands)."""
    from irtensor.pipeline import Pipeline

    if todo.lowering == CHECKED_BY_LLVM:
        Pipeline([todo.lowering]).run(ir.parse(todo.text))


def _finish(made: _Pending | _Remote) -> CompiledKernel:
    from irtensor.runtime import compile_pool

    todo = made.todo
    if isinstance(made, _Remote):
        answer, code = compile_pool.answer_of(made.answer)
        try:
            if answer.get("status") != "ok":
                raise ValueError(str(answer.get("message")))
            jit, name = llvm_objects.loaded(answer["meta"], code, todo.kernel)
        except (cache.Discarded, ValueError, KeyError, TypeError):
            return _finish(_start(todo, None))  # compiled here: an error is raised in context
        STATS.kernels_compiled += 1
        STATS.seconds_compiling += float(answer.get("seconds", 0.0))
        cache.store(todo.key, llvm_objects.OBJECT_KIND, answer["meta"], code)
        return _compiled(todo.kernel, jit, name, todo.text, todo.key)
    try:
        jit = made.jit.result()
    except Exception:
        _name_the_pass(todo)
        raise
    STATS.kernels_compiled += 1
    STATS.seconds_compiling += made.lowering_seconds + jit.timings["optimize"] \
        + jit.timings["codegen"]
    llvm_objects.store(todo.key, todo.kernel, jit, made.name)
    return _compiled(todo.kernel, _lean(jit), made.name, todo.text, todo.key)


def _compiled(kernel: KernelOp, jit: Any, name: str, unit: str, key: str) -> CompiledKernel:
    outer_size, splittable = outer_loop(kernel)
    compiled = CompiledKernel(kernel.sym_name.data, jit.function(name), outer_size, splittable,
                              jit, unit)
    _MEMORY.put(key, compiled)
    return compiled


def _lean(jit: Any) -> Any:
    """The compiled object loaded alone into a new engine, as a disk hit does: the engine
    that compiled it holds the LLVM module and more, about 0.8 MB of RSS a kernel against
    some 60 KiB (loading costs about a millisecond)."""
    from irtensor.passes.llvm import jit as llvm_jit

    if (code := jit.object_code()) is None:
        return jit
    lean = llvm_jit.load_object(code, jit.signatures, llvm_ir_text=jit.llvm_ir,
                                optimized_ir=jit.optimized_ir)
    lean.opt_level, lean.vector_width, lean.timings = jit.opt_level, jit.vector_width, \
        jit.timings
    lean.codegen_level = jit.codegen_level
    return lean


# The registered lowering, whose output is not verified by xDSL: LLVM verifies the module
# when it parses it, and xDSL's verification of the llvm dialect cost a sixth of lowering
# a kernel. A module LLVM rejects is lowered again with verification (`_name_the_pass`).
CHECKED_BY_LLVM = "device-llvm"


def lower_unit(unit: ModuleOp, lowering: settings.PipelineLike) -> str:
    """Lower a kernel's unit with the device pipeline (`device-llvm` unless one was chosen);
    the name of the kernel's function, the one `lower-kernels-to-loops` marked. Another
    pipeline (a user's passes) is verified once at its end, or after each pass at DEBUG=1."""
    from irtensor.pipeline import Instrumentation, Pipeline, run_verified_at_end

    steps = [lowering] if isinstance(lowering, str | ModulePass) else list(lowering)
    if lowering == CHECKED_BY_LLVM and debug_level() < 1:
        Pipeline(steps, Instrumentation(verify_each=False)).run(unit)
    else:
        run_verified_at_end(steps, unit, verify_each=debug_level() >= 1)
    names = [f.sym_name.data for f in unit.walk() if isinstance(f, func.FuncOp | llvm.FuncOp)
             and "irtensor.kernel" in f.attributes]
    if len(names) != 1:
        raise ValueError(f"device llvm: the device pipeline left {len(names)} functions marked "
                         "irtensor.kernel in a kernel's module; expected one (does it run "
                         "lower-kernels-to-loops?)")
    return names[0]


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


def call_raw(kernel: CompiledKernel, inputs: Sequence[int], out: int) -> None:
    """`call` with raw pointers: no argument checks (a plan checked them once)."""
    n = kernel.outer_size
    fn = kernel.function.raw
    workers = min(threads(), n) if kernel.splittable else 1
    if workers <= 1:
        fn(*inputs, out, 0, n)
        return
    bounds = [round(i * n / workers) for i in range(workers + 1)]
    chunks = [(lo, hi) for lo, hi in itertools.pairwise(bounds) if hi > lo]
    pool = _pool(workers)
    jobs = [pool.submit(fn, *inputs, out, lo, hi) for lo, hi in chunks[1:]]
    fn(*inputs, out, *chunks[0])
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


def run(module: ModuleOp, inputs: Sequence[np.ndarray], fn: str = "main",
        constant: frozenset[int] = frozenset()) -> list[np.ndarray]:
    """Execute `@fn` of a kernel-level module on numpy arrays (`constant`: the inputs the
    caller never changes, whose steps' results are kept, `runtime.kept`)."""
    plans = _PLANS.setdefault(module, {})
    plan = plans.get(fn)
    if plan is None:
        plan = plans[fn] = Plan.of(module, fn)
    return plan.run([np.asarray(x, order="C") for x in inputs], constant)


@dataclass
class Step:
    """One kernel call of a plan: what it reads and writes, as slots of the plan's buffers."""

    kernel: CompiledKernel
    args: tuple[int, ...]
    out: int
    shape: tuple[int, ...]
    dtype: np.dtype
    free: tuple[int, ...]  # slots no later step reads and no result is: dropped after it
    op: weakref.ref[KernelOp]
    tuned: bool = False  # IRTENSOR_SEARCH looked at it (on its first run, with real inputs)


@dataclass
class Plan:
    """A kernel-level `@main` made ready to replay: kernels compiled, buffers numbered.

    Slots 0..n-1 are the inputs, then one per kernel result. Running it is a loop of
    native calls with raw pointers; outputs and intermediates come from the buffer pool.
    """

    inputs: tuple[tuple[tuple[int, ...], np.dtype], ...]  # shape and dtype of each
    steps: list[Step]
    results: tuple[int, ...]
    kept: KeptResults = field(default_factory=KeptResults)

    @staticmethod
    def of(module: ModuleOp, fn: str = "main") -> Plan:
        main = next((op for op in module.walk()
                     if isinstance(op, func.FuncOp) and op.sym_name.data == fn), None)
        if main is None:
            raise ValueError(f"no function @{fn} in the module")
        block = main.body.block
        slot: dict[SSAValue, int] = {arg: i for i, arg in enumerate(block.args)}
        kernels: list[KernelOp] = []
        results: tuple[int, ...] | None = None
        for op in block.ops:
            if isinstance(op, func.ReturnOp):
                results = tuple(slot[v] for v in op.operands)
                break
            if not isinstance(op, KernelOp):
                raise TypeError(f"device llvm cannot run {op.name}; expected kernel.kernel ops")
            slot[op.res] = len(slot)
            kernels.append(op)
        if results is None:
            raise ValueError(f"@{fn} has no func.return")
        last_use = {slot[v]: i for i, op in enumerate(kernels) for v in op.inputs}
        steps = []
        for i, (op, code) in enumerate(zip(kernels, compile_kernels(kernels), strict=True)):
            t = op.res.type
            assert isinstance(t, TensorType)
            free = tuple(sorted({slot[v] for v in op.inputs
                                 if last_use[slot[v]] == i and slot[v] >= len(block.args)
                                 and slot[v] not in results}))
            steps.append(Step(code, tuple(slot[v] for v in op.inputs),
                              slot[op.res], tuple(t.get_shape()),
                              np.dtype(dtypes.to_numpy(t.element_type)), free, weakref.ref(op)))
        inputs = tuple((tuple(shape_of(a)), np.dtype(dtypes.to_numpy(element_of(a))))
                       for a in block.args)
        return Plan(inputs, steps, results)

    def run(self, inputs: Sequence[np.ndarray], constant: frozenset[int] = frozenset()
            ) -> list[np.ndarray]:
        if len(inputs) != len(self.inputs):
            raise ValueError(f"the program takes {len(self.inputs)} inputs, got {len(inputs)}")
        for i, (a, (shape, dtype)) in enumerate(zip(inputs, self.inputs, strict=True)):
            if a.shape != shape or a.dtype != dtype:
                raise ValueError(f"input #{i}: expected {shape} {dtype}, got {a.shape} {a.dtype}")
        arrays: list[np.ndarray | None] = [*inputs, *([None] * len(self.steps))]
        pointers: list[int] = [buffers.pointer(a) for a in inputs] + [0] * len(self.steps)
        level = debug_level()
        fixed = self.kept.begin(inputs, constant) if constant else set()
        for step in self.steps:
            keep = bool(fixed) and step.out not in self.results and fixed.issuperset(step.args)
            if keep and (kept := self.kept.arrays.get(step.out)) is not None:
                arrays[step.out], pointers[step.out] = kept
                fixed.add(step.out)
                continue
            out, pointers[step.out] = buffers.POOL.take(step.shape, step.dtype)
            arrays[step.out] = out
            if not step.tuned:
                _tune(step, [arrays[i] for i in step.args], out)  # type: ignore[misc]
            start = time.perf_counter()
            call_raw(step.kernel, [pointers[i] for i in step.args], pointers[step.out])
            STATS.kernels_run += 1
            if level >= 2 and (op := step.op()) is not None:
                args = [arrays[i] for i in step.args]
                report(op, step.kernel, args, out, time.perf_counter() - start, level)  # type: ignore[arg-type]
            if keep:
                self.kept.arrays[step.out] = (out, pointers[step.out])
                fixed.add(step.out)
            for i in step.free:  # intermediates go back to the pool at once
                arrays[i] = None
        return [arrays[i] for i in self.results]  # type: ignore[misc]


def _tune(step: Step, args: Sequence[np.ndarray], out: np.ndarray) -> None:
    """With IRTENSOR_SEARCH=N, time N schedules of the step's kernel on these arrays and
    keep the fastest (runtime.search)."""
    step.tuned = True
    op = step.op()
    if op is None or not (width := search.search_width()):
        return
    chosen = search_schedule(op, args, out, width)
    if chosen is not None and chosen != op.schedule:
        op.properties["schedule"] = chosen
        _BY_OP.pop(op, None)
        step.kernel = compile_kernel(op)


def measure_schedule(kernel: KernelOp, args: Sequence[np.ndarray], out: np.ndarray) -> float:
    """Median seconds of a few runs of `kernel` on `args` (after one warm-up run)."""
    compiled = compile_kernel(kernel)
    call(compiled, args, out)
    times = []
    for _ in range(search.REPEATS):
        start = time.perf_counter()
        call(compiled, args, out)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def search_key(kernel: KernelOp) -> str:
    """What a schedule search of `kernel` is remembered by: its unscheduled loops, this CPU and
    the thread count."""
    from irtensor.passes.llvm import jit as llvm_jit

    unscheduled = kernel.clone()
    unscheduled.properties.pop("schedule", None)
    return cache.key_of("schedule-search", ir.to_text(compile_unit(unscheduled)),
                        llvm_jit.target_description(), host.lowering_key(), str(threads()))


def search_schedule(kernel: KernelOp, args: Sequence[np.ndarray], out: np.ndarray, width: int
                    ) -> ScheduleAttr | None:
    """The fastest of `width` candidate schedules of `kernel` on this CPU (runtime.search)."""
    return search.best_schedule(kernel, args, out, width, measure_schedule, search_key(kernel))


# Plans by (module, function name); a module replayed from the program cache is planned once.
_PLANS: weakref.WeakKeyDictionary[ModuleOp, dict[str, Plan]] = weakref.WeakKeyDictionary()
