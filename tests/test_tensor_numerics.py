"""Numbers that must come out right on every device: long and half-precision reductions,
stable formulas (softplus, var), concatenations of computed ints and bools."""

from __future__ import annotations

import numpy as np

from conftest import I1, I32
from irtensor import Tensor


def test_cat_stack_of_computed_ints_and_bools() -> None:
    """A concatenated part that is computed pads with its own type's lowest value."""
    b = np.array([1, 2], I32)
    np.testing.assert_array_equal((Tensor(b) + Tensor(b)).cat(Tensor(b)).numpy(), [2, 4, 1, 2])
    np.testing.assert_array_equal((Tensor(b) * -3).stack(Tensor(b)).numpy(), [[-3, -6], [1, 2]])
    big = np.array([-2**62, 5], np.int64)
    np.testing.assert_array_equal(Tensor(big).cat(Tensor(big) - 1).numpy(),
                                  np.concatenate([big, big - 1]))
    t = np.array([True, False], I1)
    np.testing.assert_array_equal((~Tensor(t)).cat(Tensor(t)).numpy(), [False, True, True, False])
    np.testing.assert_array_equal(Tensor(t).stack(~Tensor(t), dim=1).numpy(),
                                  [[True, False], [False, True]])
