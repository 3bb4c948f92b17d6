"""Gradients of lazy tensors: the `grad` pass run on the recorded program.

`loss.backward()` realizes the tensors that require a gradient (they are leaves:
buffers), records the program computing `loss` from its buffers, and gives it to
the `grad` pass (`irtensor.passes.autodiff`) with respect to the arguments that
are those tensors. The gradient program (`@main` returning the loss and the
gradients, in `ll`) then runs through the device's pipeline like any program, so
forward and backward kernels fuse, and it is cached by the recorded graph's
structure: the next step with new values replays it.

As in torch, `.grad` accumulates over `backward()` calls until it is set to None
(`optimizer.zero_grad()`). `detach()` cuts the gradient by realizing its value
and reading it through a placeholder that is no one's parameter.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Hashable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr

from irtensor import dtypes, settings
from irtensor.frontend import realize
from irtensor.frontend.graph import Node
from irtensor.passes.autodiff.grad import append_gradient
from irtensor.pipeline import Pipeline

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor

# Every live tensor that requires a gradient: backward finds the graph's among them.
_TRAINABLE: weakref.WeakSet[Any] = weakref.WeakSet()
# The buffers gradients were returned in, so that a gradient of one can be refused.
_GRADIENT_VALUES: weakref.WeakSet[Node] = weakref.WeakSet()


def gradient_module(module: ModuleOp, wrt: Sequence[int], seed_argument: bool) -> ModuleOp:
    """`module`'s hl `@main` replaced by its gradient program, in ll."""
    # the two-pass statistics: the gradient of one-pass moments cost twice as much; pools
    # as reductions, whose gradient splits a tie evenly (torch's amax), not a max chain's
    Pipeline("decompose-hlops{one-pass-moments=false},conv-to-mul-sum{pool-views=false}"
             ).run(module)
    main = next(op for op in module.body.block.ops if isinstance(op, func.FuncOp))
    grad = append_gradient(module, main, tuple(wrt), seed_argument)
    module.body.block.erase_op(main)
    grad.sym_name = StringAttr("main")
    return module


def run_gradient(loss: Node, targets: Sequence[Node], seed: Node | None,
                 device: str) -> tuple[Node, list[Node | None]]:
    """Realize `loss` and its gradients with respect to the realized `targets` (None for
    a target the loss does not read); with `seed` (a realized cotangent), the
    vector-Jacobian product."""
    graph = realize.collect([loss])
    position = {v: i for i, v in enumerate(graph.inputs)}
    wanted = [realize.resolve(t) for t in targets]
    wrt = sorted({position[t] for t in wanted if t in position})
    if not wrt:  # the loss reads no target: every gradient is zero
        if any(v in _GRADIENT_VALUES for v in graph.inputs):
            raise NotImplementedError(
                "gradient: this value is computed from a gradient, which is a realized value "
                "with no graph back to the targets (as torch's without create_graph=True); "
                "the gradient of a gradient is not supported")
        return realize.realize([loss], device)[0], [None] * len(wanted)
    extra = [realize.buffer_of(seed)] if seed is not None else []
    chosen = realize.pipeline_for(realize.check_device(device), None)
    key: Hashable = (device, "grad", tuple(wrt), seed is not None, realize.graph_key(graph),
                     settings.pipeline_key(chosen))
    if (program := realize._PROGRAMS.get(key)) is not None:
        results = realize.timed(device, lambda: realize.replay(program, graph, device, extra))
    else:
        module, arrays = realize._build(graph)
        module = gradient_module(module, wrt, seed is not None)
        results = realize.execute(module, [*arrays, *extra], device, key, chosen)
    placeholders = [realize.buffer_value(a) for a in results]
    _GRADIENT_VALUES.update(placeholders[1:])
    realize.remember(loss, placeholders[0])
    by_input = dict(zip((graph.inputs[i] for i in wrt), placeholders[1:], strict=True))
    return placeholders[0], [by_input.get(t) for t in wanted]


class GradMixin:
    """requires_grad, backward, grad, gradient, detach; Tensor.training, Tensor.train()."""

    requires_grad: bool | None = None
    grad: Tensor | None = None
    training: bool = False
    no_grad: bool = False

    def requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
        """Mark this tensor as a parameter (or not); float tensors only. Returns self."""
        if requires_grad and not dtypes.is_float(self.dtype.element):
            raise TypeError(f"requires_grad: only float tensors have gradients; this one is "
                            f"{self.dtype.name}")
        self.requires_grad = requires_grad
        if requires_grad:
            _TRAINABLE.add(self)
        else:
            _TRAINABLE.discard(self)
        return self

    def gradient(self: Tensor, *targets: Tensor, gradient: Tensor | None = None
                 ) -> list[Tensor]:
        """d(self)/d(target) for each target (zeros where self does not depend on it);
        a non-scalar self needs `gradient`, the cotangent of its shape."""
        cls = type(self)
        if gradient is None and self.shape != ():
            raise ValueError(f"gradient: a tensor of shape {self.shape} needs `gradient`, "
                             "its cotangent (backward() of a scalar needs none)")
        if gradient is not None and gradient.shape != self.shape:
            raise ValueError(f"gradient: the cotangent has shape {gradient.shape}, expected "
                             f"{self.shape}")
        for i, t in enumerate(targets):
            if not dtypes.is_float(t.dtype.element):
                raise TypeError(f"gradient: target #{i} is {t.dtype.name}; only float tensors "
                                "have gradients")
        if not dtypes.is_float(self.dtype.element):
            raise TypeError(f"gradient: {self.dtype.name} values have no gradient")
        cls.realize(*targets) if targets else None
        seed = gradient.cast(self.dtype).realize() if gradient is not None else None
        loss, grads = run_gradient(self._value, [t._value for t in targets],
                                   seed._value if seed is not None else None, self.device)
        self._value = loss
        return [cls(g, device=self.device) if g is not None else t.zeros_like()
                for g, t in zip(grads, targets, strict=True)]

    def backward(self: Tensor, gradient: Tensor | None = None) -> Tensor:
        """Add d(self)/d(p) to `p.grad` for every tensor p that requires a gradient and
        that self depends on. Returns self."""
        params = [t for t in list(_TRAINABLE) if t.requires_grad]
        if not params:
            raise RuntimeError("backward: no tensor requires a gradient "
                               "(Tensor(..., requires_grad=True) or t.requires_grad_())")
        type(self).realize(*params)
        graph_inputs = set(realize.collect([self._value]).inputs)
        used = [p for p in params if realize.resolve(p._value) in graph_inputs]
        for p, g in zip(used, self.gradient(*used, gradient=gradient), strict=True):
            p.grad = g if p.grad is None else (p.grad + g).realize()
        return self

    def detach(self: Tensor) -> Tensor:
        """The same value, cut from the gradient: while some tensor requires a gradient,
        realized, and read through a placeholder of its own (the buffer is shared)."""
        if not _TRAINABLE:
            return type(self)(self._value, device=self.device)
        array = realize.buffer_of(self.realize()._value)
        assert array is not None
        return type(self)(realize.buffer_value(array), device=self.device)

    @classmethod
    @contextlib.contextmanager
    def train(cls, mode: bool = True) -> Iterator[None]:
        """`with Tensor.train():` sets Tensor.training (dropout, batchnorm statistics)."""
        before, cls.training = cls.training, mode
        try:
            yield
        finally:
            cls.training = before

    @classmethod
    @contextlib.contextmanager
    def test(cls) -> Iterator[None]:
        """`with Tensor.test():` the opposite of train()."""
        with cls.train(False):
            yield
