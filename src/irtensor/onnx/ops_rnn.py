"""RNN, GRU and LSTM, unrolled over the sequence at import (its length is static): the
input's products with W for every step as one matmul, then per step the product of the
hidden state with R and the cell's gates. Directions forward, reverse and bidirectional,
both layouts, initial states, LSTM's peepholes and `input_forget`, GRU's
`linear_before_reset`, `clip`, and the activation functions ONNX names, with their alpha
and beta. Per-batch `sequence_lens` below the sequence length: a batch whose sequence
has ended keeps its state and outputs zeros (forward only, as onnxruntime computes it)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from irtensor.frontend.tensor import Tensor
from irtensor.onnx.registry import Node, Value, op

Activation = Callable[[Tensor, float, float], Tensor]

# name: (function of x, alpha, beta; alpha's default, beta's default, None where the
# function takes none)
ACTIVATIONS: dict[str, tuple[Activation, float | None, float | None]] = {
    "Sigmoid": (lambda x, a, b: x.sigmoid(), None, None),
    "Tanh": (lambda x, a, b: x.tanh(), None, None),
    "Relu": (lambda x, a, b: x.relu(), None, None),
    "LeakyRelu": (lambda x, a, b: x.leaky_relu(a), 0.01, None),
    "ThresholdedRelu": (lambda x, a, b: (x > a).where(x, 0.0), 1.0, None),
    "ScaledTanh": (lambda x, a, b: (x * b).tanh() * a, 1.0, 1.0),
    "HardSigmoid": (lambda x, a, b: (x * a + b).clip(0.0, 1.0), 0.2, 0.5),
    "Elu": (lambda x, a, b: x.elu(a), 1.0, None),
    "Softsign": (lambda x, a, b: x / (x.abs() + 1.0), None, None),
    "Softplus": (lambda x, a, b: x.softplus(), None, None),
    "Affine": (lambda x, a, b: x * a + b, 1.0, 0.0),
}
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
DEFAULT_ACTIVATIONS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
                       "LSTM": ["Sigmoid", "Tanh", "Tanh"]}
DIRECTIONS = {"forward": 1, "reverse": 1, "bidirectional": 2}


def _activations(node: Node, directions: int) -> list[list[Callable[[Tensor], Tensor]]]:
    """Each direction's activation functions, with their alpha and beta bound."""
    per = len(DEFAULT_ACTIVATIONS[node.op_type])
    names = node.attr("activations") or DEFAULT_ACTIVATIONS[node.op_type] * directions
    if len(names) != per * directions:
        raise node.error(f"attribute activations lists {len(names)} functions; expected "
                         f"{per} per direction, {per * directions} in all")
    # alpha and beta are consumed in order by the functions that take them (onnxruntime's
    # reading); past the lists' ends, the ONNX operator's defaults
    alphas = list(node.attr("activation_alpha") or [])[::-1]
    betas = list(node.attr("activation_beta") or [])[::-1]
    made = []
    for name in names:
        if name not in ACTIVATIONS:
            raise node.error(f"activation {name!r} is not one of {sorted(ACTIVATIONS)}")
        fn, alpha, beta = ACTIVATIONS[name]
        a = float(alphas.pop()) if alpha is not None and alphas else alpha or 0.0
        b = float(betas.pop()) if beta is not None and betas else beta or 0.0
        made.append(lambda x, fn=fn, a=a, b=b: fn(x, a, b))
    return [made[d * per:(d + 1) * per] for d in range(directions)]


def _lengths(node: Node, seq: int, batch: int, direction: str) -> Tensor | None:
    """The per-batch step mask (seq, batch, 1), None when every sequence is full."""
    if not node.has(4):
        return None
    lens = node.inputs[4]
    if isinstance(lens, np.ndarray) and lens.shape == (batch,) and (lens == seq).all():
        return None
    if direction != "forward":
        raise node.error(f"input 4 (sequence_lens) shorter than the sequence ({seq}) is "
                         f"supported for direction 'forward' only, not {direction!r}")
    lens = node.tensor(4)
    if lens.shape != (batch,):
        raise node.error(f"input 4 (sequence_lens) has shape {lens.shape}; expected ({batch},)")
    steps = Tensor.arange(seq).reshape(seq, 1, 1)
    return steps < lens.cast(steps.dtype).reshape(1, batch, 1)


def _state(node: Node, i: int, layout: int, directions: int, batch: int, hidden: int,
           like: Tensor) -> Tensor:
    if not node.has(i):
        return Tensor.zeros(directions, batch, hidden, dtype=like.dtype)
    state = node.tensor(i)
    return state.permute(1, 0, 2) if layout else state


