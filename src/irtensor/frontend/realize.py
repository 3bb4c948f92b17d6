"""From lazy tensors to a program, and from a program to numbers.

A lazy tensor holds a node of the recording graph (`irtensor.frontend.graph`).
Realizing collects the nodes that the wanted values depend on, looks the program up
by its structure (no xDSL object is built for a program seen before), and only for a
new program builds `@main`, whose arguments are the buffers already known, runs the
device's pipeline and executes the result. Realized nodes are remembered, so later
programs take them as inputs instead of recomputing them.

A program that comes back with only its scalar constants changed (`x += i`, a
learning-rate schedule) is compiled once more with those constants as 0-d arguments,
and replays from then on; constants that never changed stay folded.
"""

from __future__ import annotations

import sys
import time
import weakref
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irtensor import host, ir, settings
from irtensor.dialects import ll
from irtensor.dialects.kernel import KernelOp
from irtensor.frontend import graph as g
from irtensor.frontend.graph import Graph, Node
from irtensor.pipeline import Pipeline, run_verified_at_end
from irtensor.runtime import limits
from irtensor.runtime.lru import LRU, env_limit
from irtensor.settings import PipelineLike

DEVICES = ("interp", "llvm", "opencl")
# Each inspection stage, in ladder order: `kernel` is what realizing runs (the chosen
# pipeline), the later ones what device llvm does with its kernels; `opencl` the C of
# device opencl.
STAGES = ("hl", "ll", "kernel", "loops", "llvm", "llvm-ir", "llvm-ir-opt", "asm", "opencl")


PROGRAM_CACHE = 128


def _forget(key: tuple[Hashable, ...], module: ModuleOp) -> None:
    """A program pushed out of the cache: its device lets go of its plans and kernels now,
    not when the cycle collector reaches the module."""
    device = key[0]
    if device == "llvm":
        from irtensor.runtime import llvm_device

        llvm_device.forget(module)
    elif device == "opencl":
        from irtensor.runtime import opencl_device

        opencl_device.forget(module)


def _program_limit() -> int:
    return env_limit("IRTENSOR_PROGRAM_CACHE", PROGRAM_CACHE)


# Realized programs by device, structure and constants: a loop that builds the
# same graph again runs no pipeline and compiles nothing. The IRTENSOR_PROGRAM_CACHE
# most recently used are kept.
_PROGRAMS: LRU[tuple[Hashable, ...], ModuleOp] = LRU(_program_limit, on_evict=_forget)
# For each program structure seen: the constants it first had, and once they have
# changed, which of them have (those become arguments).
_FIRST_CONSTS: LRU[Hashable, tuple[Any, ...]] = LRU(lambda: 4 * _program_limit())
_VARYING: LRU[Hashable, tuple[int, ...]] = LRU(lambda: 4 * _program_limit())


def default_device() -> str:
    """The innermost `irtensor.Context(device=...)`, else IRTENSOR_DEVICE, else llvm."""
    return check_device(settings.default_device())


def check_device(device: str) -> str:
    if device not in DEVICES:
        raise ValueError(f"unknown device {device!r}; irtensor has {', '.join(DEVICES)}")
    return device


def buffer_value(array: np.ndarray) -> Node:
    """A placeholder node standing for a realized buffer."""
    return g.buffer(array)


def buffer_of(node: Node) -> np.ndarray | None:
    return resolve(node).buffer


def resolve(node: Node) -> Node:
    """The placeholder of `node`'s buffer while there is one; else `node` itself."""
    found = node.realized
    if found is None:
        return node
    placeholder = found()
    return placeholder if placeholder is not None else node


def remember(node: Node, placeholder: Node) -> None:
    """`node` has been computed: its value is `placeholder`'s buffer, while that lives."""
    node.realized = weakref.ref(placeholder)


def collect(outputs: Sequence[Node]) -> Graph:
    """The nodes computing `outputs`, operands first, and the buffers they read."""
    return g.collect(outputs, resolve)


