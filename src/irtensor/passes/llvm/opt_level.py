"""LLVM's work on a kernel's IR: the optimisation level, and whether SLP vectorisation runs.

`kernel_levels(text, small)` are the levels `jit.compile_module` uses unless given one:
O3 for float arithmetic in scalar loops and for code on x86 intrinsics, O2 for code
already in vectors and for kernels that only move data, no IR optimisation (machine code
at O2) for a kernel marked `irtensor.small`; `IRTENSOR_LLVM_OPT=0..3` fixes one level
for both (and `jit.target_description()` includes it, so caches keep levels apart).
"""

from __future__ import annotations

import os
import re

OPT_LEVEL_ENV = "IRTENSOR_LLVM_OPT"
# The policy's name, in cache keys: a kernel compiled under another policy is another kernel.
OPT_POLICY = "O3-scalar-float-math-and-x86-intrinsics;O0-codegen-O2-small;O2-else"
_X86_INTRINSIC = re.compile(r"@llvm\.x86\.")
_FLOAT_ARITHMETIC = re.compile(r"= (?:fadd|fsub|fmul|fdiv|frem|fneg|fcmp|call)\b")
# A vector of floats in the IR as written: the register block or a vector row, emitted as
# vectors by lower-kernels-to-loops.
_WRITTEN_VECTORS = re.compile(r"<\d+ x (?:float|double|half|bfloat)>")


def forced_opt_level() -> int | None:
    """The level `IRTENSOR_LLVM_OPT` (0-3) fixes for every kernel; None when unset."""
    value = os.environ.get(OPT_LEVEL_ENV, "").strip()
    if not value:
        return None
    if value not in ("0", "1", "2", "3"):
        raise ValueError(f"{OPT_LEVEL_ENV} must be one of 0, 1, 2, 3; got {value!r}")
    return int(value)


def kernel_levels(text: str, small: bool = False) -> tuple[int, int]:
    """LLVM's (IR optimisation, machine code) levels for a module's IR `text`: unless
    `IRTENSOR_LLVM_OPT` fixes one for both, (0, 2) for a small kernel's module (`small`:
    it holds a function marked `irtensor.small`, see passes/loops/unroll_hint.py) not on
    x86 intrinsics, else `kernel_opt_level` for both."""
    if forced_opt_level() is None and small and not _X86_INTRINSIC.search(text):
        return 0, 2
    level = kernel_opt_level(text)
    return level, level


def kernel_opt_level(text: str) -> int:
    """LLVM's optimisation level for a module's IR `text`, unless `IRTENSOR_LLVM_OPT` fixes
    one: O3 for float arithmetic in scalar loops, which LLVM vectorises itself, and for
    code on the CPU's own intrinsics (AMX tiles, `vdpbf16ps`); O2 for code already in
    vectors (register blocks) and for kernels that only move data (packing, padding).

    Measured on an AVX2 EPYC (bench/README.md, "LLVM O2 and O3"): with every kernel at
    O2, matmul, conv2d, the MLP and copies ran as fast as at O3 but a row reduction's
    split partials 4x slower; LLVM took 5.4 s on ResNet-50's 47 kernels under this rule,
    6.4 s all at O3. On the Xeon with AMX, O3 ran the tile kernel 35-48% faster than O2."""
    forced = forced_opt_level()
    if forced is not None:
        return forced
    if _X86_INTRINSIC.search(text):
        return 3
    if _WRITTEN_VECTORS.search(text) or not _FLOAT_ARITHMETIC.search(text):
        return 2
    return 3


def slp_pays(text: str) -> bool:
    """Whether LLVM's SLP vectorizer runs on a module: not on one already in vectors. There
    it finds next to nothing to pack, at a cost that grows with the unrolled block (on
    ResNet-50's kernels at batch 8: 6.7 of 11.8 s of LLVM's optimisation, the same warm
    time); scalar code keeps it."""
    return _WRITTEN_VECTORS.search(text) is None


__all__ = ["OPT_LEVEL_ENV", "OPT_POLICY", "forced_opt_level", "kernel_levels", "kernel_opt_level",
           "slp_pays"]
