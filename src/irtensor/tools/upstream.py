"""Upstream MLIR's tools, for the stages made of upstream dialects.

irtensor's loops stage (func, scf, arith, math, memref) and its llvm-dialect stage are
plain MLIR: upstream `mlir-opt` parses them, lowers the loops with its own passes
(`UPSTREAM_LOWERING`), and `mlir-translate --mlir-to-llvmir` turns either into LLVM IR.
Debian's `mlir-19-tools` installs them in `/usr/lib/llvm-19/bin` with `-19` names on PATH.
"""

from __future__ import annotations

import shutil
from pathlib import Path

# The loops stage down to the llvm dialect with upstream passes only. Bare-pointer memrefs
# give the kernels the signature irtensor's own convert-to-llvm gives them (pointers, then
# the start and stop of the outermost loop), so the same runtime can call either.
UPSTREAM_LOWERING = (
    "--arith-expand", "--convert-scf-to-cf", "--convert-math-to-llvm",
    "--convert-vector-to-llvm", "--expand-strided-metadata", "--finalize-memref-to-llvm",
    "--convert-arith-to-llvm", "--convert-cf-to-llvm",
    "--convert-func-to-llvm=use-bare-ptr-memref-call-conv=1",
    "--reconcile-unrealized-casts",
)
_VERSIONS = (20, 19, 18)


def upstream_mlir_tool(name: str) -> str | None:
    """The path of `mlir-opt` / `mlir-translate` (plain, versioned, or in LLVM's folder)."""
    for candidate in (name, *(f"{name}-{v}" for v in _VERSIONS)):
        if found := shutil.which(candidate):
            return found
    for version in _VERSIONS:
        path = Path(f"/usr/lib/llvm-{version}/bin") / name
        if path.is_file():
            return str(path)
    return None
