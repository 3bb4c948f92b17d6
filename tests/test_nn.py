"""irtensor.nn beyond the forwards of test_tensor_nn_modules.py: initialisation, layer
options and their errors, state dicts (names, loading and its errors), safetensors files
(round trip; truncated, garbled and foreign files), and torch's modules when torch is
installed. These run on the interpreter: what they test is above the device."""

from __future__ import annotations

import json
import re
import struct
from collections import namedtuple
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import nn_reference as ref
from irtensor import Tensor, dtypes, nn
from irtensor.nn.state import (
    StateFileError,
    get_parameters,
    get_state_dict,
    load_state_dict,
    safe_load,
    safe_save,
)

RNG = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def on_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_DEVICE", "interp")


def arr(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


class Net:
    def __init__(self) -> None:
        self.convs = [nn.Conv2d(1, 2, 3), nn.Conv2d(2, 2, 1, bias=False)]
        self.norm = {"bn": nn.BatchNorm2d(2)}
        self.head = nn.Linear(8, 3)

    def __call__(self, x: Tensor) -> Tensor:
        for conv in self.convs:
            x = conv(x).relu()
        return self.head(self.norm["bn"](x).flatten(1))


NET_KEYS = ["convs.0.weight", "convs.0.bias", "convs.1.weight", "norm.bn.weight",
            "norm.bn.bias", "norm.bn.running_mean", "norm.bn.running_var",
            "norm.bn.num_batches_tracked", "head.weight", "head.bias"]


# ---------------------------------------------------------------- initialisation, options

def test_weights_are_kaiming_uniform_buffers_with_torch_bounds() -> None:
    Tensor.manual_seed(0)
    lin, conv = nn.Linear(64, 200), nn.Conv2d(8, 16, 3, groups=2)
    tconv = nn.ConvTranspose2d(4, 6, 2, groups=2)
    for t, fan_in in ((lin.weight, 64), (lin.bias, 64), (conv.weight, 4 * 9),
                      (conv.bias, 4 * 9), (tconv.weight, 3 * 4)):
        w, bound = t.numpy(), 1 / np.sqrt(fan_in)
        assert "realized" in repr(t) and t.requires_grad is None
        assert np.abs(w).max() <= bound
        assert w.size < 100 or np.abs(w).max() > 0.9 * bound  # the whole range is drawn
    w = lin.weight.numpy()
    assert abs(w.std() - 1 / np.sqrt(64) / np.sqrt(3)) < 0.005  # a uniform's spread
    assert conv.weight.shape == (16, 4, 3, 3) and tconv.weight.shape == (4, 3, 2, 2)
    Tensor.manual_seed(0)
    np.testing.assert_array_equal(nn.Linear(64, 200).weight.numpy(), w)  # seeded


def test_more_layer_options_match_numpy() -> None:
    x1, x2 = arr(1, 4, 7), arr(2, 3, 5, 5)
    c1 = nn.Conv1d(4, 2, 3, padding="same", dilation=2, groups=2, bias=False)
    valid = nn.Conv2d(3, 2, (3, 2), padding="valid", stride=2)
    four = nn.Conv2d(3, 2, 2, padding=(1, 0, 2, 1))  # tinygrad's (left, right, top, bottom)
    want1 = ref.conv2d(x1[:, :, None], c1.weight.numpy()[:, :, None], None, (1, 1),
                       (0, 0, 2, 2), (1, 2), 2)[:, :, 0]
    np.testing.assert_allclose(c1(Tensor(x1)).numpy(), want1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(valid(Tensor(x2)).numpy(),
                               ref.conv2d(x2, valid.weight.numpy(), valid.bias.numpy(), (2, 2)),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(four(Tensor(x2)).numpy(),
                               ref.conv2d(x2, four.weight.numpy(), four.bias.numpy(), (1, 1),
                                          (2, 1, 1, 0)), rtol=1e-5, atol=1e-5)
    rms = nn.RMSNorm(4, elementwise_affine=False)
    half = arr(3, 4).astype(np.float16)
    out = rms(Tensor(half, dtype=dtypes.float16))
    h64 = half.astype(np.float64)
    assert out.dtype == dtypes.float16
    np.testing.assert_allclose(out.numpy(), h64 / np.sqrt((h64 ** 2).mean(-1, keepdims=True)
                                                          + 1e-6), rtol=2e-3)


def test_batchnorm_options() -> None:
    x = arr(6, 2, 3)
    plain = nn.BatchNorm(2, affine=False, track_running_stats=False)
    assert plain.weight is None and get_state_dict(plain) == {}
    want = ref.normalize(x, (0, 2), 1e-5)
    np.testing.assert_allclose(plain(Tensor(x)).numpy(), want, rtol=1e-5, atol=1e-5)  # eval
    cumulative = nn.BatchNorm1d(2, momentum=None)
    batches = [arr(5, 2), arr(5, 2) * 2 + 1, arr(5, 2) - 3]
    with Tensor.train():
        for b in batches:
            cumulative(Tensor(b))
    means = [b.mean(axis=0) for b in batches]
    variances = [b.astype(np.float64).var(axis=0, ddof=1) for b in batches]
    np.testing.assert_allclose(cumulative.running_mean.numpy(), np.mean(means, 0), rtol=1e-5)
    # the factor 1 / n of batch n: the first batch erases the initial ones
    np.testing.assert_allclose(cumulative.running_var.numpy(), np.mean(variances, 0),
                               rtol=1e-5)
    assert cumulative.num_batches_tracked.tolist() == [3]


def test_layer_errors_are_clear() -> None:
    with pytest.raises(ValueError, match=r"needs \(N, 3, \.\.\.\) input, got shape \(2, 4\)"):
        nn.BatchNorm(3)(Tensor(arr(2, 4)))
    with Tensor.train(), pytest.raises(ValueError, match="more than one value per channel"):
        nn.BatchNorm(3)(Tensor(arr(1, 3)))
    with pytest.raises(ValueError, match="do not split into 2 groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="do not split into 4 groups"):
        nn.GroupNorm(4, 6)
    with pytest.raises(ValueError, match="padding 'full'"):
        nn.Conv2d(1, 1, 3, padding="full")
    with pytest.raises(ValueError, match="not supported for strided"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")(Tensor(arr(1, 1, 5, 5)))
    with pytest.raises(TypeError, match="integer indices, got float32"):
        nn.Embedding(4, 2)(Tensor([1.0]))
    with pytest.raises(ValueError, match=r"LayerNorm\(\(4,\)\) got input of shape \(2, 3\)"):
        nn.LayerNorm(4)(Tensor(arr(2, 3)))
    with pytest.raises(ValueError, match=r"Dropout probability must be in \[0, 1\]"):
        nn.Dropout(1.5)


def _float64(layers: list[object]) -> list[Tensor]:
    """Each layer's float tensors replaced by float64 copies (finite differences need
    them); the new parameters."""
    params = []
    for layer in layers:
        for name, t in list(vars(layer).items()):
            if isinstance(t, Tensor) and t.dtype.is_float:
                copy = Tensor(t.numpy().astype(np.float64), dtype=dtypes.float64)
                if t.requires_grad is not False:
                    params.append(copy.requires_grad_())
                setattr(layer, name, copy)
    return params


def test_gradients_through_the_layers_match_finite_differences() -> None:
    c1, gn = nn.Conv1d(2, 4, 3, padding=1), nn.GroupNorm(2, 4)
    ct, bn = nn.ConvTranspose2d(4, 2, (1, 3), stride=(1, 2)), nn.BatchNorm2d(2)
    rms, ln, emb, lin = nn.RMSNorm(11), nn.LayerNorm(11), nn.Embedding(5, 11), nn.Linear(11, 3)
    params = _float64([c1, gn, ct, bn, rms, ln, emb, lin])
    x = Tensor(RNG.standard_normal((2, 2, 5)), dtype=dtypes.float64)
    idx = Tensor(np.array([[4, 0], [2, 2]], np.int32))
    seed = Tensor(RNG.standard_normal((2, 2, 2, 3)), dtype=dtypes.float64)

    def loss() -> Tensor:
        h = ct(gn(c1(x)).unsqueeze(2))  # (2, 2, 1, 11)
        h = ln(rms(bn(h))) + emb(idx).reshape(2, 2, 1, 11)
        return (lin(h.squeeze(2)).reshape(2, 2, 1, 3) * seed).sum() * 0.5 + (h * h).mean()

    with Tensor.train():
        loss().backward()
        grads = [p.grad.numpy() for p in params]
        values = [p.numpy() for p in params]
        directions = [RNG.standard_normal(v.shape) for v in values]
        h = 1e-6
        sides = []
        for sign in (1, -1):
            for p, v, d in zip(params, values, directions, strict=True):
                p.assign(Tensor(v + sign * h * d, dtype=dtypes.float64))
            sides.append(loss().item())
    numeric = (sides[0] - sides[1]) / (2 * h)
    analytic = sum(float(np.sum(g * d)) for g, d in zip(grads, directions, strict=True))
    assert len(params) == 14 and all(np.abs(g).max() > 0 for g in grads)
    assert abs(analytic - numeric) <= 1e-6 * (1 + abs(numeric)), (analytic, numeric)


# ---------------------------------------------------------------- state dicts

def test_state_dict_names_follow_attributes_lists_and_dicts() -> None:
    net = Net()
    assert list(get_state_dict(net)) == NET_KEYS
    assert list(get_state_dict(net, prefix="model.")) == [f"model.{k}" for k in NET_KEYS]
    Pair = namedtuple("Pair", "left right")
    shared = nn.Linear(2, 2)
    holder = {"pair": Pair(shared, shared), "self": None, "k": (1, "text", shared.bias)}
    holder["self"] = holder  # a cycle is walked once
    names = get_state_dict(holder)
    assert list(names) == ["pair.left.weight", "pair.left.bias", "pair.right.weight",
                           "pair.right.bias", "k.2"]
    found = get_parameters(holder)  # each tensor once
    assert len(found) == 2 and found[0] is shared.weight and found[1] is shared.bias
    assert len(get_parameters(net)) == len(NET_KEYS)


def test_load_state_dict_round_trip_and_cast() -> None:
    Tensor.manual_seed(1)
    source, target = Net(), Net()
    x = Tensor(arr(2, 1, 3, 6))
    state = {k: v.numpy().astype(np.float64) if v.dtype.is_float else v.numpy()
             for k, v in get_state_dict(source).items()}
    held = target.head.weight
    loaded = load_state_dict(target, state)
    assert held is target.head.weight and held.dtype == dtypes.float32  # cast, same object
    assert len(loaded) == len(NET_KEYS) and "realized" in repr(held)
    np.testing.assert_allclose(target(x).numpy(), source(x).numpy(), rtol=1e-6)
    consumed = dict(get_state_dict(source))
    load_state_dict(target, consumed, consume=True)
    assert consumed == {}


def test_load_state_dict_errors_name_the_keys_and_load_nothing() -> None:
    net = Net()
    before = net.head.weight.numpy()
    state = dict(get_state_dict(Net()))
    del state["head.bias"]
    state["head.extra"] = Tensor([1.0])
    with pytest.raises(ValueError, match=r"missing keys \['head.bias'\]; unexpected keys "
                                         r"\['head.extra'\]"):
        load_state_dict(net, state)
    np.testing.assert_array_equal(net.head.weight.numpy(), before)
    state["head.weight"] = Tensor(arr(8, 3))
    with pytest.raises(ValueError, match=r"shape mismatch: head.weight: model \(3, 8\), "
                                         r"state dict \(8, 3\)"):
        load_state_dict(net, state, strict=False)
    np.testing.assert_array_equal(net.head.weight.numpy(), before)
    state["head.weight"] = Tensor(arr(3, 8))
    loaded = load_state_dict(net, state, strict=False)  # the keys both have
    assert len(loaded) == len(NET_KEYS) - 1
    np.testing.assert_array_equal(net.head.weight.numpy(), state["head.weight"].numpy())
    with pytest.raises(TypeError, match=r"'head\.weight' is list"):
        load_state_dict(net, {**state, "head.weight": [1.0]}, strict=False)


# ---------------------------------------------------------------- safetensors files

def test_safe_save_and_safe_load_round_trip(tmp_path: Path) -> None:
    values = {"f32": arr(2, 3), "f16": arr(4).astype(np.float16),
              "bf16": arr(3).astype(ml_dtypes.bfloat16), "i64": np.arange(5, dtype=np.int64),
              "f64": RNG.standard_normal(3), "i32": np.array([[-3], [7]], np.int32),
              "flag": np.array([True, False]), "scalar": np.array(0.5, np.float32)}
    state = {k: Tensor(v, dtype=v.dtype) for k, v in values.items()}
    state["lazy"] = state["f32"] * 2  # realized on the way
    path = tmp_path / "w.safetensors"
    safe_save(state, path, metadata={"note": "test"})
    back = safe_load(path)
    assert set(back) == set(state)
    for k, v in values.items():
        assert back[k].dtype == state[k].dtype and back[k].shape == v.shape  # 0-d stays 0-d
        np.testing.assert_array_equal(back[k].numpy(), v)
    np.testing.assert_array_equal(back["lazy"].numpy(), values["f32"] * 2)
    net, copy = Net(), Net()
    safe_save(get_state_dict(net), path)
    load_state_dict(copy, safe_load(path))
    for k, v in get_state_dict(copy).items():
        np.testing.assert_array_equal(v.numpy(), get_state_dict(net)[k].numpy())
    from safetensors import safe_open

    safe_save(state, path, metadata={"note": "test"})
    with safe_open(str(path), framework="np") as f:
        assert f.metadata() == {"note": "test"}


def _header(entries: dict[str, dict[str, object]]) -> bytes:
    text = json.dumps(entries).encode()
    return struct.pack("<Q", len(text)) + text


def test_bad_files_give_one_clear_error(tmp_path: Path) -> None:
    good = tmp_path / "good.safetensors"
    safe_save({"w": Tensor(arr(4, 4)), "b": Tensor(arr(4))}, good)
    data = good.read_bytes()
    cases = {
        "empty": b"",
        "short": data[:5],
        "cut-header": data[:20],
        "cut-data": data[:-7],
        "garbled": bytes(RNG.integers(0, 256, 300, dtype=np.uint8)),
        "huge-header": struct.pack("<Q", 1 << 40) + b"{}",
        "bad-json": struct.pack("<Q", 6) + b"{nope}",
        "bad-offsets": _header({"w": {"dtype": "F32", "shape": [4],
                                      "data_offsets": [0, 64]}}) + bytes(16),
    }
    for name, content in cases.items():
        path = tmp_path / f"{name}.safetensors"
        path.write_bytes(content)
        with pytest.raises(StateFileError, match="is not a readable safetensors file"):
            safe_load(path)
    c64 = tmp_path / "c64.safetensors"
    c64.write_bytes(_header({"x": {"dtype": "C64", "shape": [2], "data_offsets": [0, 16]}})
                    + bytes(16))
    with pytest.raises(StateFileError, match="tensor 'x' is complex64, a dtype irtensor has not"):
        safe_load(c64)
    with pytest.raises(StateFileError, match="no such file"):
        safe_load(tmp_path / "absent.safetensors")
    with pytest.raises(TypeError, match="entry 'x' must be a str naming a Tensor"):
        safe_save({"x": np.zeros(2)}, tmp_path / "x.safetensors")  # type: ignore[dict-item]


# ---------------------------------------------------------------- torch, when installed

def test_layers_match_torch() -> None:
    torch = pytest.importorskip("torch")
    layers = [
        (nn.Linear(5, 3), torch.nn.Linear(5, 3), (4, 5)),
        (nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2),
         torch.nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2), (2, 4, 6, 5)),
        (nn.Conv1d(2, 3, 3, padding="same"), torch.nn.Conv1d(2, 3, 3, padding="same"), (2, 2, 7)),
        (nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1),
         torch.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1), (1, 4, 3, 3)),
        (nn.LayerNorm(6), torch.nn.LayerNorm(6), (2, 3, 6)),
        (nn.GroupNorm(2, 4), torch.nn.GroupNorm(2, 4), (2, 4, 3, 3)),
        (nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3), (4, 3, 2, 2)),
    ]
    for ours, theirs, shape in layers:
        assert list(get_state_dict(ours)) == list(theirs.state_dict())
        load_state_dict(ours, {k: v.detach().numpy() for k, v in theirs.state_dict().items()
                               if k != "num_batches_tracked"}, strict=False)
        x = arr(*shape)
        for training in (True, False):
            theirs.train(training)
            with Tensor.train(training):
                got = ours(Tensor(x)).numpy()
            want = theirs(torch.from_numpy(x)).detach().numpy()
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- the docs

def test_the_snippets_of_docs_training_run() -> None:
    """The python blocks of the nn, State and Optimizers sections, in order."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "training.md").read_text()
    sections = [s for s in text.split("\n## ")
                if s.split("\n", 1)[0] in ("irtensor.nn", "State", "Optimizers")]
    code = [block for s in sections for block in re.findall(r"```python\n(.*?)```", s, re.S)]
    assert len(sections) == 3 and len(code) == 3
    exec(compile("\n".join(code), "docs/training.md", "exec"), {})
