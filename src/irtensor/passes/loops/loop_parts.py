"""The pieces a kernel's loop function is built from, shared by `loop_builder` (every
kernel) and `register_block` (matmul- and conv-like kernels): loops, their environment
of index values, and the memref a tensor becomes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import AffineExpr

from irtensor import dtypes

Terms = list[tuple[int, AffineExpr]]  # (coefficient, atom) pairs of a linear expression
Env = dict[int, SSAValue]  # iteration dimension -> its index value at this point
Inner = Callable[[Env, list[SSAValue]], list[SSAValue]]


def memref_of(t: Attribute) -> MemRefType:
    """The static, row-major memref of a tensor type (same shape; the element type's
    signless twin, which arith computes in: ui8 is i8)."""
    assert isinstance(t, TensorType), f"expected a tensor type, got {t}"
    return MemRefType(dtypes.signless(t.element_type), list(t.get_shape()))


@dataclass(frozen=True)
class Loop:
    """One `scf.for` of a nest with bounds already built: dimension `dim` from `lower`
    to `upper`, by `step` (a register block's loop steps over its blocks)."""

    dim: int
    lower: SSAValue
    upper: SSAValue
    step: int = 1
    trips: int = 1  # at most this many trips (a reduction loop of more is split in levels)


@dataclass(frozen=True)
class Planned:
    """One `scf.for` of a tiled nest, its bounds built where it is placed (they may
    use the tile loops around it). `kind` "full": the dimension's whole range
    (`[start, stop)` for the order's outermost dimension, else `[0, size)`);
    "tile": that range in steps of `tile` (the tile's first index, not a point);
    "point": one tile, `[t, min(t + tile, end))` for the tile loop's `t`."""

    dim: int
    kind: str = "full"
    tile: int = 0


BLOCK = 128  # the most trips of one accumulator before a fresh one takes over
LEVEL_KEYS = 1 << 16  # level keys lie below every tile key


@dataclass(frozen=True)
class Level:
    """One loop of a reduction loop (`base`) split into levels (`levels_of`). Level 0
    walks the points (its index is the dimension's) in blocks of `first` trips; level
    `level` > 0 steps `base_step * first * BLOCK**(level - 1)` points, BLOCK trips a
    block; the top one (`levels - 1`) covers the base's range, each other one the block
    its enclosing level's index starts, cut at the base's end."""

    dim: int
    level: int
    levels: int
    base: Loop | Planned
    base_step: int = 1
    trips: int = BLOCK  # at most this many (the top level: what is left of the base's)
    first: int = BLOCK  # the trips of level 0's blocks

    @property
    def step(self) -> int:
        if self.level == 0:
            return self.base_step
        return self.base_step * self.first * BLOCK ** (self.level - 1)

    @property
    def span(self) -> int:
        """The points one trip of this level covers with the levels below it."""
        return self.base_step * self.first * BLOCK**self.level


AnyLoop = Loop | Planned | Level


def tile_key(dim: int) -> int:
    """Where a tile loop's index sits in an `Env` (points use the dims, >= 0)."""
    return -1 - dim


def level_key(dim: int, level: int) -> int:
    """Where a block level's index sits in an `Env` (level 0: the dimension's own)."""
    return dim if level == 0 else -level * LEVEL_KEYS - 1 - dim


def levels_of(loop: Loop | Planned, trips: int, base_step: int = 1, inner: int = 1
              ) -> list[AnyLoop]:
    """`loop` as nested levels (outermost first) of at most BLOCK trips; itself when it
    has no more trips than its first level would. `inner`: the values each of its
    trips adds (the trips of the reduction loops inside it): level 0 then takes
    BLOCK // inner trips (at least 2), so that one accumulator runs across several of
    its trips rather than starting fresh at each (a 3 x 3 conv's channel loop: 14
    channels of 9 taps per accumulator, not 1)."""
    first = BLOCK // inner if 1 < inner <= BLOCK // 2 else BLOCK
    if trips <= first:
        return [loop]
    count, cover = 2, first * BLOCK
    while cover < trips:
        count, cover = count + 1, cover * BLOCK
    top = -(-trips // (first * BLOCK ** (count - 2)))
    return [Level(loop.dim, k, count, loop, base_step,
                  top if k == count - 1 else first if k == 0 else BLOCK, first)
            for k in reversed(range(count))]


def fresh_after(trips: list[int]) -> set[int]:
    """Blocked accumulation over nested reduction loops with these trip counts
    (outermost first): the positions whose loop body starts a fresh accumulator, folded
    into the enclosing one after the inner loops. Every accumulator then adds at most
    BLOCK values (one loop of more trips adds them all) and the error of a sum grows
    with BLOCK times the number of levels, log(n), instead of with n."""
    fresh: set[int] = set()
    chain = 1
    for i in reversed(range(len(trips))):
        if chain > 1 and chain * trips[i] > BLOCK:
            fresh.add(i)
            chain = 1
        chain *= max(trips[i], 1)
    return fresh
