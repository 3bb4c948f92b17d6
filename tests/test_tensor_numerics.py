"""Numbers that must come out right on every device: long and half-precision reductions,
stable formulas (softplus, var), concatenations of computed ints and bools."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import BF16, F16, I1, I32
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


def test_softplus_is_stable_at_both_ends() -> None:
    x = np.array([100.0, 89.0, 20.0, 3.0, 1e-3, 0.0, -17.0, -30.0, -80.0], np.float32)
    for beta in (1.0, 2.0, 0.5):
        got = Tensor(x).softplus(beta).numpy().astype(np.float64)
        want = np.logaddexp(0, beta * x.astype(np.float64)) / beta
        # exp and log of f32; results below f32's smallest normal may underflow
        np.testing.assert_allclose(got, want, rtol=4e-6, atol=1e-38)
    ends = Tensor(np.array([np.inf, -np.inf], np.float32)).softplus().numpy()
    np.testing.assert_array_equal(ends, [np.inf, 0.0])


def test_var_of_a_large_mean_over_a_small_spread() -> None:
    """The mean's rounding error would add n * error**2 to the squared deviations."""
    rng = np.random.default_rng(3)
    for n, offset in ((100, 1e4), (1000, 1e3), (1_000_000, 1e3)):
        x = (rng.random(n) + offset).astype(np.float32)
        want = np.var(x.astype(np.float64), ddof=1)
        got = float(Tensor(x).var().numpy())
        assert abs(got - want) <= 1e-5 * want, (n, got, want)
        want = np.std(x.astype(np.float64), ddof=0)
        assert abs(float(Tensor(x).std(correction=0).numpy()) - want) <= 1e-5 * want


def _numpy_f32_error(x: np.ndarray, axis: int, ddof: int) -> np.ndarray:
    """numpy's own error on f32 data: its f32 two-pass var against the f64 one."""
    return np.abs(x.var(axis, ddof=ddof).astype(np.float64)
                  - x.astype(np.float64).var(axis, ddof=ddof))


@settings(max_examples=25, deadline=None)
@given(offset=st.sampled_from([0.0, 1.0, -30.0, 1e3, 3e4]),
       scale=st.sampled_from([1e-3, 1.0, 50.0]),
       outlier=st.sampled_from([0.0, 8.0, -1e3]),
       seed=st.integers(0, 2**16))
def test_one_pass_moments_are_as_accurate_as_numpy(offset: float, scale: float,
                                                   outlier: float, seed: int) -> None:
    """mean and var of f32 rows (one read of x: f64 sums of the data shifted by its first
    element) against the exact f64 statistics: off by no more than numpy's f32 two-pass
    var is, plus one f32 rounding; also where the first element, the shift, is an
    outlier, and where the mean dwarfs the spread."""
    rng = np.random.default_rng(seed)
    x = (offset + scale * rng.standard_normal((3, 777))).astype(np.float32)
    x[:, 0] += np.float32(outlier * scale)
    exact = x.astype(np.float64)
    t = Tensor(x)
    got = Tensor.stack([t.mean(1), t.var(1, correction=1)]).numpy().astype(np.float64)
    one_ulp = np.abs(exact.var(1, ddof=1)) * 2.0**-23
    err = np.abs(got[1] - exact.var(1, ddof=1))
    assert (err <= 1.5 * _numpy_f32_error(x, 1, 1) + 2 * one_ulp).all(), (err, one_ulp)
    mean_err, numpy_mean_err = (np.abs(m - exact.mean(1)) for m in (got[0], x.mean(1)))
    assert (mean_err <= numpy_mean_err + np.abs(exact.mean(1)) * 2.0**-23).all()
    norm = t.layernorm(1, eps=0.0).numpy().astype(np.float64)
    want = (exact - exact.mean(1, keepdims=True)) / np.sqrt(exact.var(1, keepdims=True))
    numpy_norm = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True))
    bound = 1.5 * np.abs(numpy_norm - want).max() + 8 * 2.0**-23 * np.abs(want).max()
    assert np.abs(norm - want).max() <= bound


