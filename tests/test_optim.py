"""irtensor.nn.optim beyond test_tensor_optim.py: the other SGD variants, skipped and
refused parameters, buffers realized in the step, the learning rate as a tensor, an
optimizer's state through a checkpoint, and torch's optimizers when torch is installed.
On the interpreter: what they test is above the device."""

from __future__ import annotations

import numpy as np
import pytest

import nn_reference as ref
from irtensor import Tensor, nn
from irtensor.frontend import realize
from irtensor.nn import optim
from irtensor.nn.state import get_parameters, get_state_dict, load_state_dict
from irtensor.runtime import STATS

RNG = np.random.default_rng(8)
X = RNG.standard_normal((6, 3)).astype(np.float32)
Y = RNG.standard_normal((6, 2)).astype(np.float32)


@pytest.fixture(autouse=True)
def on_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_DEVICE", "interp")


def train_step(model: nn.Linear, opt: optim.Optimizer) -> float:
    opt.zero_grad()
    loss = (model(Tensor(X)) - Tensor(Y)).square().mean().backward()
    opt.step()
    return float(loss.item())


@pytest.mark.parametrize(("momentum", "weight_decay"), [(0.0, 0.0), (0.5, 0.0), (0.0, 0.2),
                                                        (0.9, 0.1)])
def test_sgd_variants_match_torch_formulas(momentum: float, weight_decay: float) -> None:
    model = nn.Linear(3, 2)
    w, b = model.weight.numpy().astype(np.float64), model.bias.numpy().astype(np.float64)
    opt = optim.SGD([model.weight, model.bias], lr=0.2, momentum=momentum,
                    weight_decay=weight_decay)
    bw = bb = None
    for _ in range(5):
        loss = train_step(model, opt)
        want, gw, gb = ref.mse_grads(w, b, X.astype(np.float64), Y)
        w, bw = ref.sgd(w, gw, bw, 0.2, momentum, weight_decay, False)
        b, bb = ref.sgd(b, gb, bb, 0.2, momentum, weight_decay, False)
        np.testing.assert_allclose(loss, want, rtol=1e-5)
        np.testing.assert_allclose(model.weight.numpy(), w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(model.bias.numpy(), b, rtol=1e-5, atol=1e-6)


def test_parameters_without_a_gradient_are_skipped() -> None:
    model, unused = nn.Linear(3, 2), Tensor(np.ones(3, np.float32))
    opt = optim.Adam([model.weight, model.bias, unused], lr=0.1)
    assert unused.requires_grad is True  # None becomes True, as tinygrad
    opt.step()  # no gradient anywhere: nothing moves, not even the step count
    assert opt.t.tolist() == [0]
    before = model.weight.numpy()
    train_step(model, opt)
    assert unused.grad is None and unused.numpy().tolist() == [1, 1, 1]
    assert opt.t.tolist() == [1] and np.abs(model.weight.numpy() - before).max() > 0.05
    np.testing.assert_array_equal(opt.m[2].numpy(), 0)


def test_refused_parameters_say_why() -> None:
    with pytest.raises(TypeError, match="parameter #1 is ndarray, not a Tensor"):
        optim.SGD([Tensor([1.0]), np.zeros(2)])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="parameter #0 is int32; only float tensors"):
        optim.SGD([Tensor([1, 2])])
    with pytest.raises(ValueError, match="no parameter requires a gradient"):
        optim.Adam([Tensor([1.0]).requires_grad_(False)])
    with pytest.raises(ValueError, match="nesterov momentum needs momentum > 0"):
        optim.SGD([Tensor([1.0])], nesterov=True)
    with pytest.raises(ValueError, match="lr must be >= 0"):
        optim.AdamW([Tensor([1.0])], lr=-1)
    with pytest.raises(ValueError, match=r"b1 \(1.0\) and b2 \(0.999\) must be in \[0, 1\)"):
        optim.Adam([Tensor([1.0])], b1=1.0)


