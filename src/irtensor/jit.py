"""TinyJit: capture a step (forward, backward, update) once, replay its programs.

    @TinyJit
    def step(x: Tensor, y: Tensor) -> Tensor:
        opt.zero_grad()
        loss = model(x).cross_entropy(y)
        loss.backward()
        opt.step()
        return loss

The first call runs the function as written. The second runs it again and
captures it: the programs it runs (each already compiled), where each program's
inputs come from (an argument, an earlier program's output, or a tensor that
lives across calls: a parameter, an optimizer state), and which tensors (and
`.grad`s) hold which outputs when it returns. Later calls with arguments of the
same shapes, dtypes and devices replay those programs on the new arguments'
buffers and rebind the same tensors, with no Tensor call recorded, no graph
walked, no pass run: the same results as eager execution, bit for bit.
New shapes or dtypes record again.

The function must return a Tensor or a tuple/list of them, and its work must
depend on its arguments only through their values. Reading a tensor's value on the
host while it is captured (`.numpy()`, `.item()`, `.tolist()`, `bool(t)`, so any
Python control flow on a value: `if loss.item() > 1:`) raises JitError, since no
replay would run that Python; a Tensor made from host data inside the function is
frozen as captured, so data that changes must come in as arguments.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from irtensor.frontend import realize
from irtensor.frontend.tensor import Tensor
from irtensor.settings import CAPTURING, JitError

__all__ = ["JitError", "TinyJit", "jit"]

Source = tuple[Any, ...]  # ("arg", i) | ("out", k, j) | ("slot", n) | ("fixed", array)


@dataclass
class Captured:
    """The programs of one captured call and the wiring between them."""

    signature: tuple[Any, ...]
    runs: list[tuple[ModuleOp, str, list[Source]]] = field(default_factory=list)
    slots: list[tuple[Tensor, str]] = field(default_factory=list)
    rebinds: list[tuple[int, Source | None]] = field(default_factory=list)
    outputs: list[Source] = field(default_factory=list)
    single: bool = True


def signature_of(args: Sequence[Any]) -> tuple[Any, ...]:
    return tuple((a.shape, a.dtype.name, a.device) if isinstance(a, Tensor) else ("value", a)
                 for a in args)


def buffer(t: Tensor) -> np.ndarray:
    array = realize.buffer_of(t.realize()._value)
    assert array is not None
    return array


def slot_buffer(t: Tensor, attr: str) -> np.ndarray | None:
    """The buffer of `t` ("_value") or of `t.grad` ("grad"); None where lazy or absent."""
    if attr == "_value":
        return realize.buffer_of(t._value)
    return realize.buffer_of(t.grad._value) if isinstance(t.grad, Tensor) else None


def live_slots() -> list[tuple[Tensor, str, np.ndarray | None]]:
    """Every live tensor's value buffer and .grad buffer (None where lazy or absent)."""
    return [(obj, attr, slot_buffer(obj, attr)) for obj in gc.get_objects()
            if isinstance(obj, Tensor) for attr in ("_value", "grad")]


def tensors_of(out: Any) -> tuple[list[Tensor], bool]:
    if isinstance(out, Tensor):
        return [out], True
    if isinstance(out, tuple | list) and out and all(isinstance(t, Tensor) for t in out):
        return list(out), False
    raise JitError(f"TinyJit: the captured function must return a Tensor or a tuple of "
                   f"Tensors, not {type(out).__name__}")


def keep_only_used_slots(plan: Captured) -> None:
    """Hold only the tensors the step reads or rebinds (not every tensor alive)."""
    sources = [s for _, _, srcs in plan.runs for s in srcs] + plan.outputs + [
        s for _, s in plan.rebinds if s is not None]
    used = sorted({s[1] for s in sources if s[0] == "slot"} | {n for n, _ in plan.rebinds})
    new_index = {n: i for i, n in enumerate(used)}

    def moved(src: Source | None) -> Source | None:
        return ("slot", new_index[src[1]]) if src is not None and src[0] == "slot" else src

    plan.runs = [(m, d, [moved(s) for s in srcs]) for m, d, srcs in plan.runs]  # type: ignore[misc]
    plan.outputs = [moved(s) for s in plan.outputs]  # type: ignore[misc]
    plan.rebinds = [(new_index[n], moved(s)) for n, s in plan.rebinds]
    plan.slots = [plan.slots[n] for n in used]


