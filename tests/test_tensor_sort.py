"""sort, argsort and topk (frontend/sort.py): by rank and by a bitonic network."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import F32, F64, I32, I64, check
from irtensor import Tensor
from irtensor.frontend import sort

RNG = np.random.default_rng(0)
TIES = np.array([[3.0, 1.0, 3.0, np.nan, -0.5, 1.0, np.nan, -np.inf],
                 [0.0, 0.0, 2.0, -1.0, np.inf, 2.0, 0.0, 5.0]], F32)


def T(x: np.ndarray) -> Tensor:
    return Tensor(x, dtype=x.dtype)


def realize_all(outs: dict[str, Tensor]) -> dict[str, np.ndarray]:
    ts = list(outs.values())
    ts[0].realize(*ts[1:])
    return {k: t.numpy() for k, t in outs.items()}


def _descending(x: np.ndarray, axis: int) -> np.ndarray:
    """Stable descending order with NaN first (torch's sort(descending=True, stable=True))."""
    key = np.where(np.isnan(x), -np.inf, -np.nan_to_num(x, nan=0.0, posinf=np.inf,
                                                         neginf=-np.inf))
    nan_first = np.where(np.isnan(x), 0, 1)
    order = np.lexsort((key, nan_first), axis=axis) if x.ndim == 1 else np.stack(
        [np.lexsort((k, n)) for k, n in zip(key, nan_first, strict=True)])
    return order


def _sorts(x: np.ndarray) -> dict[str, Tensor]:
    v, i = T(x).sort()
    dv, di = T(x).sort(descending=True)
    v0, i0 = T(x).sort(0)
    tv, ti = T(x).topk(3)
    sv, si = T(x).topk(2, largest=False)
    return {"v": v, "i": i, "dv": dv, "di": di, "v0": v0, "i0": i0, "tv": tv, "ti": ti,
            "sv": sv, "si": si, "arg": T(x).argsort(0, descending=True)}


def _check_sorts(x: np.ndarray, outs: dict[str, np.ndarray]) -> None:
    order = np.argsort(x, -1, kind="stable")
    check(outs["i"], order.astype(I32))
    check(outs["v"], np.take_along_axis(x, order, -1))
    down = _descending(x, -1)
    check(outs["di"], down.astype(I32))
    check(outs["dv"], np.take_along_axis(x, down, -1))
    check(outs["i0"], np.argsort(x, 0, kind="stable").astype(I32))
    check(outs["v0"], np.sort(x, 0))
    check(outs["ti"], down[:, :3].astype(I32))
    check(outs["tv"], np.take_along_axis(x, down[:, :3], -1))
    check(outs["si"], order[:, :2].astype(I32))
    check(outs["sv"], np.take_along_axis(x, order[:, :2], -1))
    check(outs["arg"], _descending(x.T, -1).T.astype(I32))


def test_sort_by_rank_is_stable_with_nan_last_ascending_first_descending() -> None:
    _check_sorts(TIES, realize_all(_sorts(TIES)))


def test_bitonic_network_sorts_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above RANK_LIMIT (4096 by default; 1 here) the bitonic network runs: 8 elements
    on each row (no padding), 5 down the columns of the transpose (padded to 8)."""
    monkeypatch.setattr(sort, "RANK_LIMIT", 1)
    cols = np.ascontiguousarray(TIES[:, :5].T)
    v, i = T(TIES).sort()
    dv, di = T(TIES).sort(descending=True)
    v0, i0 = T(cols).sort(0)
    outs = realize_all({"v": v, "i": i, "dv": dv, "di": di, "v0": v0, "i0": i0})
    order = np.argsort(TIES, -1, kind="stable")
    check(outs["i"], order.astype(I32))
    check(outs["v"], np.take_along_axis(TIES, order, -1))
    down = _descending(TIES, -1)
    check(outs["di"], down.astype(I32))
    check(outs["dv"], np.take_along_axis(TIES, down, -1))
    check(outs["i0"], np.argsort(cols, 0, kind="stable").astype(I32))
    check(outs["v0"], np.sort(cols, 0))


@pytest.mark.parametrize("dtype", [I32, I64, F64], ids=str)
def test_sort_other_dtypes(dtype: np.dtype) -> None:
    x = RNG.integers(-5, 5, (3, 6)).astype(dtype)
    v, i = T(x).sort(-1)
    outs = realize_all({"v": v, "i": i, "b": T(x > 0).sort()[0]})
    check(outs["i"], np.argsort(x, -1, kind="stable").astype(I32))
    check(outs["v"], np.sort(x, -1))
    check(outs["b"], np.sort(x > 0, -1))


def test_sort_of_0d_empty_and_topk_errors() -> None:
    v, i = T(np.array(2.5, F32)).sort()
    ev, ei = T(np.zeros((2, 0), F32)).sort()
    outs = realize_all({"v": v, "i": i, "ev": ev, "ei": ei})
    assert outs["v"].tolist() == 2.5 and outs["i"].tolist() == 0
    assert outs["ev"].shape == (2, 0) and outs["ei"].shape == (2, 0)
    with pytest.raises(ValueError, match="topk: k=9 is out of range for an axis of size 8"):
        T(TIES).topk(9)


def test_kernel_counts() -> None:
    """By rank: the ranks, then values and indices (one each); topk as sort.
    The rank kernel compares every pair of an axis, so a NaN test of an operand that
    varies along the compared axis is computed once (fuse's hoisting), not 100 times:
    kernels more in each schedule (a 4x100 sort: 0.76 ms with them, 1.00 ms without).
    topk's test of the other operand, the same all along that loop, stays in it."""
    x = Tensor.rand(4, 100)
    v, i = x.sort()
    assert len(v.schedule(i)) == 5
    assert len(x.topk(5)[0].schedule()) == 3


def test_cat_of_computed_ints_compiles() -> None:
    """The bitonic network concatenates computed int32 positions: the pad constant of
    such a concat (the int minimum) fits int32 in the kernel body."""
    out = (Tensor([1, 2]) + 1).cat(Tensor([3]) + 1, (Tensor([-5]) * 2))
    assert out.tolist() == [2, 3, 4, -10]
