"""Why a program becomes the kernels it does: `explain_fusion(module)`.

Runs the program to fused, scheduled kernels (`hl-to-kernel`, on a copy) and lists each
kernel: its iteration space, what it reduces, what it reads (function arguments or the
results of earlier kernels), and why its value must exist in memory instead of being
fused into its consumer. The reasons come from `fuse` itself (`fuse.BOUNDARIES`, set where
it decides to make a kernel); kernels a later pass made say which pass made them.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, SSAValue

from irtensor.dialects.kernel import KernelOp
from irtensor.passes.kernel.fuse import BOUNDARIES

BEFORE_FUSE = "hl-to-ll,fuse"
AFTER_FUSE = "split-reductions,pack-operands,cse,reorder-loops"  # the rest of hl-to-kernel


def explain_fusion(module: ModuleOp, function: str = "main") -> str:
    """The kernels of `@function` and, for each, why it is a kernel of its own."""
    from irtensor.pipeline import Pipeline  # the pipeline machinery imports every pass

    work = module.clone()
    Pipeline(BEFORE_FUSE).run(work)
    fused = {id(k): BOUNDARIES.get(k, "") for k in _kernels(work, function)}
    names = {id(k): k.sym_name.data for k in _kernels(work, function)}
    Pipeline(AFTER_FUSE).run(work)
    kernels = _kernels(work, function)
    produced: dict[SSAValue, str] = {}
    lines = [f"@{function}: {len(kernels)} kernel{'s' if len(kernels) != 1 else ''}"]
    for n, k in enumerate(kernels, start=1):
        label = f"#{n} @{k.sym_name.data}"
        produced[k.res] = label
        lines.append(f"{label}  space {list(k.sizes)}{_reduces(k)}")
        lines.append(f"    reads: {', '.join(_source(v, produced) for v in k.inputs) or 'nothing'}")
        lines.append(f"    a kernel of its own because {_why(k, fused, names)}")
    return "\n".join(lines) + "\n"


def _kernels(module: ModuleOp, function: str) -> list[KernelOp]:
    for f in module.walk():
        if isinstance(f, func.FuncOp) and f.sym_name.data == function:
            return [op for op in f.walk() if isinstance(op, KernelOp)]
    raise ValueError(f"no function @{function} in the module")


def _reduces(k: KernelOp) -> str:
    if not k.reduction_dims or k.combiner is None:
        return ""
    epilogue = " with an epilogue" if k.epilogue_block is not None else ""
    return f", {k.combiner.data} over dims {list(k.reduction_dims)}{epilogue}"


def _source(value: SSAValue, produced: dict[SSAValue, str]) -> str:
    if value in produced:
        return f"kernel {produced[value]}"
    if isinstance(value, BlockArgument):
        return f"argument %{value.name_hint or value.index}"
    return f"%{value.name_hint or '?'}"


def _why(k: KernelOp, fused: dict[int, str], names: dict[int, str]) -> str:
    if id(k) in fused:
        return fused[id(k)] or "fuse made it (no reason recorded)"
    base = k.sym_name.data
    split_from = [name for name in names.values() if base.startswith(name)]
    if split_from:
        return (f"split-reductions split the long reduction @{split_from[0]} into partial "
                "sums and a final kernel that combines them")
    return "a pass after fuse made it"