def graph_key(graph: Graph) -> Hashable:
    """The program's structure and constants as one hashable value."""
    return g.graph_keys(graph, resolve)


def build_module(outputs: Sequence[Node]) -> tuple[ModuleOp, list[np.ndarray]]:
    """`@main` computing `outputs` from the buffers they depend on, and those buffers."""
    return _build(collect(outputs))


def _build(graph: Graph, params: Sequence[int] = ()) -> tuple[ModuleOp, list[np.ndarray]]:
    module, inputs = g.build(graph, resolve, params)
    return module, [n.buffer for n in inputs]  # type: ignore[misc]


def pipeline_for(device: str, explicit: PipelineLike | None = None) -> PipelineLike:
    """What a new program on `device` runs (`irtensor.context` says how it is chosen).
    The default on an OpenCL device without fp64 keeps f32's two-pass variance and norms
    (`default-opencl-no-fp64`): the one-pass moments sum in f64."""
    chosen = settings.pipeline_for(device, explicit)
    if chosen == "default-opencl" and not _opencl_has_fp64():
        return "default-opencl-no-fp64"
    return chosen


def _opencl_has_fp64() -> bool:
    """Whether the OpenCL device computes in f64; no device at all counts as yes, so that
    running says why there is none."""
    from irtensor.runtime import opencl_device

    try:
        return opencl_device.supports_fp64(opencl_device.device().device)
    except Exception:  # no OpenCL here
        return True


def lower(module: ModuleOp, stage: str, device: str = "llvm",
          pipeline: PipelineLike | None = None) -> ModuleOp:
    """The module at `stage` of the ladder (`hl`: as recorded; `kernel`: after what
    realizing on `device` runs; `loops`, `llvm`: the llvm device's lowering of its kernels,
    `llvm` through its device pipeline)."""
    if stage not in STAGES[:5]:
        raise ValueError(f"unknown stage {stage!r}; the stages are {', '.join(STAGES)}")
    if stage == "ll":
        Pipeline("hl-to-ll").run(module)
    elif stage != "hl":
        Pipeline(_as_list(pipeline_for(check_device(device), pipeline))).run(module)
    if stage == "loops":
        Pipeline("lower-kernels-to-loops").run(module)
    elif stage == "llvm":
        Pipeline(_as_list(settings.device_pipeline_for("llvm"))).run(module)
    return module


def _as_list(pipeline: PipelineLike) -> list[str | ModulePass]:
    return [pipeline] if isinstance(pipeline, str | ModulePass) else list(pipeline)


def realize(outputs: Sequence[Node], device: str, pipeline: PipelineLike | None = None,
            device_pipeline: PipelineLike | None = None) -> list[Node]:
    """Compute `outputs` together through `pipeline` (else `pipeline_for(device)`), each
    kernel compiled through `device_pipeline` (else `settings.device_pipeline_for`); return
    placeholders holding their buffers."""
    todo = [v for v in outputs if buffer_of(v) is None]
    if not todo:
        return [resolve(v) for v in outputs]
    for v in todo:  # recording checked all but constants, which only take memory now
        if v.op is ll.ConstOp:
            limits.check_tensor(v.type, device, f"the result of {v.op.name}")
    graph = collect(todo)
    chosen = pipeline_for(check_device(device), pipeline)
    token = settings.EXPLICIT_DEVICE_PIPELINE.set(
        settings.check_pipeline(device_pipeline)) if device_pipeline is not None else None
    try:
        lowering = settings.device_pipeline_for(device)
        skeleton, consts = g.graph_keys(graph, resolve)
        # the schedules a pipeline gives follow the vector width (irtensor.host)
        where = (skeleton, device, settings.pipeline_key(chosen), settings.pipeline_key(lowering),
                 host.lowering_key())
        results = run_graph(graph, where, consts, device, chosen)
    finally:
        if token is not None:
            settings.EXPLICIT_DEVICE_PIPELINE.reset(token)
    placeholders = [buffer_value(array) for array in results]  # held until returned
    for value, placeholder in zip(todo, placeholders, strict=True):
        remember(value, placeholder)
    return [resolve(v) for v in outputs]


