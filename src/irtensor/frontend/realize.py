"""From lazy tensors to a program, and from a program to numbers.

A lazy tensor is an SSA value of a detached `hl`/`ll` op: the ops are built as
the user calls the API (so shapes and dtypes are checked at once) but belong to
no function. Realizing collects the ops that the wanted values depend on,
clones them into one `@main` whose arguments are the buffers already known,
runs the device's pipeline and executes the result. Realized values are
remembered, so later programs take them as inputs instead of recomputing them.
"""

from __future__ import annotations

import sys
import time
import weakref
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from irtensor import dtypes, ir, settings
from irtensor.dialects.kernel import KernelOp
from irtensor.pipeline import Pipeline
from irtensor.runtime.lru import LRU, env_limit
from irtensor.settings import PipelineLike

DEVICES = ("interp", "llvm", "opencl")
# Each inspection stage and the pipeline that reaches it from the recorded hl program.
# Each inspection stage, in ladder order: `kernel` is what realizing runs (the chosen
# pipeline), the later ones what device llvm does with its kernels; `opencl` the C of
# device opencl.
STAGES = ("hl", "ll", "kernel", "loops", "llvm", "llvm-ir", "llvm-ir-opt", "asm", "opencl")

# Buffer placeholders are arguments of detached one-argument blocks.
_BUFFERS: weakref.WeakKeyDictionary[SSAValue, np.ndarray] = weakref.WeakKeyDictionary()
# Op results that have been computed, mapped to the placeholder holding their buffer.
# Held weakly: a realized buffer lives as long as a tensor holds its placeholder; a lazy
# value computed again after that recomputes it.
_REALIZED: weakref.WeakKeyDictionary[SSAValue, weakref.ref[SSAValue]] = (
    weakref.WeakKeyDictionary())



PROGRAM_CACHE = 128


def _forget(key: tuple[Hashable, str], module: ModuleOp) -> None:
    """A program pushed out of the cache: its device lets go of its plans and kernels now,
    not when the cycle collector reaches the module."""
    if key[1] == "llvm":
        from irtensor.runtime import llvm_device

        llvm_device.forget(module)
    elif key[1] == "opencl":
        from irtensor.runtime import opencl_device

        opencl_device.forget(module)


# Realized programs by their structure and device: a loop that builds the same graph
# again runs no pipeline and compiles nothing. The IRTENSOR_PROGRAM_CACHE most recently
# used are kept.
_PROGRAMS: LRU[tuple[Hashable, str], ModuleOp] = LRU(
    lambda: env_limit("IRTENSOR_PROGRAM_CACHE", PROGRAM_CACHE), on_evict=_forget)


def default_device() -> str:
    """The innermost `irtensor.Context(device=...)`, else IRTENSOR_DEVICE, else llvm."""
    return check_device(settings.default_device())


def check_device(device: str) -> str:
    if device not in DEVICES:
        raise ValueError(f"unknown device {device!r}; irtensor has {', '.join(DEVICES)}")
    return device


def buffer_value(array: np.ndarray) -> SSAValue:
    """A placeholder value standing for a realized buffer."""
    block = Block(arg_types=[dtypes.type_of(array)])
    value = block.args[0]
    # Only the argument holds its block: without the block -> argument link there is no
    # cycle, so the buffer goes back to the pool as soon as the last tensor holding the
    # placeholder is dropped, not at the next garbage collection.
    block._args = ()
    _BUFFERS[value] = array
    return value


def buffer_of(value: SSAValue) -> np.ndarray | None:
    return _BUFFERS.get(resolve(value))


def resolve(value: SSAValue) -> SSAValue:
    """The placeholder of `value`'s buffer while there is one; else `value` itself."""
    found = _REALIZED.get(value)
    placeholder = found() if found is not None else None
    return placeholder if placeholder is not None else value


@dataclass
class Graph:
    """The detached ops computing some values, in order, and the buffers they read."""

    order: list[Operation]
    inputs: list[SSAValue]
    outputs: list[SSAValue]


def operands_of(op: Operation) -> Sequence[SSAValue]:
    """`op.operands` as the tuple xDSL keeps (its `operands` view costs ~1 us per op)."""
    found = getattr(op, "_operands", None)
    return found if isinstance(found, tuple) else tuple(op.operands)


