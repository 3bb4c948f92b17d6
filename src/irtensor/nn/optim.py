"""Optimizers: SGD (momentum, nesterov, weight decay), Adam and AdamW (torch's update
formulas, tinygrad's names and defaults).

`step()` builds every new value lazily (parameters and states: momentum buffers, Adam's
moments, the step count), assigns them (still lazy: `schedule_step()`, tinygrad's) and
realizes them all with one `Tensor.realize`: ONE program per step. Every
state is a realized buffer from the start and the learning rate and step count are
tensors too, so each step's program has the same structure as the last one and replays
compiled code: no per-step constant is baked into it.

Parameters are the tensors given whose `requires_grad` is True, or None (then set to
True, as tinygrad does); those with `requires_grad` False (BatchNorm's running
statistics, from `get_parameters(model)`) are buffers the step realizes in its program
and does not change. A parameter without a gradient at `step()` is skipped, as in torch.
"""

from __future__ import annotations

from collections.abc import Iterable

from irtensor import dtypes
from irtensor.frontend.tensor import Tensor
from irtensor.nn.layers import filled

Update = tuple[Tensor, Tensor]  # a tensor and its new value


def _dedup(params: Iterable[object]) -> list[Tensor]:
    seen: dict[int, Tensor] = {}
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(f"optimizer: parameter #{i} is {type(p).__name__}, not a Tensor")
        seen.setdefault(id(p), p)
    return list(seen.values())


def _check_trainable(params: list[Tensor]) -> None:
    for i, p in enumerate(params):
        if p.requires_grad is not False and not p.dtype.is_float:
            raise TypeError(f"optimizer: parameter #{i} is {p.dtype.name}; only float tensors "
                            "have gradients (give an integer buffer requires_grad=False)")


class Optimizer:
    """The parameters, the buffers, the learning rate (a 1-element tensor, as tinygrad:
    `opt.lr = 0.01` or `opt.lr.assign(...)` changes it without compiling a new step)."""

    def __init__(self, params: Iterable[Tensor], lr: float) -> None:
        tensors = _dedup(params)
        _check_trainable(tensors)
        for p in tensors:
            if p.requires_grad is None:
                p.requires_grad_(True)
        self.params = [p for p in tensors if p.requires_grad]
        self.buffers = [p for p in tensors if not p.requires_grad]
        if not self.params:
            raise ValueError("optimizer: no parameter requires a gradient (every tensor "
                             "given has requires_grad=False)")
        self.device = self.params[0].device
        # the dtype of the 1-element states (lr, Adam's corrections): float64 if a
        # parameter is, so its update is as exact as the parameter
        wide = any(p.dtype is dtypes.float64 for p in self.params)
        self.scalar_dtype = dtypes.float64 if wide else dtypes.default_float
        self.lr = lr  # type: ignore[assignment]

    @property
    def lr(self) -> Tensor:
        return self._lr

    @lr.setter
    def lr(self, value: float | Tensor) -> None:
        if isinstance(value, Tensor):
            if value.numel() != 1:
                raise ValueError(f"optimizer: lr must be one number, got shape {value.shape}")
            self._lr = value.reshape(1)
        else:
            if float(value) < 0:
                raise ValueError(f"optimizer: lr must be >= 0, got {value}")
            self._lr = filled((1,), float(value), self.scalar_dtype, self.device)

    def zero_grad(self) -> None:
        """Set every parameter's gradient to None (the next backward() starts afresh)."""
        for p in self.params:
            p.grad = None

    def _state(self, like: Tensor, value: float = 0.0) -> Tensor:
        return filled(like.shape, value, like.dtype, like.device)

    def _scalar(self, t: Tensor, like: Tensor) -> Tensor:
        """A 1-element state as a 0-d tensor of `like`'s dtype, to broadcast to any shape."""
        return t.reshape(()).cast(like.dtype)

    def _updates(self) -> list[Update]:
        raise NotImplementedError(f"{type(self).__name__} does not define its update")

    def schedule_step(self) -> list[Tensor]:
        """Give every parameter with a gradient, and every state, its new value lazily
        (`assign`); return the tensors that `step()` realizes together (those and the
        buffers). Nothing is computed yet: a caller may realize more with them."""
        updates = self._updates()
        for target, value in updates:
            target.assign(value)
        return [t for t, _ in updates] + self.buffers

    def step(self) -> None:
        """Update every parameter that has a gradient, and the optimizer's states, in one
        program (`Tensor.realize` of all of `schedule_step()`)."""
        tensors = self.schedule_step()
        if tensors:
            tensors[0].realize(*tensors[1:])


