"""A register block's rows as vectors (`lower-kernels-to-loops`, `register_block`).

The scalar register block clones the kernel's body once per point of its
`unroll` x `vector` block at each reduction step: a 6 x 16 matmul block is about
a thousand scalar ops for xDSL to build and for convert-to-llvm to rewrite, and
LLVM's SLP vectoriser then puts the rows back together as vectors. Here each row
of `width` columns is built as one vector value instead:

    reduction point loops carrying one vector<width x T> per row
      a read that walks the columns contiguously: one `vector.load` of the run
      a read that does not vary along the columns: one scalar load, broadcast
      the body's float arithmetic on vectors (scalar operands broadcast)
      acc_row = acc_row + body (`contract`: LLVM makes it an FMA)
    the epilogue on vectors, then one `vector.store` per row

A buffer whose run is followed by size-1 dimensions (`[64, 256, 1]`, indexed 0
there) is read and written through a `memref.collapse_shape` view without them,
made once at the function's start. The same block costs tens of ops.

A block across a conv's output channels (`schedule_blocks.channel_column`) writes
its output with a stride along the columns: each row goes through a small stack
buffer and is stored lane by lane, and an epilogue input that varies along the
channels with a stride (a residual) is gathered lane by lane the same way. Both
happen once per block, after its whole reduction.

A kernel is built this way only when every op that sees a column-varying value
is one this lowering and convert-to-llvm have on vectors (addf, subf, mulf,
divf, negf, maximumf, minimumf on f32 or f64, extf of a bf16 or f16 run to f32)
and every read that varies along the columns is contiguous in them (or is the
block's packed copy); any other kernel keeps the scalar block, so the choice
never changes a result: each lane computes what the scalar block's point
computes, in the same order. A bf16 or f16 output is the row's `truncf`; an
epilogue these rows cannot run takes each row's sums through the scalar epilogue
lane by lane, once per block. A bf16 product sum on a host with AVX512-BF16 adds its
products in pairs on `vdpbf16ps` (`paired_dot`): the same exact products in
another order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    MemRefType,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineExpr
from xdsl.rewriter import InsertPoint

from irtensor.dialects.kernel import AccessAttr, IndexOp, YieldOp
from irtensor.host import bf16_dot
from irtensor.passes.kernel.cost_model import linear_coefficient
from irtensor.passes.kernel.kernel_facts import access_dims
from irtensor.passes.loops import blocked
from irtensor.passes.loops.collapse_splits import collapse_view
from irtensor.passes.loops.loop_parts import Env, Planned
from irtensor.passes.loops.paired_dot import PairedDot

if TYPE_CHECKING:
    from irtensor.passes.loops.register_block import RegisterBlock

BINARY = (arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.MaximumfOp,
          arith.MinimumfOp)
LANE_TYPES = (Float32Type, Float64Type)
# What a row may load and widen to f32 lanes (`arith.extf`) before any arithmetic.
HALF_TYPES = (BFloat16Type, Float16Type)
READ_TYPES = (*LANE_TYPES, *HALF_TYPES)
# How a buffer is walked along the columns: contiguously (one vector load or store),
# not at all (a scalar, broadcast), or with a stride (lane by lane; never in the loop).
RUN, UNIFORM, LANES = "run", "uniform", "lanes"


def pieces(width: int, widest: int | None = None) -> list[tuple[int, int]]:
    """(first column, width) of the vectors a row of `width` columns is made of: powers
    of two, widest first (10: 8 + 2), none wider than `widest`. LLVM splits a
    power-of-two vector into the host's registers; a `<10 x float>` it widens lane by
    lane, spilling the accumulators."""
    out, start = [], 0
    while start < width:
        n = 1 << ((width - start).bit_length() - 1)
        if widest is not None:
            n = min(n, widest)
        out.append((start, n))
        start += n
    return out


def lanes_ok(t: Attribute) -> bool:
    return isinstance(t, LANE_TYPES)


def run_dim(exprs: Sequence[AffineExpr], column: int, shape: Sequence[int]) -> int | None:
    """The dimension of a row-major buffer along which `exprs` walk consecutive elements
    as the column steps by 1: the one result with the column at coefficient 1, the
    column in no other, and only size-1 dimensions (indexed 0) after it; else None."""
    steps = [linear_coefficient(e, column) for e in exprs]
    if steps.count(1) != 1 or any(k not in (0, 1) for k in steps):
        return None
    j = steps.index(1)
    after = zip(exprs[j + 1:], shape[j + 1:], strict=True)
    if any(size != 1 or not (isinstance(e, AffineConstantExpr) and e.value == 0)
           for e, size in after):
        return None
    return j


def read_kind(access: AccessAttr, column: int, packed: bool, shape: Sequence[int]
              ) -> str | None:
    """How a read through `access` varies along the columns: RUN (consecutive elements,
    `run_dim`), UNIFORM (not at all), None (any other way)."""
    if column not in access_dims(access):
        return UNIFORM
    if packed:  # the block's copy holds each block's columns side by side (`panel`)
        return RUN
    if access.is_masked or run_dim(access.affine_map.results, column, shape) is None:
        return None
    return RUN


def region_ok(block: Block, varying: Sequence[bool], column: int) -> bool:
    """Whether every op of `block` that sees a column-varying value can run on vectors
    (`varying`: which block arguments vary along the columns)."""
    varies = {arg: v for arg, v in zip(block.args, varying, strict=True)}
    for op in block.ops:
        if isinstance(op, YieldOp):
            return True
        if isinstance(op, IndexOp):
            if op.dim.value.data == column:
                return False
            varies[op.res] = False
            continue
        if not any(varies.get(o, False) for o in op.operands):
            for result in op.results:
                varies[result] = False
            continue
        if isinstance(op, arith.TruncFOp) and isinstance(op.result.type, HALF_TYPES) \
                and isinstance(op.input.type, Float32Type):
            varies[op.result] = True  # a half output's rounding: only stored after it
            continue
        if not isinstance(op, (*BINARY, arith.NegfOp, arith.ExtFOp)) \
                or not lanes_ok(op.results[0].type):
            return False
        varies[op.results[0]] = True
    return False


class VectorRows:
    """Builds the blocks of one `RegisterBlock` whose rows can be vectors."""

    def __init__(self, owner: RegisterBlock, kinds: list[str], write: str = RUN,
                 lane_epilogue: bool = False):
        self.owner, self.kf = owner, owner.kf
        assert owner.dims is not None
        self.column, self.reductions = owner.dims[3], owner.dims[2]
        self.kinds, self.write = kinds, write
        self.lane_epilogue = lane_epilogue
        body = kinds[:2]
        uniform, run = ((body.index(UNIFORM), body.index(RUN))
                        if sorted(body) == sorted([RUN, UNIFORM]) else (None, None))
        self.dot = PairedDot.of(self, uniform, run) if bf16_dot() else None
        self.loads: dict[tuple[object, ...], SSAValue] = {}
        self.views: dict[object, SSAValue] = {}
        self.scratch: dict[Attribute, SSAValue] = {}

    @staticmethod
    def of(owner: RegisterBlock, packs: Sequence[int]) -> VectorRows | None:
        """The vector builder of `owner`'s blocks (reads `packs` are packed copies), or
        None when its kernel must keep scalar blocks."""
        kf = owner.kf
        assert owner.dims is not None
        column = owner.dims[3]
        op = kf.op
        output = kf.output.type
        assert isinstance(output, MemRefType)
        if kf.combiner() != "sum" or not lanes_ok(kf.accumulator_type()):
            return None
        write = RUN if run_dim(op.writes.data.results, column, output.get_shape()) is not None \
            else LANES
        n_body = len(op.body_inputs)
        kinds: list[str | None] = []
        for i, access in enumerate(op.accesses):
            buffer = kf.inputs[i].type
            assert isinstance(buffer, MemRefType)
            kind = read_kind(access, column, i in packs, buffer.get_shape())
            if kind is None and i >= n_body and write == LANES:
                kind = LANES  # an epilogue input, gathered once per block
            if kind is not None and kind != UNIFORM and (
                    0 in buffer.get_shape() or not isinstance(buffer.element_type, READ_TYPES)):
                kind = None
            if kind is None and i < n_body:
                return None
            kinds.append(kind)
        if not region_ok(op.body.block, [k == RUN for k in kinds[:n_body]], column):
            return None
        epilogue = op.epilogue_block
        vector_epilogue = isinstance(output.element_type, READ_TYPES) and None not in kinds and (
            epilogue is None or region_ok(epilogue, [True, *(k == RUN for k in kinds[n_body:])],
                                          column))
        if vector_epilogue:
            return VectorRows(owner, kinds, write)  # type: ignore[arg-type]
        # The rows' sums through the scalar epilogue lane by lane (a bf16 output's
        # rounding); a tiled reduction's partial sums would need the rows in the output.
        if any(kf.tile(d) for d in op.reduction_dims):
            return None
        return VectorRows(owner, [k or UNIFORM for k in kinds], write, lane_epilogue=True)

    # ------------------------------------------------------------------ one block

    def block(self, env: Env, row: int | None, row_values: list[SSAValue], first: SSAValue,
              width: int) -> None:
        """Rows x `width` columns from column `first`: each row as vector accumulators of
        power-of-two widths (`pieces`)."""
        kf, owner = self.kf, self.owner
        element = kf.accumulator_type()
        widest = self.dot.widest if self.dot is not None else width
        columns = [(owner.offset(first, start), n) for start, n in pieces(width, widest)]
        points = [({**env, **({row: r} if row is not None else {}), self.column: c}, n)
                  for r in (row_values or [None]) for c, n in columns]  # type: ignore[misc]
        starts = [self.initial(p, VectorType(element, [n])) for p, n in points]
        tiled = any(kf.tile(d) for d in self.reductions)
        inits = [kf.constant(0, VectorType(element, [n])) for _, n in points] if tiled \
            else starts
        loops = [Planned(d, "point", kf.tile(d)) if kf.tile(d) else Planned(d)
                 for d in self.reductions]

        def step(e: Env, carried: list[SSAValue]) -> list[SSAValue]:
            kf.read_cache, self.loads = {}, {}
            try:
                inner = {d: e[d] for d in self.reductions}
                return [kf.combine(acc, self.body_value({**p, **inner}, n))
                        for acc, (p, n) in zip(carried, points, strict=True)]
            finally:
                kf.read_cache = None

        if self.dot is not None:
            totals = self.dot.accumulate(points, inits, env)
        else:
            totals = blocked.accumulate(kf, loops, inits, step, env)
        if tiled:
            totals = [kf.combine(s, t) for s, t in zip(starts, totals, strict=True)]
        self.store_rows(totals, points, env)

    def store_rows(self, totals: list[SSAValue], points: list[tuple[Env, int]], env: Env) -> None:
        """Each row's sums (`totals`, one per point of `points`) through the epilogue and
        into the output."""
        kf, owner = self.kf, self.owner
        if self.lane_epilogue:
            for total, (point, n) in zip(totals, points, strict=True):
                self.finish_lanes(total, point, n)
            return
        self.loads = {}  # an epilogue input's run (a bias) is loaded once for all rows
        results = [self.finished(total, p, n) for total, (p, n) in zip(totals, points,
                                                                         strict=True)]
        last = owner.last_tile(env) if kf.op.epilogue_block is not None else None
        for total, (value, env_out), (_, n) in zip(totals, results, points, strict=True):
            if last is not None:  # a tiled reduction keeps partial sums until its last tile
                value = kf.emit(arith.SelectOp(last, value, total))
            if self.write == LANES:
                self.scatter(value, env_out, n)
            else:
                indices = kf.write_indices(env_out)
                kf.at.insert(vector.StoreOp(*self.run_view(kf.output, indices, value=value)))

    def finish_lanes(self, total: SSAValue, point: Env, width: int) -> None:
        """A row's sums through the kernel's scalar epilogue and stored, lane by lane
        from a stack row: for an output or epilogue these rows cannot hold."""
        kf = self.kf
        assert isinstance(total.type, VectorType)
        row = self.stack_row(total.type.element_type)
        kf.at.insert(vector.StoreOp(total, row, [kf.index(0)]))

        def lane(at: SSAValue) -> None:
            env = {**point, self.column: kf.emit(arith.AddiOp(point[self.column], at))}
            value, buffer, indices = kf.finished(kf.load(row, [at]), env)
            kf.store(value, buffer, indices)

        self.each_lane(width, lane)

    def initial(self, point: Env, run: VectorType) -> SSAValue:
        """Zeros; for a tiled reduction, the output's partial sums after its first tile."""
        kf = self.kf
        zeros = kf.constant(0, run)
        first = self.owner.first_tile(point)
        if first is None:
            return zeros
        reduced = {**point, **{d: kf.index(0) for d in kf.op.reduction_dims}}
        if self.write == LANES:
            partial = self.gather_output(reduced, run.get_shape()[0], run.element_type)
        else:
            partial = kf.emit(vector.LoadOp(
                *self.run_view(kf.output, kf.write_indices(reduced)), run))
        return kf.emit(arith.SelectOp(first, zeros, partial))

    def finished(self, total: SSAValue, point: Env, width: int) -> tuple[SSAValue, Env]:
        """(row's values, the point where the row starts in the output): the total
        through the epilogue, whose reads see the reduction dims at 0."""
        kf = self.kf
        env = {**point, **{d: kf.index(0) for d in kf.op.reduction_dims}}
        epilogue = kf.op.epilogue_block
        if epilogue is not None:
            n_body = len(kf.op.body_inputs)
            reduced = [1 if d in kf.op.reduction_dims else s for d, s in enumerate(kf.sizes)]
            reads = [self.read(i, env, width, reduced) for i in range(n_body,
                                                                      len(kf.op.inputs))]
            total = self.run_region(epilogue, [total, *reads], env, width)
        return self.splat(total, width), env

    # ------------------------------------------------------------------ values

    def body_value(self, env: Env, width: int) -> SSAValue:
        kf = self.kf
        reads = [self.read(i, env, width, kf.sizes) for i in range(len(kf.op.body_inputs))]
        return self.splat(self.run_region(kf.op.body.block, reads, env, width), width)

    def read(self, i: int, env: Env, width: int, space: Sequence[int]) -> SSAValue:
        """Read #i along the row: one vector load of its run, or its one scalar."""
        kf = self.kf
        if self.kinds[i] == UNIFORM:
            return kf.read(i, env, space)
        if self.kinds[i] == LANES:
            return self.gather_input(i, env, width, space)
        access = kf.op.accesses[i]
        key = (i, *(env.get(d) for d in access_dims(access)))
        if key not in self.loads:
            if kf.packed is not None and i in kf.packed:
                buffer, dims, panel = kf.packed[i]
                indices = kf.pack_indices(dims, env, panel)
            else:
                buffer = kf.inputs[i]
                indices = [kf.index_expr(e, env) for e in access.affine_map.results]
            assert isinstance(buffer.type, MemRefType)
            run = VectorType(buffer.type.element_type, [width])
            self.loads[key] = kf.emit(vector.LoadOp(*self.run_view(buffer, indices), run))
        return self.loads[key]

    def stack_row(self, element: Attribute) -> SSAValue:
        """A stack buffer of one row (`memref.alloca`, made once at the function's start)
        through which a row is stored or gathered lane by lane."""
        if element not in self.scratch:
            alloca = memref.AllocaOp.get(element, shape=[self.owner.cols])
            alloca.memref.name_hint = "lanes"
            Builder(InsertPoint.at_start(self.kf.entry)).insert(alloca)
            self.scratch[element] = alloca.memref
        return self.scratch[element]

    def lane_envs(self, env: Env, width: int) -> list[Env]:
        return [{**env, self.column: self.owner.offset(env[self.column], lane)}
                for lane in range(width)]

    def lane_addresses(self, exprs: Sequence[AffineExpr], env: Env, width: int
                       ) -> list[list[SSAValue]]:
        """The indices through `exprs` of each lane of the row starting at `env`, each
        lane's whole expression (where `strided_row` does not apply)."""
        return [[self.kf.index_expr(e, lane_env) for e in exprs]
                for lane_env in self.lane_envs(env, width)]

    def strided_row(self, buffer: SSAValue, exprs: Sequence[AffineExpr], env: Env
                    ) -> tuple[SSAValue, SSAValue, int] | None:
        """(a flat view of the buffer, the index there of the row's first lane, the
        constant step from one lane to the next) when every index is linear in the
        column and the buffer is row-major; else None."""
        kf = self.kf
        steps = [linear_coefficient(e, self.column) for e in exprs]
        flat = self.flat_view(buffer)
        if flat is None or any(k is None for k in steps):
            return None
        assert isinstance(buffer.type, MemRefType)
        shape, strides = buffer.type.get_shape(), buffer.type.get_strides()
        first: SSAValue | None = None
        step = 0
        for e, k, size, stride in zip(exprs, steps, shape, strides, strict=True):
            assert k is not None and stride is not None
            step += k * stride
            if size == 1:
                continue
            term = kf.index_expr(e, env)
            if stride != 1:
                term = kf.emit(arith.MuliOp(term, kf.index(stride)))
            first = term if first is None else kf.emit(arith.AddiOp(first, term))
        return flat, first if first is not None else kf.index(0), step

    def flat_view(self, buffer: SSAValue) -> SSAValue | None:
        """The buffer as one dimension (`memref.collapse_shape`, made once at the
        function's start); None for a buffer that is not contiguous row-major."""
        t = buffer.type
        if not isinstance(t, MemRefType) or t.get_offset() != 0 \
                or t.get_strides() != MemRefType(t.element_type, t.get_shape()).get_strides():
            return None
        key = ("flat", buffer)
        if key not in self.views:
            self.views[key] = collapse_view(Builder(InsertPoint.at_start(self.kf.entry)),
                                            buffer, [list(range(len(t.get_shape())))])
        return self.views[key]

    def each_lane(self, width: int, body: Callable[[SSAValue], None]) -> None:
        """`scf.for %lane = 0 to width` around what `body` builds: a few ops a row where
        the lanes one by one were a hundred (LLVM unrolls the loop again)."""
        kf = self.kf
        kf.loop(kf.index(0), kf.index(width), 1, body, "lane")

    def lane_index(self, start: SSAValue, step: int, lane: SSAValue) -> SSAValue:
        kf = self.kf
        return kf.emit(arith.AddiOp(start, kf.emit(arith.MuliOp(lane, kf.index(step)))))

    def scatter(self, value: SSAValue, env: Env, width: int) -> None:
        """Store a row whose columns the output does not hold contiguously, lane by lane
        from a stack row."""
        kf = self.kf
        assert isinstance(value.type, VectorType)
        row = self.stack_row(value.type.element_type)
        kf.at.insert(vector.StoreOp(value, row, [kf.index(0)]))
        exprs = kf.op.writes.data.results
        if (strided := self.strided_row(kf.output, exprs, env)) is not None:
            flat, start, step = strided
            self.each_lane(width, lambda lane: kf.store(
                kf.load(row, [lane]), flat, [self.lane_index(start, step, lane)]))
            return
        for lane, indices in enumerate(self.lane_addresses(exprs, env, width)):
            kf.store(kf.load(row, [kf.index(lane)]), kf.output, indices)

    def gather(self, lanes: Iterable[SSAValue], width: int, element: Attribute) -> SSAValue:
        """One vector of the `width` scalars `lanes`, through the stack row (each made
        just before its store: `lanes` is consumed lazily)."""
        kf = self.kf
        row = self.stack_row(element)
        for lane, value in enumerate(lanes):
            kf.store(value, row, [kf.index(lane)])
        return kf.emit(vector.LoadOp(row, [kf.index(0)], VectorType(element, [width])))

    def gather_strided(self, buffer: SSAValue, exprs: Sequence[AffineExpr], env: Env,
                       width: int) -> SSAValue:
        """The row of `buffer` starting at `env` through `exprs`, lane by lane into the
        stack row: a loop over a flat view where `strided_row` applies."""
        kf = self.kf
        assert isinstance(buffer.type, MemRefType)
        element = buffer.type.element_type
        if (strided := self.strided_row(buffer, exprs, env)) is None:
            return self.gather((kf.load(buffer, at)
                                for at in self.lane_addresses(exprs, env, width)),
                               width, element)
        flat, start, step = strided
        row = self.stack_row(element)
        self.each_lane(width, lambda lane: kf.store(
            kf.load(flat, [self.lane_index(start, step, lane)]), row, [lane]))
        return kf.emit(vector.LoadOp(row, [kf.index(0)], VectorType(element, [width])))

    def gather_output(self, env: Env, width: int, element: Attribute) -> SSAValue:
        """The output's row starting at `env` (a tiled reduction's partial sums)."""
        return self.gather_strided(self.kf.output, self.kf.op.writes.data.results, env,
                                   width)

    def gather_input(self, i: int, env: Env, width: int, space: Sequence[int]) -> SSAValue:
        """Read #i along a row it holds with a stride, lane by lane: a masked read through
        `kf.read` (its pad where the mask fails), a plain one by `gather_strided`."""
        kf = self.kf
        access = kf.op.accesses[i]
        buffer = kf.inputs[i]
        assert isinstance(buffer.type, MemRefType)
        if access.is_masked:
            return self.gather((kf.read(i, e, space) for e in self.lane_envs(env, width)),
                               width, buffer.type.element_type)
        return self.gather_strided(buffer, access.affine_map.results, env, width)

    def run_view(self, buffer: SSAValue, indices: list[SSAValue],
                 value: SSAValue | None = None) -> tuple[SSAValue, ...]:
        """(value,) buffer, indices for a vector op along the buffer's last dimension: a
        buffer with size-1 dimensions after its run (`[64, 256, 1]`, indexed 0 there) as
        a `memref.collapse_shape` view without them, made once at the function's start."""
        assert isinstance(buffer.type, MemRefType)
        shape = buffer.type.get_shape()
        keep = len(shape)
        while keep > 1 and shape[keep - 1] == 1:
            keep -= 1
        if keep < len(shape):
            if buffer not in self.views:
                groups = [[d] for d in range(keep - 1)] + [list(range(keep - 1, len(shape)))]
                self.views[buffer] = collapse_view(
                    Builder(InsertPoint.at_start(self.kf.entry)), buffer, groups)
            buffer, indices = self.views[buffer], indices[:keep]
        return (buffer, indices) if value is None else (value, buffer, indices)

    def splat(self, value: SSAValue, width: int) -> SSAValue:
        if isinstance(value.type, VectorType):
            return value
        return self.kf.emit(vector.BroadcastOp(value, VectorType(value.type, [width])))

    def run_region(self, block: Block, args: Sequence[SSAValue], env: Env, width: int
                   ) -> SSAValue:
        """The block's ops here on `args`: on vectors where an operand is one (the other
        operands broadcast), as the scalar ops they are elsewhere."""
        kf = self.kf
        mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, args, strict=True))
        for op in block.ops:
            if isinstance(op, YieldOp):
                return mapping[op.value]
            if isinstance(op, IndexOp):
                mapping[op.res] = env[op.dim.value.data]
            elif isinstance(op, arith.ConstantOp):
                mapping[op.result] = kf.constant_attr(op.value, op.result.type)
            elif any(isinstance(mapping[o].type, VectorType) for o in op.operands):
                operands = [self.splat(mapping[o], width) for o in op.operands]
                if isinstance(op, arith.ExtFOp | arith.TruncFOp):
                    mapping[op.result] = kf.emit(type(op)(
                        operands[0], VectorType(op.result.type, [width])))
                    continue
                flags = kf.flags() if kf.contract and isinstance(op, arith.MulfOp) \
                    else op.fastmath  # type: ignore[attr-defined]
                if isinstance(op, arith.NegfOp):
                    new: Operation = arith.NegfOp(operands[0], flags)
                else:
                    new = type(op)(*operands, flags)  # type: ignore[call-arg]
                mapping[op.results[0]] = kf.emit(new)
            else:
                clone = kf.at.insert(op.clone(value_mapper=mapping))
                if kf.contract and isinstance(clone, arith.MulfOp):
                    clone.fastmath = kf.flags()
        raise ValueError(f"kernel @{kf.op.sym_name.data}: a region must end in kernel.yield")


__all__ = ["LANES", "RUN", "UNIFORM", "VectorRows", "pieces", "read_kind", "region_ok",
           "run_dim"]