def _varying(where: Hashable, consts: tuple[Any, ...]) -> tuple[int, ...]:
    """The positions of the constants that have differed between runs of this program's
    structure (none the first time, nor while they repeat)."""
    known = _VARYING.get(where) or ()
    first = _FIRST_CONSTS.get(where)
    if first is None:
        _FIRST_CONSTS.put(where, consts)
        return known
    changed = tuple(i for i, (a, b) in enumerate(zip(first, consts, strict=True))
                    if a != b or i in known)
    if changed != known:
        _VARYING.put(where, changed)
    return changed


def run_graph(graph: Graph, where: Hashable, consts: tuple[Any, ...], device: str,
              pipeline: PipelineLike) -> list[np.ndarray]:
    """Run the program of `graph`: a cached one when there is one (with its varying
    constants passed as 0-d buffers), else a new one, lowered and remembered."""
    varying = _varying(where, consts)
    fixed = tuple(c for i, c in enumerate(consts) if i not in varying) if varying else consts
    key = (device, where, varying, fixed)
    params = list(varying)
    extra = g.param_arrays(graph, params)
    if (program := _PROGRAMS.get(key)) is not None:  # replay: no module, no pipeline
        return timed(device, lambda: replay(program, graph, device, extra))
    module, arrays = _build(graph, params)
    return execute(module, [*arrays, *extra], device, key, pipeline)


def replay(program: ModuleOp, graph: Graph, device: str,
           extra: Sequence[np.ndarray] = ()) -> list[np.ndarray]:
    """Run a program already lowered on the graph's buffers (and `extra` after them)."""
    from irtensor.runtime import STATS

    STATS.programs_cached += 1
    return run_lowered(program, [*(v.buffer for v in graph.inputs), *extra], device)


def execute(module: ModuleOp, arrays: list[np.ndarray], device: str,
            key: Hashable | None = None, pipeline: PipelineLike | None = None,
            constant: frozenset[int] = frozenset()) -> list[np.ndarray]:
    """Lower an hl program with `pipeline` (else the device's), remember it under `key`,
    run it."""
    from irtensor.runtime import STATS

    def lower_and_run() -> list[np.ndarray]:
        if check_device(device) == "llvm":
            from irtensor.runtime import llvm_device

            llvm_device.warm_workers_for(module)
        run_pipeline(module, pipeline_for(device, pipeline))
        STATS.pipeline_runs += 1
        if key is not None:
            _PROGRAMS.put(key, module)
        return run_lowered(module, arrays, device, constant)

    return timed(device, lower_and_run)


# Called after every program run with (module, arrays, device, results): how a captured
# step (`irtensor.jit.TinyJit`) learns which programs a function runs, on which buffers.
RUN_OBSERVERS: list[Callable[[ModuleOp, list[np.ndarray], str, list[np.ndarray]], None]] = []


def run_lowered(module: ModuleOp, arrays: list[np.ndarray], device: str,
                constant: frozenset[int] = frozenset()) -> list[np.ndarray]:
    """Run a lowered program (`constant`: the arguments the caller never changes; on llvm,
    the results of kernels that read only those are kept between runs)."""
    results = _run_on_device(module, arrays, device, constant)
    for observe in RUN_OBSERVERS:
        observe(module, arrays, device, results)
    return results


def _run_on_device(module: ModuleOp, arrays: list[np.ndarray], device: str,
                   constant: frozenset[int] = frozenset()) -> list[np.ndarray]:
    if device == "llvm":
        from irtensor.runtime import llvm_device

        return llvm_device.run(module, arrays, constant=constant)
    if device == "opencl":
        from irtensor.runtime import opencl_device

        return opencl_device.run(module, arrays)
    from irtensor.interp import run

    return run(module, arrays)


