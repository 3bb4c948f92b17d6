"""Tensor creation, dtypes and casts, realization, laziness, devices and `t.ir()`.

Laziness is checked by counting the programs that reach the interpreter:
`irtensor.frontend.realize` imports `irtensor.interp.run` at each realization, so
monkeypatching that attribute sees every module that is executed.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

import irtensor.frontend.realize
import irtensor.interp
from conftest import BF16, F16, F32, F64, I1, I32, I64, check, ident
from irtensor import Tensor, dtypes
from irtensor.pipeline import Pipeline, PipelineError

NP_OF = {dtypes.float32: F32, dtypes.float16: F16, dtypes.bfloat16: BF16, dtypes.float64: F64,
         dtypes.int32: I32, dtypes.int64: I64, dtypes.bool_: I1}


def expect(t: Tensor, want: np.ndarray, scale: float = 1.0) -> None:
    assert t.shape == want.shape, f"shape {t.shape}, expected {want.shape}"
    assert NP_OF[t.dtype] == want.dtype, f"dtype {t.dtype}, expected {want.dtype}"
    check(t.numpy(), want, scale)


class Runs:
    """The modules handed to the interpreter, and counts of ops in them by name."""

    def __init__(self) -> None:
        self.modules: list[ModuleOp] = []

    def __len__(self) -> int:
        return len(self.modules)

    def ops(self, i: int = -1) -> list[str]:
        return [op.name for op in self.modules[i].walk()]

    def count(self, name: str, i: int = -1) -> int:
        return self.ops(i).count(name)

    def args(self, i: int = -1) -> int:
        (main,) = [op for op in self.modules[i].ops if isinstance(op, func.FuncOp)]
        return len(main.args)


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> Runs:
    """Records the hl program of every realization that is lowered and run (not of ir()
    calls, nor of replays of a program already lowered)."""
    record = Runs()
    real = irtensor.frontend.realize.execute

    def counting_execute(module: ModuleOp, *args, **kwargs):  # type: ignore[no-untyped-def]
        record.modules.append(module.clone())
        return real(module, *args, **kwargs)

    monkeypatch.setattr(irtensor.frontend.realize, "execute", counting_execute)
    return record


# --------------------------------------------------------------------------- creation


@pytest.mark.parametrize(("value", "want"), [
    ([1, 2, 3], np.array([1, 2, 3], I32)),
    ([[1.5, 2], [3, 4]], np.array([[1.5, 2], [3, 4]], F32)),
    ([True, False], np.array([True, False])),
    (2.5, np.array(2.5, F32)),
    (7, np.array(7, I32)),
    (False, np.array(False)),
    ([], np.zeros((0,), F32)),
    (np.arange(6, dtype=np.float32).reshape(2, 3), np.arange(6, dtype=F32).reshape(2, 3)),
    (np.array([1, 2], np.float16), np.array([1, 2], F16)),
    (np.array([1.5, 2], ml_dtypes.bfloat16), np.array([1.5, 2], BF16)),
    (np.float32(3.0), np.array(3.0, F32)),
], ids=ident)
def test_tensor_from_data_infers_dtype(value: object, want: np.ndarray) -> None:
    """Python ints are int32, floats float32 (tinygrad's defaults); 0-d data stays 0-d."""
    expect(Tensor(value), want)


@pytest.mark.parametrize("dtype", [dtypes.float64, "float64", np.float64, np.dtype("int64"),
                                   "int64", dtypes.int32, "bool", "float16", "bfloat16",
                                   ml_dtypes.bfloat16, "half", "long", "double"], ids=ident)
def test_tensor_dtype_argument_forms(dtype: object) -> None:
    want = dtypes.as_dtype(dtype)
    t = Tensor([[0, 1], [2, 3]], dtype=dtype)
    assert t.dtype is want
    expect(t, np.array([[0, 1], [2, 3]]).astype(want.np))


def test_tensor_copies_its_data() -> None:
    """The tensor holds a copy: changing the array afterwards changes nothing."""
    a = np.ones(3, np.float32)
    t = Tensor(a) * 2
    a[:] = 5
    expect(t, np.full(3, 2, F32))


def test_tensor_of_tensor_and_properties() -> None:
    t = Tensor([[1, 2, 3], [4, 5, 6]])
    assert (t.shape, t.ndim, t.numel(), len(t)) == ((2, 3), 2, 6, 2)
    expect(Tensor(t, dtype="float32"), np.array([[1, 2, 3], [4, 5, 6]], F32))
    assert "(2, 3) int32" in repr(t)
    with pytest.raises(TypeError):
        len(Tensor(1.0))


@pytest.mark.parametrize("dtype", [None, "int32", "float16", "bool"])
def test_zeros_ones_full_empty(dtype: str | None) -> None:
    npd = NP_OF[dtypes.as_dtype(dtype or "float32")]
    expect(Tensor.zeros(2, 3, dtype=dtype), np.zeros((2, 3), npd))
    expect(Tensor.zeros((2, 3), dtype=dtype), np.zeros((2, 3), npd))
    expect(Tensor.ones(4, dtype=dtype), np.ones(4, npd))
    expect(Tensor.ones((), dtype=dtype), np.ones((), npd))
    expect(Tensor.empty(3, 1, dtype=dtype), np.zeros((3, 1), npd))  # contents: zeros here
    expect(Tensor.full((2, 2), 1, dtype=dtype), np.full((2, 2), 1, npd if dtype else I32))


def test_negative_sizes_raise() -> None:
    with pytest.raises(ValueError, match=r"\(-2,\)"):
        Tensor.zeros(-2)
    with pytest.raises(ValueError, match=r"\(2, -1\)"):
        Tensor.full((2, -1), 1.0)


def test_full_infers_dtype_from_fill_value() -> None:
    expect(Tensor.full((2,), 3), np.full(2, 3, I32))
    expect(Tensor.full(3, 0.5), np.full(3, 0.5, F32))
    expect(Tensor.full((1, 2), True), np.full((1, 2), True))
    expect(Tensor.full((0, 2), 1.0), np.zeros((0, 2), F32))


@pytest.mark.parametrize(("args", "kw", "want"), [
    ((5,), {}, np.arange(5, dtype=I32)),
    ((2, 9, 3), {}, np.arange(2, 9, 3, dtype=I32)),
    ((5, 0, -2), {}, np.arange(5, 0, -2, dtype=I32)),
    ((0.0, 1.0, 0.25), {}, np.arange(0, 1, 0.25, dtype=F32)),
    ((4,), {"dtype": "float64"}, np.arange(4, dtype=F64)),
    ((3, 3), {}, np.arange(3, 3, dtype=I32)),
], ids=ident)
def test_arange(args: tuple, kw: dict, want: np.ndarray) -> None:
    expect(Tensor.arange(*args, **kw), want)


@pytest.mark.parametrize(("n", "m"), [(3, None), (2, 4), (4, 2), (1, None)])
def test_eye(n: int, m: int | None) -> None:
    expect(Tensor.eye(n, m), np.eye(n, m, dtype=F32))
    expect(Tensor.eye(n, m, dtype="int32"), np.eye(n, m, dtype=I32))


def test_random_creation_is_seeded_and_in_range() -> None:
    Tensor.manual_seed(7)
    a, n, u = Tensor.rand(200), Tensor.randn(2, 300), Tensor.uniform(400, low=-2.0, high=-1.0)
    Tensor.manual_seed(7)
    a2, n2 = Tensor.rand(200), Tensor.randn(2, 300)
    assert (a.shape, a.dtype, n.shape, u.shape) == ((200,), dtypes.float32, (2, 300), (400,))
    np.testing.assert_array_equal(a.numpy(), a2.numpy())
    np.testing.assert_array_equal(n.numpy(), n2.numpy())
    av, nv, uv = a.numpy(), n.numpy(), u.numpy()
    assert av.min() >= 0 and av.max() < 1 and 0.35 < av.mean() < 0.65
    assert abs(nv.mean()) < 0.2 and 0.8 < nv.std() < 1.2
    assert uv.min() >= -2 and uv.max() < -1 and -1.6 < uv.mean() < -1.4
    Tensor.manual_seed(8)
    assert not np.array_equal(Tensor.rand(200).numpy(), av)
    assert Tensor.rand(3, dtype="float16").dtype is dtypes.float16


def test_like_constructors_keep_shape_dtype() -> None:
    x = Tensor([[1, 2, 3]], dtype="int64")
    expect(x.zeros_like(), np.zeros((1, 3), I64))
    expect(x.ones_like(), np.ones((1, 3), I64))
    expect(x.full_like(7), np.full((1, 3), 7, I64))
    expect(x.ones_like(dtype="float16"), np.ones((1, 3), F16))
    f = Tensor.zeros(4, 2, dtype="float16")
    r, n = f.rand_like(), f.randn_like()
    assert (r.shape, r.dtype, n.shape, n.dtype) == ((4, 2), dtypes.float16, (4, 2),
                                                    dtypes.float16)
    rv = r.numpy().astype(F32)
    assert rv.min() >= 0 and rv.max() <= 1


# --------------------------------------------------------------------------- casts


@pytest.mark.parametrize("target", ["int32", "int64", "float16", "bfloat16", "float64", "bool",
                                    np.int32, np.dtype("float64"), dtypes.float16], ids=ident)
def test_cast_matches_astype(target: object) -> None:
    x = np.array([[-2.7, -0.5, 0.0], [0.4, 1.5, 3.9]], F32)
    want = x.astype(dtypes.as_dtype(target).np)
    expect(Tensor(x).cast(target), want)


def test_cast_to_same_dtype_records_nothing() -> None:
    t = Tensor([1.0, 2.0])
    assert t.cast("float32") is t
    assert "hl.cast" in Tensor([1, 2]).cast("float32").ir()


@pytest.mark.parametrize("bad", ["int33", "float8", "complex64", np.complex64, "uint4", object])
def test_bad_dtype_raises_type_error(bad: object) -> None:
    with pytest.raises(TypeError, match="dtype"):
        Tensor([1.0]).cast(bad)
    with pytest.raises(TypeError, match="dtype"):
        Tensor.zeros(2, dtype=bad)


# --------------------------------------------------------------------------- realization


def test_numpy_tolist_item_realize() -> None:
    t = Tensor([[1, 2], [3, 4]]) * 10
    assert t.realize() is t
    assert t.tolist() == [[10, 20], [30, 40]]
    assert (Tensor([[2.5]]) * 2).item() == 5.0
    assert isinstance(Tensor(3).item(), int) and Tensor(3).item() == 3
    assert Tensor(True).item() is True
    out = t.numpy()
    out[0, 0] = -1  # numpy() returns a copy
    assert t.numpy()[0, 0] == 10
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        t.item()


def test_seed_example(capsys: pytest.CaptureFixture[str]) -> None:
    x = Tensor.zeros(1)
    for i in range(5):
        x += i
    text = x.ir()
    assert text.count("func.func") == 1
    assert text.count("hl.add") == 5
    print(x.numpy())
    assert capsys.readouterr().out.strip() == "[10.]"
    assert x.item() == 10.0


def test_building_runs_nothing(runs: Runs) -> None:
    a = Tensor.ones(3, 4)
    b = (a * 2 + 1).exp().sum(axis=1).reshape(3, 1) @ Tensor.ones(1, 2)
    assert b.shape == (3, 2) and b.dtype is dtypes.float32
    b.ir()  # printing the program does not run it either
    assert len(runs) == 0
    assert "lazy" in repr(b)
    b.realize()
    assert len(runs) == 1 and "realized" in repr(b)


def test_realize_several_shares_work(runs: Runs) -> None:
    a, w = np.arange(6, dtype=F32).reshape(2, 3) / 10, np.full((3, 3), 0.5, F32)
    shared = (Tensor(a) @ Tensor(w)).exp()
    o1, o2 = shared + 1, shared * 2
    assert o1.realize(o2) is o1
    assert len(runs) == 1
    assert runs.count("hl.exp") == 1 and runs.count("hl.matmul") == 1
    assert runs.count("hl.add") == 1 and runs.count("hl.mul") == 1
    ref = np.exp(a.astype(F64) @ w)
    check(o1.numpy(), (ref + 1).astype(F32))
    check(o2.numpy(), (ref * 2).astype(F32))
    assert len(runs) == 1  # both were realized by the one program


def test_realized_tensor_is_an_input_later(runs: Runs) -> None:
    h = (Tensor([1.0, 2.0, 3.0]) * 3).exp()
    h.realize()
    assert runs.count("hl.exp") == 1 and runs.args() == 1  # the data is an input too
    out = h.log() + 1
    check(out.numpy(), np.array([4, 7, 10], F32), 4)
    assert len(runs) == 2
    assert runs.count("hl.exp") == 0 and runs.count("hl.mul") == 0  # not recomputed
    assert runs.args() == 1 and runs.count("hl.log") == 1
    assert "%in0: tensor<3xf32>" in out.ir() or "realized" in repr(out)


def test_realized_shared_part_used_by_later_outputs(runs: Runs) -> None:
    base = Tensor([[1.0, -2.0]]).relu()
    base.numpy()
    a, b = base + 1, base.sum()
    a.realize(b)
    assert len(runs) == 2 and runs.count("hl.relu") == 0 and runs.args() == 1
    check(a.numpy(), np.array([[2, 1]], F32))
    check(b.numpy(), np.array(1, F32))


def test_data_tensor_is_an_input_not_a_constant(runs: Runs) -> None:
    x = Tensor(np.arange(4, dtype=np.float32))
    (x * 2).numpy()
    assert runs.args() == 1


def test_realize_twice_runs_once(runs: Runs) -> None:
    t = Tensor([1, 2]) + 1
    t.numpy()
    t.numpy()
    t.realize()
    assert len(runs) == 1


def test_loop_builds_one_program(runs: Runs) -> None:
    x, ref = Tensor.zeros(2, 2), np.zeros((2, 2), F32)
    w = np.array([[1.0, 0.0], [0.0, 2.0]], F32)
    for _ in range(4):
        x, ref = x @ Tensor(w) + 1, ref @ w + 1
    assert len(runs) == 0
    check(x.numpy(), ref)
    np.testing.assert_array_equal(ref, [[4, 15], [4, 15]])
    assert len(runs) == 1 and runs.count("hl.matmul") == 4


# --------------------------------------------------------------------------- devices


def test_device_argument_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Tensor([1.0], device="interp").device == "interp"
    monkeypatch.setenv("IRTENSOR_DEVICE", "interp")
    t = Tensor.ones(2) + 1
    assert t.device == "interp"
    check(t.numpy(), np.full(2, 2, F32))
    monkeypatch.delenv("IRTENSOR_DEVICE")
    assert Tensor.ones(1).device == "llvm"  # the default device


def test_unknown_device_env_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_DEVICE", "tpu")
    with pytest.raises(ValueError, match=r"unknown device 'tpu'.*interp"):
        Tensor([1.0])
    with pytest.raises(ValueError, match="'tpu'"):
        Tensor.zeros(2)


def test_unknown_device_argument_raises() -> None:
    with pytest.raises(ValueError, match=r"unknown device 'cuda'"):
        Tensor([1.0], device="cuda")
    with pytest.raises(ValueError, match=r"unknown device 'gpu'"):
        Tensor.ones(2, device="gpu")


# --------------------------------------------------------------------------- inspection


def test_ir_text_contents() -> None:
    x = Tensor(np.ones((2, 3), np.float32))
    w = Tensor.ones(3, 4)
    y = (x @ w).relu().sum(axis=0)
    text = y.ir()
    assert text == y.ir("hl")
    assert text.startswith("builtin.module {")
    assert "func.func @main(%in0: tensor<2x3xf32>) -> tensor<4xf32>" in text
    assert "ll.const 1.0 : tensor<3x4xf32>" in text
    assert "hl.matmul %in0, %0 : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>" in text
    assert "hl.relu" in text and "hl.sum" in text and "axes [0]" in text
    assert "func.return" in text
    check(y.numpy(), np.full(4, 6, F32))


def test_ir_unknown_stage() -> None:
    with pytest.raises(ValueError, match=r"unknown stage 'mlir'.*hl, ll"):
        Tensor([1.0]).ir("mlir")


def test_ir_ll_stage() -> None:
    try:
        Pipeline("hl-to-ll")
    except PipelineError as e:
        if "unknown pass" in str(e):
            pytest.skip("hl-to-ll not registered yet")
        raise
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = (x * 2).softmax(axis=1).sum(axis=0)
    text = y.ir("ll")
    assert "func.func @main" in text and "ll." in text
    assert "hl." not in text
    ref = np.exp(np.arange(6.0).reshape(2, 3) * 2)
    check(y.numpy(), (ref / ref.sum(axis=1, keepdims=True)).sum(axis=0).astype(F32), 4)
