"""irtensor: a multi-level IR compiler for tensor programs, on xDSL.

`from irtensor import Tensor` gives the lazy tensor; `irtensor.ir`,
`irtensor.pipeline` and `irtensor.passes` are the compiler underneath.
"""

from irtensor import dtypes
from irtensor.tensor import Tensor

__all__ = ["Tensor", "dtypes"]
