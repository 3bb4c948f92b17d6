"""Bitwise ops and shifts, dtype shorthands (frontend/bitwise.py), the new creation
functions and the Tensor's properties (frontend/creation.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import BF16, DEVICES, F16, F32, F64, I32, I64, check, device_param
from irtensor import Tensor, dtypes

EDGES = {I32: [0, 1, -1, 5, -6, 2**31 - 1, -(2**31), 123456789, -98765],
         I64: [0, 1, -1, 5, -6, 2**63 - 1, -(2**63), 2**40 + 3, -(2**35) - 7]}


def T(x: np.ndarray) -> Tensor:
    return Tensor(x, dtype=x.dtype)


def realize_all(outs: dict[str, Tensor]) -> dict[str, np.ndarray]:
    ts = list(outs.values())
    ts[0].realize(*ts[1:])
    return {k: t.numpy() for k, t in outs.items()}


@pytest.mark.parametrize("dtype", [I32, I64], ids=str)
def test_bitwise_ops_and_shifts_of_ints_match_numpy(dtype: np.dtype) -> None:
    a = np.array(EDGES[dtype], dtype)
    b = np.roll(a, 3)[:, None]  # every pair of edges, broadcast
    bits = 64 if dtype == I64 else 32
    outs = realize_all({"and": T(a).bitwise_and(T(b)), "or": T(a).bitwise_or(T(b)),
                        "xor": T(a).bitwise_xor(T(b)), "not": T(a).bitwise_not(),
                        "and_s": T(a).bitwise_and(0xF0F), "l3": T(a).lshift(3),
                        "l_top": T(a).lshift(bits - 1), "l_all": T(a).lshift(bits),
                        "r3": T(a).rshift(3), "r_top": T(a).rshift(bits - 1),
                        "r_all": T(a).rshift(bits + 4)})
    check(outs["and"], a & b)
    check(outs["or"], a | b)
    check(outs["xor"], a ^ b)
    check(outs["not"], ~a)
    check(outs["and_s"], a & dtype.type(0xF0F))
    with np.errstate(over="ignore"):
        check(outs["l3"], a << dtype.type(3))
        check(outs["l_top"], a << dtype.type(bits - 1))
    check(outs["l_all"], np.zeros_like(a))
    check(outs["r3"], a >> dtype.type(3))
    check(outs["r_top"], a >> dtype.type(bits - 1))
    check(outs["r_all"], a >> dtype.type(bits - 1))


def test_bitwise_ops_of_bools_are_logical_and_floats_raise() -> None:
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    outs = realize_all({"and": T(a).bitwise_and(T(b)), "or": T(a).bitwise_or(T(b)),
                        "xor": T(a).bitwise_xor(T(b)), "not": T(a).bitwise_not()})
    check(outs["and"], a & b)
    check(outs["or"], a | b)
    check(outs["xor"], a ^ b)
    check(outs["not"], ~a)
    with pytest.raises(TypeError, match="bitwise_and needs integer or bool tensors, got float32"):
        Tensor([1.0]).bitwise_and(1)
    with pytest.raises(TypeError, match="bitwise_not needs an integer or bool tensor"):
        Tensor([1.0]).bitwise_not()
    with pytest.raises(TypeError, match="lshift needs an integer tensor, got bool"):
        Tensor([True]).lshift(1)
    with pytest.raises(ValueError, match="rshift takes a non-negative int shift or an integer "
                                         "tensor of shifts, got -1"):
        Tensor([1]).rshift(-1)


def test_dtype_shorthands() -> None:
    x = Tensor([1.7, -2.2, 0.0])
    pairs = {"float": F32, "half": F16, "bfloat16": BF16, "double": F64, "int": I32,
             "long": I64, "bool": np.dtype(np.bool_)}
    outs = realize_all({name: getattr(x, name)() for name in pairs})
    for name, dt in pairs.items():
        check(outs[name], np.array([1.7, -2.2, 0.0], F32).astype(dt))
    assert Tensor([1, 2]).float().dtype is dtypes.float32


def test_linspace_randint_randperm_normal() -> None:
    Tensor.manual_seed(1)
    outs = realize_all({"lin": Tensor.linspace(-1, 2, 7), "lin1": Tensor.linspace(3, 3, 1),
                        "lin0": Tensor.linspace(0, 1, 0),
                        "lin_int": Tensor.linspace(0, 10, 6, dtype="int32"),
                        "randint": Tensor.randint(1000, low=-3, high=4),
                        "perm": Tensor.randperm(50), "normal": Tensor.normal(20000, mean=2.0,
                                                                             std=0.5)})
    check(outs["lin"], np.linspace(-1, 2, 7).astype(F32))
    check(outs["lin1"], np.array([3.0], F32))
    assert outs["lin0"].shape == (0,)
    check(outs["lin_int"], np.array([0, 2, 4, 6, 8, 10], I32))
    assert outs["randint"].dtype == I32 and set(outs["randint"].tolist()) == set(range(-3, 4))
    assert sorted(outs["perm"].tolist()) == list(range(50)) and outs["perm"].dtype == I32
    assert abs(outs["normal"].mean() - 2.0) < 0.02 and abs(outs["normal"].std() - 0.5) < 0.02
    with pytest.raises(ValueError, match="randint needs low < high"):
        Tensor.randint(3, low=2, high=2)
    with pytest.raises(ValueError, match="linspace needs a non-negative int number of steps"):
        Tensor.linspace(0, 1, -1)


def test_initialisers_have_tinygrads_bounds() -> None:
    Tensor.manual_seed(2)
    shape = (64, 32, 3)
    fan_in = 32 * 3
    checks = {
        "scaled_uniform": (Tensor.scaled_uniform(*shape), math.prod(shape) ** -0.5),
        "glorot_uniform": (Tensor.glorot_uniform(*shape), math.sqrt(6 / (64 + fan_in))),
        "kaiming_uniform": (Tensor.kaiming_uniform(*shape, a=0.5),
                            math.sqrt(3) * math.sqrt(2 / 1.25) / math.sqrt(fan_in)),
    }
    for name, (t, bound) in checks.items():
        v = t.numpy()
        assert v.shape == shape and v.dtype == F32, name
        assert np.abs(v).max() <= bound and np.abs(v).max() > 0.95 * bound, name
    k = Tensor.kaiming_normal(200, 400).numpy()
    assert abs(k.std() - math.sqrt(2 / (1 + 0.01**2)) / math.sqrt(400)) < 0.002
    with pytest.raises(ValueError, match="kaiming_uniform needs a shape of at least one axis"):
        Tensor.kaiming_uniform()


def test_properties() -> None:
    x = Tensor.ones(2, 3, dtype="float16")
    assert x.element_size() == 2 and x.nbytes() == 12 and x.is_floating_point()
    assert not Tensor([1]).is_floating_point() and Tensor([1], dtype="int64").element_size() == 8
    assert x.size() == (2, 3) and x.size(-1) == 3 and x.size(0) == 2
    with pytest.raises(IndexError, match="dim 2 is out of range for a tensor of rank 2"):
        x.size(2)


def test_assign_detach_clone_to_contiguous() -> None:
    x = Tensor([1.0, 2.0])
    y = x * 2
    c = x.clone()
    d = x.detach()
    assert x.assign([5.0, 6.0]) is x
    assert x.tolist() == [5.0, 6.0] and y.tolist() == [2.0, 4.0]  # y keeps the old value
    assert c.tolist() == [1.0, 2.0] and d.tolist() == [1.0, 2.0]
    x.assign(Tensor([7, 8]))  # cast to the tensor's dtype
    assert x.dtype is dtypes.float32 and x.tolist() == [7.0, 8.0]
    with pytest.raises(ValueError, match=r"assign: shape \(3,\) does not match"):
        x.assign(Tensor([1.0, 2.0, 3.0]))
    moved = (x + 1).to("interp", dtype="int32")
    assert moved.device == "interp" and moved.tolist() == [8, 9]
    assert (x[::-1].contiguous() + 0).tolist() == [8.0, 7.0]


FLOAT_EDGES = [0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 3.4e38, -1.17549435e-38, 1e-45,
               -3e-42, 1.17549435e-38, 0.1, 123456.789, 2.0**-126, 2.0**127]
DOUBLE_EDGES = [0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 1.7e308, 2.2250738585072014e-308,
                5e-324, -4e-320, 0.1, 2.0**-1022, 2.0**1023, -123456.789e-200]


@pytest.mark.parametrize("fdt,idt,edges", [(F32, I32, FLOAT_EDGES), (F64, I64, DOUBLE_EDGES)],
                         ids=["32", "64"])
def test_bitcast_both_ways_matches_numpy_view(fdt: np.dtype, idt: np.dtype,
                                              edges: list[float]) -> None:
    f = np.array(edges, fdt)
    rng = np.random.default_rng(4)
    info = np.iinfo(idt)
    i = np.concatenate([rng.integers(info.min, info.max, 40, dtype=idt, endpoint=True),
                        f.view(idt), np.array([0, -1, info.min, info.max], idt)])
    outs = realize_all({"bits": T(f).bitcast(idt), "floats": T(i).bitcast(fdt)})
    check(outs["bits"], f.view(idt))
    want = i.view(fdt)
    got = outs["floats"]
    assert got.dtype == fdt
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    np.testing.assert_array_equal(got[finite].view(idt), want[finite].view(idt))


def test_bitcast_needs_one_size() -> None:
    x = Tensor([1.0])
    assert x.bitcast("float32") is x
    with pytest.raises(TypeError, match="bitcast from float32 to int64"):
        x.bitcast("int64")
    with pytest.raises(TypeError, match="bitcast from float16 to int32"):
        x.half().bitcast("int32")


@pytest.mark.parametrize("device", [device_param(d) for d in DEVICES])
@pytest.mark.parametrize("dtype", [I32, I64, np.dtype(np.uint8), np.dtype(np.uint32)], ids=str)
def test_shifts_by_a_tensor_of_amounts_match_numpy(dtype: np.dtype, device: str) -> None:
    bits = dtype.itemsize * 8
    info = np.iinfo(dtype)
    a = np.array([0, 1, 5, 77, info.max, info.min, info.max // 3 + 1], dtype)[:, None]
    shifts = np.array([0, 1, 3, bits - 1, bits, bits + 5, 63, 64], np.int64)
    if dtype.kind != "u":
        shifts = np.concatenate([shifts, [-1, -40]])
    x, n = Tensor(a, dtype=a.dtype, device=device), Tensor(shifts, dtype=shifts.dtype,
                                                           device=device)
    left, right, op_left = x.lshift(n), x.rshift(n), x << n.cast(dtypes.int32)
    left.realize(right, op_left)
    want_left = np.where((shifts >= 0) & (shifts < bits), np.left_shift(
        a, np.clip(shifts, 0, bits - 1).astype(dtype)), 0).astype(dtype)
    sign = np.where(a < 0, -1, 0).astype(dtype)
    want_right = np.where((shifts >= 0) & (shifts < bits), np.right_shift(
        a, np.clip(shifts, 0, bits - 1).astype(dtype)), sign).astype(dtype)
    np.testing.assert_array_equal(left.numpy(), want_left)
    np.testing.assert_array_equal(op_left.numpy(), want_left)
    np.testing.assert_array_equal(right.numpy(), want_right)
    if dtype == I32:  # numpy's own shifts give these for every amount
        np.testing.assert_array_equal(left.numpy(), np.left_shift(a, shifts.astype(dtype)))
        np.testing.assert_array_equal(right.numpy(), np.right_shift(a, shifts.astype(dtype)))


def test_shifts_by_a_tensor_take_integers_only() -> None:
    with pytest.raises(TypeError, match="lshift needs integer tensors, got int32 and float32"):
        Tensor([1], dtype=dtypes.int32).lshift(Tensor([1.0]))
    with pytest.raises(TypeError, match="rshift needs integer tensors, got float32 and int32"):
        Tensor([1.0]).rshift(Tensor([1], dtype=dtypes.int32))
