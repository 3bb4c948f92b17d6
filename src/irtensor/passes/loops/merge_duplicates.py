"""One op per value in a lowered kernel: xDSL's cse, in one walk.

lower-kernels-to-loops builds each kernel's loops with repeated index arithmetic,
constants and loads (a register block's rows load the same column vector). xDSL's
`cse` merges them, but asks every op with regions (each `scf.for`) for its memory
effects, which walks the loop's whole body, and for each repeated load walks the ops
between the two: on a register-blocked kernel (hundreds of loads inside nested loops)
it took most of the pass's time (1.5 of 2.1 s on group norm's statistics kernel).

`merge_duplicates` does the same merges in one walk. An op is merged with an earlier
identical one (name, operands, properties, attributes, result types) that dominates
it: in the same block or in an enclosing one. Ops without memory effects merge
freely; loads (read-only ops) merge only with a load of the same block and no write
between them, which a counter of writes per block decides: an op that writes, an op
of unknown effects or any op with regions (a loop: it may store) starts a new
generation. Ops with regions are never merged. Unused ops without effects are erased.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Hashable, MutableMapping

from xdsl.ir import Block, Operation
from xdsl.rewriter import Rewriter
from xdsl.traits import MemoryEffectKind, get_effects

Key = tuple[Hashable, ...]


def merge_duplicates(block: Block) -> None:
    """Merge the duplicate ops of `block` and its nested regions, then erase the unused
    effect-free ones."""
    _merge_block(block, ChainMap())
    _erase_unused(block)


def _merge_block(block: Block, known: MutableMapping[Key, Operation]) -> None:
    generation = 0
    for op in list(block.ops):
        if op.regions:
            for region in op.regions:
                for inner in region.blocks:
                    _merge_block(inner, known.new_child())  # type: ignore[attr-defined]
            generation += 1
            continue
        effects = get_effects(op)
        if effects is None or any(e.kind is not MemoryEffectKind.READ for e in effects):
            generation += 1
            continue
        key = _key(op, (id(block), generation) if effects else None)
        if (existing := known.get(key)) is not None:
            for old, new in zip(op.results, existing.results, strict=True):
                old.replace_all_uses_with(new)
            Rewriter.erase_op(op)
        else:
            known[key] = op


def _key(op: Operation, place: Hashable) -> Key:
    return (op.name, tuple(op.operands), tuple(sorted(op.properties.items())),
            tuple(sorted(op.attributes.items())), tuple(r.type for r in op.results), place)


def _erase_unused(block: Block) -> None:
    for op in reversed(list(block.ops)):
        for region in op.regions:
            for inner in region.blocks:
                _erase_unused(inner)
        if (op.results and not op.regions and all(r.first_use is None for r in op.results)
                and get_effects(op) == set()):
            Rewriter.erase_op(op)


__all__ = ["merge_duplicates"]
