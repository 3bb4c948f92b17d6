"""backward, .grad and Tensor.gradient on every device: each differentiable method's
gradient against central finite differences in float64 (and torch when installed)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from irtensor import Tensor

Fn = Callable[..., Tensor]
RNG = np.random.default_rng(5)

# name -> (function of tensors, input shapes, positive inputs only)
METHODS: dict[str, tuple[Fn, tuple[tuple[int, ...], ...], bool]] = {
    "add": (lambda a, b: a + b, ((3, 4), (4,)), False),
    "sub": (lambda a, b: a - b, ((3, 4), (3, 1)), False),
    "mul": (lambda a, b: a * b, ((3, 4), (3, 4)), False),
    "div": (lambda a, b: a / b, ((3, 4), (3, 4)), True),
    "pow": (lambda a, b: a ** b, ((3, 4), (3, 4)), True),
    "neg": (lambda a: -a, ((5,),), False),
    "exp": (lambda a: a.exp(), ((5,),), False),
    "log": (lambda a: a.log(), ((5,),), True),
    "sqrt": (lambda a: a.sqrt(), ((5,),), True),
    "rsqrt": (lambda a: a.rsqrt(), ((5,),), True),
    "sin": (lambda a: a.sin(), ((5,),), False),
    "cos": (lambda a: a.cos(), ((5,),), False),
    "tanh": (lambda a: a.tanh(), ((5,),), False),
    "sigmoid": (lambda a: a.sigmoid(), ((5,),), False),
    "relu": (lambda a: a.relu(), ((6,),), False),
    "gelu": (lambda a: a.gelu(), ((6,),), False),
    "gelu_exact": (lambda a: a.gelu(approximate="none"), ((6,),), False),
    "softplus": (lambda a: a.softplus(), ((6,),), False),
    "abs": (lambda a: a.abs(), ((6,),), False),
    "square": (lambda a: a.square(), ((6,),), False),
    "reciprocal": (lambda a: a.reciprocal(), ((6,),), True),
    "maximum": (lambda a, b: a.maximum(b), ((6,), (6,)), False),
    "where": (lambda a, b: (a > 0).where(a, b), ((6,), (6,)), False),
    "sum": (lambda a: a.sum(axis=1), ((3, 4),), False),
    "mean": (lambda a: a.mean(), ((3, 4),), False),
    "max": (lambda a: a.max(axis=0), ((3, 4),), False),
    "var": (lambda a: a.var(axis=1), ((3, 5),), False),
    "std": (lambda a: a.std(), ((3, 5),), False),
    "logsumexp": (lambda a: a.logsumexp(axis=1), ((3, 4),), False),
    "softmax": (lambda a: a.softmax(), ((3, 4),), False),
    "log_softmax": (lambda a: a.log_softmax(axis=0), ((3, 4),), False),
    "matmul": (lambda a, b: a @ b, ((3, 4), (4, 2)), False),
    "reshape": (lambda a: a.reshape(2, 6), ((3, 4),), False),
    "permute": (lambda a: a.permute(2, 0, 1), ((2, 3, 4),), False),
    "expand": (lambda a: a.reshape(3, 1).expand(3, 4), ((3,),), False),
    "pad": (lambda a: a.pad(((1, 0), (0, 2))), ((2, 3),), False),
    "shrink_slice": (lambda a: a[1:, ::2], ((3, 5),), False),
    "flip": (lambda a: a.flip(0), ((3, 2),), False),
    "cat": (lambda a, b: a.cat(b, dim=1), ((2, 3), (2, 2)), False),
    "transpose": (lambda a: a.transpose(), ((2, 3),), False),
    "conv2d": (lambda x, w: x.conv2d(w, padding=1), ((1, 2, 5, 5), (3, 2, 3, 3)), False),
    "max_pool2d": (lambda x: x.max_pool2d(), ((1, 1, 4, 4),), False),
    "avg_pool2d": (lambda x: x.avg_pool2d(), ((1, 2, 4, 4),), False),
    "layernorm": (lambda a: a.layernorm(), ((3, 6),), False),
    "cross_entropy": (lambda a: a.cross_entropy(Tensor([0, 3, 1])), ((3, 4),), False),
    "batchnorm": (lambda x, w, b: x.batchnorm(w, b, x.mean(axis=(0, 2, 3)),
                                              x.var(axis=(0, 2, 3)).add(1e-5).rsqrt()),
                  ((2, 3, 2, 2), (3,), (3,)), False),
}


def inputs_for(shapes: tuple[tuple[int, ...], ...], positive: bool) -> list[np.ndarray]:
    arrays = [RNG.standard_normal(s) for s in shapes]
    return [np.abs(a) + 0.5 if positive else a for a in arrays]


def value_of(fn: Fn, arrays: list[np.ndarray], seed: np.ndarray) -> float:
    return float(np.sum(fn(*(Tensor(a) for a in arrays)).numpy() * seed))


def backward_of(name: str) -> tuple[Fn, list[np.ndarray], list[Tensor], Tensor, np.ndarray]:
    """METHODS[name] on drawn inputs, backward from a drawn cotangent `seed`."""
    fn, shapes, positive = METHODS[name]
    arrays = inputs_for(shapes, positive)
    params = [Tensor(a, requires_grad=True) for a in arrays]
    out = fn(*params)
    seed = RNG.standard_normal(out.shape)
    (out * Tensor(seed)).sum().backward()
    return fn, arrays, params, out, seed


def _torch_methods() -> dict[str, Callable[..., object]]:
    """The METHODS as torch writes them (torch's own functions, no irtensor names)."""
    import torch
    import torch.nn.functional as F

    return {
        "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
        "div": lambda a, b: a / b, "pow": lambda a, b: a ** b, "neg": lambda a: -a,
        "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
        "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
        "relu": torch.relu, "gelu": lambda a: F.gelu(a, approximate="tanh"),
        "gelu_exact": F.gelu, "softplus": F.softplus, "abs": torch.abs,
        "square": torch.square, "reciprocal": torch.reciprocal, "maximum": torch.maximum,
        "where": lambda a, b: torch.where(a > 0, a, b),
        "sum": lambda a: a.sum(dim=1), "mean": lambda a: a.mean(),
        "max": lambda a: a.amax(dim=0), "var": lambda a: a.var(dim=1),
        "std": lambda a: a.std(), "logsumexp": lambda a: a.logsumexp(dim=1),
        "softmax": lambda a: a.softmax(dim=-1), "log_softmax": lambda a: a.log_softmax(dim=0),
        "matmul": lambda a, b: a @ b, "reshape": lambda a: a.reshape(2, 6),
        "permute": lambda a: a.permute(2, 0, 1),
        "expand": lambda a: a.reshape(3, 1).expand(3, 4),
        "pad": lambda a: F.pad(a, (0, 2, 1, 0)), "shrink_slice": lambda a: a[1:, ::2],
        "flip": lambda a: a.flip(0), "cat": lambda a, b: torch.cat([a, b], dim=1),
        "transpose": lambda a: a.T, "conv2d": lambda x, w: F.conv2d(x, w, padding=1),
        "max_pool2d": lambda x: F.max_pool2d(x, 2), "avg_pool2d": lambda x: F.avg_pool2d(x, 2),
        "layernorm": lambda a: F.layer_norm(a, (a.shape[-1],), eps=1e-5),
        "cross_entropy": lambda a: F.cross_entropy(a, torch.tensor([0, 3, 1])),
        "batchnorm": lambda x, w, b: (x - x.mean(dim=(0, 2, 3), keepdim=True))
        * w.reshape(1, -1, 1, 1) * (x.var(dim=(0, 2, 3), keepdim=True) + 1e-5).rsqrt()
        + b.reshape(1, -1, 1, 1),
    }


@pytest.mark.parametrize("name", sorted(METHODS))
def test_gradient_matches_torch(name: str) -> None:
    """The same cotangent through irtensor and torch (float64): the same gradients.
    relu, max, max_pool2d and maximum are drawn without ties (torch sends a tie's
    cotangent to one side, irtensor splits it)."""
    torch = pytest.importorskip("torch", reason="torch is not installed: the finite "
                                "difference test still checks every gradient")
    _fn, arrays, params, out, seed = backward_of(name)
    leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    want = _torch_methods()[name](*leaves)
    assert tuple(want.shape) == out.shape
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-9, atol=1e-9)
    (want * torch.tensor(seed)).sum().backward()
    for p, leaf in zip(params, leaves, strict=True):
        np.testing.assert_allclose(p.grad.numpy(), leaf.grad.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_gradient_matches_finite_differences(name: str) -> None:
    fn, arrays, params, _out, seed = backward_of(name)
    directions = [RNG.standard_normal(a.shape) for a in arrays]
    h = 1e-6
    up = value_of(fn, [a + h * d for a, d in zip(arrays, directions, strict=True)], seed)
    down = value_of(fn, [a - h * d for a, d in zip(arrays, directions, strict=True)], seed)
    numeric = (up - down) / (2 * h)
    analytic = sum(float(np.sum(p.grad.numpy() * d)) for p, d in zip(params, directions,
                                                                      strict=True))
    assert abs(analytic - numeric) <= 1e-5 * (1 + abs(numeric)), (analytic, numeric)
    for p, a in zip(params, arrays, strict=True):
        assert p.grad is not None and p.grad.shape == a.shape and p.grad.dtype == p.dtype


def test_backward_accumulates_and_gradient_does_not() -> None:
    w = Tensor(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=True)
    (w * w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2, 4, 6])
    (w * 3).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [5, 7, 9])
    (dw,) = (w * w * w).sum().gradient(w)
    np.testing.assert_array_equal(dw.numpy(), [3, 12, 27])
    np.testing.assert_array_equal(w.grad.numpy(), [5, 7, 9])


