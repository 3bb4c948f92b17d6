"""irtensor: a multi-level IR compiler for tensor programs, on xDSL.

`from irtensor import Tensor` gives the lazy tensor; `irtensor.ir`,
`irtensor.pipeline` and `irtensor.passes` are the compiler underneath.
"""

from typing import Any

from irtensor import dtypes

__all__ = ["Context", "Tensor", "TinyJit", "dtypes"]


def __getattr__(name: str) -> Any:
    # The frontend is imported on first use, so `irtensor-opt` starts without it.
    if name == "Tensor":
        from irtensor.frontend.tensor import Tensor

        return Tensor
    if name == "TinyJit":
        from irtensor.jit import TinyJit

        return TinyJit
    if name == "Context":
        from irtensor.context import Context

        return Context
    raise AttributeError(f"module 'irtensor' has no attribute {name!r}")
