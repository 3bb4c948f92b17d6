"""irtensor's dialects: `hl` (tensor programs), `ll` (the low-level op types), `kernel`."""

from irtensor.dialects.hl import HL
from irtensor.dialects.kernel import KERNEL
from irtensor.dialects.ll import LL

__all__ = ["HL", "KERNEL", "LL"]