def test_loss_value_comes_with_the_gradient_and_unused_targets_get_zeros() -> None:
    x = Tensor(np.array([1.0, -2.0], np.float32), requires_grad=True)
    y = Tensor(np.array([[4.0]], np.float32), requires_grad=True)
    loss = (x * x).sum()
    dx, dy = loss.gradient(x, y)
    assert loss.item() == 5.0
    np.testing.assert_array_equal(dx.numpy(), [2, -4])
    np.testing.assert_array_equal(dy.numpy(), [[0]])


def test_non_scalar_needs_a_cotangent() -> None:
    x = Tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    with pytest.raises(ValueError, match=r"needs `gradient`"):
        (x * 2).backward()
    (x * x).backward(Tensor(np.array([1.0, 10.0], np.float32)))
    np.testing.assert_array_equal(x.grad.numpy(), [2, 40])


def test_detach_cuts_the_gradient() -> None:
    x = Tensor(np.array([3.0], np.float32), requires_grad=True)
    (x * x.detach()).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3])


def test_integer_tensors_refuse_gradients() -> None:
    with pytest.raises(TypeError, match="only float tensors have gradients; this one is int32"):
        Tensor([1, 2], requires_grad=True)
    x = Tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="target #0 is int32"):
        (x * 2).sum().gradient(Tensor([1, 2]))


