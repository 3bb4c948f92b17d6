"""More reductions (frontend/ops.py) and scans (frontend/scan.py) against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import F16, F32, F64, I32, I64, check
from irtensor import Tensor, dtypes
from irtensor.frontend import scan

I1 = np.dtype(np.bool_)


def T(x: np.ndarray) -> Tensor:
    return Tensor(x, dtype=x.dtype)


def realize_all(outs: dict[str, Tensor]) -> dict[str, np.ndarray]:
    ts = list(outs.values())
    ts[0].realize(*ts[1:])
    return {k: t.numpy() for k, t in outs.items()}


A = np.random.default_rng(0).uniform(-2, 2, (3, 4, 5)).astype(F32)
INTS = np.random.default_rng(1).integers(-4, 5, (3, 4, 5)).astype(I32)


def test_prod_over_axes_and_dtypes() -> None:
    b = np.array([[True, False], [True, True]])
    outs = realize_all({
        "all": T(A).prod(), "ax1": T(A).prod(1), "ax02": T(A).prod((0, 2), keepdim=True),
        "int": T(INTS).prod(2), "i64": T(INTS.astype(I64) * 100000).prod(0),
        "bool": T(b).prod(1), "empty": T(np.ones((2, 0), F32)).prod(1),
        "zero_d": T(np.array(3.5, F32)).prod(), "f16": T(A.astype(F16)).prod(2)})
    check(outs["all"], np.prod(A.astype(F64)).astype(F32), 4)
    check(outs["ax1"], A.prod(1))
    check(outs["ax02"], A.prod((0, 2), keepdims=True), 4)
    check(outs["int"], INTS.prod(2, dtype=I32))
    check(outs["i64"], (INTS.astype(I64) * 100000).prod(0))
    check(outs["bool"], np.array([0, 1], I32))
    check(outs["empty"], np.ones(2, F32))
    check(outs["zero_d"], np.array(3.5, F32))
    check(outs["f16"], A.astype(F16).prod(2), 4)


def test_any_all_isclose_allclose() -> None:
    x = np.array([[0.0, 1.0, np.nan], [0.0, 0.0, 0.0]], F32)
    y = x + np.array([[1e-9, 2.0, 0.0]], F32)
    outs = realize_all({
        "any": T(x).any(1), "all": T(x).all(1), "any_all": T(x).any(), "int_all": T(INTS).all(0),
        "empty_any": T(np.zeros((0, 3), F32)).any(0), "empty_all": T(np.zeros((0, 3), F32)).all(0),
        "close": T(x).isclose(T(y)), "close_nan": T(x).isclose(T(y), equal_nan=True),
        "inf": T(np.array([np.inf, -np.inf, np.inf], F32)).isclose(
            T(np.array([np.inf, np.inf, 1e38], F32))),
        "ints": T(INTS).isclose(1)})
    assert outs["any"].tolist() == [True, False] and outs["all"].tolist() == [False, False]
    assert outs["any_all"].item() is True
    check(outs["int_all"], INTS.all(0))
    assert outs["empty_any"].tolist() == [False] * 3 and outs["empty_all"].tolist() == [True] * 3
    check(outs["close"], np.isclose(x, y))
    check(outs["close_nan"], np.isclose(x, y, equal_nan=True))
    assert outs["inf"].tolist() == [True, False, False]
    check(outs["ints"], np.isclose(INTS, 1))
    assert T(A).allclose(T(A + 1e-7)) is True and T(A).allclose(T(A + 1e-3)) is False


def test_var_mean_std_mean_logsumexp() -> None:
    big = np.array([[1000.0, 1000.0, -np.inf], [-np.inf, -np.inf, -np.inf], [np.inf, 0, 1]], F32)
    v, m = T(A).var_mean(1)
    s, m2 = T(A).std_mean((0, 2), keepdim=True, correction=0)
    outs = realize_all({"v": v, "m": m, "s": s, "m2": m2, "lse": T(A).logsumexp(2),
                        "lse_all": T(A).logsumexp(), "lse_big": T(big).logsumexp(1),
                        "lse_int": T(INTS).logsumexp(0, keepdim=True)})
    check(outs["v"], A.var(1, ddof=1))
    check(outs["m"], A.mean(1))
    check(outs["s"], A.std((0, 2), keepdims=True))
    check(outs["m2"], A.mean((0, 2), keepdims=True))
    ref = np.log(np.exp(A.astype(F64)).sum(2)).astype(F32)
    check(outs["lse"], ref)
    check(outs["lse_all"], np.log(np.exp(A.astype(F64)).sum()).astype(F32))
    check(outs["lse_big"], np.array([1000 + np.log(2), -np.inf, np.inf], F32))
    with np.errstate(divide="ignore"):
        want = np.log(np.exp(INTS.astype(F64)).sum(0, keepdims=True)).astype(F32)
    check(outs["lse_int"], want)


def test_argmax_argmin_first_occurrence_and_nan() -> None:
    x = np.array([[1.0, 3.0, 3.0, -1.0], [np.nan, 2.0, np.nan, 5.0], [-1, -1, -1, -1]], F32)
    outs = realize_all({"max1": T(x).argmax(1), "min1": T(x).argmin(1), "flat": T(x).argmax(),
                        "keep": T(x).argmin(0, keepdim=True), "ints": T(INTS).argmax(2),
                        "int_min": T(INTS).argmin(),
                        "bool": T(np.array([False, True, True])).argmax(),
                        "all_keep": T(x).argmax(keepdim=True)})
    check(outs["max1"], np.argmax(x, 1).astype(I32))
    check(outs["min1"], np.argmin(x, 1).astype(I32))
    assert outs["flat"].item() == np.argmax(x) and outs["flat"].dtype == I32
    check(outs["keep"], np.argmin(x, 0, keepdims=True).astype(I32))
    check(outs["ints"], np.argmax(INTS, 2).astype(I32))
    assert outs["int_min"].item() == np.argmin(INTS) and outs["bool"].item() == 1
    assert outs["all_keep"].shape == (1, 1)
    with pytest.raises(ValueError, match="argmax of an empty axis"):
        Tensor.zeros(2, 0).argmax(1)


def test_triu_tril_masked_fill() -> None:
    outs = realize_all({"triu": T(A).triu(), "tril1": T(A).tril(1), "triu_neg": T(A).triu(-1),
                        "bool": T(A > 0).tril(), "int": T(INTS).triu(2),
                        "fill": T(A).masked_fill(T(A > 0), -1.5),
                        "fill_int": T(INTS).masked_fill(T(INTS > 0), 2.7),
                        "fill_t": T(A).masked_fill(T(A[0] > 0), T(np.array(9.0, F64)))})
    check(outs["triu"], np.triu(A))
    check(outs["tril1"], np.tril(A, 1))
    check(outs["triu_neg"], np.triu(A, -1))
    check(outs["bool"], np.tril(A > 0))
    check(outs["int"], np.triu(INTS, 2))
    check(outs["fill"], np.where(A > 0, np.float32(-1.5), A))
    check(outs["fill_int"], np.where(INTS > 0, 2, INTS).astype(I32))
    check(outs["fill_t"], np.where(A[0] > 0, np.float32(9), A))
    with pytest.raises(ValueError, match="triu needs at least 2 dimensions"):
        Tensor([1.0]).triu()


def _scans(x: np.ndarray, axis: int) -> dict[str, np.ndarray]:
    wide = x.astype(F64) if x.dtype.kind == "f" else x
    with np.errstate(over="ignore"):
        return {"cumsum": np.cumsum(wide, axis).astype(x.dtype if x.dtype != I1 else I32),
                "cumprod": np.cumprod(wide, axis).astype(x.dtype if x.dtype != I1 else I32),
                "cummax": np.maximum.accumulate(x, axis),
                "cummin": np.minimum.accumulate(x, axis)}


@pytest.mark.parametrize("dtype", [F32, F64, I32, I64, I1], ids=str)
def test_scans_match_numpy_on_each_axis(dtype: np.dtype) -> None:
    x = (A * 1.5).astype(dtype) if dtype != I1 else A > 0
    outs = realize_all({f"{name}{ax}": getattr(T(x), name)(ax)
                        for name in ("cumsum", "cumprod", "cummax", "cummin") for ax in (0, -1)})
    for ax in (0, -1):
        for name, want in _scans(x, ax).items():
            check(outs[f"{name}{ax}"], want, 4)


def test_scans_of_empty_0d_nan_and_logcumsumexp() -> None:
    z = np.array([1.0, np.nan, 0.5, 3.0], F32)
    lse = np.array([[0.0, 1000.0, -np.inf, 2.0], [-np.inf, -np.inf, 1.0, np.inf]], F32)
    outs = realize_all({"empty": T(np.zeros((0, 3), F32)).cumsum(0),
                        "empty1": T(np.zeros((2, 0), F32)).cumprod(1),
                        "zero_d": T(np.array(2.5, F32)).cumsum(), "nan": T(z).cummax(),
                        "nanmin": T(z).cummin(), "lse": T(lse).logcumsumexp(1),
                        "lse_a": T(A).logcumsumexp(1), "lse_int": Tensor([1, 2, 3]).logcumsumexp()})
    assert outs["empty"].shape == (0, 3) and outs["empty1"].shape == (2, 0)
    check(outs["zero_d"], np.array(2.5, F32))
    check(outs["nan"], np.maximum.accumulate(z))
    check(outs["nanmin"], np.minimum.accumulate(z))
    with np.errstate(invalid="ignore"):
        check(outs["lse"], np.logaddexp.accumulate(lse.astype(F64), 1).astype(F32))
    check(outs["lse_a"], np.logaddexp.accumulate(A.astype(F64), 1).astype(F32))
    check(outs["lse_int"], np.logaddexp.accumulate(np.array([1.0, 2, 3])).astype(F32))


def test_long_axes_scan_in_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 4 here (256 by default): 3 levels for 37 elements, every kind."""
    monkeypatch.setattr(scan, "BLOCK", 4)
    x = np.random.default_rng(2).uniform(0.5, 1.5, (2, 37)).astype(F32)
    i = np.random.default_rng(3).integers(-9, 9, (37, 2)).astype(I32)
    outs = realize_all({"sum": T(x).cumsum(1), "prod": T(x).cumprod(1), "max": T(x).cummax(1),
                        "min": T(i).cummin(0), "isum": T(i).cumsum(0),
                        "lse": T(x).logcumsumexp(1)})
    check(outs["sum"], np.cumsum(x.astype(F64), 1).astype(F32))
    check(outs["prod"], np.cumprod(x.astype(F64), 1).astype(F32), 4)
    check(outs["max"], np.maximum.accumulate(x, 1))
    check(outs["min"], np.minimum.accumulate(i, 0))
    check(outs["isum"], np.cumsum(i, 0).astype(I32))
    check(outs["lse"], np.logaddexp.accumulate(x.astype(F64), 1).astype(F32))


def test_a_short_cumsum_is_one_kernel_and_a_long_one_three() -> None:
    assert len(Tensor.ones(8, 200).cumsum(1).schedule()) == 1
    assert len(Tensor.ones(2, 1000).cumsum(1).schedule()) == 3


def test_bool_dtypes_of_scans_and_prod() -> None:
    b = Tensor([True, True, False])
    assert b.cumsum().dtype is dtypes.int32 and b.cumprod().dtype is dtypes.int32
    assert b.cummax().dtype is dtypes.bool_ and b.prod().dtype is dtypes.int32
    assert b.cumsum().tolist() == [1, 2, 2]
