"""Results a plan keeps between runs: steps that read only arguments the caller holds fixed.

An imported ONNX model passes its weights to the program as arguments, and some kernels
read nothing else: the channels-last copy of a conv's weight (pack-operands), a batch
norm's folded scale. Their results are the same on every run, so a caller that owns
such arguments and never changes them (`irtensor.onnx.Program`, which also makes them
read-only) names them `constant`; the plan computes those steps on the first run and
keeps their results until it is given other array objects in those places.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np


class KeptResults:
    """The kept results of one plan, and the argument arrays they were computed from."""

    def __init__(self) -> None:
        self.sources: tuple[np.ndarray, ...] = ()
        self.arrays: dict[int, tuple[np.ndarray, int]] = {}  # slot -> (array, address)

    def begin(self, inputs: Sequence[np.ndarray], constant: Collection[int]) -> set[int]:
        """The slots known to be fixed in this run (the `constant` arguments); results
        kept from other arrays than these are dropped."""
        held = tuple(inputs[i] for i in sorted(constant))
        if len(held) != len(self.sources) or any(
                a is not b for a, b in zip(held, self.sources, strict=True)):
            self.sources, self.arrays = held, {}
        return set(constant)


__all__ = ["KeptResults"]