def test_a_second_step_replays_the_gradient_program() -> None:
    from irtensor.runtime import STATS

    w = Tensor(np.ones(4, np.float32), requires_grad=True)
    for step in range(3):
        x = Tensor(np.full(4, step, np.float32))
        before = STATS.pipeline_runs
        ((w * x).sum()).backward()
        w.assign(w - w.grad * 0.1).realize()
        w.grad = None
        if step > 1:  # the gradient and the update both replay: nothing is lowered again
            assert STATS.pipeline_runs == before
    np.testing.assert_allclose(w.numpy(), np.full(4, 1 - 0.1 * (0 + 1 + 2)), rtol=1e-6)


def test_train_and_test_modes() -> None:
    assert Tensor.training is False
    with Tensor.train():
        assert Tensor.training is True
        with Tensor.test():
            assert Tensor.training is False
    assert Tensor.training is False


def test_a_loss_that_reads_no_target_has_zero_gradients() -> None:
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = Tensor([4.0, 5.0])
    loss = (z * z).sum()
    (g,) = loss.gradient(x)
    assert g.tolist() == [0.0, 0.0, 0.0]
    assert loss.item() == 41.0


def test_a_gradient_of_a_gradient_is_refused_with_the_reason() -> None:
    """Gradients are realized values, as torch's without create_graph=True: one used in a
    later loss is a constant there, and a loss computed from gradients alone cannot be
    differentiated back to the targets."""
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = (x * x * x).sum().gradient(x)
    assert g.tolist() == [3.0, 12.0, 27.0]
    with pytest.raises(NotImplementedError, match="gradient of a gradient is not supported"):
        g.sum().gradient(x)
    (held,) = (g * x).sum().gradient(x)  # g is a constant here, as in torch
    assert held.tolist() == [3.0, 12.0, 27.0]
