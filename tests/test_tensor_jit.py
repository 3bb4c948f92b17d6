"""TinyJit on every device: a captured step replays its programs with eager's numbers."""

from __future__ import annotations

import numpy as np
import pytest

from irtensor import Tensor, TinyJit, nn
from irtensor.jit import JitError
from irtensor.nn import optim
from irtensor.nn.state import get_parameters
from irtensor.runtime import STATS


class Net:
    def __init__(self) -> None:
        self.l1, self.l2 = nn.Linear(6, 8), nn.Linear(8, 3)

    def __call__(self, x: Tensor) -> Tensor:
        return self.l2(self.l1(x).relu())


def losses(jitted: bool, steps: int = 6) -> tuple[list[float], list[np.ndarray], int]:
    Tensor.manual_seed(3)
    model = Net()
    opt = optim.Adam(get_parameters(model), lr=0.01)
    rng = np.random.default_rng(0)

    def step(x: Tensor, y: Tensor) -> Tensor:
        opt.zero_grad()
        loss = model(x).cross_entropy(y)
        loss.backward()
        opt.step()
        return loss

    run = TinyJit(step) if jitted else step
    out, pipelines = [], 0
    for i in range(steps):
        x = Tensor(rng.standard_normal((5, 6)).astype(np.float32))
        y = Tensor(rng.integers(0, 3, 5).astype(np.int32))
        before = STATS.pipeline_runs
        with Tensor.train():
            out.append(run(x, y).item())
        if i >= 2:
            pipelines += STATS.pipeline_runs - before
    return out, [p.numpy() for p in get_parameters(model)], pipelines


def test_a_captured_step_gives_eager_results_bit_for_bit() -> None:
    eager, eager_params, _ = losses(False)
    jitted, jit_params, pipelines = losses(True)
    assert jitted == eager
    for a, b in zip(jit_params, eager_params, strict=True):
        np.testing.assert_array_equal(a, b)
    assert pipelines == 0


def test_replay_records_no_tensor_calls() -> None:
    calls = []

    @TinyJit
    def double(x: Tensor) -> Tensor:
        calls.append(1)
        return (x * 2).realize()

    for i in range(4):
        got = double(Tensor(np.full(3, i, np.float32)))
        np.testing.assert_array_equal(got.numpy(), np.full(3, 2 * i))
    assert len(calls) == 2  # the first call and the capture; the others replay
    np.testing.assert_array_equal(double(Tensor(np.ones(4, np.float32))).numpy(), [2] * 4)
    assert len(calls) == 3  # a new shape runs the function again


def test_outputs_must_be_tensors() -> None:
    bad = TinyJit(lambda x: float((x * 2).sum().item()))
    with pytest.raises(JitError, match="must return a Tensor or a tuple of Tensors, not float"):
        bad(Tensor([1.0]))


def test_control_flow_on_a_value_is_refused_when_captured() -> None:
    def step(x: Tensor) -> Tensor:
        y = x * 2
        return y + 1 if y.sum().item() > 0 else y - 1  # Python control flow on a value

    jitted = TinyJit(step)
    x = Tensor([1.0, 2.0])
    assert jitted(x).tolist() == [3.0, 5.0]  # the first call runs as written
    with pytest.raises(JitError, match=r"TinyJit: @.*step reads a tensor's value on the host"):
        jitted(x)  # the second would capture a frozen branch
    assert jitted.captured is None
    assert (x * 3).tolist() == [3.0, 6.0]  # outside a capture, values read as usual
    with pytest.raises(JitError, match="reads a tensor's value"):
        _capture_twice(x)


def _capture_twice(x: Tensor) -> None:
    jitted = TinyJit(lambda t: t * 2 if t.sum() else t)  # bool(t) is a read too
    jitted(x)
    jitted(x)


def test_truth_of_a_tensor() -> None:
    assert bool(Tensor([2.0])) and not bool(Tensor(0))
    with pytest.raises(ValueError, match=r"truth value of a tensor of shape \(2,\) is ambiguous"):
        bool(Tensor([1.0, 2.0]))
