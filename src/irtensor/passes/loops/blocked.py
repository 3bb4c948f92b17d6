"""Blocked accumulation: how every reduction of the loop lowerings adds its values.

A reduction loop that adds n values into one accumulator, one after the other, makes
an error that grows with n: in f32 a sum of 2**24 ones stops growing. Here every
accumulator adds at most `BLOCK` values (`loop_parts.fresh_after`): a reduction loop of
more trips becomes nested levels of at most `BLOCK` trips (`loop_parts.levels_of`), and
the body of the loop above each group of inner loops starts a fresh accumulator (the
identity) that the inner loops fill and that is then combined into the enclosing one.
The error then grows with `BLOCK` times the number of levels, log(n), as a pairwise sum
does, for one fold per `BLOCK` values. Exact combiners (max, integer and bool sums) give
the same results as before.

The register form carries the accumulators as `iter_args` (`accumulate`: the loop
lowering's reductions, the register blocks of matmul and conv, OpenCL's work items);
the memory form keeps them in buffers over the parallel points inside the reduction
loops (`accumulate_in_memory`: any loop order), one buffer per level.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod
from typing import TYPE_CHECKING

from xdsl.dialects import arith, memref
from xdsl.ir import SSAValue

from irtensor.passes.loops.loop_parts import (
    AnyLoop,
    Env,
    Inner,
    Level,
    Loop,
    Planned,
    level_key,
    levels_of,
)
from irtensor.passes.loops.loop_parts import fresh_after as _fresh_after

if TYPE_CHECKING:
    from irtensor.passes.loops.loop_builder import KernelFunction

# (env, target buffer) -> nothing: combine one point's value into the target
PointInto = Callable[[Env, SSAValue], None]


def trips(kf: KernelFunction, loop: AnyLoop) -> int:
    """An upper bound of the trips of `loop` (a `Loop` says its own, else one)."""
    if isinstance(loop, Level | Loop):
        return loop.trips
    if loop.kind == "tile":
        return -(-kf.sizes[loop.dim] // loop.tile)
    return loop.tile if loop.kind == "point" else kf.sizes[loop.dim]


def reduces(kf: KernelFunction, dim: int) -> bool:
    """Whether a loop over `dim` reduces: one of the kernel's reduction dims, or a dim
    past its own, which stands for its reduction dims flattened into one (OpenCL's
    work-group reductions stride over it)."""
    return dim in kf.op.reduction_dims or dim >= len(kf.sizes)


def split_levels(kf: KernelFunction, loops: Sequence[AnyLoop]) -> list[AnyLoop]:
    """`loops` with each reduction loop over points (not a tile loop) split into levels
    (`levels_of`) where it has more trips than one accumulator takes, given the values
    each of its trips adds (the trips of the reduction loops inside it)."""
    out: list[AnyLoop] = []
    for i, loop in enumerate(loops):
        splits = (reduces(kf, loop.dim) and not isinstance(loop, Level)
                  and not (isinstance(loop, Planned) and loop.kind == "tile"))
        if splits:
            step = loop.step if isinstance(loop, Loop) else 1
            inner = prod(trips(kf, other) for other in loops[i + 1:]
                         if reduces(kf, other.dim))
            out.extend(levels_of(loop, trips(kf, loop), step, inner))  # type: ignore[arg-type]
        else:
            out.append(loop)
    return out


def fresh_after(kf: KernelFunction, loops: Sequence[AnyLoop]) -> set[int]:
    """The positions in `loops` (reductions and parallel loops mixed) whose body starts
    a fresh accumulator (see `loop_parts.fresh_after`)."""
    reductions = [i for i, loop in enumerate(loops) if reduces(kf, loop.dim)]
    fresh = _fresh_after([trips(kf, loops[i]) for i in reductions])
    return {reductions[j] for j in fresh}


def level_bounds(kf: KernelFunction, loop: Level, env: Env
                 ) -> tuple[SSAValue, SSAValue, SSAValue]:
    """The top level: the base loop's range; a lower one: the block that the enclosing
    level's index starts, cut at the base's end."""
    lower, upper, _ = kf.bounds(loop.base, env)
    if loop.level + 1 < loop.levels:
        lower = env[level_key(loop.dim, loop.level + 1)]
        end = kf.emit(arith.AddiOp(lower, kf.index(loop.span)))
        upper = kf.emit(arith.MinSIOp(end, upper))
    return lower, upper, kf.index(loop.step)


def accumulate(kf: KernelFunction, loops: Sequence[AnyLoop], inits: Sequence[SSAValue],
               step: Inner, env: Env) -> list[SSAValue]:
    """`kf.nest(loops, inits, step, env)` for reduction loops carrying accumulators,
    blocked: long loops split into levels, a fresh accumulator for each group."""
    loops = split_levels(kf, loops)
    cuts = sorted(fresh_after(kf, loops))
    return _accumulate(kf, loops, cuts, list(inits), step, env)


def _accumulate(kf: KernelFunction, loops: Sequence[AnyLoop], cuts: Sequence[int],
                inits: list[SSAValue], step: Inner, env: Env) -> list[SSAValue]:
    if not cuts:
        return kf.nest(loops, inits, step, env)
    head, tail = loops[: cuts[0] + 1], loops[cuts[0] + 1:]
    rest = [c - cuts[0] - 1 for c in cuts[1:]]

    def block(e: Env, carried: list[SSAValue]) -> list[SSAValue]:
        fresh = [kf.constant(kf.identity(v.type), v.type) for v in carried]
        totals = _accumulate(kf, tail, rest, fresh, step, e)
        return [kf.combine(acc, total) for acc, total in zip(carried, totals, strict=True)]

    return kf.nest(head, inits, block, env)


def plan_in_memory(kf: KernelFunction, loops: Sequence[AnyLoop]
                   ) -> tuple[list[AnyLoop], list[int], list[SSAValue]]:
    """For `accumulate_in_memory`: the loops split in levels, where fresh accumulators
    start, and one buffer per such level over the accumulated dims (`kf.accumulated`),
    allocated here (the caller frees them)."""
    loops = split_levels(kf, loops)
    cuts = sorted(fresh_after(kf, loops))
    shape = [kf.sizes[d] for d in kf.accumulated]
    buffers = []
    for _ in cuts:
        alloc = memref.AllocOp.get(kf.accumulator_type(), shape=shape)
        kf.at.insert(alloc)
        alloc.memref.name_hint = "block"
        buffers.append(alloc.memref)
    return loops, cuts, buffers


def accumulate_in_memory(kf: KernelFunction, plan: tuple[list[AnyLoop], list[int],
                                                         list[SSAValue]],
                         target: SSAValue, point: PointInto, env: Env) -> None:
    """The planned loops (they start with a reduction loop; parallel ones among them)
    combining every point into `target` through `point`, blocked as `accumulate`: each
    group's accumulators are one of the plan's buffers, filled with the identity, then
    folded into the enclosing level's buffer (the outermost level's: `target`)."""
    loops, cuts, buffers = plan
    _in_memory(kf, loops, cuts, target, buffers, point, env)


def _in_memory(kf: KernelFunction, loops: Sequence[AnyLoop], cuts: Sequence[int],
               target: SSAValue, buffers: Sequence[SSAValue], point: PointInto,
               env: Env) -> None:
    if not cuts:
        def each(e: Env, carried: list[SSAValue]) -> list[SSAValue]:
            point(e, target)
            return []

        kf.nest(loops, [], each, env)
        return
    head, tail = loops[: cuts[0] + 1], loops[cuts[0] + 1:]
    rest = [c - cuts[0] - 1 for c in cuts[1:]]
    fresh = buffers[0]
    points = [loop for loop in tail if not reduces(kf, loop.dim)]
    identity = kf.constant(kf.identity(kf.accumulator_type()), kf.accumulator_type())

    def clear(e: Env, carried: list[SSAValue]) -> list[SSAValue]:
        kf.store(identity, fresh, kf.accumulator_indices(e, fresh))
        return []

    def fold(e: Env, carried: list[SSAValue]) -> list[SSAValue]:
        into = kf.accumulator_indices(e, target)
        total = kf.load(fresh, kf.accumulator_indices(e, fresh))
        kf.store(kf.combine(kf.load(target, into), total), target, into)
        return []

    def block(e: Env, carried: list[SSAValue]) -> list[SSAValue]:
        kf.nest(points, [], clear, e)
        _in_memory(kf, tail, rest, fresh, buffers[1:], point, e)
        kf.nest(points, [], fold, e)
        return []

    kf.nest(head, [], block, env)


__all__ = ["accumulate", "accumulate_in_memory", "fresh_after", "level_bounds",
           "plan_in_memory", "split_levels", "trips"]
