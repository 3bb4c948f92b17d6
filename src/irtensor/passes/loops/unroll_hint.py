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
"""

from __future__ import annotations

from irtensor.dialects.kernel import KernelOp, YieldOp
from irtensor.passes.kernel.cost_model import model_of
from irtensor.passes.kernel.schedule_blocks import contiguous_dim

NO_UNROLL_ATTR = "irtensor.no_unroll"


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
