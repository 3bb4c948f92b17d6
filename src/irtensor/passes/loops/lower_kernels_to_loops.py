"""lower-kernels-to-loops: each `kernel.kernel` becomes a loop function on memrefs.

Every kernel op becomes a top-level `func.func @<sym_name>_<k>` (k: the kernel's
index in the module) taking one memref per input, the output memref and an
index range `%start, %stop` of its outermost loop, marked `irtensor.kernel`;
its body is an `scf.for` nest in the schedule's order and tiles (`loop_builder`),
matmul- and conv-like kernels as register blocks (`register_block`). The
functions that held the kernels take and return memrefs instead of tensors,
allocate each kernel's output, call its function over the full range, and
free the intermediate buffers they do not return. The contract is written out
in docs/passes/lower-kernels-to-loops.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.common_subexpression_elimination import cse

from irtensor import dtypes
from irtensor.dialects.kernel import KernelOp
from irtensor.passes.loops.loop_builder import KERNEL_ATTR, KernelFunction, memref_of, outer_extent
from irtensor.passes.registry import register_pass


class LoweringError(ValueError):
    """A function this pass cannot lower (a tensor op that is not a kernel)."""


@register_pass
@dataclass(frozen=True)
class LowerKernelsToLoopsPass(ModulePass):
    """lower-kernels-to-loops: each kernel into an scf.for loop function on memrefs.

    The functions that held the kernels allocate the outputs and call them.

    `fast-reductions=false` always reduces through an accumulator buffer (the
    general scheme), even when the reduction loops are innermost.
    `free-intermediates=false` leaves intermediate buffers without a
    `memref.dealloc`.
    """

    name = "lower-kernels-to-loops"
    fast_reductions: bool = True
    free_intermediates: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        hosts = [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks
                 and KERNEL_ATTR not in f.attributes]
        names = {f.sym_name.data for f in op.ops if isinstance(f, func.FuncOp)}
        kernels = [k for k in op.walk() if isinstance(k, KernelOp)]
        callee: dict[KernelOp, str] = {}
        for k, kernel in enumerate(kernels):
            name = f"{kernel.sym_name.data}_{k}"
            if name in names:
                raise LoweringError(f"cannot name kernel @{kernel.sym_name.data}'s function "
                                    f"@{name}: the module already has one")
            callee[kernel] = name
            host = _host_of(kernel)
            built = KernelFunction(kernel, name, self.fast_reductions).build()
            op.body.block.insert_op_before(built, host)
        for host in hosts:
            lower_host(host, callee, self.free_intermediates)


def _host_of(kernel: KernelOp) -> Operation:
    """The top-level op (a function) that holds `kernel`."""
    op: Operation = kernel
    while (parent := op.parent_op()) is not None and not isinstance(parent, ModuleOp):
        op = parent
    return op


def lower_host(function: func.FuncOp, callee: dict[KernelOp, str],
               free_intermediates: bool = True) -> None:
    """Tensors become memrefs; each kernel becomes an alloc of its output and a call."""
    block = function.body.block
    for arg in list(block.args):
        if isinstance(arg.type, TensorType):
            Rewriter.replace_value_with_new_type(arg, memref_of(arg.type))
    allocs: list[SSAValue] = []
    for op in list(block.ops):
        if isinstance(op, KernelOp):
            allocs.append(_call_kernel(op, callee[op]))
        elif _has_tensors(op) and not isinstance(op, func.ReturnOp):
            raise LoweringError(
                f"lower-kernels-to-loops: @{function.sym_name.data} holds {op.name}, which is "
                "not a kernel; lower it to kernels first (e.g. -p hl-to-kernel)"
            )
    returned = block.last_op
    assert isinstance(returned, func.ReturnOp)
    if free_intermediates:
        for buffer in allocs:
            _free_after_last_use(buffer, returned)
    cse(function)  # one constant per value
    inputs = [a.type for a in block.args]
    function.function_type = func.FunctionType.from_lists(
        inputs, [v.type for v in returned.operands])


def _call_kernel(op: KernelOp, name: str) -> SSAValue:
    """`%buf = memref.alloc()` and `func.call @name(inputs..., %buf, 0, extent)` in place
    of the kernel; returns the buffer."""
    result_type = op.res.type
    assert isinstance(result_type, TensorType)
    at = Builder(InsertPoint.before(op))
    alloc = at.insert(memref.AllocOp.get(dtypes.signless(result_type.element_type),
                                         shape=list(result_type.get_shape())))
    alloc.memref.name_hint = "buf"
    start = at.insert(arith.ConstantOp(IntegerAttr(0, IndexType())))
    stop = at.insert(arith.ConstantOp(IntegerAttr(outer_extent(op), IndexType())))
    start.result.name_hint, stop.result.name_hint = "c0", f"c{outer_extent(op)}"
    at.insert(func.CallOp(name, [*op.inputs, alloc.memref, start.result, stop.result], []))
    op.res.replace_all_uses_with(alloc.memref)
    op.detach()
    op.erase()
    return alloc.memref


def _free_after_last_use(buffer: SSAValue, returned: func.ReturnOp) -> None:
    """`memref.dealloc` after the buffer's last use, unless the function returns it."""
    users = [use.operation for use in buffer.uses]
    if returned in users:
        return
    block = returned.parent_block()
    assert block is not None
    last = max(users, key=block.get_operation_index)
    Builder(InsertPoint.after(last)).insert(memref.DeallocOp.get(buffer))


def _has_tensors(op: Operation) -> bool:
    return any(isinstance(v.type, TensorType) for v in (*op.operands, *op.results))


__all__ = ["LowerKernelsToLoopsPass", "LoweringError", "lower_host"]