def _cell(node: Node, acts: list[Callable[[Tensor], Tensor]], clip: float | None,
          r: Tensor, rb: Tensor, peep: Tensor | None, hidden: int
          ) -> Callable[[Tensor, Tensor, Tensor | None], tuple[Tensor, Tensor | None]]:
    """One step of the node's cell: (x's gates, h, c) -> (h, c)."""
    def clipped(g: Tensor) -> Tensor:
        return g.clip(-clip, clip) if clip is not None else g

    def split(t: Tensor, parts: int) -> list[Tensor]:
        return [t[..., k * hidden:(k + 1) * hidden] for k in range(parts)]

    rt = r.transpose(0, 1)
    if node.op_type == "RNN":
        return lambda xg, h, c: (acts[0](clipped(xg + h @ rt + rb)), None)
    if node.op_type == "GRU":
        zr_r, h_r = rt[:, :2 * hidden], rt[:, 2 * hidden:]
        zr_b, h_b = rb[..., :2 * hidden], rb[..., 2 * hidden:]
        before_reset = node.attr("linear_before_reset", 0)

        def gru(xg: Tensor, h: Tensor, c: Tensor | None) -> tuple[Tensor, Tensor | None]:
            xz, xr, xh = split(xg, 3)
            hz, hr = split(h @ zr_r + zr_b, 2)
            z, reset = acts[0](clipped(xz + hz)), acts[0](clipped(xr + hr))
            inner = reset * (h @ h_r + h_b) if before_reset else (reset * h) @ h_r + h_b
            return (1.0 - z) * acts[1](clipped(xh + inner)) + z * h, None
        return gru
    forget_from_input = node.attr("input_forget", 0)

    def lstm(xg: Tensor, h: Tensor, c: Tensor | None) -> tuple[Tensor, Tensor | None]:
        assert c is not None
        gi, go, gf, gc = split(xg + h @ rt + rb, 4)
        pi, po, pf = split(peep, 3) if peep is not None else (None, None, None)
        i = acts[0](clipped(gi + pi * c if pi is not None else gi))
        f = 1.0 - i if forget_from_input else acts[0](clipped(gf + pf * c if pf is not None
                                                               else gf))
        cell = f * c + i * acts[1](clipped(gc))
        o = acts[0](clipped(go + po * cell if po is not None else go))
        return o * acts[2](cell), cell
    return lstm


@op("RNN", "GRU", "LSTM")
def recurrent(node: Node) -> list[Value]:
    x, w, r = node.tensor(0), node.tensor(1), node.tensor(2)
    layout = node.attr("layout", 0)
    x = x.permute(1, 0, 2) if layout else x
    seq, batch, _ = x.shape
    gates, hidden = GATES[node.op_type], node.attr("hidden_size") or r.shape[-1]
    direction = node.attr("direction", "forward")
    if DIRECTIONS.get(direction) != w.shape[0]:
        raise node.error(f"direction {direction!r} needs input 1 (W) with "
                         f"{DIRECTIONS.get(direction, '1 or 2')} directions, got shape {w.shape}")
    if w.shape[1] != gates * hidden or r.shape[1:] != (gates * hidden, hidden):
        raise node.error(f"inputs 1 and 2 (W, R) have shapes {w.shape} and {r.shape}; "
                         f"expected (directions, {gates * hidden}, ...) for hidden_size {hidden}")
    directions = w.shape[0]
    bias = node.tensor(3) if node.has(3) else Tensor.zeros(directions, 2 * gates * hidden,
                                                           dtype=x.dtype)
    mask = _lengths(node, seq, batch, direction)
    h0 = _state(node, 5, layout, directions, batch, hidden, x)
    c0 = _state(node, 6, layout, directions, batch, hidden, x) if gates == 4 else None
    peeps = node.tensor(7) if gates == 4 and node.has(7) else None
    acts = _activations(node, directions)
    ys, hs, cs = [], [], []
    for d in range(directions):
        wb, rb = bias[d, :gates * hidden], bias[d, gates * hidden:]
        step = _cell(node, acts[d], node.attr("clip"), r[d], rb,
                     peeps[d] if peeps is not None else None, hidden)
        xg = (x.reshape(seq * batch, -1) @ w[d].transpose(0, 1) + wb).reshape(seq, batch, -1)
        h, c = h0[d], c0[d] if c0 is not None else None
        out: list[Tensor] = [h] * seq
        for t in (range(seq - 1, -1, -1) if direction == "reverse" or d == 1 else range(seq)):
            nh, nc = step(xg[t], h, c)
            if mask is not None:
                nh = mask[t].where(nh, h)
                nc = mask[t].where(nc, c) if nc is not None and c is not None else nc
                out[t] = mask[t].where(nh, 0.0)
            else:
                out[t] = nh
            h, c = nh, nc
        ys.append(Tensor.stack(*out, dim=0))
        hs.append(h)
        cs.append(c)
    y, y_h = Tensor.stack(*ys, dim=1), Tensor.stack(*hs, dim=0)
    y_c = Tensor.stack(*cs, dim=0) if c0 is not None else None
    if layout:
        y = y.permute(2, 0, 1, 3)
        y_h = y_h.permute(1, 0, 2)
        y_c = y_c.permute(1, 0, 2) if y_c is not None else None
    return [y, y_h, y_c][:max(1, node.n_outputs)]


__all__ = ["recurrent"]
