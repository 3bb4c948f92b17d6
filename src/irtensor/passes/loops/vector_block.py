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

The same block costs tens of ops. A kernel is built this way only when every
op that sees a column-varying value is one this lowering and convert-to-llvm
have on vectors (addf, subf, mulf, divf, negf, maximumf, minimumf on f32 or
f64), every read that
varies along the columns is contiguous in them (or is the block's packed copy)
and the output is written contiguously along them; any other kernel keeps the
scalar block, so the choice never changes a result: each lane computes what the
scalar block's point computes, in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import Float32Type, Float64Type, MemRefType, VectorType
from xdsl.ir import Attribute, Block, SSAValue

from irtensor.dialects.kernel import AccessAttr, IndexOp, YieldOp
from irtensor.passes.kernel.cost_model import linear_coefficient
from irtensor.passes.kernel.kernel_facts import access_dims
from irtensor.passes.loops import blocked
from irtensor.passes.loops.loop_parts import Env, Planned

if TYPE_CHECKING:
    from irtensor.passes.loops.register_block import RegisterBlock

BINARY = (arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.MaximumfOp,
          arith.MinimumfOp)
LANE_TYPES = (Float32Type, Float64Type)
RUN, UNIFORM = "run", "uniform"  # a read along the columns: contiguous, or the same


def lanes_ok(t: Attribute) -> bool:
    return isinstance(t, LANE_TYPES)


def read_kind(access: AccessAttr, column: int, packed: bool) -> str | None:
    """How read of `access` varies along the columns: RUN (consecutive elements of its
    last dimension, step 1), UNIFORM (not at all), None (any other way)."""
    if column not in access_dims(access):
        return UNIFORM
    if packed:  # the block's copy is laid out [reductions..., columns]
        return RUN
    if access.is_masked:
        return None
    steps = [linear_coefficient(e, column) for e in access.affine_map.results]
    return RUN if steps[-1] == 1 and all(k == 0 for k in steps[:-1]) else None


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
        if not isinstance(op, (*BINARY, arith.NegfOp)) or not lanes_ok(op.results[0].type):
            return False
        varies[op.results[0]] = True
    return False


class VectorRows:
    """Builds the blocks of one `RegisterBlock` whose rows can be vectors."""

    def __init__(self, owner: RegisterBlock, kinds: list[str]):
        self.owner, self.kf = owner, owner.kf
        assert owner.dims is not None
        self.column, self.reductions = owner.dims[3], owner.dims[2]
        self.kinds = kinds
        self.loads: dict[tuple[object, ...], SSAValue] = {}

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
        if not lanes_ok(output.element_type):
            return None
        writes = [linear_coefficient(e, column) for e in op.writes.data.results]
        if not writes or writes[-1] != 1 or any(k != 0 for k in writes[:-1]):
            return None
        kinds: list[str] = []
        for i, access in enumerate(op.accesses):
            buffer = kf.inputs[i].type
            assert isinstance(buffer, MemRefType)
            kind = read_kind(access, column, i in packs)
            if kind is None or (kind == RUN and (0 in buffer.get_shape()
                                                 or not lanes_ok(buffer.element_type))):
                return None
            kinds.append(kind)
        n_body = len(op.body_inputs)
        if not region_ok(op.body.block, [k == RUN for k in kinds[:n_body]], column):
            return None
        epilogue = op.epilogue_block
        if epilogue is not None and not region_ok(
                epilogue, [True, *(k == RUN for k in kinds[n_body:])], column):
            return None
        return VectorRows(owner, kinds)

    # ------------------------------------------------------------------ one block

    def block(self, env: Env, row: int | None, row_values: list[SSAValue], first: SSAValue,
              width: int) -> None:
        """Rows x `width` columns from column `first`: one vector accumulator per row."""
        kf, owner = self.kf, self.owner
        run = VectorType(kf.accumulator_type(), [width])
        points = [{**env, **({row: r} if row is not None else {}), self.column: first}
                  for r in (row_values or [None])]  # type: ignore[list-item]
        starts = [self.initial(p, run) for p in points]
        tiled = any(kf.tile(d) for d in self.reductions)
        inits = [kf.constant(0, run)] * len(points) if tiled else starts
        loops = [Planned(d, "point", kf.tile(d)) if kf.tile(d) else Planned(d)
                 for d in self.reductions]

        def step(e: Env, carried: list[SSAValue]) -> list[SSAValue]:
            kf.read_cache, self.loads = {}, {}
            try:
                inner = {d: e[d] for d in self.reductions}
                return [kf.combine(acc, self.body_value({**p, **inner}, width))
                        for acc, p in zip(carried, points, strict=True)]
            finally:
                kf.read_cache = None

        totals = blocked.accumulate(kf, loops, inits, step, env)
        if tiled:
            totals = [kf.combine(s, t) for s, t in zip(starts, totals, strict=True)]
        self.loads = {}  # an epilogue input's run (a bias) is loaded once for all rows
        results = [self.finished(total, p, width) for total, p in zip(totals, points,
                                                                      strict=True)]
        last = owner.last_tile(env) if kf.op.epilogue_block is not None else None
        for total, (value, indices) in zip(totals, results, strict=True):
            if last is not None:  # a tiled reduction keeps partial sums until its last tile
                value = kf.emit(arith.SelectOp(last, value, total))
            kf.at.insert(vector.StoreOp(value, kf.output, indices))

    def initial(self, point: Env, run: VectorType) -> SSAValue:
        """Zeros; for a tiled reduction, the output's partial sums after its first tile."""
        kf = self.kf
        zeros = kf.constant(0, run)
        first = self.owner.first_tile(point)
        if first is None:
            return zeros
        reduced = {**point, **{d: kf.index(0) for d in kf.op.reduction_dims}}
        partial = kf.emit(vector.LoadOp(kf.output, kf.write_indices(reduced), run))
        return kf.emit(arith.SelectOp(first, zeros, partial))

    def finished(self, total: SSAValue, point: Env, width: int
                 ) -> tuple[SSAValue, list[SSAValue]]:
        """(row's values, where the row starts in the output): the total through the
        epilogue, whose reads see the reduction dims at 0."""
        kf = self.kf
        env = {**point, **{d: kf.index(0) for d in kf.op.reduction_dims}}
        epilogue = kf.op.epilogue_block
        if epilogue is not None:
            n_body = len(kf.op.body_inputs)
            reduced = [1 if d in kf.op.reduction_dims else s for d, s in enumerate(kf.sizes)]
            reads = [self.read(i, env, width, reduced) for i in range(n_body,
                                                                      len(kf.op.inputs))]
            total = self.run_region(epilogue, [total, *reads], env, width)
        return self.splat(total, width), kf.write_indices(env)

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
        access = kf.op.accesses[i]
        key = (i, *(env.get(d) for d in access_dims(access)))
        if key not in self.loads:
            if kf.packed is not None and i in kf.packed:
                buffer, dims = kf.packed[i]
                indices = kf.pack_indices(dims, env)
            else:
                buffer = kf.inputs[i]
                indices = [kf.index_expr(e, env) for e in access.affine_map.results]
            assert isinstance(buffer.type, MemRefType)
            run = VectorType(buffer.type.element_type, [width])
            self.loads[key] = kf.emit(vector.LoadOp(buffer, indices, run))
        return self.loads[key]

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
                flags = kf.flags() if kf.contract and isinstance(op, arith.MulfOp) \
                    else op.fastmath  # type: ignore[attr-defined]
                new = arith.NegfOp(operands[0], flags) if isinstance(op, arith.NegfOp) \
                    else type(op)(*operands, flags)  # type: ignore[call-arg]
                mapping[op.results[0]] = kf.emit(new)
            else:
                clone = kf.at.insert(op.clone(value_mapper=mapping))
                if kf.contract and isinstance(clone, arith.MulfOp):
                    clone.fastmath = kf.flags()
        raise ValueError(f"kernel @{kf.op.sym_name.data}: a region must end in kernel.yield")


__all__ = ["VectorRows", "read_kind", "region_ok"]
