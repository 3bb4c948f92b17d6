"""The settings an `irtensor.Context` block chooses, looked up by the code that uses them.

The stack of active contexts lives here, apart from `irtensor.context.Context`, so that
the runtime and the frontend can read a setting without importing the frontend's or the
tools' modules. A setting left `None` falls through to the next context out, then to the
environment (see `irtensor.context` for the table).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING

from xdsl.passes import ModulePass

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from irtensor.passes.trace import RewriteTrace

PipelineLike = str | ModulePass | Sequence[str | ModulePass]

# The active contexts, outermost first (`irtensor.context.Context` objects).
STACK: ContextVar[tuple[object, ...]] = ContextVar("irtensor_contexts", default=())


def innermost(name: str) -> object:
    for context in reversed(STACK.get()):
        value = getattr(context, name)
        if value is not None and value is not False:
            return value
    return None


def check_pipeline(pipeline: PipelineLike) -> PipelineLike:
    """`pipeline` if it names passes that exist (a clear error at the call if not)."""
    from irtensor.pipeline import Pipeline, PipelineError

    if not isinstance(pipeline, str | ModulePass | Sequence):
        raise TypeError(f"pipeline={pipeline!r}: expected a pipeline string, a ModulePass "
                        "or a list of them")
    try:
        Pipeline([pipeline] if isinstance(pipeline, str | ModulePass) else list(pipeline))
    except PipelineError as e:
        raise ValueError(f"pipeline: {e}") from None
    return pipeline


def pipeline_for(device: str, explicit: PipelineLike | None = None) -> PipelineLike:
    """What a new program on `device` runs: `explicit`, the innermost context's, the
    environment's, or the device's default pipeline."""
    if explicit is not None:
        return check_pipeline(explicit)
    if (chosen := innermost("pipeline")) is not None:
        return chosen  # type: ignore[return-value]
    if spec := os.environ.get("IRTENSOR_PIPELINE", "").strip():
        return check_pipeline(spec)
    return f"default-{device}"


class JitError(RuntimeError):
    """A function TinyJit cannot capture, and why (`irtensor.jit.JitError`)."""


# The function TinyJit is capturing: while set, reading a tensor's value on the host is
# refused, since the replays run no Python that could depend on it.
CAPTURING: ContextVar[str | None] = ContextVar("irtensor_capturing", default=None)


# What a call's `realize(device_pipeline=...)` chose, for the device compiling its kernels.
EXPLICIT_DEVICE_PIPELINE: ContextVar[PipelineLike | None] = ContextVar(
    "irtensor_device_pipeline", default=None)


def device_pipeline_for(device: str) -> PipelineLike:
    """What `device` runs on each kernel, in a module of its own, before it generates code
    (llvm: loops, then the llvm dialect; opencl: nothing, then OpenCL C): the call's
    `device_pipeline=`, the innermost context's, `IRTENSOR_DEVICE_PIPELINE`, or the
    registered `device-<device>`."""
    if (explicit := EXPLICIT_DEVICE_PIPELINE.get()) is not None:
        return explicit
    if (chosen := innermost("device_pipeline")) is not None:
        return chosen  # type: ignore[return-value]
    if spec := os.environ.get("IRTENSOR_DEVICE_PIPELINE", "").strip():
        return check_pipeline(spec)
    return f"device-{device}"


def pipeline_key(pipeline: PipelineLike) -> tuple[object, ...]:
    """What a program cached under `pipeline` is remembered by: the text of each pass and,
    for pass objects, their class (two classes may share a name)."""
    items = [pipeline] if isinstance(pipeline, str | ModulePass) else list(pipeline)
    return tuple(p if isinstance(p, str) else (type(p), str(p.spec())) for p in items)


def default_device() -> str:
    chosen = innermost("device")
    return str(chosen) if chosen is not None else os.environ.get("IRTENSOR_DEVICE", "llvm")


def debug_level() -> int:
    chosen = innermost("debug")
    if chosen is not None:
        return int(chosen)  # type: ignore[call-overload]
    value = os.environ.get("DEBUG", "0")
    return int(value) if value.isdigit() else 0


def active_trace() -> RewriteTrace | None:
    return innermost("trace")  # type: ignore[return-value]


def program_lowered(module: ModuleOp) -> None:
    """Tell the contexts that want a picture (viz) of the program about to be lowered."""
    for context in STACK.get():
        if getattr(context, "viz", None) is not None:
            context.last_program = module.clone()  # type: ignore[attr-defined]