def collect(outputs: Sequence[SSAValue]) -> Graph:
    """The ops computing `outputs`, operands first, found without recursion (a loop of
    thousands of `x += 1` is a chain that deep)."""
    order: list[Operation] = []
    inputs: list[SSAValue] = []
    seen: set[int] = set()
    for out in outputs:
        stack: list[tuple[SSAValue, bool]] = [(resolve(out), False)]
        while stack:
            value, ready = stack.pop()
            op = value.owner
            if ready:  # its operands are placed: place the op
                if id(op) not in seen:
                    seen.add(id(op))
                    order.append(op)  # type: ignore[arg-type]
                continue
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, BlockArgument):
                inputs.append(value)
                continue
            assert isinstance(op, Operation)
            stack.append((value, True))
            stack.extend((resolve(v), False) for v in reversed(operands_of(op)))
    return Graph(order, inputs, list(outputs))


def graph_key(graph: Graph) -> Hashable:
    """The program's structure as a hashable value: op names, operand wiring, properties
    and types (xDSL attributes hash and compare by value). Cheaper than printing it."""
    where: dict[SSAValue, tuple[int, int]] = {v: (-1, i) for i, v in enumerate(graph.inputs)}
    items: list[Hashable] = [tuple(v.type for v in graph.inputs)]
    for n, op in enumerate(graph.order):
        items.append((op.name, tuple(where[resolve(v)] for v in operands_of(op)),
                      tuple(op.properties.items()), tuple(op.attributes.items()),
                      tuple(r.type for r in op.results)))
        where.update(((r, (n, k)) for k, r in enumerate(op.results)))
    items.append(tuple(where[resolve(v)] for v in graph.outputs))
    return tuple(items)


def build_module(outputs: Sequence[SSAValue]) -> tuple[ModuleOp, list[np.ndarray]]:
    """`@main` computing `outputs` from the buffers they depend on, and those buffers."""
    return _build(collect(outputs))


