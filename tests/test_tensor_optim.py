"""irtensor.nn.optim on every device: SGD (momentum, nesterov, weight decay), Adam and
AdamW train a small linear regression for several steps, step by step against numpy
written from torch's update formulas (same init, same data); each step is one program,
and from the second step on no program is compiled."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import nn_reference as ref
from irtensor import Tensor, nn
from irtensor.nn import optim
from irtensor.runtime import STATS

STEPS = 5
RNG = np.random.default_rng(7)
X = RNG.standard_normal((8, 3)).astype(np.float32)
Y = RNG.standard_normal((8, 2)).astype(np.float32)

Make = Callable[[list[Tensor]], optim.Optimizer]
CONFIGS: dict[str, tuple[Make, dict[str, float]]] = {
    "sgd-nesterov-decay": (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.05,
                                                nesterov=True),
                           {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.05, "nesterov": 1}),
    "adam": (lambda ps: optim.Adam(ps, lr=0.05), {"lr": 0.05}),
    "adamw": (lambda ps: optim.AdamW(ps, lr=0.05, b1=0.8, b2=0.99, eps=1e-6,
                                     weight_decay=0.1),
              {"lr": 0.05, "b1": 0.8, "b2": 0.99, "eps": 1e-6, "weight_decay": 0.1}),
}


def reference_run(kind: str, w: np.ndarray, b: np.ndarray, h: dict[str, float]
                  ) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """(loss, w, b) after each step, in float64."""
    params = [w.astype(np.float64), b.astype(np.float64)]
    state: list[list[np.ndarray | None]] = [[None, np.zeros_like(p), np.zeros_like(p)]
                                            for p in params]
    out = []
    for t in range(1, STEPS + 1):
        loss, gw, gb = ref.mse_grads(params[0], params[1], X.astype(np.float64), Y)
        for i, g in enumerate((gw, gb)):
            if kind.startswith("sgd"):
                params[i], state[i][0] = ref.sgd(params[i], g, state[i][0], h["lr"],
                                                 h["momentum"], h["weight_decay"],
                                                 bool(h["nesterov"]))
            else:
                params[i], state[i][1], state[i][2] = ref.adam(
                    params[i], g, state[i][1], state[i][2], t, h["lr"], h.get("b1", 0.9),
                    h.get("b2", 0.999), h.get("eps", 1e-8), h.get("weight_decay", 0.0))
        out.append((loss, params[0].copy(), params[1].copy()))
    return out


@pytest.mark.parametrize("kind", sorted(CONFIGS))
def test_optimizer_matches_torch_formulas_and_replays_each_step(kind: str) -> None:
    make, hyper = CONFIGS[kind]
    Tensor.manual_seed(2)
    model = nn.Linear(3, 2)
    want = reference_run(kind, model.weight.numpy(), model.bias.numpy(), hyper)
    opt = make([model.weight, model.bias])
    x, y = Tensor(X), Tensor(Y)
    for step, (loss_want, w_want, b_want) in enumerate(want):
        compiled, programs = STATS.pipeline_runs, STATS.pipeline_runs + STATS.programs_cached
        opt.zero_grad()
        loss = (model(x) - y).square().mean().backward()
        before_step = STATS.pipeline_runs + STATS.programs_cached
        opt.step()
        assert STATS.pipeline_runs + STATS.programs_cached == before_step + 1  # one program
        if step >= 1:  # the gradient and the update replay: nothing is compiled
            assert STATS.pipeline_runs == compiled
        assert STATS.pipeline_runs + STATS.programs_cached == programs + 2
        np.testing.assert_allclose(loss.item(), loss_want, rtol=1e-5)
        np.testing.assert_allclose(model.weight.numpy(), w_want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(model.bias.numpy(), b_want, rtol=1e-5, atol=1e-6)
    if kind.startswith("adam"):
        assert opt.t.tolist() == [STEPS]  # type: ignore[attr-defined]