class SGD(Optimizer):
    """torch's SGD: g = grad + weight_decay p; with momentum, buf = momentum buf + g and g
    = buf (nesterov: g + momentum buf); p -= lr g."""

    def __init__(self, params: Iterable[Tensor], lr: float = 0.001, momentum: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False) -> None:
        if momentum < 0 or weight_decay < 0:
            raise ValueError(f"SGD: momentum ({momentum}) and weight_decay ({weight_decay}) "
                             "must be >= 0")
        if nesterov and momentum <= 0:
            raise ValueError("SGD: nesterov momentum needs momentum > 0")
        super().__init__(params, lr)
        self.momentum, self.weight_decay, self.nesterov = momentum, weight_decay, nesterov
        self.b = [self._state(p) for p in self.params] if momentum else []

    def _updates(self) -> list[Update]:
        out: list[Update] = []
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad + self.weight_decay * p if self.weight_decay else p.grad
            if self.momentum:
                buf = self.momentum * self.b[i] + g  # the first step's buffer is g (torch)
                out.append((self.b[i], buf))
                g = g + self.momentum * buf if self.nesterov else buf
            out.append((p, p - self._scalar(self.lr, p) * g))
        return out


class Adam(Optimizer):
    """torch's Adam (and AdamW, with decoupled weight decay). The bias corrections
    1 - b1**t and 1 - b2**t are states too, carried by c = (1 - b) + b c: no pow in the
    program, and none of the cancellation of 1 - b**t in float32."""

    def __init__(self, params: Iterable[Tensor], lr: float = 0.001, b1: float = 0.9,
                 b2: float = 0.999, eps: float = 1e-8) -> None:
        if not (0 <= b1 < 1 and 0 <= b2 < 1):
            raise ValueError(f"Adam: b1 ({b1}) and b2 ({b2}) must be in [0, 1)")
        if eps < 0:
            raise ValueError(f"Adam: eps must be >= 0, got {eps}")
        super().__init__(params, lr)
        self.b1, self.b2, self.eps = b1, b2, eps
        self.weight_decay = 0.0  # decoupled (AdamW's); torch's Adam L2 decay is not here
        self.m = [self._state(p) for p in self.params]
        self.v = [self._state(p) for p in self.params]
        self.t = filled((1,), 0, dtypes.int32, self.device)
        self.c1 = filled((1,), 0.0, self.scalar_dtype, self.device)  # 1 - b1**t
        self.c2 = filled((1,), 0.0, self.scalar_dtype, self.device)  # 1 - b2**t

    def _updates(self) -> list[Update]:
        if all(p.grad is None for p in self.params):
            return []  # no step at all: the step count and corrections stay
        c1 = (1 - self.b1) + self.b1 * self.c1
        c2 = (1 - self.b2) + self.b2 * self.c2
        out: list[Update] = [(self.t, self.t + 1), (self.c1, c1), (self.c2, c2)]
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g, lr = p.grad, self._scalar(self.lr, p)
            m = self.b1 * self.m[i] + (1 - self.b1) * g
            v = self.b2 * self.v[i] + (1 - self.b2) * (g * g)
            decayed = p * (1 - lr * self.weight_decay) if self.weight_decay else p
            denom = v.sqrt() / self._scalar(c2, p).sqrt() + self.eps
            new = decayed - (lr / self._scalar(c1, p)) * m / denom
            out += [(self.m[i], m), (self.v[i], v), (p, new)]
        return out


class AdamW(Adam):
    """Adam with decoupled weight decay: p *= 1 - lr weight_decay before the Adam step
    (torch's AdamW; its default weight_decay is 0.01)."""

    def __init__(self, params: Iterable[Tensor], lr: float = 0.001, b1: float = 0.9,
                 b2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0.01) -> None:
        if weight_decay < 0:
            raise ValueError(f"AdamW: weight_decay must be >= 0, got {weight_decay}")
        super().__init__(params, lr, b1, b2, eps)
        self.weight_decay = weight_decay
