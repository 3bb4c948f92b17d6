"""Whether LLVM's loop unroller pays on a kernel's loops: not on a copy that gathers.

A weight's channels-last pack (`pack_<shape>`, made by pack-operands) writes its rows
contiguously from elements a whole row or more apart. LLVM unrolled such a loop nest
and vectorised it into gathers, 1.6 KB of IR grown to 100-140 KB: 190-310 ms of LLVM
per pack (ResNet-50's five packs were a tenth of its LLVM time), against 17-41 ms with
the unroller off, and the packs ran as fast or faster (bench/README.md, "Copies that
gather"). A padded or strided copy reads along its rows and keeps the unroller: a pad
without it ran 2-5x slower.

`lower-kernels-to-loops` marks such a kernel's function `irtensor.no_unroll`;
`convert-to-llvm` keeps the mark on the `llvm.func`, and the JIT turns LLVM's unroller
off for a module holding it.

A kernel of at most `SMALL_KERNEL_POINTS` iteration points is marked `irtensor.small`:
its run is shorter than LLVM's optimisation of it. An elementwise kernel of 64 points
took 45-66 ms to compile at O3 and 6.6 ms with no IR optimisation (machine code still
made at O2), and ran as fast (12 us a call, the call's own cost); at 4096 points it ran
1.6x slower (45 against 29 us). The JIT skips LLVM's IR passes for a module holding
the mark (`opt_level.kernel_levels`). Tensors this small are most of a test suite's
and of an interactive session's kernels.
"""

from __future__ import annotations

from irtensor.dialects.kernel import KernelOp, YieldOp
from irtensor.passes.kernel.cost_model import model_of
from irtensor.passes.kernel.schedule_blocks import contiguous_dim

NO_UNROLL_ATTR = "irtensor.no_unroll"
SMALL_ATTR = "irtensor.small"
SMALL_KERNEL_POINTS = 1024


def is_small(kernel: KernelOp) -> bool:
    """Whether the kernel's iteration space (reductions included) has at most
    `SMALL_KERNEL_POINTS` points."""
    points = 1
    for size in kernel.sizes:
        points *= size
    return points <= SMALL_KERNEL_POINTS


def gathers_across_rows(kernel: KernelOp) -> bool:
    """A plain copy (no reduction or epilogue; the body yields its one read as read)
    whose read steps, along the write's contiguous dimension, by at least one row of
    its operand: each element of a written row comes from another row."""
    body = kernel.body.block
    if kernel.reduction_dims or kernel.epilogue_block is not None or len(body.args) != 1 \
            or not isinstance(body.last_op, YieldOp) or body.first_op is not body.last_op \
            or body.last_op.value is not body.args[0]:
        return False
    model = model_of(kernel)
    column = contiguous_dim(model)
    if column is None:
        return False
    read = model.reads[0]
    row = read.shape[-1] if read.shape else 1
    return abs(read.strides[column]) >= max(row, 2)
