"""The line `DEBUG=2` writes for each kernel call of device llvm (more at 3 to 5)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from irtensor.dialects.kernel import KernelOp

if TYPE_CHECKING:
    from irtensor.runtime.llvm_device import CompiledKernel


def report(op: KernelOp, kernel: CompiledKernel, args: Sequence[np.ndarray], out: np.ndarray,
            seconds: float, level: int) -> None:
    """Name, sizes, time and rates; the schedule (3), LLVM IR (4), assembly (5)."""
    points = int(np.prod(op.sizes)) if op.sizes else 1
    body_ops = sum(1 for _ in op.body.walk()) - 1 + (1 if op.reduction_dims else 0)
    moved = sum(a.nbytes for a in args) + out.nbytes
    seconds = max(seconds, 1e-9)
    sys.stderr.write(
        f"*** llvm {kernel.name:<24} {list(op.sizes)!s:<24} {seconds * 1e3:9.3f} ms "
        f"{points * body_ops / seconds / 1e9:8.2f} GFLOP/s {moved / seconds / 1e9:8.2f} GB/s\n"
    )
    if level >= 3 and op.schedule is not None:
        tiles = "; on AMX tiles" if "llvm.x86.tdpbf16ps" in kernel.jit.llvm_ir else ""
        jit = kernel.jit
        codegen = f" (machine code O{jit.codegen_level})" if jit.codegen_level is not None else ""
        sys.stderr.write(f"    schedule {op.schedule}{tiles}, LLVM O{jit.opt_level}{codegen}\n")
    if level >= 4:
        sys.stderr.write(kernel.jit.llvm_ir + "\n")
    if level >= 5:
        sys.stderr.write(kernel.jit.assembly() + "\n")


__all__ = ["report"]
