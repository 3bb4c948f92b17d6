"""lower-to-opencl: each `kernel.kernel` becomes an `ocl.kernel`, one work item per output
element.

The kernel's parallel dimensions of size > 1 are the NDRange, the last one on
NDRange dimension 0 (adjacent work items write adjacent elements); beyond three,
the leading ones share NDRange dimension 2 and are recovered by division. Each
work item runs the reduction loops (in the schedule's order) with the
accumulator in a register, then the epilogue, then stores its element. The
schedule's tiles of the NDRange dimensions, where they divide them, are the
work-group size (`local`).

A reduction that is long (at least `8 * work-group-size` elements per output)
with few outputs (at most `max-group-outputs`) instead becomes a work-group
reduction: NDRange `[work-group-size, outputs]`, one work-group per output; each
work item combines every `work-group-size`-th element, the partial results meet
in a `__local` array and are combined as a tree (halving, a barrier between
steps), and work item 0 runs the epilogue and stores. Reads,
masks (clamp + select), identities and index arithmetic are those of
`loop_builder.KernelFunction`, which this builder extends; only loads and
stores change: a multi-dimensional index becomes one row-major linear index
on a pointer.

In the host function each kernel becomes `ocl.enqueue @<name>_<k>(inputs)`;
the `ocl.kernel` ops go before it at the top of the module.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from math import prod

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp, TensorType, bf16, f16, f32
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineExpr
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.common_subexpression_elimination import cse

from irtensor import dtypes
from irtensor.dialects import ocl
from irtensor.dialects.kernel import AccessAttr, KernelOp
from irtensor.passes.loops import blocked
from irtensor.passes.loops.loop_builder import (
    Env,
    KernelFunction,
    Loop,
    access_dims,
    loop_order,
    memref_of,
)
from irtensor.passes.registry import register_pass

MAX_RANGE_DIMS = 3
WORK_GROUP_SIZE = 128
MAX_GROUP_OUTPUTS = 512


class OpenCLLoweringError(ValueError):
    """A kernel this pass cannot lower."""


def ndrange_dims(op: KernelOp) -> list[int]:
    """The parallel dimensions that index work items (size > 1), in space order."""
    return [d for d in op.parallel_dims if op.sizes[d] != 1]


def global_size(op: KernelOp, block: dict[int, int] | None = None) -> list[int]:
    """The NDRange: the last wide parallel dim first; more than three: the leading ones
    multiplied into the last NDRange dimension. A kernel without one runs one item.
    `block`: outputs per work item along some dims (their sizes divide by it)."""
    dims = ndrange_dims(op)
    if not dims:
        return [1]
    block = block or {}
    size = {d: op.sizes[d] // block.get(d, 1) for d in dims}
    direct = list(reversed(dims))[: MAX_RANGE_DIMS - 1] if len(dims) > MAX_RANGE_DIMS \
        else list(reversed(dims))
    sizes = [size[d] for d in direct]
    if len(dims) > MAX_RANGE_DIMS:
        collapsed = 1
        for d in dims[: len(dims) - (MAX_RANGE_DIMS - 1)]:
            collapsed *= size[d]
        sizes.append(collapsed)
    return sizes


def register_block(op: KernelOp, cols: int = 16, rows: int = 8,
                   budget: int = 1600) -> dict[int, int]:
    """Outputs per work item of a reduction (a matmul's or a conv's): up to `cols` along
    the innermost wide parallel dim and `rows` along the parallel dim whose block shares
    the costliest loads (the reads that do not depend on it: a conv's masked input
    serves a block of output channels), powers of two that divide them; halved while the
    unrolled body would exceed about `budget` ops (compile time). PoCL on this project's
    CPUs: matmul 1024^3 4x4 3.6, 8x8 9.5, 16x8 19-29 GFLOP/s."""
    dims = ndrange_dims(op)
    if not op.reduction_dims or not dims:
        return {}
    costs = [(4 + (8 if a.constraints.constraints else 0), set(access_dims(a)))
             for a in op.accesses]
    # What a block along d shares: the loads in the reduction loop (reads that depend on a
    # reduction dim) that do not depend on d. A block that shares none (a row max: every
    # load is its own) only takes work items from the device's vectoriser, which works
    # across work items (PoCL: softmax's partial max 73 -> 14 ms without a block).
    varying = [(cost, used) for cost, used in costs if used & set(op.reduction_dims)]
    shared = {d: sum(cost for cost, used in varying if d not in used) for d in dims}
    inner = dims[-1]
    # Index arithmetic with floordiv/mod (a reshaped view) is mostly common to neighbouring
    # outputs: a block shares it (PoCL group norm's partial sums: 60 ms without, 14 with).
    divided = sum(4 for a in op.accesses if _divides(a)
                  and set(access_dims(a)) & set(op.reduction_dims))
    shared = {d: cost + divided for d, cost in shared.items()}
    wanted = {inner: cols} if shared[inner] else {}
    if len(dims) > 1:
        best = max(reversed(dims[:-1]), key=lambda d: shared[d])
        if shared[best]:
            wanted[best] = rows
    if not wanted:
        return {}
    per_point = len(op.body.block.ops) + sum(cost for cost, _ in costs)
    while prod(wanted.values()) * per_point > budget and max(wanted.values()) > 1:
        # on a tie the rows give way: columns are the contiguous loads
        widest = max(wanted, key=lambda d: (wanted[d], d != inner))
        wanted[widest] //= 2
    block = {}
    for d, width in wanted.items():
        fit = width
        while fit > 1 and (op.sizes[d] % fit or op.sizes[d] < 2 * fit):
            fit //= 2
        if fit > 1:
            block[d] = fit
    return block


def _divides(access: AccessAttr) -> bool:
    """Whether a read's index uses floordiv or mod."""
    return any(_has_division(e) for e in access.affine_map.results)


