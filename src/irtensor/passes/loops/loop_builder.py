"""Building one kernel's loop function: `kernel.kernel` -> scf/arith/math/memref.

`KernelFunction(op, name).build()` returns a `func.func` that computes the
kernel on memrefs (see docs/passes/lower-kernels-to-loops.md for the contract).
The pieces, each a short method:

- constants: one `arith.constant` per (value, type), at the top of the function;
- index arithmetic: an affine expression on the loop induction variables;
- reads: indices, the mask's validity, clamped indices, a load, a select of the pad;
- regions: the kernel's body or epilogue cloned at one point of the space;
- nests: `scf.for` loops in the schedule's order, tiled by MLIR's convention (tile
  loops first, `plan`), the outermost dimension over [start, stop);
- the three shapes of kernel: elementwise, reduction with the accumulator in
  `iter_args` (reduction loops innermost), reduction through an accumulator buffer
  (any order); matmul- and conv-like kernels go to `register_block` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref, scf, vector
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    UnitAttr,
    VectorType,
)
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
)
from xdsl.ir.affine.affine_set import AffineConstraintKind
from xdsl.rewriter import InsertPoint

from irtensor import dtypes
from irtensor.dialects._base import element_of, scalar_attr
from irtensor.dialects.kernel import AccessAttr, IndexOp, KernelOp, YieldOp
from irtensor.interp.ll_impls import lowest, scalar_of
from irtensor.passes.kernel.kernel_facts import (
    access_dims,
    is_contraction,
    keeps_partials,
    loop_order,
    outer_extent,
    tiles_of,
)
from irtensor.passes.kernel.views import bounds
from irtensor.passes.kernel.views import linear_terms as linear
from irtensor.passes.loops import blocked, streaming
from irtensor.passes.loops.collapse_splits import collapse_view, collapsed_kernel
from irtensor.passes.loops.loop_parts import (
    AnyLoop,
    Env,
    Inner,
    Level,
    Loop,
    Planned,
    Terms,
    level_key,
    memref_of,
    tile_key,
)
from irtensor.passes.loops.merge_duplicates import merge_duplicates
from irtensor.passes.loops.register_block import RegisterBlock
from irtensor.passes.loops.unroll_hint import (
    NO_UNROLL_ATTR,
    SMALL_ATTR,
    gathers_across_rows,
    is_small,
)

KERNEL_ATTR = "irtensor.kernel"
INDEX = IndexType()


class KernelFunction:
    """Builds the loop function of one kernel."""

    # Class-level defaults, so builders that extend this one with their own __init__
    # (lower-to-opencl) get the plain behaviour: no tiles, no contraction.
    tiles: tuple[int, ...] = ()
    contract: bool = False
    read_cache: dict[tuple[object, ...], SSAValue] | None = None
    # read -> (copy, its dims, its panel width: `RegisterBlock.panel`)
    packed: dict[int, tuple[SSAValue, list[int], int]] | None = None
    matrix_units = False  # whether a bf16 matmul may take AMX's tiles (`tile_block`)
    streaming_stores = False  # whether a large output may be stored non-temporally

    def __init__(self, op: KernelOp, name: str, fast_reductions: bool = True):
        self.op, self.name = op, name
        self.sizes = op.sizes
        self.order = loop_order(op)
        self.tiles = tiles_of(op)
        self.contract = is_contraction(op)
        self.fast_reductions = fast_reductions
        self.matrix_units = self.streaming_stores = True
        types = [memref_of(v.type) for v in op.inputs]
        self.entry = Block(arg_types=[*types, memref_of(op.res.type), IndexType(), IndexType()])
        n = len(op.inputs)
        self.inputs = list(self.entry.args[:n])
        self.output, self.start, self.stop = self.entry.args[n:]
        for i, arg in enumerate(self.inputs):
            arg.name_hint = f"in{i}"
        self.output.name_hint, self.start.name_hint, self.stop.name_hint = "out", "start", "stop"
        self.at = Builder(InsertPoint.at_end(self.entry))
        if (collapsed := collapsed_kernel(op)) is not None:
            self.op, groups, output_groups = collapsed
            self.inputs = [collapse_view(self.at, v, g) for v, g in zip(self.inputs, groups,
                                                                          strict=True)]
            self.output = collapse_view(self.at, self.output, output_groups)
        self.constants: dict[tuple[str | int, Attribute], SSAValue] = {}
        self.last_constant: Operation | None = None
        self.accumulator: SSAValue = self.output
        self.accumulated: list[int] = []  # the dims that index a separate accumulator

    # ------------------------------------------------------------------ the function

    def build(self) -> func.FuncOp:
        block = RegisterBlock(self)
        if not self.op.reduction_dims and self.streaming_stores and streaming.streams(self):
            streaming.store_streamed(self)
        elif not self.op.reduction_dims:
            self.nest(self.plan(self.order), [], self.store_point)
        elif self.fast_reductions and block.applies():
            block.build()
        elif self.fast_reductions and self.reductions_innermost():
            self.reduce_in_registers()
        else:
            self.reduce_in_memory()
        self.at.insert(func.ReturnOp())
        merge_duplicates(self.entry)
        arg_types = [a.type for a in self.entry.args]
        function = func.FuncOp(self.name, (arg_types, []), Region(self.entry))
        function.attributes[KERNEL_ATTR] = UnitAttr()
        if gathers_across_rows(self.op):
            function.attributes[NO_UNROLL_ATTR] = UnitAttr()
        if is_small(self.op):
            function.attributes[SMALL_ATTR] = UnitAttr()
        return function

    def reductions_innermost(self) -> bool:
        """The reduction loops innermost and untiled (a tiled one has a tile loop outside)."""
        reductions = self.op.reduction_dims
        if any(self.tile(d) for d in reductions):
            return False
        n = len(reductions)
        return set(self.order[len(self.order) - n:]) == set(reductions)

    def parallel_order(self) -> list[int]:
        return [d for d in self.order if d not in self.op.reduction_dims]

    def tile(self, dim: int) -> int:
        return self.tiles[dim] if self.tiles else 0

    def plan(self, dims: Sequence[int]) -> list[Planned]:
        """The loops over `dims` (taken in the schedule's order), tiled by MLIR's
        convention: the tile loops of the tiled dims first, then one loop per dim
        (over one tile where tiled, else over the whole range)."""
        ordered = [d for d in self.order if d in dims]
        tile_loops = [Planned(d, "tile", self.tile(d)) for d in ordered if self.tile(d)]
        return [*tile_loops,
                *(Planned(d, "point", self.tile(d)) if self.tile(d) else Planned(d)
                  for d in ordered)]

    def dim_range(self, dim: int) -> tuple[SSAValue, SSAValue]:
        """[start, stop) for the order's outermost dimension, [0, size) for the others."""
        if dim == self.order[0]:
            return self.start, self.stop
        return self.index(0), self.index(self.sizes[dim])

    def point_range(self, dim: int, env: Env) -> tuple[SSAValue, SSAValue]:
        """The points of `dim` inside the current tile (its whole range untiled)."""
        lower, upper = self.dim_range(dim)
        if not self.tile(dim):
            return lower, upper
        first = env[tile_key(dim)]
        end = self.emit(arith.AddiOp(first, self.index(self.tile(dim))))
        return first, self.emit(arith.MinSIOp(end, upper))

    def bounds(self, loop: AnyLoop, env: Env) -> tuple[SSAValue, SSAValue, SSAValue]:
        if isinstance(loop, Level):
            return blocked.level_bounds(self, loop, env)
        if isinstance(loop, Loop):
            return loop.lower, loop.upper, self.index(loop.step)
        if loop.kind == "tile":
            return *self.dim_range(loop.dim), self.index(loop.tile)
        return *self.point_range(loop.dim, env), self.index(1)

    def nest(self, loops: Sequence[AnyLoop], inits: Sequence[SSAValue], inner: Inner,
             env: Env | None = None) -> list[SSAValue]:
        """`loops` nested, outermost first, carrying `inits` as iter_args; `inner`
        builds the innermost body and returns the values it carries on."""
        env = dict(env or {})
        if not loops:
            return inner(env, list(inits))
        loop = loops[0]
        lower, upper, step = self.bounds(loop, env)
        is_tile = isinstance(loop, Planned) and loop.kind == "tile"
        level = loop.level if isinstance(loop, Level) else 0
        block = Block(arg_types=[IndexType(), *(v.type for v in inits)])
        block.args[0].name_hint = (f"t{loop.dim}" if is_tile else f"i{loop.dim}"
                                   + (f"b{level}" if level else ""))
        for arg in block.args[1:]:
            arg.name_hint = "acc"
        for_op = scf.ForOp(lower, upper, step, list(inits), block)
        self.at.insert(for_op)
        outer, self.at = self.at, Builder(InsertPoint.at_end(block))
        env[tile_key(loop.dim) if is_tile else level_key(loop.dim, level)] = block.args[0]
        carried = self.nest(loops[1:], list(block.args[1:]), inner, env)
        self.at.insert(scf.YieldOp(*carried))
        self.at = outer
        return list(for_op.results)

    def loop(self, lower: SSAValue, upper: SSAValue, step: int,
             body: Callable[[SSAValue], None], name: str) -> None:
        """`scf.for %name = lower to upper step step` around what `body` builds at its
        index (no iter_args: a loop of copies or stores)."""
        block = Block(arg_types=[IndexType()])
        block.args[0].name_hint = name
        self.at.insert(scf.ForOp(lower, upper, self.index(step), [], block))
        outer, self.at = self.at, Builder(InsertPoint.at_end(block))
        try:
            body(block.args[0])
            self.at.insert(scf.YieldOp())
        finally:
            self.at = outer

    # ------------------------------------------------------------------ kernel shapes

    def store_point(self, env: Env, carried: list[SSAValue]) -> list[SSAValue]:
        """No reduction: out[writes(point)] = body(point)."""
        self.store(self.body_value(env), self.output, self.write_indices(env))
        return []

    def reduce_in_registers(self) -> None:
        """Reduction loops innermost: the accumulator is an iter_arg of the reduction loops,
        stored (or put through the epilogue) right after them."""
        reduction = [d for d in self.order if d in self.op.reduction_dims]
        element = self.accumulator_type()

        def point(env: Env, carried: list[SSAValue]) -> list[SSAValue]:
            return [self.combine(carried[0], self.body_value(env))]

        def per_output(env: Env, carried: list[SSAValue]) -> list[SSAValue]:
            init = self.constant(self.identity(element), element)
            (total,) = blocked.accumulate(self, self.plan(reduction), [init], point, env)
            self.finish(total, env)
            return []

        self.nest(self.plan(self.parallel_order()), [], per_output)

    def reduce_in_memory(self) -> None:
        """Any loop order and tiles. Inside the loops that come before the first loop
        of a reduction dimension (tile or point loop; none when one is outermost), over
        the points of the parallel dims that have loops after it: initialise an
        accumulator buffer, combine into it at every point of the remaining loops
        (blocked: `blocked.accumulate_in_memory`), then store it through the epilogue."""
        element = self.accumulator_type()
        loops = self.plan(self.order)
        first = next(i for i, loop in enumerate(loops) if loop.dim in self.op.reduction_dims)
        outer, rest = loops[:first], loops[first:]
        inner_loops = [loop for loop in rest if loop.dim not in self.op.reduction_dims]
        self.accumulated = sorted({loop.dim for loop in inner_loops})
        epilogue = self.op.epilogue_block is not None
        if epilogue:
            shape = [self.sizes[d] for d in self.accumulated]
            alloc = memref.AllocOp.get(element, shape=shape)
            self.at.insert(alloc)
            self.accumulator = alloc.memref
            self.accumulator.name_hint = "accumulator"

        def init(env: Env, carried: list[SSAValue]) -> list[SSAValue]:
            identity = self.constant(self.identity(element), element)
            self.store(identity, self.accumulator, self.accumulator_indices(env))
            return []

        def point(env: Env, target: SSAValue) -> None:
            value = self.body_value(env)
            indices = self.accumulator_indices(env, target)
            self.store(self.combine(self.load(target, indices), value), target, indices)

        def apply_epilogue(env: Env, carried: list[SSAValue]) -> list[SSAValue]:
            self.finish(self.load(self.accumulator, self.accumulator_indices(env)), env)
            return []

        plan = blocked.plan_in_memory(self, rest)

        def per_block(env: Env, carried: list[SSAValue]) -> list[SSAValue]:
            self.nest(inner_loops, [], init, env)
            blocked.accumulate_in_memory(self, plan, self.accumulator, point, env)
            if epilogue:
                self.nest(inner_loops, [], apply_epilogue, env)
            return []

        self.nest(outer, [], per_block)
        for buffer in (*plan[2], *([self.accumulator] if epilogue else [])):
            self.at.insert(memref.DeallocOp.get(buffer))

    def finish(self, total: SSAValue, env: Env) -> None:
        """Store a combined value, through the epilogue when there is one."""
        self.store(*self.finished(total, env))

    def finished(self, total: SSAValue, env: Env) -> tuple[SSAValue, SSAValue, list[SSAValue]]:
        """(value, output, indices) of a combined value put through the epilogue when
        there is one (its reads and `kernel.index` see the reduction dims at 0)."""
        env = {**env, **{d: self.index(0) for d in self.op.reduction_dims}}
        block = self.op.epilogue_block
        if block is not None:
            n_body = len(self.op.body_inputs)
            reduced = [1 if d in self.op.reduction_dims else s for d, s in enumerate(self.sizes)]
            reads = [self.read(i, env, reduced) for i in range(n_body, len(self.op.inputs))]
            total = self.run_region(block, [total, *reads], env)
        return total, self.output, self.write_indices(env)

    def accumulator_indices(self, env: Env, buffer: SSAValue | None = None) -> list[SSAValue]:
        """Where this point's accumulator sits in `buffer` (default: the accumulator):
        the output's write indices, or the accumulated dims in a buffer of its own."""
        if (buffer or self.accumulator) is self.output:
            return self.write_indices(env)
        return [env[d] for d in self.accumulated]

    def accumulator_type(self) -> Attribute:
        body_yield = self.op.body.block.last_op
        assert isinstance(body_yield, YieldOp)
        return body_yield.value.type

    # ------------------------------------------------------------------ combining

    def combiner(self) -> str:
        return self.op.combiner.data if self.op.combiner is not None else "sum"

    def identity(self, element: Attribute) -> float | int | bool:
        """sum: 0 of the type; max: -inf, the int minimum, or false (as ll_impls.lowest)."""
        if isinstance(element, VectorType):
            element = element.element_type
        return lowest(element) if self.combiner() == "max" else 0

    def flags(self) -> arith.FastMathFlagsAttr | None:
        """`contract` on a contraction's products and sums (FMA), else none."""
        return arith.FastMathFlagsAttr([FastMathFlag.ALLOW_CONTRACT]) if self.contract else None

    def combine(self, acc: SSAValue, value: SSAValue) -> SSAValue:
        t = acc.type.element_type if isinstance(acc.type, VectorType) else acc.type
        if dtypes.is_bool(t):  # a bool sum (dtype=bool) and a bool max are both `or`
            op: Operation = arith.OrIOp(acc, value)
        elif self.combiner() == "max":
            op = arith.MaximumfOp(acc, value) if dtypes.is_float(t) else arith.MaxSIOp(acc, value)
        else:
            op = (arith.AddfOp(acc, value, self.flags()) if dtypes.is_float(t)
                  else arith.AddiOp(acc, value))
        return self.emit(op)

    # ------------------------------------------------------------------ regions

    def body_value(self, env: Env) -> SSAValue:
        reads = [self.read(i, env, self.sizes) for i in range(len(self.op.body_inputs))]
        return self.run_region(self.op.body.block, reads, env)

    def run_region(self, block: Block, args: Sequence[SSAValue], env: Env) -> SSAValue:
        """The block's ops cloned here, its arguments bound to `args`; the yielded value."""
        mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, args, strict=True))
        for op in block.ops:
            if isinstance(op, YieldOp):
                return mapping[op.value]
            if isinstance(op, IndexOp):
                mapping[op.res] = env[op.dim.value.data]
            elif isinstance(op, arith.ConstantOp):
                mapping[op.result] = self.constant_attr(op.value, op.result.type)
            else:
                clone = self.at.insert(op.clone(value_mapper=mapping))
                if self.contract and isinstance(clone, arith.MulfOp):
                    clone.fastmath = self.flags()
        raise ValueError(f"kernel @{self.op.sym_name.data}: a region must end in kernel.yield")

    # ------------------------------------------------------------------ reads and writes

    def read(self, i: int, env: Env, space: Sequence[int]) -> SSAValue:
        """Input #i at this point through its access; the pad value where its mask fails.
        With a `read_cache` (a register block), each element is read once."""
        if self.read_cache is None:
            return self._read(i, env, space)
        key = (i, *(env.get(d) for d in access_dims(self.op.accesses[i])))
        if key not in self.read_cache:
            self.read_cache[key] = self._read(i, env, space)
        return self.read_cache[key]

    def pack_indices(self, dims: Sequence[int], env: Env, panel: int = 1) -> list[SSAValue]:
        """Where a point sits in a copy of one tile over `dims`: its offset in the tile;
        with panels of `panel` points of the last dim (the columns), `[column // panel,
        other dims..., column % panel]`."""
        offsets = [self.emit(arith.SubiOp(env[d], env[tile_key(d)])) if self.tile(d)
                   else env[d] for d in dims]
        if panel == 1:
            return offsets
        column, width = offsets[-1], self.index(panel)
        which = self.emit(arith.FloorDivSIOp(column, width))
        lane = self.emit(arith.SubiOp(column, self.emit(arith.MuliOp(which, width))))
        return [which, *offsets[:-1], lane]

    def _read(self, i: int, env: Env, space: Sequence[int]) -> SSAValue:
        if self.packed is not None and i in self.packed:  # a register block's copy
            buffer, dims, panel = self.packed[i]
            return self.load(buffer, self.pack_indices(dims, env, panel))
        access: AccessAttr = self.op.accesses[i]
        buffer = self.inputs[i]
        assert isinstance(buffer.type, MemRefType)
        shape, element = tuple(buffer.type.get_shape()), buffer.type.element_type
        pad = self.pad_value(access.pad_value, element_of(self.op.inputs[i]))
        if 0 in shape:  # nothing to load: every valid read would be out of bounds
            return self.constant(pad, element)
        exprs = access.affine_map.results
        indices = [self.index_expr(e, env) for e in exprs]
        if not access.is_masked:
            return self.load(buffer, indices)
        valid = self.validity(access, env)
        clamped = [self.clamp(index, e, size, space)
                   for index, e, size in zip(indices, exprs, shape, strict=True)]
        value = self.load(buffer, clamped)
        return self.emit(arith.SelectOp(valid, value, self.constant(pad, element)))

    @staticmethod
    def pad_value(value: float, source: Attribute) -> float | int | bool:
        """A pad as the input's own type has it (-inf is 0 for ui8), in its signless twin."""
        pad = scalar_of(value, source).item()
        return dtypes.as_signless_value(pad, source) if dtypes.is_int(source) else pad

    def validity(self, access: AccessAttr, env: Env) -> SSAValue:
        """The conjunction of the mask's constraints (`expr >= 0`, `expr == 0`), each
        compared as `positive terms >= negative terms`."""
        result: SSAValue | None = None
        for c in access.constraints.constraints:
            terms, constant = linear(c.lhs - c.rhs)
            left = self.linear_sum([(k, a) for k, a in terms if k > 0], max(constant, 0), env)
            right = self.linear_sum([(-k, a) for k, a in terms if k < 0], max(-constant, 0), env)
            if c.kind == AffineConstraintKind.eq:
                holds = self.emit(arith.CmpiOp(left, right, "eq"))
            elif all(k < 0 for k, _ in terms):  # a bound from above: `d0 + d1 <= 8`
                holds = self.emit(arith.CmpiOp(right, left, "sle"))
            else:
                holds = self.emit(arith.CmpiOp(left, right, "sge"))
            result = holds if result is None else self.emit(arith.AndIOp(result, holds))
        assert result is not None
        return result

    def clamp(self, index: SSAValue, expr: AffineExpr, size: int, space: Sequence[int]
              ) -> SSAValue:
        """`index` forced into [0, size - 1], where its range over the space may leave it."""
        low, high = bounds(expr, space)
        if low < 0:
            below = self.emit(arith.CmpiOp(index, self.index(0), "slt"))
            index = self.emit(arith.SelectOp(below, self.index(0), index))
        if high > size - 1:
            last = self.index(size - 1)
            above = self.emit(arith.CmpiOp(index, last, "sgt"))
            index = self.emit(arith.SelectOp(above, last, index))
        return index

    def write_indices(self, env: Env) -> list[SSAValue]:
        return [self.index_expr(e, env) for e in self.op.writes.data.results]

    def load(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        return self.emit(memref.LoadOp.get(buffer, list(indices)))

    def store(self, value: SSAValue, buffer: SSAValue, indices: Sequence[SSAValue]) -> None:
        self.at.insert(memref.StoreOp.get(value, buffer, list(indices)))

    # ------------------------------------------------------------------ index arithmetic

    def index_expr(self, expr: AffineExpr, env: Env) -> SSAValue:
        """An affine expression as `index` arithmetic (floordiv and mod round to -inf)."""
        if isinstance(expr, AffineDimExpr):
            return env[expr.position]
        if isinstance(expr, AffineConstantExpr):
            return self.index(expr.value)
        assert isinstance(expr, AffineBinaryOpExpr)
        kind = expr.kind
        if kind == AffineBinaryOpKind.Add or (
                kind == AffineBinaryOpKind.Mul and isinstance(expr.rhs, AffineConstantExpr)):
            return self.linear_sum(*linear(expr), env)
        a, b = self.index_expr(expr.lhs, env), self.index_expr(expr.rhs, env)
        if kind == AffineBinaryOpKind.Mul:
            return self.emit(arith.MuliOp(a, b))
        if kind == AffineBinaryOpKind.CeilDiv:  # -((-a) floordiv b)
            negated = self.emit(arith.SubiOp(self.index(0), a))
            quotient = self.emit(arith.FloorDivSIOp(negated, b))
            return self.emit(arith.SubiOp(self.index(0), quotient))
        quotient = self.emit(arith.FloorDivSIOp(a, b))
        if kind == AffineBinaryOpKind.FloorDiv:
            return quotient
        assert kind == AffineBinaryOpKind.Mod  # a - (a floordiv b) * b
        return self.emit(arith.SubiOp(a, self.emit(arith.MuliOp(quotient, b))))

    def linear_sum(self, terms: Terms, constant: int, env: Env) -> SSAValue:
        """sum(k * atom) + constant: the positive terms added, then the negative ones
        subtracted, so `d0 - d1 - 1` reads as it is written."""
        value: SSAValue | None = None
        for k, atom in terms:
            if k > 0:
                term = self.scaled(atom, k, env)
                value = term if value is None else self.emit(arith.AddiOp(value, term))
        if constant > 0:
            c = self.index(constant)
            value = c if value is None else self.emit(arith.AddiOp(value, c))
        for k, atom in terms:
            if k < 0:
                start = value if value is not None else self.index(0)
                value = self.emit(arith.SubiOp(start, self.scaled(atom, -k, env)))
        if value is None:
            return self.index(constant)
        if constant < 0:
            value = self.emit(arith.SubiOp(value, self.index(-constant)))
        return value

    def scaled(self, atom: AffineExpr, k: int, env: Env) -> SSAValue:
        term = self.index_expr(atom, env)
        return term if k == 1 else self.emit(arith.MuliOp(term, self.index(k)))

    # ------------------------------------------------------------------ constants

    def index(self, value: int) -> SSAValue:
        known = self.constants.get((value, INDEX))  # made once: no attribute to build
        return known if known is not None else \
            self.constant_attr(IntegerAttr(value, INDEX), INDEX)

    def constant(self, value: float | int | bool, element: Attribute) -> SSAValue:
        """The value of type `element`; of a vector type, the scalar broadcast here."""
        if isinstance(element, VectorType):
            lane = self.constant(value, element.element_type)
            return self.emit(vector.BroadcastOp(lane, element))
        return self.constant_attr(scalar_attr(value, element), element)

    def constant_attr(self, attr: Attribute, t: Attribute) -> SSAValue:
        """One `arith.constant` per value and type, at the top of the function (a float's
        text tells -0.0 from 0.0, which compare equal)."""
        key = (attr.value.data, t) if isinstance(attr, IntegerAttr) else (str(attr), t)
        if key not in self.constants:
            op = arith.ConstantOp(attr, t)
            if isinstance(t, IndexType) and isinstance(attr, IntegerAttr):
                op.result.name_hint = f"c{attr.value.data}".replace("-", "m")
            point = (InsertPoint.after(self.last_constant) if self.last_constant is not None
                     else InsertPoint.at_start(self.entry))
            Builder(point).insert(op)
            self.last_constant = op
            self.constants[key] = op.result
        return self.constants[key]

    def emit(self, op: Operation) -> SSAValue:
        return self.at.insert(op).results[0]






__all__ = ["KERNEL_ATTR", "KernelFunction", "Loop", "Planned", "access_dims", "is_contraction",
           "keeps_partials", "loop_order", "memref_of", "outer_extent", "tile_key", "tiles_of"]
