"""irtensor's dialects: `hl` (high-level tensor ops) and `ll` (the low-level op types)."""

from irtensor.dialects.hl import HL
from irtensor.dialects.ll import LL

__all__ = ["HL", "LL"]
