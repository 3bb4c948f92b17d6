"""Recording an op: verified once per signature, unlinked from its operands' uses.

xDSL verifies and links every op it builds; a lazy tensor's ops are built one per
call, so these keep that cheap. They reach into xDSL's op internals (the generated
verifier's closure, the operand use lists) and are what a light recording graph of
our own would replace.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from irtensor.runtime import limits

_VERIFIERS: dict[type, Callable[[Operation], None]] = {}
def own_verifier(cls: type[Operation]) -> Callable[[Operation], None]:
    """The op class's own `verify_` (shapes, element types: the user's errors), without
    xDSL's generic checks of operand and result constraints, which ops built by this
    API always meet and which cost about as much again as building the op. xDSL keeps
    the class's own verifier in the closure of the `verify_` it generates; where that
    is not found, the full `verify`."""
    if (found := _VERIFIERS.get(cls)) is None:
        generated = cls.__dict__.get("verify_")
        names = getattr(getattr(generated, "__code__", None), "co_freevars", ())
        cells = getattr(generated, "__closure__", None) or ()
        own = (cells[names.index("custom_verify")].cell_contents
               if "custom_verify" in names and len(cells) == len(names) else None)
        found = own if callable(own) else cls.verify
        _VERIFIERS[cls] = found
    return found


_VERIFIED: set[Hashable] = set()
MAX_VERIFIED = 1 << 14


def verify(op: Operation) -> None:
    """Run the op's own verifier, once per signature: what it checks (shapes, element
    types, properties) is all in the op's class, operand and result types, properties
    and attributes, and a program recorded again repeats the same signatures (an op
    with regions is always verified)."""
    if op.regions:
        own_verifier(type(op))(op)
        return
    key = (type(op), tuple(v.type for v in op._operands), tuple(r.type for r in op.results),
           tuple(op.properties.items()), tuple(op.attributes.items()))
    if key in _VERIFIED:
        return
    own_verifier(type(op))(op)
    if len(_VERIFIED) >= MAX_VERIFIED:
        _VERIFIED.clear()
    _VERIFIED.add(key)


def forget_uses(op: Operation) -> None:
    """Unlink a recorded op from its operands' use lists. A detached graph is walked
    from results to operands only; were the uses kept, a long-lived tensor (a weight)
    would hold every op ever built on it, with the buffers those ops realized."""
    for operand, use in zip(op._operands, op._operand_uses, strict=True):
        operand.remove_use(use)
    op._operand_uses = ()


def check_size(op: Operation, device: str) -> None:
    """The op's result fits in the device's memory (`irtensor.runtime.limits`)."""
    t = op.results[0].type
    assert isinstance(t, TensorType)
    limits.check_tensor(t, device, f"the result of {op.name}")