def timed(device: str, work: Callable[[], list[np.ndarray]]) -> list[np.ndarray]:
    """Run `work`; with DEBUG >= 1, one line on what it did."""
    if debug_level() < 1:
        return work()
    from irtensor.runtime import stats

    before, start = stats(), time.perf_counter()
    results = work()
    after = stats()
    kernels = after["kernels_run"] - before["kernels_run"]
    compiled = after["kernels_compiled"] - before["kernels_compiled"]
    cached = after["programs_cached"] - before["programs_cached"]
    sys.stderr.write(
        f"*** realize on {device}: {kernels} kernels, {compiled} compiled, program "
        f"{'cached' if cached else 'lowered'}, {(time.perf_counter() - start) * 1e3:.2f} ms\n"
    )
    return results


def debug_level() -> int:
    return settings.debug_level()


def run_pipeline(module: ModuleOp, pipeline: PipelineLike) -> None:
    """Run `pipeline` on `module` as realizing does: traced inside Context(trace=True),
    pictured inside Context(viz=...)."""
    settings.program_lowered(module)
    passes = _as_list(pipeline)
    if (recording := settings.active_trace()) is not None:
        from irtensor.passes import trace

        with trace.active(recording):
            run_verified_at_end(passes, module, verify_each=debug_level() >= 1)
    else:
        run_verified_at_end(passes, module, verify_each=debug_level() >= 1)


def text(outputs: Sequence[Node], stage: str, device: str = "llvm",
         pipeline: PipelineLike | None = None) -> str:
    """The program computing `outputs` at `stage` (one of STAGES) as text."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; the stages are {', '.join(STAGES)}")
    module, _ = build_module(outputs)
    if stage in ("hl", "ll"):
        return ir.to_text(lower(module, stage, device, pipeline))
    return kernels_text(lower(module, "kernel", device, pipeline), stage)


def kernels_text(module: ModuleOp, stage: str) -> str:
    """A module of kernels (the `kernel` stage) at `stage`, one of kernel, loops, llvm,
    llvm-ir, llvm-ir-opt, asm or opencl, as the devices lower it; `module` is changed."""
    if stage not in STAGES[2:]:
        raise ValueError(f"a kernel has no stage {stage!r}; its stages are "
                         f"{', '.join(STAGES[2:])}")
    if stage == "opencl":  # the OpenCL C that device opencl builds
        from irtensor.runtime.opencl_device import opencl_source

        return opencl_source(module)
    if stage in ("kernel", "loops"):
        if stage == "loops":
            Pipeline("lower-kernels-to-loops").run(module)
        return ir.to_text(module)
    Pipeline(_as_list(settings.device_pipeline_for("llvm"))).run(module)
    if stage == "llvm":
        return ir.to_text(module)
    from irtensor.passes.llvm import jit as llvm_jit

    if stage == "llvm-ir":
        return llvm_jit.llvm_ir(module)
    compiled = llvm_jit.compile_module(module)
    return compiled.optimized_ir if stage == "llvm-ir-opt" else compiled.assembly()


def explain(outputs: Sequence[Node]) -> str:
    """The kernels computing `outputs` and why each boundary between them exists."""
    from irtensor.passes.kernel.explain import explain_fusion

    module, _ = build_module(outputs)
    return explain_fusion(module)


def schedule(outputs: Sequence[Node]) -> list[KernelOp]:
    """The kernels that realizing `outputs` would run, in order."""
    todo = [v for v in outputs if buffer_of(v) is None]
    if not todo:
        return []
    module, _ = build_module(todo)
    lower(module, "kernel")
    return [op for op in module.walk() if isinstance(op, KernelOp)]


@dataclass(frozen=True)
class ScheduleItem:
    """One kernel of `Tensor.schedule()`: prints as its kernel, and at any later stage."""

    kernel: KernelOp

    @property
    def name(self) -> str:
        return self.kernel.sym_name.data

    def ir(self, stage: str = "kernel") -> str:
        """This kernel alone at `stage`: kernel, loops, llvm (through the device pipeline),
        llvm-ir, llvm-ir-opt, asm or opencl."""
        from irtensor.runtime.llvm_device import compile_unit

        return kernels_text(compile_unit(self.kernel), stage)

    def __str__(self) -> str:
        return str(self.kernel)