def test_one_pass_moments_keep_numpys_inf_and_nan() -> None:
    """A first element (the shift) that is not finite is no shift: the mean of a row
    with inf is inf, as numpy's, not the nan that inf - inf would make."""
    x = np.array([[np.inf, 1.0, 2.0], [1.0, np.inf, 2.0], [np.nan, 1.0, 2.0],
                  [np.inf, -np.inf, 0.0], [1.0, 2.0, 4.0]], np.float32)
    t = Tensor(x)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(t.mean(1).numpy(), x.mean(1), rtol=3e-7)
        np.testing.assert_array_equal(np.isnan(t.var(1).numpy()), np.isnan(x.var(1, ddof=1)))
    np.testing.assert_allclose(t.var(1).numpy()[4], np.var([1.0, 2.0, 4.0], ddof=1), rtol=1e-6)


def test_half_sums_and_means_accumulate_in_f32() -> None:
    """f16 and bf16 sums and means add in f32 and round once, on every device alike."""
    for dtype, bits in ((F16, 11), (BF16, 8)):
        assert float(Tensor(np.ones(3000, dtype)).sum().numpy()) == float(dtype.type(3000))
        assert float(Tensor.ones(4096, dtype=str(dtype)).sum().numpy()) == 4096
        x = np.full(1000, 3, dtype)
        assert float(Tensor(x).sum().numpy()) == float(dtype.type(3000))
        assert float(Tensor(x).mean().numpy()) == 3
        # 100 * 1000 overflows f16 (65504) but the mean is 100.
        mean = Tensor.full((1000,), 100.0, dtype=str(dtype)).mean().numpy()
        assert mean.dtype == dtype and float(mean) == 100
        rows = np.random.default_rng(bits).random((4, 2000)).astype(dtype)
        want = rows.astype(np.float64).sum(axis=1).astype(dtype)
        got = Tensor(rows).sum(axis=1).numpy()
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
        assert float(Tensor(x).max().numpy()) == 3 and float(Tensor(-x).min().numpy()) == -3


EPS32 = float(np.finfo(np.float32).eps)


def assert_pairwise_accurate(got: object, want: np.ndarray, n: int, c: float = 2.0) -> None:
    """Within c * log2(n) * eps (relative, of the sum of magnitudes): the error bound of
    a pairwise sum, where adding one after another errs by up to n * eps."""
    got = np.asarray(got, np.float64)
    tol = c * math.log2(n) * EPS32
    np.testing.assert_allclose(got, want, rtol=tol, atol=0)


def test_long_sums_and_means_of_constants_keep_growing() -> None:
    """An f32 accumulator that adds one value at a time stops at 2**24 = 16777216."""
    n = 20_000_000
    assert float(Tensor.ones(n).sum().numpy()) == n
    np.testing.assert_array_equal(Tensor.ones(n, 2).sum(axis=0).numpy(), [n, n])
    np.testing.assert_array_equal(Tensor.ones(2, n).sum(axis=1).numpy(), [n, n])
    assert float(Tensor.ones(10**8).mean().numpy()) == 1.0
    assert_pairwise_accurate(Tensor.full((n,), 0.1).sum().numpy(), np.float32(0.1) * 1.0 * n, n)