def test_buffers_are_realized_in_the_step_program() -> None:
    class Model:
        def __init__(self) -> None:
            self.lin, self.bn = nn.Linear(3, 4), nn.BatchNorm(4)

        def __call__(self, x: Tensor) -> Tensor:
            return self.bn(self.lin(x)).relu().sum(axis=1, keepdim=True)

    model = Model()
    opt = optim.SGD(get_parameters(model), lr=0.01)
    assert model.bn.running_mean in opt.buffers and len(opt.params) == 4
    rm = np.zeros(4)
    with Tensor.train():
        for step in range(3):
            w, b = model.lin.weight.numpy(), model.lin.bias.numpy()
            compiled = STATS.pipeline_runs
            opt.zero_grad()
            (model(Tensor(X)) - Tensor(Y[:, :1])).square().mean().backward()
            before = STATS.pipeline_runs + STATS.programs_cached
            opt.step()
            assert STATS.pipeline_runs + STATS.programs_cached == before + 1
            assert step < 1 or STATS.pipeline_runs == compiled  # the 2nd step replays
            assert realize.buffer_of(model.bn.running_mean._value) is not None
            rm = 0.9 * rm + 0.1 * (X.astype(np.float64) @ w.T + b).mean(axis=0)
            np.testing.assert_allclose(model.bn.running_mean.numpy(), rm, rtol=1e-5)
    assert model.bn.num_batches_tracked.tolist() == [3]


def test_the_learning_rate_is_a_tensor_a_new_one_replays() -> None:
    model = nn.Linear(3, 2)
    opt = optim.SGD([model.weight, model.bias], lr=0.1)
    train_step(model, opt)
    train_step(model, opt)
    assert opt.lr.tolist() == pytest.approx([0.1])
    compiled = STATS.pipeline_runs
    opt.lr = 0.0
    w = model.weight.numpy()
    train_step(model, opt)
    np.testing.assert_array_equal(model.weight.numpy(), w)  # lr 0: nothing moves
    opt.lr.assign(Tensor([0.3]))
    train_step(model, opt)
    assert STATS.pipeline_runs == compiled
    assert np.abs(model.weight.numpy() - w).max() > 0


def test_a_checkpoint_of_model_and_optimizer_resumes_exactly() -> None:
    Tensor.manual_seed(4)
    model = nn.Linear(3, 2)
    opt = optim.AdamW(get_parameters(model), lr=0.05)
    for _ in range(2):
        train_step(model, opt)
    saved = {k: v.numpy() for k, v in get_state_dict((model, opt)).items()}
    assert {"1.m.0", "1.v.1", "1.t", "1.c1", "1.c2", "1._lr"} <= set(saved)
    straight = [train_step(model, opt) for _ in range(3)]
    Tensor.manual_seed(9)
    model2 = nn.Linear(3, 2)
    opt2 = optim.AdamW(get_parameters(model2), lr=0.05)
    load_state_dict((model2, opt2), saved)
    resumed = [train_step(model2, opt2) for _ in range(3)]
    np.testing.assert_array_equal(resumed, straight)
    np.testing.assert_array_equal(model2.weight.numpy(), model.weight.numpy())


def test_float64_parameters_train_in_float64() -> None:
    start, target = RNG.standard_normal(5), RNG.standard_normal(5)
    p = Tensor(start, requires_grad=True)
    opt = optim.AdamW([p], lr=0.1, weight_decay=0.3)
    assert opt.lr.dtype == opt.c2.dtype == p.dtype
    want, m, v = start, np.zeros(5), np.zeros(5)
    for t in range(1, 6):
        opt.zero_grad()
        ((p - Tensor(target)) ** 3).abs().sum().backward()
        opt.step()
        g = 3 * (want - target) ** 2 * np.sign(want - target)
        want, m, v = ref.adam(want, g, m, v, t, 0.1, 0.9, 0.999, 1e-8, 0.3)
    np.testing.assert_allclose(p.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("name", ["sgd", "adam", "adamw"])
def test_optimizers_match_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    mlp = [nn.Linear(3, 5), nn.Linear(5, 2)]
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    load_state_dict(mlp, {k.replace("2.", "1."): v for k, v in state.items()})
    ours = {"sgd": lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
            "adam": lambda p: optim.Adam(p, lr=0.01),
            "adamw": lambda p: optim.AdamW(p, lr=0.01, weight_decay=0.1)}[name](
                get_parameters(mlp))
    opt_t = {"sgd": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
             "adam": lambda p: torch.optim.Adam(p, lr=0.01),
             "adamw": lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1)}[name](
                 theirs.parameters())
    for _ in range(5):
        ours.zero_grad()
        (mlp[1](mlp[0](Tensor(X)).tanh()) - Tensor(Y)).square().mean().backward()
        ours.step()
        opt_t.zero_grad()
        (theirs(torch.from_numpy(X)) - torch.from_numpy(Y)).square().mean().backward()
        opt_t.step()
    for k, v in theirs.state_dict().items():
        got = get_state_dict(mlp)[k.replace("2.", "1.")].numpy()
        np.testing.assert_allclose(got, v.detach().numpy(), rtol=1e-5, atol=1e-6)
