"""How close a device's results must be to the interpreter's, for the fuzzer.

One op's float result may be off by the dtype's `RTOL` (relative, and as much
absolute near 0), as in the test suite. A program of many ops may be further
off wherever it is ill-conditioned: there a legitimately different order of
rounding (a fused kernel, a split reduction) moves the result. How far, the
program itself tells: it runs again with every float type widened to f64
(`noise`: how far the interpreter's own answer is from the wide one) and once
more on inputs nudged by a few ulps (how much the answer moves with its
inputs). Elements where those runs disagree on NaN, on infinity or, for
integer and bool results computed from floats, on the value itself are
`unstable`: a comparison or a cast sits on a rounding boundary there, and no
answer is wrong. Everywhere else NaN must be where the interpreter has it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ModuleOp

from irtensor import interp, ir
from irtensor.testing import RTOL

F64 = np.dtype(np.float64)
NOISE_FACTOR = 4  # a device may round differently from the interpreter by this much more
NUDGE_ULPS = 4
NARROW_FLOAT = re.compile(r"(?<=[<x])(?:bf16|f16|f32)(?=>)")


@dataclass
class Expected:
    """The interpreter's results and, per element, how much a correct device may differ."""

    values: list[np.ndarray]
    noise: list[np.ndarray]
    unstable: list[np.ndarray]


def widened(module: ModuleOp) -> ModuleOp:
    """`module` with every f16, bf16 and f32 tensor element type made f64."""
    return ir.parse(NARROW_FLOAT.sub("f64", ir.to_text(module)))


def _is_float(dtype: np.dtype) -> bool:
    return dtype in RTOL


def nudged(inputs: Sequence[np.ndarray], rng: np.random.Generator) -> list[np.ndarray]:
    """Float inputs in f64, each element moved by up to `NUDGE_ULPS` ulps of its own type."""
    out = []
    for x in inputs:
        if not _is_float(x.dtype):
            out.append(x)
            continue
        eps = float(ml_dtypes.finfo(x.dtype).eps)
        step = rng.uniform(-NUDGE_ULPS, NUDGE_ULPS, x.shape) * eps
        out.append(np.asarray(x, F64) * (1 + step))
    return out


def _kind(x: np.ndarray) -> np.ndarray:
    """0 finite, 1 NaN, 2 +inf, 3 -inf."""
    return np.select([np.isnan(x), x == np.inf, x == -np.inf], [1, 2, 3], 0)


def expected(module: ModuleOp, inputs: Sequence[np.ndarray], seed: int = 0) -> Expected:
    """The interpreter's results on the hl program, with their noise and unstable elements."""
    values = interp.run(module, list(inputs))
    wide_module = widened(module)
    wide_inputs = [np.asarray(x, F64) if _is_float(x.dtype) else x for x in inputs]
    with np.errstate(all="ignore"):
        wide = interp.run(wide_module, wide_inputs)
        moved = interp.run(wide_module, nudged(inputs, np.random.default_rng(seed)))
    noise, unstable = [], []
    for w, r, m in zip(values, wide, moved, strict=True):
        if not _is_float(w.dtype):
            unstable.append((r != w) | (m != w))
            noise.append(np.zeros(w.shape))
            continue
        w64 = np.asarray(w, F64)
        with np.errstate(all="ignore"):  # a wide value may overflow the narrow type
            rounded = [np.asarray(np.asarray(v).astype(w.dtype), F64) for v in (r, m)]
        unstable.append((_kind(w64) != _kind(rounded[0])) | (_kind(w64) != _kind(rounded[1])))
        with np.errstate(all="ignore"):
            spread = np.maximum(np.abs(w64 - r), np.abs(r - m))
        noise.append(np.where(np.isfinite(spread), spread, 0.0))
    return Expected(values, noise, unstable)


def compare(got: Sequence[np.ndarray], want: Expected) -> str | None:
    """None if `got` matches, else the first difference as one line."""
    if len(got) != len(want.values):
        return f"{len(got)} results, expected {len(want.values)}"
    for i, (g, w, noise, unstable) in enumerate(
            zip(got, want.values, want.noise, want.unstable, strict=True)):
        g = np.asarray(g)
        if g.dtype != w.dtype or g.shape != w.shape:
            return f"result #{i}: {g.dtype}{list(g.shape)}, expected {w.dtype}{list(w.shape)}"
        bad = _bad_elements(g, w, noise) & ~unstable
        if bad.any():
            at = tuple(int(k) for k in np.argwhere(bad)[0])
            return (f"result #{i} ({w.dtype}{list(w.shape)}): {int(bad.sum())} of {bad.size} "
                    f"elements differ; at {list(at)}: got {show(g[at])}, expected "
                    f"{show(w[at])}")
    return None


def show(x: np.generic) -> str:
    """One element as text: floats to 9 digits, ints and bools as they are."""
    return f"{float(x):.9g}" if _is_float(np.asarray(x).dtype) else str(np.asarray(x).item())


def _bad_elements(g: np.ndarray, w: np.ndarray, noise: np.ndarray) -> np.ndarray:
    if not _is_float(w.dtype):
        return np.asarray(g != w)
    g64, w64 = np.asarray(g, F64), np.asarray(w, F64)
    rtol = RTOL[w.dtype]
    with np.errstate(all="ignore"):
        close = np.abs(g64 - w64) <= rtol * (1 + np.abs(w64)) + NOISE_FACTOR * noise
    same_kind = _kind(g64) == _kind(w64)
    finite = np.isfinite(w64) & np.isfinite(g64)
    return ~same_kind | (finite & ~close)
