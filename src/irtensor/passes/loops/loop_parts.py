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

Terms = list[tuple[int, AffineExpr]]  # (coefficient, atom) pairs of a linear expression
Env = dict[int, SSAValue]  # iteration dimension -> its index value at this point
Inner = Callable[[Env, list[SSAValue]], list[SSAValue]]


def memref_of(t: Attribute) -> MemRefType:
    """The static, row-major memref of a tensor type (same shape and element type)."""
    assert isinstance(t, TensorType), f"expected a tensor type, got {t}"
    return MemRefType(t.element_type, list(t.get_shape()))


@dataclass(frozen=True)
class Loop:
    """One `scf.for` of a nest with bounds already built: dimension `dim` from `lower`
    to `upper`, by `step` (a register block's loop steps over its blocks)."""

    dim: int
    lower: SSAValue
    upper: SSAValue
    step: int = 1


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


AnyLoop = Loop | Planned


def tile_key(dim: int) -> int:
    """Where a tile loop's index sits in an `Env` (points use the dims, >= 0)."""
    return -1 - dim
