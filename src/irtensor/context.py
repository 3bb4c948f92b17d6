"""`irtensor.Context`: what realizing a tensor runs, for one block of code.

    with irtensor.Context(pipeline="hl-to-ll,my-pass,fuse,reorder-loops", device="llvm"):
        y = model(x).numpy()          # realized through your pipeline

    with irtensor.Context(trace=True, debug=2, viz="run.html") as ctx:
        y.numpy()
    print(ctx.trace.text())           # every pattern application of the programs lowered

A `Context` is a context manager; contexts nest, the innermost setting wins, and a
setting left `None` falls through to the one outside it, then to the environment:

| setting           | what it chooses                              | environment                |
|-------------------|----------------------------------------------|----------------------------|
| `pipeline`        | what a new program runs (string, pass, or    | `IRTENSOR_PIPELINE`        |
|                   | list of both; registered pipelines allowed)  | (else `default-<dev>`)     |
| `device_pipeline` | what a compiled device runs on each kernel,  | `IRTENSOR_DEVICE_PIPELINE` |
|                   | alone in a module, before its code is made   | (else `device-<dev>`)      |
|                   | (llvm: loops, llvm dialect; opencl: nothing) |                            |
| `device`          | the device of tensors made without one       | `IRTENSOR_DEVICE`          |
| `debug`           | the DEBUG level (1: a line per realize, 2:   | `DEBUG`                    |
|                   | per kernel, 3: schedules, 4: LLVM IR, 5:     |                            |
|                   | assembly)                                    |                            |
| `trace`           | record every rewrite of the programs lowered |                            |
| `viz`             | at exit, write `irtensor viz`'s page of the  |                            |
|                   | last program lowered inside the block        |                            |

`Tensor.realize(pipeline=..., device_pipeline=...)` chooses for one call and wins over
every context. Programs and kernels are cached by the pipelines that made them, so a
program lowered under one pipeline never stands in for another's.
"""

from __future__ import annotations

from contextvars import Token
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from irtensor.settings import STACK, PipelineLike, check_pipeline

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from irtensor.passes.trace import RewriteTrace


@dataclass(eq=False)
class Context:
    pipeline: PipelineLike | None = None
    device: str | None = None
    device_pipeline: PipelineLike | None = None
    debug: int | None = None
    trace: bool | RewriteTrace = False
    viz: str | Path | None = None
    last_program: ModuleOp | None = field(default=None, init=False, repr=False)
    _token: Token[tuple[object, ...]] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.pipeline is not None:
            check_pipeline(self.pipeline)
        if self.device_pipeline is not None:
            check_pipeline(self.device_pipeline)
        if self.device is not None:
            from irtensor.frontend.realize import check_device

            check_device(self.device)
        if self.debug is not None and (not isinstance(self.debug, int) or self.debug < 0):
            raise ValueError(f"Context(debug={self.debug!r}): expected an int >= 0")
        if self.trace is True:
            from irtensor.passes.trace import RewriteTrace

            self.trace = RewriteTrace()

    def __enter__(self) -> Context:
        self._token = STACK.set((*STACK.get(), self))
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        assert self._token is not None
        STACK.reset(self._token)
        self._token = None
        if self.viz is not None and self.last_program is not None and kind is None:
            from irtensor.tools.viz import write_page

            write_page(self.last_program, Path(self.viz), "irtensor program")
