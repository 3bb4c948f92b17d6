"""What the host must have to run a module's LLVM IR, checked before LLVM compiles it: LLVM
stops the process on an intrinsic it cannot select, and the JIT lacks compiler-rt."""

from __future__ import annotations

import re
from typing import Protocol


class Target(Protocol):
    triple: str

    def has(self, feature: str) -> bool: ...


def check_host_can_run(text: str, target: Target) -> None:
    """Raise NotImplementedError, saying why, where `target` cannot run `text`."""
    _check_half(text, target)
    _check_tiles(text, target)


def _check_half(text: str, t: Target) -> None:
    if t.triple.startswith("x86_64") and re.search(r"\bhalf\b", text) and not t.has("f16c"):
        raise NotImplementedError("f16 kernels need a CPU with F16C (LLVM would call "
                                  "compiler-rt's half conversions, which the JIT lacks)")


def _check_tiles(text: str, t: Target) -> None:
    """A kernel on AMX's tiles (`IRTENSOR_AMX=1` forces them) only where the CPU has them
    and Linux lets this process use them: LLVM would stop the process on the intrinsics
    it cannot select, and a tile instruction without the permission dies of SIGILL."""
    if "llvm.x86.tdpbf16ps" not in text and "llvm.x86.ldtilecfg" not in text:
        return
    from irtensor.tile_state import enable_tile_data

    if not (t.has("amx-tile") and t.has("amx-bf16")):
        raise NotImplementedError("this kernel multiplies on AMX tiles (IRTENSOR_AMX=1), "
                                  "which this CPU does not have; unset IRTENSOR_AMX")
    if not enable_tile_data():
        raise NotImplementedError("this kernel multiplies on AMX tiles, and Linux refused "
                                  "this process their state (arch_prctl); set IRTENSOR_AMX=0")


__all__ = ["check_host_can_run"]