def _build(graph: Graph) -> tuple[ModuleOp, list[np.ndarray]]:
    block = Block(arg_types=[v.type for v in graph.inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(graph.inputs, block.args, strict=True))
    for i, arg in enumerate(block.args):
        arg.name_hint = f"in{i}"
    for op in graph.order:
        operands = {v: mapping[resolve(v)] for v in op.operands}
        clone = op.clone_without_regions(value_mapper=operands)
        block.add_op(clone)
        mapping.update(zip(op.results, clone.results, strict=True))
    results = [mapping[resolve(v)] for v in graph.outputs]
    block.add_op(func.ReturnOp(*results))
    main = func.FuncOp("main", ([v.type for v in graph.inputs], [r.type for r in results]),
                       Region(block))
    return ModuleOp([main]), [_BUFFERS[v] for v in graph.inputs]


def pipeline_for(device: str, explicit: PipelineLike | None = None) -> PipelineLike:
    """What a new program on `device` runs (`irtensor.context` says how it is chosen)."""
    return settings.pipeline_for(device, explicit)


def lower(module: ModuleOp, stage: str, device: str = "llvm",
          pipeline: PipelineLike | None = None) -> ModuleOp:
    """The module at `stage` of the ladder (`hl`: as recorded; `kernel`: after what
    realizing on `device` runs; `loops`, `llvm`: the llvm device's lowering of its kernels)."""
    if stage not in STAGES[:5]:
        raise ValueError(f"unknown stage {stage!r}; the stages are {', '.join(STAGES)}")
    if stage == "ll":
        Pipeline("hl-to-ll").run(module)
    elif stage != "hl":
        Pipeline(_as_list(pipeline_for(check_device(device), pipeline))).run(module)
    if stage in ("loops", "llvm"):
        Pipeline("lower-kernels-to-loops" + (",convert-to-llvm" if stage == "llvm" else "")
                 ).run(module)
    return module


def _as_list(pipeline: PipelineLike) -> list[str | ModulePass]:
    return [pipeline] if isinstance(pipeline, str | ModulePass) else list(pipeline)


def realize(outputs: Sequence[SSAValue], device: str, pipeline: PipelineLike | None = None
            ) -> list[SSAValue]:
    """Compute `outputs` together through `pipeline` (else `pipeline_for(device)`); return
    placeholders holding their buffers."""
    todo = [v for v in outputs if buffer_of(v) is None]
    if todo:
        graph = collect(todo)
        chosen = pipeline_for(check_device(device), pipeline)
        key = (graph_key(graph), device, settings.pipeline_key(chosen))
        if (program := _PROGRAMS.get(key)) is not None:  # replay: no module, no pipeline
            results = timed(device, lambda: replay(program, graph, device))
        else:
            module, arrays = _build(graph)
            results = execute(module, arrays, device, key, chosen)
        placeholders = [buffer_value(array) for array in results]  # held until returned
        for value, placeholder in zip(todo, placeholders, strict=True):
            _REALIZED[value] = weakref.ref(placeholder)
    return [resolve(v) for v in outputs]


def replay(program: ModuleOp, graph: Graph, device: str,
           extra: Sequence[np.ndarray] = ()) -> list[np.ndarray]:
    """Run a program already lowered on the graph's buffers (and `extra` after them)."""
    from irtensor.runtime import STATS

    STATS.programs_cached += 1
    return run_lowered(program, [*(_BUFFERS[v] for v in graph.inputs), *extra], device)


def execute(module: ModuleOp, arrays: list[np.ndarray], device: str,
            key: Hashable | None = None, pipeline: PipelineLike | None = None
            ) -> list[np.ndarray]:
    """Lower an hl program with `pipeline` (else the device's), remember it under `key`,
    run it."""
    from irtensor.runtime import STATS

    def lower_and_run() -> list[np.ndarray]:
        run_pipeline(module, pipeline_for(check_device(device), pipeline))
        STATS.pipeline_runs += 1
        if key is not None:
            _PROGRAMS.put(key, module)
        return run_lowered(module, arrays, device)

    return timed(device, lower_and_run)


# Called after every program run with (module, arrays, device, results): how a captured
# step (`irtensor.jit.TinyJit`) learns which programs a function runs, on which buffers.
RUN_OBSERVERS: list[Callable[[ModuleOp, list[np.ndarray], str, list[np.ndarray]], None]] = []


def run_lowered(module: ModuleOp, arrays: list[np.ndarray], device: str) -> list[np.ndarray]:
    results = _run_on_device(module, arrays, device)
    for observe in RUN_OBSERVERS:
        observe(module, arrays, device, results)
    return results


def _run_on_device(module: ModuleOp, arrays: list[np.ndarray], device: str
                   ) -> list[np.ndarray]:
    if device == "llvm":
        from irtensor.runtime import llvm_device

        return llvm_device.run(module, arrays)
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
            Pipeline(passes).run(module)
    else:
        Pipeline(passes).run(module)


def text(outputs: Sequence[SSAValue], stage: str, device: str = "llvm",
         pipeline: PipelineLike | None = None) -> str:
    """The program computing `outputs` at `stage` (one of STAGES) as text."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; the stages are {', '.join(STAGES)}")
    module, _ = build_module(outputs)
    if stage == "opencl":  # the OpenCL C that device opencl builds
        from irtensor.runtime.opencl_device import opencl_source

        return opencl_source(lower(module, "kernel", device, pipeline))
    if stage in ("llvm-ir", "llvm-ir-opt", "asm"):
        from irtensor.passes.llvm import jit as llvm_jit

        loops = lower(module, "loops", device, pipeline)
        if stage == "llvm-ir":
            return llvm_jit.llvm_ir(loops)
        compiled = llvm_jit.compile_module(loops)
        return compiled.optimized_ir if stage == "llvm-ir-opt" else compiled.assembly()
    return ir.to_text(lower(module, stage, device, pipeline))


def explain(outputs: Sequence[SSAValue]) -> str:
    """The kernels computing `outputs` and why each boundary between them exists."""
    from irtensor.passes.kernel.explain import explain_fusion

    module, _ = build_module(outputs)
    return explain_fusion(module)


def schedule(outputs: Sequence[SSAValue]) -> list[KernelOp]:
    """The kernels that realizing `outputs` would run, in order."""
    todo = [v for v in outputs if buffer_of(v) is None]
    if not todo:
        return []
    module, _ = build_module(todo)
    lower(module, "kernel")
    return [op for op in module.walk() if isinstance(op, KernelOp)]

