"""Recording an op: verified once per signature, unlinked from its operands' uses.

xDSL verifies and links every op it builds; a lazy tensor's ops are built one per
call, so these keep that cheap: an op's full verifier runs once per signature.
Unlinking still reaches into xDSL's operand use lists (`_operand_uses`); that is
what a light recording graph of our own would replace.
"""

from __future__ import annotations

from collections.abc import Hashable

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from irtensor.runtime import limits

_VERIFIED: set[Hashable] = set()
MAX_VERIFIED = 1 << 14


def verify(op: Operation) -> None:
    """Run the op's own verifier, once per signature: what it checks (shapes, element
    types, properties) is all in the op's class, operand and result types, properties
    and attributes, and a program recorded again repeats the same signatures (an op
    with regions is always verified)."""
    if op.regions:
        op.verify()
        return
    key = (type(op), tuple(op.operand_types), tuple(r.type for r in op.results),
           tuple(op.properties.items()), tuple(op.attributes.items()))
    if key in _VERIFIED:
        return
    op.verify()
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