class TinyJit:
    """Capture `fn` on its second call and replay its compiled programs after that."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.captured: Captured | None = None
        self.seen: tuple[Any, ...] | None = None
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any) -> Any:
        signature = signature_of(args)
        if self.captured is not None and self.captured.signature == signature:
            return self.replay(args)
        if self.seen != signature:  # first call with these shapes: run as written
            self.seen, self.captured = signature, None
            out = self.fn(*args)
            Tensor.realize(*tensors_of(out)[0])
            return out
        return self.capture(args, signature)

    # ------------------------------------------------------------------ capture

    def capture(self, args: Sequence[Any], signature: tuple[Any, ...]) -> Any:
        arg_buffers = {id(buffer(a)): i for i, a in enumerate(args) if isinstance(a, Tensor)}
        before = live_slots()
        runs: list[tuple[ModuleOp, str, list[np.ndarray], list[np.ndarray]]] = []
        realize.RUN_OBSERVERS.append(lambda m, a, d, r: runs.append((m, list(a), d, list(r))))
        token = CAPTURING.set(f"@{getattr(self.fn, '__qualname__', 'the function')}")
        try:
            out = self.fn(*args)
            outs, single = tensors_of(out)
            Tensor.realize(*outs)
        finally:
            CAPTURING.reset(token)
            realize.RUN_OBSERVERS.pop()
        plan = Captured(signature, single=single)
        produced: dict[int, tuple[int, int]] = {}
        slot_of = {id(array): n for n, (_, _, array) in enumerate(before) if array is not None}
        plan.slots = [(t, attr) for t, attr, _ in before]
        held = [array for _, _, array in before]  # keeps ids unique while mapping

        def source(array: np.ndarray) -> Source:
            if id(array) in produced:
                return ("out", *produced[id(array)])
            if id(array) in arg_buffers:
                return ("arg", arg_buffers[id(array)])
            if id(array) in slot_of:
                return ("slot", slot_of[id(array)])
            return ("fixed", array)

        for k, (module, arrays, device, results) in enumerate(runs):
            plan.runs.append((module, device, [source(a) for a in arrays]))
            produced.update({id(r): (k, j) for j, r in enumerate(results)})
        for n, (t, attr, old) in enumerate(before):
            new = slot_buffer(t, attr)
            if new is not old:
                plan.rebinds.append((n, source(new) if new is not None else None))
        plan.outputs = [source(buffer(t)) for t in outs]
        del held
        keep_only_used_slots(plan)
        self.captured = plan
        return out

    # ------------------------------------------------------------------ replay

    def replay(self, args: Sequence[Any]) -> Any:
        plan = self.captured
        assert plan is not None
        arg_arrays = [buffer(a) if isinstance(a, Tensor) else None for a in args]
        slot_arrays = [slot_buffer(t, attr) for t, attr in plan.slots]
        results: list[list[np.ndarray]] = []

        def fetch(src: Source) -> np.ndarray:
            kind = src[0]
            if kind == "out":
                return results[src[1]][src[2]]
            if kind == "arg":
                return arg_arrays[src[1]]  # type: ignore[return-value]
            if kind == "slot":
                found = slot_arrays[src[1]]
                if found is None:
                    raise JitError("TinyJit: a tensor the captured step reads is no longer "
                                   "realized or alive; call the function unjitted")
                return found
            return src[1]

        for module, device, sources in plan.runs:
            results.append(realize.run_lowered(module, [fetch(s) for s in sources], device))
        for n, src in plan.rebinds:
            t, attr = plan.slots[n]
            value = Tensor(realize.buffer_value(fetch(src)), device=t.device) \
                if src is not None else None
            if attr == "_value":
                assert value is not None
                t._value = value._value
            else:
                t.grad = value
        device = plan.runs[-1][1] if plan.runs else realize.default_device()
        outs = [Tensor(realize.buffer_value(fetch(s)), device=device) for s in plan.outputs]
        return outs[0] if plan.single else tuple(outs)


def jit(fn: Callable[..., Any]) -> TinyJit:
    """`irtensor.jit.jit(fn)`: the same as `TinyJit(fn)`."""
    return TinyJit(fn)
