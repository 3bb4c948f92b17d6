"""Neural-network layers on the lazy Tensor, with tinygrad's names (code ports by
renaming its imports): `Linear`, `Conv1d`, `Conv2d`, `ConvTranspose2d`, `BatchNorm`
(`BatchNorm1d`/`2d`/`3d`), `LayerNorm`, `GroupNorm`, `RMSNorm`, `Embedding`, `Dropout`.
A layer is a plain object with tensor attributes and a `__call__`; `irtensor.nn.state`
finds its tensors by name, `irtensor.nn.optim` trains them.
"""

from irtensor.nn import optim, state
from irtensor.nn.layers import Conv1d, Conv2d, ConvTranspose2d, Dropout, Embedding, Linear
from irtensor.nn.norm import (
    BatchNorm,
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    GroupNorm,
    LayerNorm,
    RMSNorm,
)

__all__ = ["BatchNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Conv1d", "Conv2d",
           "ConvTranspose2d", "Dropout", "Embedding", "GroupNorm", "LayerNorm", "Linear",
           "RMSNorm", "optim", "state"]
