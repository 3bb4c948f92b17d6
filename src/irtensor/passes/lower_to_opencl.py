"""lower-to-opencl: each `kernel.kernel` becomes an `ocl.kernel`, one work item per output
element.

The kernel's parallel dimensions of size > 1 are the NDRange, the last one on
NDRange dimension 0 (adjacent work items write adjacent elements); beyond three,
the leading ones share NDRange dimension 2 and are recovered by division. Each
work item runs the reduction loops (in the schedule's order) with the
accumulator in a register, then the epilogue, then stores its element. Reads,
masks (clamp + select), identities and index arithmetic are those of
`loop_builder.KernelFunction`, which this builder extends; only loads and
stores change: a multi-dimensional index becomes one row-major linear index
on a pointer.

In the host function each kernel becomes `ocl.enqueue @<name>_<k>(inputs)`;
the `ocl.kernel` ops go before it at the top of the module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import MemRefType, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.common_subexpression_elimination import cse

from irtensor.dialects import ocl
from irtensor.dialects.kernel import KernelOp
from irtensor.passes import register_pass
from irtensor.passes.loop_builder import Env, KernelFunction, Loop, loop_order, memref_of

MAX_RANGE_DIMS = 3


class OpenCLLoweringError(ValueError):
    """A kernel this pass cannot lower."""


def ndrange_dims(op: KernelOp) -> list[int]:
    """The parallel dimensions that index work items (size > 1), in space order."""
    return [d for d in op.parallel_dims if op.sizes[d] != 1]


def global_size(op: KernelOp) -> list[int]:
    """The NDRange: the last wide parallel dim first; more than three: the leading ones
    multiplied into the last NDRange dimension. A kernel without one runs one item."""
    dims = ndrange_dims(op)
    if not dims:
        return [1]
    direct = list(reversed(dims))[: MAX_RANGE_DIMS - 1] if len(dims) > MAX_RANGE_DIMS \
        else list(reversed(dims))
    sizes = [op.sizes[d] for d in direct]
    if len(dims) > MAX_RANGE_DIMS:
        collapsed = 1
        for d in dims[: len(dims) - (MAX_RANGE_DIMS - 1)]:
            collapsed *= op.sizes[d]
        sizes.append(collapsed)
    return sizes


class OpenCLKernelBuilder(KernelFunction):
    """Builds the `ocl.kernel` of one kernel (see the module docstring)."""

    def __init__(self, op: KernelOp, name: str):
        self.op, self.name = op, name
        self.sizes = op.sizes
        self.order = loop_order(op)
        self.fast_reductions = True
        # Built on memrefs (so the inherited reads see shapes); pointers at the end.
        types = [memref_of(_tensor(v.type)) for v in (*op.inputs, op.res)]
        self.entry = Block(arg_types=types)
        *self.inputs, self.output = self.entry.args
        for i, arg in enumerate(self.inputs):
            arg.name_hint = f"in{i}"
        self.output.name_hint = "out"
        self.at = Builder(InsertPoint.at_end(self.entry))
        self.constants: dict[tuple[str, Attribute], SSAValue] = {}
        self.last_constant: Operation | None = None
        self.accumulator: SSAValue = self.output
        self.accumulated: list[int] = []

    def build_kernel(self) -> ocl.KernelOp:
        env = self.work_item()
        if not self.op.reduction_dims:
            self.store_point(env, [])
        else:
            element = self.accumulator_type()
            reduction = [d for d in self.order if d in self.op.reduction_dims]
            init = self.constant(self.identity(element), element)

            def point(env: Env, carried: list[SSAValue]) -> list[SSAValue]:
                return [self.combine(carried[0], self.body_value(env))]

            (total,) = self.nest(self.loops_for(reduction), [init], point, env)
            self.finish(total, env)
        self.at.insert(ocl.ReturnOp())
        cse(self.entry)
        for arg in list(self.entry.args):
            assert isinstance(arg.type, MemRefType)
            Rewriter.replace_value_with_new_type(arg, ocl.PtrType(arg.type.element_type))
        kernel = ocl.KernelOp(self.name, [a.type for a in self.entry.args],
                              global_size(self.op), Region(self.entry))
        return kernel

    def work_item(self) -> Env:
        """Each parallel dimension's index from the global ids (0 on unit dims)."""
        dims = ndrange_dims(self.op)
        env: Env = {d: self.index(0) for d in self.op.parallel_dims}
        direct = list(reversed(dims))
        collapsed: list[int] = []
        if len(dims) > MAX_RANGE_DIMS:
            direct = direct[: MAX_RANGE_DIMS - 1]
            collapsed = dims[: len(dims) - (MAX_RANGE_DIMS - 1)]
        for axis, d in enumerate(direct):
            env[d] = self.global_id(axis)
            env[d].name_hint = f"i{d}"
        if collapsed:
            rest = self.global_id(MAX_RANGE_DIMS - 1)
            for d in reversed(collapsed):
                size = self.index(self.sizes[d])
                if d == collapsed[0]:
                    env[d] = rest
                else:
                    env[d] = self.emit(arith.RemUIOp(rest, size))
                    rest = self.emit(arith.DivUIOp(rest, size))
                env[d].name_hint = f"i{d}"
        return env

    def global_id(self, axis: int) -> SSAValue:
        return self.emit(ocl.GlobalIdOp(axis))

    def loops_for(self, dims: Sequence[int]) -> list[Loop]:
        return [Loop(d, self.index(0), self.index(self.sizes[d])) for d in dims]

    def linear_index(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        """Row-major: sum(index_k * stride_k)."""
        assert isinstance(buffer.type, MemRefType)
        shape = tuple(buffer.type.get_shape())
        total: SSAValue | None = None
        stride = 1
        for index, size in reversed(list(zip(indices, shape, strict=True))):
            if size != 1:
                term = index if stride == 1 else self.emit(
                    arith.MuliOp(index, self.index(stride)))
                total = term if total is None else self.emit(arith.AddiOp(term, total))
            stride *= size
        return total if total is not None else self.index(0)

    def load(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        assert isinstance(buffer.type, MemRefType)
        index = self.linear_index(buffer, indices)
        return self.emit(ocl.LoadOp(buffer, index, buffer.type.element_type))

    def store(self, value: SSAValue, buffer: SSAValue, indices: Sequence[SSAValue]) -> None:
        self.at.insert(ocl.StoreOp(value, buffer, self.linear_index(buffer, indices)))


def _tensor(t: Attribute) -> TensorType:
    if not isinstance(t, TensorType):
        raise OpenCLLoweringError(f"lower-to-opencl: expected a tensor, got {t}")
    return t


def lower_kernel(op: KernelOp, name: str | None = None) -> ocl.KernelOp:
    """The `ocl.kernel` computing `op` (named after it unless `name` is given)."""
    return OpenCLKernelBuilder(op, name or op.sym_name.data).build_kernel()


@register_pass
@dataclass(frozen=True)
class LowerToOpenCLPass(ModulePass):
    """lower-to-opencl: each kernel into an ocl.kernel (one work item per output element).

    The host functions launch them with ocl.enqueue.
    """

    name = "lower-to-opencl"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        names = {o.sym_name.data for o in op.ops if isinstance(o, func.FuncOp | ocl.KernelOp)}
        for k, kernel in enumerate([k for k in op.walk() if isinstance(k, KernelOp)]):
            name = f"{kernel.sym_name.data}_{k}"
            if name in names:
                raise OpenCLLoweringError(f"cannot name kernel @{kernel.sym_name.data}'s "
                                          f"ocl.kernel @{name}: the module already has one")
            host = kernel
            while (parent := host.parent_op()) is not None and not isinstance(parent, ModuleOp):
                host = parent
            op.body.block.insert_op_before(lower_kernel(kernel, name), host)
            launch = ocl.EnqueueOp(name, list(kernel.inputs), kernel.res.type)
            Builder(InsertPoint.before(kernel)).insert(launch)
            kernel.res.replace_all_uses_with(launch.res)
            kernel.detach()
            kernel.erase()


__all__ = ["LowerToOpenCLPass", "OpenCLKernelBuilder", "OpenCLLoweringError", "global_size",
           "lower_kernel"]
