"""Attention (opsets 23 to 25) as the Tensor API's matmuls, softmax and masks, in the order
onnx's reference takes them: Q and K each scaled by sqrt(scale), the optional softcap,
then the additive bias (the mask, the causal frontier, the sliding window, the padding of
`nonpad_kv_seqlen`), a softmax whose fully masked rows are 0, and the product with V.
Grouped-query heads repeat each K/V head in place; a cache appends K and V to the past
ones (the present outputs). RotaryEmbedding turns pairs of features by cached angles."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from irtensor.frontend.tensor import Tensor
from irtensor.onnx.registry import Node, Value, elem_dtype, op

QK_MODES = (0, 1, 2, 3)


def _heads(node: Node, x: Tensor, attribute: str, what: str) -> Tensor:
    """A 3-D (batch, sequence, hidden) input as (batch, heads, sequence, head size), the
    head count from `attribute`."""
    heads = node.attr(attribute)
    if heads is None or heads <= 0 or x.shape[2] % heads:
        raise node.error(f"{what} is 3-D with hidden size {x.shape[2]}: attribute "
                         f"{attribute} must be set and divide it, got {heads}")
    b, s, hidden = x.shape
    return x.reshape(b, s, heads, hidden // heads).permute(0, 2, 1, 3)


def _additive(mask: Tensor, like: Tensor) -> Tensor:
    """A boolean mask as 0 where it attends and -inf where not (select, not multiply:
    0 * -inf would be NaN); a float mask as it is."""
    if not mask.dtype.is_bool:
        return mask.cast(like.dtype)
    return mask.where(0.0, float("-inf")).cast(like.dtype)


def _frontier(q_len: int, kv_len: int, offset: int | Tensor,
              allowed_of: Callable[[Tensor, Tensor], Tensor], like: Tensor) -> Tensor:
    """0 where `allowed_of(i + offset, j)` holds for query i and key j, else -inf: (q, kv)
    for one offset, (batch, 1, q, kv) for an offset per batch (a Tensor)."""
    i = Tensor.arange(q_len).reshape(q_len, 1)
    j = Tensor.arange(kv_len).reshape(1, kv_len)
    if isinstance(offset, Tensor):
        position = i.reshape(1, q_len, 1) + offset.cast(i.dtype).reshape(-1, 1, 1)
        allowed = allowed_of(position, j.reshape(1, 1, kv_len))
        return allowed.where(0.0, float("-inf")).cast(like.dtype).unsqueeze(1)
    return allowed_of(i + offset, j).where(0.0, float("-inf")).cast(like.dtype)


def _bias(node: Node, q: Tensor, q_len: int, kv_len: int, past: int) -> Tensor:
    """The additive bias of the scores: mask, causal frontier, window, padding."""
    mask = node.tensor(3) if node.has(3) else None
    nonpad = node.tensor(6) if node.has(6) else None
    left, right = node.attr("left_window_size", -1), node.attr("right_window_size", -1)
    if mask is not None and (short := kv_len - mask.shape[-1]) > 0:
        fill = False if mask.dtype.is_bool else float("-inf")
        mask = mask.pad([(0, 0)] * (mask.ndim - 1) + [(0, short)], value=fill)
    zeros = Tensor.zeros(q_len, kv_len, dtype=q.dtype)
    offset: int | Tensor = nonpad - q_len if nonpad is not None and not past else past
    bias = zeros if mask is None else zeros + _additive(mask, q)
    if node.attr("is_causal", 0):
        bias = bias + _frontier(q_len, kv_len, offset, lambda p, j: j <= p, q)
    if left >= 0 or right >= 0:
        def inside(p: Tensor, j: Tensor) -> Tensor:  # -1: that side is unbounded
            behind, ahead = p - j <= max(left, 0), j - p <= max(right, 0)
            if left < 0 or right < 0:
                return ahead if left < 0 else behind
            return behind & ahead
        bias = bias + _frontier(q_len, kv_len, offset, inside, q)
    if nonpad is not None:
        keys = Tensor.arange(kv_len).reshape(1, kv_len) < nonpad.cast(
            Tensor.arange(1).dtype).reshape(-1, 1)
        bias = bias + keys.where(0.0, float("-inf")).cast(q.dtype).reshape(-1, 1, 1, kv_len)
    return bias


def _masked_softmax(scores: Tensor, bias: Tensor) -> Tensor:
    """softmax over the last axis, 0 on a row whose bias is all -inf (no key to attend)
    and on a row of scores that are all -inf."""
    top = scores.max(-1, keepdim=True)
    top = top.isinf(detect_positive=False).where(0.0, top)
    e = (scores - top).exp()
    total = e.sum(-1, keepdim=True)
    p = e / (total == 0).where(1.0, total)
    hopeless = bias.max(-1, keepdim=True).isinf(detect_positive=False)
    return hopeless.where(0.0, p)


@op("Attention")
def attention(node: Node) -> list[Value]:
    q, k, v = node.tensor(0), node.tensor(1), node.tensor(2)
    if not q.ndim == k.ndim == v.ndim or q.ndim not in (3, 4):
        raise node.error(f"inputs 0-2 (Q, K, V) must all be 3-D or all 4-D, got shapes "
                         f"{q.shape}, {k.shape}, {v.shape}")
    if (mode := node.attr("qk_matmul_output_mode", 0)) not in QK_MODES:
        raise node.error(f"attribute qk_matmul_output_mode={mode} is not one of {QK_MODES}")
    if node.has(6) and node.has(4):
        raise node.error("input 6 (nonpad_kv_seqlen) cannot be combined with input 4 "
                         "(past_key)")
    if node.has(4) != node.has(5):
        raise node.error("inputs 4 and 5 (past_key, past_value) come together")
    flat = q.ndim == 3
    q_heads, kv_heads = node.attr("q_num_heads"), node.attr("kv_num_heads")
    if flat:
        q = _heads(node, q, "q_num_heads", "input 0 (Q)")
        k, v = (_heads(node, k, "kv_num_heads", "input 1 (K)"),
                _heads(node, v, "kv_num_heads", "input 2 (V)"))
    elif node.opset >= 25 and (q_heads is not None or kv_heads is not None):
        raise node.error("attributes q_num_heads and kv_num_heads are for 3-D inputs only")
    past = node.tensor(4).shape[2] if node.has(4) else 0
    if past:
        k, v = node.tensor(4).cat(k, dim=2), node.tensor(5).cat(v, dim=2)
    present_k, present_v = k, v
    scale = node.attr("scale")
    root = float(np.asarray(math.sqrt(scale if scale is not None else 1 / math.sqrt(q.shape[3])),
                            dtype=q.dtype.np))
    bias = _bias(node, q, q.shape[2], k.shape[2], past)
    if q.shape[1] % k.shape[1] or k.shape[1] != v.shape[1] or q.shape[3] != k.shape[3]:
        raise node.error(f"Q's {q.shape[1]} heads of size {q.shape[3]} do not fit K's "
                         f"{k.shape[1]} of size {k.shape[3]} and V's {v.shape[1]} (K and V "
                         "need the same heads, a divisor of Q's, and K Q's head size)")
    k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)  # grouped-query heads
    v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)
    scores = (q * root) @ (k * root).transpose(-1, -2)
    if (softcap := node.attr("softcap")) is not None and softcap > 0:
        scores = (scores / softcap).tanh() * softcap
    with_bias = scores + bias
    qk_out = with_bias if mode == 2 else scores
    if (precision := node.attr("softmax_precision")) is not None:
        with_bias = with_bias.cast(elem_dtype(precision, f"{node.op_type} softmax_precision"))
    probabilities = _masked_softmax(with_bias, bias)
    if mode == 3:
        qk_out = probabilities
    y = probabilities.cast(q.dtype) @ v
    if flat:
        y = y.permute(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], -1)
    return [y, present_k, present_v, qk_out.cast(q.dtype)][:max(1, node.n_outputs)]


@op("RotaryEmbedding")
def rotary_embedding(node: Node) -> list[Value]:
    """The first `rotary_embedding_dim` features of each head turned by the angles whose
    cos and sin the caches hold (indexed by `position_ids` when given): halves, or even and
    odd features when `interleaved`."""
    x, cos, sin = node.tensor(0), node.tensor(1), node.tensor(2)
    if x.ndim not in (3, 4):
        raise node.error(f"input 0 must be 3-D or 4-D, got shape {x.shape}")
    heads = x if x.ndim == 4 else _heads(node, x, "num_heads", "input 0")
    heads = heads.permute(0, 2, 1, 3)  # (batch, sequence, heads, head size)
    size = heads.shape[3]
    turned = node.attr("rotary_embedding_dim", 0) or size
    if turned % 2 or turned > size:
        raise node.error(f"attribute rotary_embedding_dim={turned} must be even and at most "
                         f"the head size {size}")
    if node.has(3):
        cos, sin = cos[node.tensor(3)], sin[node.tensor(3)]
    if cos.shape[-1] != turned // 2 or sin.shape[-1] != turned // 2:
        raise node.error(f"inputs 1 and 2 (cos_cache, sin_cache) end in {cos.shape[-1]} and "
                         f"{sin.shape[-1]}; expected rotary_embedding_dim / 2 = {turned // 2}")
    cos, sin = cos.unsqueeze(-2).cast(x.dtype), sin.unsqueeze(-2).cast(x.dtype)
    part = heads[..., :turned]
    if node.attr("interleaved", 0):
        x1, x2 = part[..., 0::2], part[..., 1::2]
    else:
        x1, x2 = part[..., :turned // 2], part[..., turned // 2:]
    real, imaginary = cos * x1 - sin * x2, sin * x1 + cos * x2
    if node.attr("interleaved", 0):
        part = real.unsqueeze(-1).cat(imaginary.unsqueeze(-1), dim=-1).reshape(part.shape)
    else:
        part = real.cat(imaginary, dim=-1)
    y = part.cat(heads[..., turned:], dim=-1) if turned < size else part
    return [y.reshape(x.shape) if x.ndim == 3 else y.permute(0, 2, 1, 3)]


__all__ = ["attention", "rotary_embedding"]
