"""The benchmark's cases: each computation written once for the tensor libraries
(irtensor, torch, tinygrad, through `Framework`) and once for numpy.

The numpy version is dtype-generic: run on float32 it is the `numpy` column, run on
float64 copies of the inputs it is the reference every result is checked against.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from irtensor.bench.frameworks import Framework

Arrays = Sequence[np.ndarray]
F32 = 4  # bytes


@dataclass
class Case:
    """One computation, its inputs, how to check it and how much work it is."""

    name: str
    title: str
    make: Callable[[np.random.Generator], list[np.ndarray]]  # float32 inputs
    fn: Callable[[Framework, Sequence[Any]], Any]  # framework tensors -> lazy result
    numpy: Callable[[Arrays], np.ndarray]  # dtype-generic
    scale: Callable[[Arrays, np.ndarray], np.ndarray]  # error scale from float64 inputs, ref
    tol: float  # passes if |got - ref64| <= tol * scale everywhere
    reps: int
    bytes_moved: int = 0  # inputs + output, once each
    flops: int = 0


# --------------------------------------------------------------------------- computations


def _ew(_: Framework, x: Sequence[Any]) -> Any:
    a, b, c = x
    return ((a * b + c).exp() * 0.5 - a).relu()


def _ew_np(x: Arrays) -> np.ndarray:
    a, b, c = x
    return np.maximum(np.exp(a * b + c) * 0.5 - a, 0)


def _softmax_np(x: Arrays) -> np.ndarray:
    (a,) = x
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _conv(fw: Framework, x: Sequence[Any]) -> Any:
    return fw.conv2d(x[0], x[1], 1)


def _conv_np(x: Arrays) -> np.ndarray:
    """3x3 convolution, padding 1, as im2col and one matrix product."""
    a, w = x
    n, c, h, wd = a.shape
    o, _, kh, kw = w.shape
    padded = np.pad(a, ((0, 0), (0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(2, 3))
    cols = windows.transpose(0, 2, 3, 1, 4, 5).reshape(n * h * wd, c * kh * kw)
    out = cols @ w.reshape(o, -1).T
    return np.ascontiguousarray(out.reshape(n, h, wd, o).transpose(0, 3, 1, 2))


BN_AXES = (0, 2, 3)


def _bn(_: Framework, x: Sequence[Any]) -> Any:
    (t,) = x
    mean = t.mean(BN_AXES, keepdim=True)
    return (t - mean) / (t.var(BN_AXES, keepdim=True, correction=0) + 1e-5).sqrt()


def _norm_np(a: np.ndarray, axes: Any) -> np.ndarray:
    return (a - a.mean(axes, keepdims=True)) / np.sqrt(a.var(axes, keepdims=True) + 1e-5)


def _bn_np(x: Arrays) -> np.ndarray:
    return _norm_np(x[0], BN_AXES)


def _gn_shape(shape: Sequence[int]) -> tuple[int, int, int]:
    n, c, h, w = shape
    return n, 32, (c // 32) * h * w


def _gn(_: Framework, x: Sequence[Any]) -> Any:
    (t,) = x
    shape = tuple(t.shape)
    g = t.reshape(*_gn_shape(shape))
    out = (g - g.mean(-1, keepdim=True)) / (g.var(-1, keepdim=True, correction=0) + 1e-5).sqrt()
    return out.reshape(*shape)


def _gn_np(x: Arrays) -> np.ndarray:
    (a,) = x
    return _norm_np(a.reshape(_gn_shape(a.shape)), -1).reshape(a.shape)


def _mlp(_: Framework, x: Sequence[Any]) -> Any:
    a, w1, b1, w2, b2, w3, b3 = x
    h = (a @ w1 + b1).relu()
    h = (h @ w2 + b2).relu()
    return h @ w3 + b3


def _mlp_np(x: Arrays) -> np.ndarray:
    a, w1, b1, w2, b2, w3, b3 = x
    h = np.maximum(a @ w1 + b1, 0)
    h = np.maximum(h @ w2 + b2, 0)
    return h @ w3 + b3


def _mlp_scale(x: Arrays, ref: np.ndarray) -> np.ndarray:
    """The sizes the rounding errors grow with: the layers on absolute values, no relu."""
    a, w1, b1, w2, b2, w3, b3 = (np.abs(v) for v in x)
    return (((a @ w1 + b1) @ w2 + b2) @ w3) + b3


def _seed(fw: Framework, _: Sequence[Any]) -> Any:
    x = fw.zeros(1)
    for i in range(5):
        x += i
    return x


def _seed_np(x: Arrays) -> np.ndarray:
    y = np.zeros(1, x[0].dtype if x else np.float32)
    for i in range(5):
        y += i
    return y


# --------------------------------------------------------------------------- inputs, scales


def _randn(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator], list[np.ndarray]]:
    return lambda rng: [rng.standard_normal(s, dtype=np.float32) for s in shapes]


def _mlp_inputs(batch: int) -> Callable[[np.random.Generator], list[np.ndarray]]:
    def make(rng: np.random.Generator) -> list[np.ndarray]:
        out = [rng.standard_normal((batch, 784), dtype=np.float32)]
        for fan_in, fan_out in ((784, 256), (256, 256), (256, 10)):
            w = rng.standard_normal((fan_in, fan_out), dtype=np.float32) / np.sqrt(fan_in)
            out += [w.astype(np.float32), 0.1 * rng.standard_normal(fan_out, dtype=np.float32)]
        return out

    return make


def _abs_sum(axis: int | None) -> Callable[[Arrays, np.ndarray], np.ndarray]:
    return lambda x, ref: np.broadcast_to(np.abs(x[0]).sum(axis=axis), ref.shape)


def _matmul_scale(x: Arrays, ref: np.ndarray) -> np.ndarray:
    return np.abs(x[0]) @ np.abs(x[1])


def _conv_scale(x: Arrays, ref: np.ndarray) -> np.ndarray:
    return _conv_np([np.abs(x[0]), np.abs(x[1])])


def _ew_scale(x: Arrays, ref: np.ndarray) -> np.ndarray:
    return np.exp(x[0] * x[1] + x[2]) * 0.5 + np.abs(x[0])


def _norm_scale(x: Arrays, ref: np.ndarray) -> np.ndarray:
    return np.abs(ref) + 1


# --------------------------------------------------------------------------- the list


@dataclass(frozen=True)
class Sizes:
    n: int  # elementwise length
    s: int  # side of the square reductions
    matmuls: tuple[int, ...]
    conv: tuple[int, int, int]  # batch, channels, side
    norm: tuple[int, int, int, int]
    batch: int  # MLP
    reps: int | None  # None: each case's own


FULL = Sizes(1 << 24, 4096, (1024, 2048), (8, 64, 56), (32, 64, 56, 56), 64, None)
QUICK = Sizes(1 << 16, 256, (128,), (2, 8, 16), (4, 64, 8, 8), 16, 3)


def cases(quick: bool = False) -> list[Case]:
    """The cases of the project's targets; `quick`: small sizes, 3 repetitions, and no
    `matmul_big`."""
    z = QUICK if quick else FULL

    def reps(full: int) -> int:
        return z.reps if z.reps is not None else full

    n, s = z.n, z.s
    out = [
        Case("ew_chain", f"((a*b+c).exp()*0.5-a).relu(), {n}", _randn((n,), (n,), (n,)),
             _ew, _ew_np, _ew_scale, 1e-5, reps(15), bytes_moved=4 * n * F32),
        Case("ew_triad", f"a*b+c, {n}", _randn((n,), (n,), (n,)),
             lambda fw, x: x[0] * x[1] + x[2], lambda x: x[0] * x[1] + x[2],
             lambda x, ref: np.abs(x[0] * x[1]) + np.abs(x[2]), 1e-6, reps(15),
             bytes_moved=4 * n * F32),
        Case("sum_all", f"sum of {s}x{s}", _randn((s, s)), lambda fw, x: x[0].sum(),
             lambda x: x[0].sum(), _abs_sum(None), 1e-6, reps(30),
             bytes_moved=(s * s + 1) * F32),
        Case("sum_axis1", f"sum over axis 1 of {s}x{s}", _randn((s, s)),
             lambda fw, x: x[0].sum(1), lambda x: x[0].sum(1), _abs_sum(1), 1e-6, reps(30),
             bytes_moved=(s * s + s) * F32),
        Case("softmax", f"softmax over the last axis of {s}x{s}", _randn((s, s)),
             lambda fw, x: x[0].softmax(-1), _softmax_np, lambda x, ref: ref, 1e-5, reps(15),
             bytes_moved=2 * s * s * F32),
    ]
    for name, k in zip(("matmul", "matmul_big"), z.matmuls, strict=False):
        out.append(Case(name, f"matmul {k}^3", _randn((k, k), (k, k)),
                        lambda fw, x: x[0] @ x[1], lambda x: x[0] @ x[1], _matmul_scale, 1e-5,
                        reps(10 if k <= 1024 else 5), flops=2 * k ** 3))
    b, c, h = z.conv
    norm = z.norm
    size = int(np.prod(norm))
    out += [
        Case("conv2d", f"conv2d batch {b}, {c}->{c} channels, {h}x{h}, 3x3, padding 1",
             _randn((b, c, h, h), (c, c, 3, 3)), _conv, _conv_np, _conv_scale, 1e-5,
             reps(10), flops=2 * b * c * c * h * h * 9),
        Case("batchnorm", f"(x-mean)/sqrt(var+1e-5) over (0,2,3) of {norm}", _randn(norm),
             _bn, _bn_np, _norm_scale, 1e-4, reps(20), bytes_moved=2 * size * F32),
        Case("groupnorm", f"the same, 32 groups: over the last axis of {_gn_shape(norm)}",
             _randn(norm), _gn, _gn_np, _norm_scale, 1e-4, reps(20),
             bytes_moved=2 * size * F32),
        Case("mlp", f"MLP 784-256-256-10 forward, batch {z.batch}", _mlp_inputs(z.batch),
             _mlp, _mlp_np, _mlp_scale, 1e-5, reps(100),
             flops=2 * z.batch * (784 * 256 + 256 * 256 + 256 * 10)),
        Case("seed_loop", "x = zeros(1); for i in range(5): x += i", lambda rng: [],
             _seed, _seed_np, lambda x, ref: np.ones_like(ref), 0.0, reps(300)),
    ]
    return out


def names() -> list[str]:
    return [c.name for c in cases(quick=False)]