def _has_division(expr: AffineExpr) -> bool:
    return isinstance(expr, AffineBinaryOpExpr) and (
        expr.kind in (AffineBinaryOpKind.FloorDiv, AffineBinaryOpKind.Mod)
        or _has_division(expr.lhs) or _has_division(expr.rhs))


def local_size(op: KernelOp, block: dict[int, int] | None = None) -> list[int] | None:
    """The schedule's tiles of the NDRange dimensions as the work-group size, where a
    tile divides its dimension (else 1); None without tiles (the device chooses). With a
    `block`, a tile counts work items: tile / block."""
    if op.schedule is None:
        return None
    dims = ndrange_dims(op)
    if not dims or len(dims) > MAX_RANGE_DIMS:
        return None
    block = block or {}
    local = []
    for d in reversed(dims):
        b = block.get(d, 1)
        tile, size = op.schedule.tile_sizes[d], op.sizes[d]
        items = tile // b if 0 < tile < size and tile % b == 0 else 0
        local.append(items if items > 1 and (size // b) % items == 0 else 1)
    return local if any(n > 1 for n in local) else None


def output_count(op: KernelOp) -> int:
    return prod(op.sizes[d] for d in op.parallel_dims)


def reduction_length(op: KernelOp) -> int:
    return prod(op.sizes[d] for d in op.reduction_dims) if op.reduction_dims else 0


def uses_group_reduction(op: KernelOp, group: int = WORK_GROUP_SIZE,
                         max_outputs: int = MAX_GROUP_OUTPUTS) -> bool:
    """Long reductions with few outputs: a work-group per output (module docstring)."""
    return (group > 1 and reduction_length(op) >= 8 * group
            and 0 < output_count(op) <= max_outputs)


class OpenCLKernelBuilder(KernelFunction):
    """Builds the `ocl.kernel` of one kernel (see the module docstring)."""

    def __init__(self, op: KernelOp, name: str, group: int = WORK_GROUP_SIZE,
                 max_group_outputs: int = MAX_GROUP_OUTPUTS):
        self.op, self.name = op, name
        self.group = group if uses_group_reduction(op, group, max_group_outputs) else 0
        self.block = {} if self.group else register_block(op)
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
        self.constants: dict[tuple[str | int, Attribute], SSAValue] = {}
        self.last_constant: Operation | None = None
        self.accumulator: SSAValue = self.output
        self.accumulated: list[int] = []

    def build_kernel(self) -> ocl.KernelOp:
        if self.group:
            self.group_reduction()
            return self.kernel([self.group, output_count(self.op)], [self.group, 1])
        env = self.work_item()
        if not self.op.reduction_dims:
            self.store_point(env, [])
        else:
            self.blocked_reduction(env)
        return self.kernel(global_size(self.op, self.block), local_size(self.op, self.block))

    def blocked_reduction(self, env: Env) -> None:
        """The reduction loops once, carrying one accumulator per output of the work
        item's block; each point's body is evaluated for every output."""
        element = self.accumulator_type()
        reduction = [d for d in self.order if d in self.op.reduction_dims]
        init = self.constant(self.identity(element), element)
        outputs = self.block_points(env)

        def point(env: Env, carried: list[SSAValue]) -> list[SSAValue]:
            inner = {d: env[d] for d in reduction}
            return [self.combine(acc, self.body_value({**out, **inner}))
                    for acc, out in zip(carried, outputs, strict=True)]

        totals = blocked.accumulate(self, self.plan(reduction), [init] * len(outputs), point,
                                    env)
        for total, out in zip(totals, outputs, strict=True):
            self.finish(total, out)

    def block_points(self, env: Env) -> list[Env]:
        """The outputs of this work item: its first, then the rest of its block."""
        points = [env]
        for d, width in self.block.items():
            points = [{**p, d: p[d] if j == 0 else self.emit(arith.AddiOp(p[d], self.index(j)))}
                      for p in points for j in range(width)]
        return points

    def kernel(self, sizes: Sequence[int], local: Sequence[int] | None) -> ocl.KernelOp:
        """The finished `ocl.kernel`: pointers instead of memrefs."""
        self.at.insert(ocl.ReturnOp())
        cse(self.entry)
        for arg in list(self.entry.args):
            assert isinstance(arg.type, MemRefType)
            Rewriter.replace_value_with_new_type(arg, ocl.PtrType(arg.type.element_type))
        return ocl.KernelOp(self.name, [a.type for a in self.entry.args], sizes,
                            Region(self.entry), local)

    # ------------------------------------------------------------------ work-group reductions

    def group_reduction(self) -> None:
        """See the module docstring: strided partial results, a tree in local memory."""
        lid = self.emit(ocl.LocalIdOp(0))
        lid.name_hint = "lid"
        env: Env = {d: self.index(0) for d in self.op.parallel_dims}
        env.update(self.unflatten(self.emit(ocl.GroupIdOp(1)),
                                  [d for d in self.op.parallel_dims if self.sizes[d] != 1]))
        element = self.accumulator_type()
        reduction = [d for d in self.order if d in self.op.reduction_dims]
        flat = len(self.sizes)  # a dimension of its own: the flattened reduction
        length = reduction_length(self.op)
        step = Loop(flat, lid, self.index(length), self.group, -(-length // self.group))

        def point(env: Env, carried: list[SSAValue]) -> list[SSAValue]:
            env[flat].name_hint = "r"
            env = {**env, **self.unflatten(env[flat], reduction)}
            return [self.combine(carried[0], self.body_value(env))]

        identity = self.constant(self.identity(element), element)
        (partial,) = blocked.accumulate(self, [step], [identity], point, env)
        # Half-precision partials meet in f32: OpenCL C has no `half` variables (nor
        # arrays) without cl_khr_fp16, and the tree's sums then round once, at the end.
        wide = f32 if element in (f16, bf16) else element
        scratch = self.emit(ocl.LocalArrayOp(wide, self.group))
        scratch.name_hint = "partial"
        self.at.insert(ocl.StoreOp(self.widened(partial, wide), scratch, lid))
        half = self.group // 2
        while half >= 1:
            self.at.insert(ocl.BarrierOp("local"))
            with self.when(arith.CmpiOp(lid, self.index(half), "ult")):
                other = self.emit(arith.AddiOp(lid, self.index(half)))
                mine = self.emit(ocl.LoadOp(scratch, lid))
                theirs = self.emit(ocl.LoadOp(scratch, other))
                self.at.insert(ocl.StoreOp(self.combine(mine, theirs), scratch, lid))
            half //= 2
        self.at.insert(ocl.BarrierOp("local"))
        with self.when(arith.CmpiOp(lid, self.index(0), "eq")):
            total = self.emit(ocl.LoadOp(scratch, self.index(0)))
            self.finish(self.widened(total, element), env)

    def widened(self, value: SSAValue, t: Attribute) -> SSAValue:
        """`value` as float type `t` (an exact extension, or the one rounding back)."""
        if value.type == t:
            return value
        wider = dtypes.to_numpy(t).itemsize > dtypes.to_numpy(value.type).itemsize
        return self.emit(arith.ExtFOp(value, t) if wider else arith.TruncFOp(value, t))

    def unflatten(self, flat: SSAValue, dims: Sequence[int]) -> Env:
        """Row-major indices of `dims` (the last fastest) from one linear index."""
        env: Env = {}
        rest = flat
        for d in reversed(dims):
            if d == dims[0]:
                env[d] = rest
            else:
                size = self.index(self.sizes[d])
                env[d] = self.emit(arith.RemUIOp(rest, size))
                rest = self.emit(arith.DivUIOp(rest, size))
            env[d].name_hint = f"i{d}"
        return env

    @contextmanager
    def when(self, condition: Operation) -> Iterator[None]:
        """Ops built inside the `with` go into an `scf.if` on `condition`."""
        cond = self.emit(condition)
        if_op = scf.IfOp(cond, [], Region(Block()))
        self.at.insert(if_op)
        outer, self.at = self.at, Builder(InsertPoint.at_end(if_op.true_region.block))
        try:
            yield
        finally:
            self.at.insert(scf.YieldOp())
            self.at = outer

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
            if (width := self.block.get(d, 1)) > 1:  # the first output of the block
                env[d] = self.emit(arith.MuliOp(env[d], self.index(width)))
            env[d].name_hint = f"i{d}"
        if collapsed:
            rest = self.global_id(MAX_RANGE_DIMS - 1)
            for d in reversed(collapsed):
                width = self.block.get(d, 1)
                size = self.index(self.sizes[d] // width)
                if d == collapsed[0]:
                    env[d] = rest
                else:
                    env[d] = self.emit(arith.RemUIOp(rest, size))
                    rest = self.emit(arith.DivUIOp(rest, size))
                if width > 1:
                    env[d] = self.emit(arith.MuliOp(env[d], self.index(width)))
                env[d].name_hint = f"i{d}"
        return env

    def global_id(self, axis: int) -> SSAValue:
        return self.emit(ocl.GlobalIdOp(axis))

    def dim_range(self, dim: int) -> tuple[SSAValue, SSAValue]:
        """Every loop of a work item covers its whole dimension."""
        return self.index(0), self.index(self.sizes[dim])

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


def lower_kernel(op: KernelOp, name: str | None = None, group: int = WORK_GROUP_SIZE,
                 max_group_outputs: int = MAX_GROUP_OUTPUTS, max_local: int = 256,
                 max_local_sizes: Sequence[int] = (256, 256, 256)) -> ocl.KernelOp:
    """The `ocl.kernel` computing `op` (named after it unless `name` is given); `group`:
    the work-group size of work-group reductions (a power of two; 0: none). A work-group
    size from the schedule's tiles that passes the device's limits (`max_local` items in
    all, `max_local_sizes` per dimension; OpenCL's minimum guarantees by default) is
    dropped: the device chooses."""
    if group & (group - 1):
        raise OpenCLLoweringError(f"lower-to-opencl: work-group-size {group} must be a "
                                  "power of two")
    kernel = OpenCLKernelBuilder(op, name or op.sym_name.data, group,
                                 max_group_outputs).build_kernel()
    local = kernel.local_size
    if local is not None and (prod(local) > max_local or any(
            n > limit for n, limit in zip(local, max_local_sizes, strict=False))):
        del kernel.properties["local"]
    return kernel


@register_pass
@dataclass(frozen=True)
class LowerToOpenCLPass(ModulePass):
    """lower-to-opencl: each kernel into an ocl.kernel (one work item per output element,
    or a work-group per output for long reductions with few outputs).

    The host functions launch them with ocl.enqueue. Options: `work-group-size`
    (a power of two; 0 turns work-group reductions off) and `max-group-outputs`.
    """

    name = "lower-to-opencl"
    work_group_size: int = WORK_GROUP_SIZE
    max_group_outputs: int = MAX_GROUP_OUTPUTS

    def __post_init__(self) -> None:
        size = self.work_group_size
        if size < 0 or size & (size - 1):
            raise ValueError(f"work-group-size must be 0 or a power of two, got {size}")
        if self.max_group_outputs < 0:
            raise ValueError("max-group-outputs must not be negative, got "
                             f"{self.max_group_outputs}")

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
            lowered = lower_kernel(kernel, name, self.work_group_size, self.max_group_outputs)
            op.body.block.insert_op_before(lowered, host)
            launch = ocl.EnqueueOp(name, list(kernel.inputs), kernel.res.type)
            Builder(InsertPoint.before(kernel)).insert(launch)
            kernel.res.replace_all_uses_with(launch.res)
            kernel.detach()
            kernel.erase()


__all__ = ["LowerToOpenCLPass", "OpenCLKernelBuilder", "OpenCLLoweringError", "global_size",
           "local_size", "lower_kernel", "register_block", "uses_group_reduction"]
