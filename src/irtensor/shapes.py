"""Shape rules shared by the verifiers, the interpreter and the frontend.

Each function computes a result shape from operand shapes and raises
`ShapeError` with a sentence that names what is wrong. Verifiers prefix the
op's name; the frontend raises it as a `ValueError` at the user's call.
"""

from __future__ import annotations

from collections.abc import Sequence

Shape = tuple[int, ...]


class ShapeError(ValueError, RuntimeError):
    """A shape that does not fit an op's rule: a ValueError as numpy raises, and a
    RuntimeError as torch and tinygrad raise, so either `except` catches it."""


def fmt(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def broadcast(*shapes: Sequence[int]) -> Shape:
    """numpy's broadcasting rule: align right, size-1 dims stretch."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[int] = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise ShapeError(f"shapes {', '.join(fmt(s) for s in shapes)} do not broadcast")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def check_axes(axes: Sequence[int], rank: int, what: str = "axes") -> None:
    for a in axes:
        if not 0 <= a < rank:
            prefix = "" if what == "axis" else f"{what} {list(axes)}: "
            raise ShapeError(f"{prefix}axis {a} is out of range for rank {rank}")
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{what} {list(axes)} repeat an axis")


def reduce(shape: Sequence[int], axes: Sequence[int], keepdim: bool) -> Shape:
    check_axes(axes, len(shape))
    if keepdim:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def permute(shape: Sequence[int], perm: Sequence[int]) -> Shape:
    if sorted(perm) != list(range(len(shape))):
        raise ShapeError(f"{list(perm)} is not a permutation of the {len(shape)} axes")
    return tuple(shape[p] for p in perm)


MAX_SIZE = 2**63 - 1  # every lowering indexes and counts elements in int64
DYNAMIC = -(2**63)  # how xDSL (as MLIR) holds a `?` size


def check_static(shape: Sequence[int]) -> None:
    """Sizes that every stage can index: known (no `?`), not negative, and an element
    count that int64 holds."""
    if DYNAMIC in shape:
        raise ShapeError("dynamic sizes (?) are not supported: every size must be known")
    for d in shape:
        if d < 0:
            raise ShapeError(f"size {d} is negative")
        if d > MAX_SIZE:
            raise ShapeError(f"size {d} is larger than 2**63 - 1")
    if (n := numel(shape)) > MAX_SIZE:
        raise ShapeError(f"{n} elements are more than int64 counts (2**63 - 1)")


def numel(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def reshape(shape: Sequence[int], new: Sequence[int]) -> Shape:
    if any(d < 0 for d in new):
        raise ShapeError(f"reshape to {fmt(new)}: sizes must not be negative")
    if numel(shape) != numel(new):
        raise ShapeError(
            f"cannot reshape {fmt(shape)} ({numel(shape)} elements) "
            f"to {fmt(new)} ({numel(new)} elements)"
        )
    return tuple(new)


def broadcast_to(shape: Sequence[int], new: Sequence[int]) -> Shape:
    """numpy.broadcast_to: `shape` aligned right, each dim 1 or equal."""
    if any(d < 0 for d in new):
        raise ShapeError(f"cannot broadcast {fmt(shape)} to {fmt(new)}: sizes must not be "
                         "negative")
    if len(shape) > len(new):
        raise ShapeError(f"cannot broadcast {fmt(shape)} to the lower rank {fmt(new)}")
    offset = len(new) - len(shape)
    for i, d in enumerate(shape):
        if d not in (1, new[offset + i]):
            raise ShapeError(f"cannot broadcast {fmt(shape)} to {fmt(new)}")
    return tuple(new)


def expand(shape: Sequence[int], new: Sequence[int]) -> Shape:
    """ll.expand: same rank, size-1 dims grow."""
    if len(shape) != len(new):
        raise ShapeError(f"expand keeps the rank: {fmt(shape)} vs {fmt(new)}")
    return broadcast_to(shape, new)


def pad(shape: Sequence[int], low: Sequence[int], high: Sequence[int]) -> Shape:
    if len(low) != len(shape) or len(high) != len(shape):
        raise ShapeError(f"pad needs one (low, high) pair per axis of {fmt(shape)}")
    if any(p < 0 for p in (*low, *high)):
        raise ShapeError(f"padding {list(low)}, {list(high)} must not be negative")
    return tuple(d + lo + hi for d, lo, hi in zip(shape, low, high, strict=True))


def shrink(shape: Sequence[int], starts: Sequence[int], limits: Sequence[int]) -> Shape:
    if len(starts) != len(shape) or len(limits) != len(shape):
        raise ShapeError(f"shrink needs one (start, limit) pair per axis of {fmt(shape)}")
    for d, s, e in zip(shape, starts, limits, strict=True):
        if not 0 <= s <= e <= d:
            raise ShapeError(f"shrink range [{s}, {e}) does not fit in an axis of size {d}")
    return tuple(e - s for s, e in zip(starts, limits, strict=True))


def slice_(
    shape: Sequence[int], starts: Sequence[int], limits: Sequence[int], steps: Sequence[int]
) -> Shape:
    """hl.slice: x[start:limit:step] per axis, bounds already clamped, steps >= 1."""
    if not len(starts) == len(limits) == len(steps) == len(shape):
        raise ShapeError(f"slice needs a start, limit and step per axis of {fmt(shape)}")
    for d, s, e in zip(shape, starts, limits, strict=True):
        if not 0 <= s <= e <= d:
            raise ShapeError(f"slice [{s}:{e}] does not fit in an axis of size {d}")
    if any(s < 1 for s in steps):
        raise ShapeError(f"steps {list(steps)} must be at least 1")
    return stride(shrink(shape, starts, limits), steps)


def stride(shape: Sequence[int], steps: Sequence[int]) -> Shape:
    if len(steps) != len(shape):
        raise ShapeError(f"stride needs one step per axis of {fmt(shape)}")
    if any(s < 1 for s in steps):
        raise ShapeError(f"strides {list(steps)} must be at least 1")
    return tuple(-(-d // s) for d, s in zip(shape, steps, strict=True))


def concat(shapes: Sequence[Sequence[int]], axis: int) -> Shape:
    if not shapes:
        raise ShapeError("concat needs at least one input")
    first = shapes[0]
    check_axes([axis], len(first), "axis")
    for i, s in enumerate(shapes):
        if len(s) != len(first) or any(
            a != b for k, (a, b) in enumerate(zip(s, first, strict=True)) if k != axis
        ):
            raise ShapeError(
                f"input {i} has shape {fmt(s)}; expected {fmt(first)} except along axis {axis}"
            )
    return tuple(sum(s[axis] for s in shapes) if k == axis else d for k, d in enumerate(first))


def matmul(a: Sequence[int], b: Sequence[int]) -> Shape:
    """numpy.matmul: 1-D operands are promoted and the added axis dropped again."""
    if not a or not b:
        raise ShapeError("matmul operands must have rank at least 1")
    a2 = (1, *a) if len(a) == 1 else tuple(a)
    b2 = (*b, 1) if len(b) == 1 else tuple(b)
    if a2[-1] != b2[-2]:
        raise ShapeError(
            f"contracted sizes differ: lhs {fmt(a)} has {a2[-1]}, rhs {fmt(b)} has {b2[-2]}"
        )
    try:
        batch = broadcast(a2[:-2], b2[:-2])
    except ShapeError:
        raise ShapeError(
            f"batch dimensions {fmt(a2[:-2])} of lhs {fmt(a)} and {fmt(b2[:-2])} of rhs "
            f"{fmt(b)} do not broadcast"
        ) from None
    out = (*batch, a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def window(size: int, kernel: int, stride: int, dilation: int, low: int, high: int) -> int:
    """Output length of a sliding window (convolution or pooling) along one axis."""
    span = dilation * (kernel - 1) + 1
    padded = size + low + high
    if padded < span:
        raise ShapeError(
            f"window of span {span} does not fit in a padded axis of size {padded}"
        )
    return (padded - span) // stride + 1


def window_cells(size: int, kernel: int, stride: int, dilation: int, low: int, high: int,
                 counted: tuple[int, int]) -> list[int]:
    """For each window along one axis, how many of its taps fall in `counted`: a
    [start, stop) range of input positions (the padding before the input at -low...-1)."""
    start, stop = counted
    return [sum(start <= o * stride + i * dilation - low < stop for i in range(kernel))
            for o in range(window(size, kernel, stride, dilation, low, high))]


def conv2d(
    x: Sequence[int],
    w: Sequence[int],
    strides: Sequence[int],
    padding: Sequence[int],
    dilations: Sequence[int],
    groups: int,
) -> Shape:
    """Input (N, C, H, W), weight (O, C/groups, KH, KW); padding is [top, left, bottom, right]."""
    if len(x) != 4 or len(w) != 4:
        raise ShapeError(f"conv2d takes 4-D input and weight, got {fmt(x)} and {fmt(w)}")
    _check_window_params(strides, padding, dilations)
    if groups < 1 or x[1] % groups or w[0] % groups:
        raise ShapeError(
            f"groups={groups} must divide input channels {x[1]} and output channels {w[0]}"
        )
    if w[1] * groups != x[1]:
        raise ShapeError(
            f"weight {fmt(w)} expects {w[1] * groups} input channels, input {fmt(x)} has {x[1]}"
        )
    oh = window(x[2], w[2], strides[0], dilations[0], padding[0], padding[2])
    ow = window(x[3], w[3], strides[1], dilations[1], padding[1], padding[3])
    return (x[0], w[0], oh, ow)


def pool2d(
    x: Sequence[int], kernel: Sequence[int], strides: Sequence[int], padding: Sequence[int]
) -> Shape:
    """Pooling over the last two axes of a rank >= 2 input."""
    if len(x) < 2:
        raise ShapeError(f"pooling needs rank >= 2, got {fmt(x)}")
    if len(kernel) != 2 or any(k < 1 for k in kernel):
        raise ShapeError(f"kernel {list(kernel)} must be two sizes >= 1")
    _check_window_params(strides, padding, (1, 1))
    oh = window(x[-2], kernel[0], strides[0], 1, padding[0], padding[2])
    ow = window(x[-1], kernel[1], strides[1], 1, padding[1], padding[3])
    return (*x[:-2], oh, ow)


def _check_window_params(
    strides: Sequence[int], padding: Sequence[int], dilations: Sequence[int]
) -> None:
    if len(strides) != 2 or any(s < 1 for s in strides):
        raise ShapeError(f"strides {list(strides)} must be two values >= 1")
    if len(dilations) != 2 or any(d < 1 for d in dilations):
        raise ShapeError(f"dilations {list(dilations)} must be two values >= 1")
    if len(padding) != 4 or any(p < 0 for p in padding):
        raise ShapeError(f"padding {list(padding)} must be four values >= 0 (t, l, b, r)")
