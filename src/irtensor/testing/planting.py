"""Steering generated programs: weights over op families, and a pattern they must contain.

`irtensor.testing.programs(containing=...)` plants the pattern in every program it draws,
so that a rewrite's property test exercises the rewrite in (nearly) every example instead
of the few in which chance builds it. A pattern is

- an op name: `"hl.neg"`, `"ll.reduce"`, `"hl.avg_pool2d"`;
- a nested pattern of op names, the first operand nested: `"hl.neg(hl.neg)"`,
  `"ll.add(ll.mul)"`, `"ll.reduce(ll.expand)"` (the other operands are drawn as usual);
- an IR snippet (text with `%` or ` = ` in it): the program's text must contain it
  (whitespace-insensitive), a filter rather than a plant;
- a predicate on the module, `lambda module: ...`, also a filter.

Planting draws ops from the family that makes the pattern's op until that op comes out
on the wanted operand (failed draws are taken back), so planted programs are as varied
as the rest: types, shapes and the other operands are drawn, and shrink, as usual.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

PLANT_TRIES = 30  # draws of the op's family before the example is given up


@dataclass(frozen=True)
class Pattern:
    """An op name and the pattern of its first operand (None: any value)."""

    op: str
    first: Pattern | None = None

    def __str__(self) -> str:
        return self.op + (f"({self.first})" if self.first is not None else "")

    def matches(self, value: SSAValue) -> bool:
        owner = getattr(value, "owner", None)
        if getattr(owner, "name", None) != self.op:
            return False
        return self.first is None or (bool(owner.operands)  # type: ignore[union-attr]
                                      and self.first.matches(owner.operands[0]))  # type: ignore[union-attr]


_NAME = re.compile(r"^\s*([a-z_]+\.[a-z0-9_]+)\s*(?:\((.*)\))?\s*$")


def parse_pattern(text: str) -> Pattern:
    """`"hl.neg(hl.neg)"` -> Pattern("hl.neg", Pattern("hl.neg")); ValueError if malformed."""
    match = _NAME.match(text)
    if match is None:
        raise ValueError(f"containing={text!r}: expected an op name, optionally with the "
                         "pattern of its first operand in parentheses, e.g. 'hl.neg(hl.neg)'")
    inner = match.group(2)
    return Pattern(match.group(1), parse_pattern(inner) if inner and inner.strip() else None)


Containing = str | Callable[[ModuleOp], bool] | None


def is_snippet(containing: Containing) -> bool:
    return isinstance(containing, str) and ("%" in containing or " = " in containing)


def check(containing: Containing, dialect: str) -> Pattern | None:
    """The pattern to plant (None for filters and for nothing); errors at the call."""
    if containing is None or callable(containing) or is_snippet(containing):
        return None
    if not isinstance(containing, str):
        raise TypeError(f"containing={containing!r}: expected an op name, a pattern, an IR "
                        "snippet or a predicate")
    pattern = parse_pattern(containing)
    node: Pattern | None = pattern
    while node is not None:
        if not node.op.startswith(f"{dialect}.") and node.op != "ll.const":
            raise ValueError(f"containing={containing!r}: '{node.op}' is not an op of the "
                             f"{dialect} programs drawn")
        node = node.first
    return pattern


def satisfied(containing: Containing, module: ModuleOp, text: str) -> bool:
    """For the filters: does the drawn program contain what was asked for?"""
    if callable(containing):
        return bool(containing(module))
    if is_snippet(containing):
        squash = " ".join(str(containing).split())
        return squash in " ".join(text.split())
    return True


def weighted_family(draw: Callable[[Any], Any], families: Sequence[str],
                    weights: Mapping[str, float] | None) -> str:
    """A family name drawn with `weights` (missing families weigh 1; 0 leaves one out).
    An integer draw, so shrinking leads to the first family listed."""
    if not weights:
        return str(draw(st.sampled_from(list(families))))
    scaled = [(f, max(0, round(100 * weights.get(f, 1.0)))) for f in families]
    total = sum(w for _, w in scaled)
    if total <= 0:
        raise ValueError(f"weights={dict(weights)}: every family weighs 0")
    pick = draw(st.integers(0, total - 1))
    for family, weight in scaled:
        if pick < weight:
            return family
        pick -= weight
    raise AssertionError("unreachable")


def plant(builder: Any, pattern: Pattern, family_of: Callable[[str], Sequence[Callable]]
          ) -> SSAValue:
    """Add ops to `builder` until a value matching `pattern` exists; return it."""
    operand = plant(builder, pattern.first, family_of) if pattern.first is not None else None
    families = family_of(pattern.op)
    builder.target = pattern.op
    try:
        return _draw_until(builder, pattern, families, operand)
    finally:
        builder.target = None


def _draw_until(builder: Any, pattern: Pattern, families: Sequence[Callable],
                operand: SSAValue | None) -> SSAValue:
    for _ in range(PLANT_TRIES):
        mark_ops, saved = len(builder.block.ops), builder.values
        if operand is not None:
            builder.values = [operand]  # the family's first pick is the planted operand
        family = builder.draw(st.sampled_from(list(families)))
        made = family(builder)
        added = builder.values[1:] if operand is not None else builder.values[len(saved):]
        builder.values = saved + [v for v in added if v not in saved]
        if made is not None and pattern.op == getattr(made.owner, "name", None) and (
                operand is None or operand in made.owner.operands[:1]):
            return made
        _take_back(builder, mark_ops, saved)
    assume(False)  # the pattern could not be built on these types: another example
    raise AssertionError("unreachable")


def _take_back(builder: Any, mark_ops: int, saved: list[SSAValue]) -> None:
    """Erase the ops a failed draw added (newest first) and forget their values."""
    ops = list(builder.block.ops)[mark_ops:]
    gone = {r for op in ops for r in op.results}
    for op in reversed(ops):
        op.detach()
        op.erase(safe_erase=False)
    builder.values = [v for v in builder.values if v not in gone]
    for v in saved:
        if v not in builder.values and v not in gone:
            builder.values.append(v)