def test_a_long_sum_of_a_broadcast_value_is_pairwise_accurate() -> None:
    """One value read at every point (a 0-d buffer broadcast): each OpenCL work item
    walked its 2442 points into one accumulator (rel. error 2.4e-5) before its strided
    loop was blocked like every other reduction loop."""
    n = 20_000_000
    got = Tensor(np.float32(0.1)).expand(n).sum().numpy()
    assert_pairwise_accurate(got, np.float32(0.1) * 1.0 * n, n)
    rows = Tensor(np.float32(0.1)).expand(3, n // 8).sum(axis=1).numpy()
    assert_pairwise_accurate(rows, np.full(3, np.float32(0.1) * 1.0 * (n // 8)), n // 8)


def test_long_sums_of_data_views_and_computed_values() -> None:
    rng = np.random.default_rng(7)
    n = 20_000_000
    x = rng.random(n, dtype=np.float32)
    want = x.astype(np.float64).sum()
    assert float(Tensor(np.ones(n, np.float32)).sum().numpy()) == n
    assert_pairwise_accurate(Tensor(x).sum().numpy(), want, n)
    assert_pairwise_accurate((Tensor(x) * 1 + 0).sum().numpy(), want, n)  # computed
    assert_pairwise_accurate(Tensor(x).mean().numpy(), want / n, n)
    m = x.reshape(5000, 4000)
    cols = m.astype(np.float64).sum(axis=0)
    assert_pairwise_accurate(Tensor(m).sum(axis=0).numpy(), cols, 5000)  # axis != last
    assert_pairwise_accurate(Tensor(m).T.sum(axis=1).numpy(), cols, 5000)  # a permuted view
    assert_pairwise_accurate(Tensor(m).permute(1, 0).mean(axis=1).numpy(), cols / 5000, 5000)
    row = x[:4000]
    grown = Tensor(row).reshape(1, 4000).expand(5000, 4000)  # an expanded view
    assert_pairwise_accurate(grown.sum(axis=0).numpy(), row.astype(np.float64) * 5000, 5000)
    assert_pairwise_accurate(grown.sum().numpy(), row.astype(np.float64).sum() * 5000, n)


def hard_narrow_casts() -> list[np.ndarray]:
    """Values whose rounding to bf16/f16 goes wrong when rounded through f32 first."""
    rng = np.random.default_rng(3)
    doubles = np.array([1.00390625 + 1e-12, 1 + 2**-11 + 2**-40, -(1 + 2**-11 + 2**-40),
                        1 + 2**-8 + 2**-30], np.float64)
    ints = np.array([2**24 + 2**16 + 1, 16842753, -16842753], np.int32)
    longs = np.array([2**62 + 2**54 + 1, -(2**62 + 2**54 + 1), 2**63 - 1, -(2**63), 2**53 + 1],
                     np.int64)
    return [np.concatenate([doubles, rng.standard_normal(500) * 1e3]),
            np.concatenate([ints, rng.integers(-(2**31), 2**31 - 1, 500).astype(np.int32)]),
            np.concatenate([longs, rng.integers(-(2**63), 2**63 - 1, 500, dtype=np.int64)])]


def nearest_exactly(value: float | int, dtype: np.dtype) -> float:
    """The `dtype` value nearest to `value` (ties to even), found with exact fractions
    among the neighbours of a first guess (a double rounding is off by one ulp at most)."""
    exact = Fraction(value)
    with np.errstate(over="ignore"):
        guess = np.array([float(value)], np.float64).astype(np.float32).astype(dtype)
    if not np.isfinite(guess[0]):
        return float(guess[0])
    bits = int(guess.view(np.uint16)[0])
    candidates = [np.array([bits + k], np.uint16).view(dtype)[0] for k in (-1, 0, 1)
                  if 0 <= bits + k < 2**16]
    finite = [c for c in candidates if np.isfinite(c)]
    return float(min(finite, key=lambda c: (abs(Fraction(float(c)) - exact),
                                            int(np.array([c]).view(np.uint16)[0]) & 1)))


def test_casts_to_half_types_round_once_as_numpy_does() -> None:
    for x in hard_narrow_casts():
        for dtype in (BF16, F16):
            want = np.array([nearest_exactly(v, dtype) for v in x.tolist()])
            got = Tensor(x).cast(dtype).numpy()
            assert got.dtype == dtype
            np.testing.assert_array_equal(got.astype(np.float64), want, err_msg=f"{x.dtype}")


def test_f64_infinity_and_nan_constants_build_and_run() -> None:
    """A cat of f64 with empty parts pads with -inf (on OpenCL a double constant, not
    OpenCL C's float INFINITY: found by `irtensor fuzz --device opencl`)."""
    x = Tensor(np.array([0.25], np.float64))
    empty = Tensor(np.zeros(0, np.float64))
    assert x.cat(empty, empty).numpy().tolist() == [0.25]
    got = x.maximum(float("-inf")).numpy()
    assert got.dtype == np.float64 and got.tolist() == [0.25]
    assert np.isnan((x + float("nan")).numpy()).all()
