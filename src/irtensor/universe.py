"""irtensor's dialects and passes for `xdsl-opt`, through xDSL's plugin entry point.

`pip install irtensor` registers this module's `IRTENSOR_UNIVERSE` under the
`xdsl.universe` entry point group, so `xdsl-opt` parses `hl`, `ll`, `kernel` and
`ocl` IR and runs irtensor's passes by name::

    xdsl-opt model.mlir -p decompose-hlops,fuse

Names are listed here so that `xdsl-opt` imports nothing of irtensor until a dialect or
a pass is used; `tests/test_universe.py` checks the list against the pass registry.
xDSL's own passes (canonicalize, cse, dce) are not repeated.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe

PASS_NAMES = (
    "conv-to-mul-sum", "convert-to-llvm", "decompose-hlops", "fold-constants", "fuse", "grad",
    "lower-kernels-to-loops", "lower-to-opencl", "pack-operands", "reorder-loops",
    "split-reductions",
)


def _dialect(name: str) -> Callable[[], Dialect]:
    def load() -> Dialect:
        from irtensor import ir

        ir.make_context()  # registers ll's canonicalization patterns, like every context
        from irtensor.dialects import HL, KERNEL, LL
        from irtensor.dialects.ocl import OCL

        return {"hl": HL, "ll": LL, "kernel": KERNEL, "ocl": OCL}[name]

    return load


def _pass(name: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        from irtensor.passes import get_pass

        return get_pass(name)

    return load


IRTENSOR_UNIVERSE = Universe(
    all_dialects={name: _dialect(name) for name in ("hl", "ll", "kernel", "ocl")},
    all_passes={name: _pass(name) for name in PASS_NAMES},
)
