"""Arguments torch and tinygrad users pass: pad modes and torch's flat pad tuples, lists of
tensors to cat and stack, None in reshape, `dtype=` of sum/prod/mean, axis 0 of a 0-d
tensor, integer powers, and the refusals torch makes (on every device)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from irtensor import Tensor, dtypes

NUMPY_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def data(*shape: int) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) * 0.5 - 3


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_modes_are_numpys(mode: str) -> None:
    x = data(2, 3, 5)
    widths = [(0, 0), (1, 2), (2, 4)]
    got = Tensor(x).pad(widths, mode=mode).numpy()
    np.testing.assert_array_equal(got, np.pad(x, widths, mode=NUMPY_MODE[mode]))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_a_flat_pad_tuple_pads_the_last_axes_first(mode: str) -> None:
    x = data(2, 3, 4, 5)
    got = Tensor(x).pad((1, 2, 0, 1), mode=mode).numpy()  # last axis (1, 2), then (0, 1)
    widths = [(0, 0), (0, 0), (0, 1), (1, 2)]
    want = np.pad(x, widths) if mode == "constant" else np.pad(x, widths,
                                                                mode=NUMPY_MODE[mode])
    np.testing.assert_array_equal(got, want)
    assert Tensor(x).pad((1, 2, 3, 4), value=7.0).shape == (2, 3, 11, 8)


def test_torch_agrees_on_pad_modes() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed (numpy is the reference)")
    x = data(1, 2, 4, 5)
    for mode in ("reflect", "replicate", "circular"):
        want = torch.nn.functional.pad(torch.from_numpy(x), (2, 1, 1, 3), mode=mode).numpy()
        np.testing.assert_array_equal(Tensor(x).pad((2, 1, 1, 3), mode=mode).numpy(), want)


def test_negative_pad_amounts_crop_in_every_mode() -> None:
    x = data(6)
    np.testing.assert_array_equal(Tensor(x).pad(((-2, 1),), mode="reflect").numpy(),
                                  np.pad(x[2:], (0, 1), mode="reflect"))
    np.testing.assert_array_equal(Tensor(x).pad((-1, -2)).numpy(), x[1:4])


def test_bad_pads_are_refused_with_the_reason() -> None:
    x = Tensor(data(2, 3))
    with pytest.raises(ValueError, match="mode 'wrap'; expected one of"):
        x.pad([(0, 0), (1, 1)], mode="wrap")
    with pytest.raises(ValueError, match="reflect padding of \\(3, 0\\) on axis 1 of size 3"):
        x.pad([(0, 0), (3, 0)], mode="reflect")
    with pytest.raises(ValueError, match="even count of at most 4"):
        x.pad((1, 2, 3))
    with pytest.raises(ValueError, match="needs 2 \\(before, after\\) pairs"):
        x.pad([(1, 1)])


def test_cat_and_stack_take_a_list_or_a_tuple() -> None:
    a, b, c = (Tensor(data(2, 3) + k) for k in range(3))
    want = np.stack([data(2, 3) + k for k in range(3)], axis=1)
    np.testing.assert_array_equal(Tensor.stack((a, b, c), dim=1).numpy(), want)
    np.testing.assert_array_equal(Tensor.stack([a, b, c], dim=1).numpy(), want)
    np.testing.assert_array_equal(Tensor.cat([a, b], dim=1).numpy(),
                                  np.concatenate([data(2, 3), data(2, 3) + 1], axis=1))
    np.testing.assert_array_equal(a.cat(b, c).numpy(),
                                  np.concatenate([data(2, 3) + k for k in range(3)]))
    with pytest.raises(ValueError, match="at least one tensor"):
        Tensor.cat([])


def test_reshape_keeps_the_axes_given_none() -> None:
    x = data(2, 3, 36)
    got = Tensor(x).reshape((None, None, 6, 6))
    assert got.shape == (2, 3, 6, 6)
    np.testing.assert_array_equal(got.numpy(), x.reshape(2, 3, 6, 6))
    assert Tensor(x).reshape(None, -1).shape == (2, 108)


def test_sum_prod_and_mean_take_a_dtype() -> None:
    x = np.array([[1, 2, 3], [4, 5, 250]], np.int32)
    got = Tensor(x).sum(axis=1, dtype=dtypes.float64).numpy()
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, x.sum(axis=1, dtype=np.float64))
    p = Tensor(x).prod(axis=1, dtype="int64").numpy()
    assert p.dtype == np.int64
    np.testing.assert_array_equal(p, x.prod(axis=1, dtype=np.int64))
    m = Tensor(x).mean(dtype=dtypes.float64).numpy()
    assert m.dtype == np.float64 and float(m) == pytest.approx(x.mean())
    b = Tensor(np.array([True, True, False])).sum(dtype="float32").numpy()
    assert b.dtype == np.float32 and float(b) == 2.0


def test_axis_zero_of_a_zero_d_tensor_is_no_axis() -> None:
    s = Tensor(np.float32(2.5))
    assert s.sum(0).numpy().shape == () and float(s.sum(0).numpy()) == 2.5
    assert float(s.max(-1).numpy()) == 2.5 and float(s.prod(0).numpy()) == 2.5
    assert float(s.softmax(0).numpy()) == 1.0 and float(s.log_softmax(-1).numpy()) == 0.0
    assert s.sum(0, keepdim=True).shape == ()
    with pytest.raises(ValueError, match="axis 1 is out of range for rank 0"):
        s.sum(1)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_powers_stay_integers_for_any_exponent(dtype: type) -> None:
    x = np.array([0, 1, 2, 3, -3, 7], dtype)
    for exponent in (0, 5, 17, 20, 31, 40):
        got = (Tensor(x) ** exponent).numpy()
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, x ** exponent)  # wrapping as numpy's do


def test_a_scalar_outside_the_dtype_is_refused_by_name() -> None:
    x = Tensor(np.array([1, 2], np.int32))
    with pytest.raises(OverflowError, match=r"4294967295 does not fit int32 .*\[-2147483648"):
        x | 0xFFFFFFFF
    assert (x | 0x7FFFFFFF).numpy().tolist() == [0x7FFFFFFF, 0x7FFFFFFF]


def test_and_or_xor_shift_are_bitwise_on_integers() -> None:
    a = np.array([0, 5, -6, 0x7FFFFFFF, -(2**31)], np.int32)
    b = np.array([3, 12, 7, -1, 1], np.int32)
    ta, tb = Tensor(a), Tensor(b)
    np.testing.assert_array_equal((ta & tb).numpy(), a & b)
    np.testing.assert_array_equal((ta | tb).numpy(), a | b)
    np.testing.assert_array_equal((ta ^ 6).numpy(), a ^ 6)
    np.testing.assert_array_equal((ta << 2).numpy(), a << 2)
    np.testing.assert_array_equal((ta >> 1).numpy(), a >> 1)
    np.testing.assert_array_equal((~ta).numpy(), ~a)
    assert (~Tensor([True, False])).numpy().tolist() == [False, True]
    with pytest.raises(TypeError, match="logical operations need bool tensors, got float32"):
        Tensor([1.0]) | Tensor([2.0])


def test_what_torch_refuses_is_refused() -> None:
    x = Tensor(data(2, 3))
    with pytest.raises(ValueError, match="at least one of"):
        x.clip(None, None)
    with pytest.raises(ValueError, match="names an axis twice"):
        x.flip((0, 0))
    with pytest.raises(ValueError, match="num_classes must be a non-negative int, got -1"):
        Tensor([1, 2]).one_hot(-1)


TENSOR_INDICES = [
    (np.array([2, 0, -1]),),
    (slice(None), [1, 3]),
    (Ellipsis, np.array([[0, 4], [1, 2]])),
    (1, slice(None, None, -1), [0, 0, 3]),  # parted by a slice: the index's axes first
    (slice(None), 1, [0, 2]),
    (slice(1, 3), [0, 2], 1),
    (1, None, [1]),
    ([],),
    ([[0, 1], [2, 2]], slice(None), 4),
    (Ellipsis, 2, [1, 1]),
    ([-3, 2], Ellipsis),
]


@pytest.mark.parametrize("index", TENSOR_INDICES, ids=str)
def test_a_tensor_index_places_its_axes_as_numpy_does(index: tuple) -> None:
    x = data(3, 4, 5)
    want = x[tuple(np.asarray(v, np.int64) if isinstance(v, list) else v for v in index)]
    as_tensors = tuple(Tensor(np.asarray(v, np.int32)) if isinstance(v, list | np.ndarray)
                       else v for v in index)
    for given in (index, as_tensors):  # lists and arrays, or Tensors
        got = Tensor(x)[given].numpy()
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


ADVANCED = [
    ("rows and cols", lambda x, ix: x[ix([0, 2, 1]), ix([1, 0, 2])]),
    ("broadcast", lambda x, ix: x[ix([[2], [0]]), ix([0, 2, 1])]),
    ("adjacent after a slice", lambda x, ix: x[:, ix([0, 2]), ix([1, 3])]),
    ("parted by a slice", lambda x, ix: x[ix([1, 0]), :, ix([1, 3])]),
    ("with an int between", lambda x, ix: x[ix([-1, 0]), 1, ix([1, -2])]),
    ("after an ellipsis", lambda x, ix: x[..., ix([0, 1]), ix([2, 3])]),
    ("around an ellipsis", lambda x, ix: x[ix([0, 1]), ..., ix([2, 3])]),
    ("with None", lambda x, ix: x[None, ix([0, 1]), ix([1, 2])]),
    ("empty", lambda x, ix: x[ix(np.zeros((0,), np.int64)), ix(np.zeros((0,), np.int64))]),
    ("three", lambda x, ix: x[ix([0, 1]), ix([[1], [2]]), ix([3, 0])]),
]


@pytest.mark.parametrize(("name", "index"), ADVANCED, ids=[n for n, _ in ADVANCED])
def test_several_tensor_indices_are_numpys_advanced_indexing(
        name: str, index: Callable[[Any, Callable[[Any], Any]], Any]) -> None:
    x = data(3, 3, 4, 5)
    want = index(x, np.asarray)
    got = index(Tensor(x), lambda v: Tensor(np.asarray(v)))
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_a_bool_mask_of_the_whole_shape_selects() -> None:
    x = data(3, 4)
    np.testing.assert_array_equal(Tensor(x)[Tensor(x > 0)].numpy(), x[x > 0])
    np.testing.assert_array_equal(Tensor(x[0])[[True, False, False, True]].numpy(),
                                  x[0][[True, False, False, True]])
    with pytest.raises(TypeError, match="a bool index must be a mask of the whole shape"):
        Tensor(x)[Tensor(np.array([True, False, True]))]
    np.testing.assert_array_equal(Tensor(x)[[0, 1], [1, 2]].numpy(), x[[0, 1], [1, 2]])
    with pytest.raises(TypeError, match="must hold integers, got float32"):
        Tensor(x)[Tensor([0.0, 1.0])]


SET_INDICES = [
    ((1,), 7.0),
    ((slice(None, None, 2), 2), np.arange(10, dtype=np.float32).reshape(2, 5)),
    ((Ellipsis, slice(4, 0, -2)), -1.0),
    ((None, 0, slice(1, 3)), np.ones((1, 2, 5), np.float32)),
    ((2, 3, 4), 100.0),
    ((slice(0, 0),), 3.0),
    ((slice(None), slice(1, None, 3), slice(None, None, -1)), np.arange(5, dtype=np.float32)),
]


@pytest.mark.parametrize(("index", "value"), SET_INDICES, ids=str)
def test_setitem_assigns_as_numpy_does(index: tuple, value: object) -> None:
    x = data(3, 4, 5)
    want = x.copy()
    want[index] = value
    t = Tensor(x).realize()
    t[index] = Tensor(value) if isinstance(value, np.ndarray) else value
    np.testing.assert_array_equal(t.numpy(), want)


def test_setitem_has_assign_semantics() -> None:
    t = Tensor(data(2, 3)).realize()
    before = t * 1
    t[0, 1] = 9  # an int scalar, cast to the tensor's float32
    assert t.dtype is dtypes.float32 and float(t[0, 1].numpy()) == 9.0
    np.testing.assert_array_equal(before.numpy(), data(2, 3))  # computed from the old value
    n = Tensor(np.arange(6, dtype=np.int32).reshape(2, 3))
    n[:, 0] = Tensor([10.7, 20.2])  # cast to int32, as torch
    assert n.numpy().tolist() == [[10, 1, 2], [20, 4, 5]]
    with pytest.raises(ValueError, match=r"shape \(3,\) does not broadcast to the indexed "
                                         r"shape \(2,\)"):
        n[:, 0] = Tensor([1, 2, 3])
    n[Tensor([0])] = 1  # a tensor index: positions scattered
    assert n.numpy().tolist() == [[1, 1, 1], [20, 4, 5]]


def _set_rows(x: Any, ix: Callable[[Any], Any]) -> None:
    x[ix([0, 2])] = -1.0


def _set_pairs(x: Any, ix: Callable[[Any], Any]) -> None:
    x[ix([0, 2]), ix([1, 3])] = ix(np.array([[5.0], [6.0]], np.float32))


def _set_beside_slices(x: Any, ix: Callable[[Any], Any]) -> None:
    x[:, ix([1, 3]), 2] = ix(np.array([[7.0, 8.0]] * 3, np.float32))


def _set_by_mask(x: Any, ix: Callable[[Any], Any]) -> None:
    x[x > 20] = 0.0


def _set_by_mask_values(x: Any, ix: Callable[[Any], Any]) -> None:
    x[x < 0] = ix(np.arange(6, dtype=np.float32))  # as many values as the mask holds


def _set_repeated(x: Any, ix: Callable[[Any], Any]) -> None:
    x[ix([1, 1]), 0, 0] = ix(np.array([5.0, 6.0], np.float32))  # the last one wins


def _set_list(x: Any, ix: Callable[[Any], Any]) -> None:
    x[[0, 1], ..., [-1, 0]] = 9.0


@pytest.mark.parametrize("assign", [_set_rows, _set_pairs, _set_beside_slices, _set_by_mask,
                                    _set_by_mask_values, _set_repeated, _set_list])
def test_setitem_with_tensor_indices_as_numpy(assign: Callable[..., None]) -> None:
    want = data(3, 4, 5)
    t = Tensor(want.copy())
    before = t * 1
    assign(want, np.asarray)
    assign(t, lambda v: Tensor(np.asarray(v)))
    np.testing.assert_array_equal(t.numpy(), want)
    np.testing.assert_array_equal(before.numpy(), data(3, 4, 5))  # assign semantics
