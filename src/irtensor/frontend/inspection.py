"""What a tensor's program looks like before it runs: its IR at any stage, why each
kernel is a kernel, and the kernels themselves (`Tensor.ir`, `explain`, `schedule`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from irtensor.frontend import realize
from irtensor.settings import PipelineLike

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor


class InspectMixin:
    def ir(self: Tensor, stage: str = "hl", pipeline: PipelineLike | None = None) -> str:
        """The program computing this tensor at `stage`: "hl" (as recorded), "ll", "kernel"
        (after what realizing runs: `pipeline`, the context's, or the device's), "loops",
        "llvm" (the llvm dialect), "llvm-ir" and "llvm-ir-opt" (LLVM IR before and after
        LLVM's optimisation), "asm" (the host's assembly) or "opencl" (the OpenCL C)."""
        return realize.text([self._value], stage, self.device, pipeline)

    def explain(self: Tensor) -> str:
        """The kernels that compute this tensor and, for each, why it is a kernel of its
        own (a reduction's input, a value with several consumers, a function result...)."""
        return realize.explain([self._value])

    def schedule(self: Tensor, *others: Tensor) -> list[realize.ScheduleItem]:
        """The kernels that realizing this tensor (and `others`) would run; each prints,
        `.kernel` is its op and `.ir(stage)` its text at a later stage (loops, llvm,
        llvm-ir, llvm-ir-opt, asm, opencl)."""
        kernels = realize.schedule([t._value for t in (self, *others)])
        return [realize.ScheduleItem(k) for k in kernels]
