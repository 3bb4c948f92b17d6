"""Movement ops of the Tensor: views that record `hl` movement ops and copy nothing."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from irtensor import dtypes, shapes
from irtensor.dialects import hl

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor


def normalize_axis(axis: int, rank: int) -> int:
    """A Python-style axis (negative counts from the end) as a non-negative index."""
    if not -max(rank, 1) <= axis < max(rank, 1):
        raise ValueError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def argfix(*x: Any) -> tuple[Any, ...]:
    """`f(2, 3)` and `f((2, 3))` mean the same, as in tinygrad."""
    return tuple(x[0]) if len(x) == 1 and isinstance(x[0], list | tuple) else x


def sizes(shape: Sequence[Any], what: str) -> tuple[int, ...]:
    """The sizes a call was given, as ints (numpy's too), refused at that call when one is
    not an integer or is negative, or when int64 cannot count their elements."""
    out = []
    for d in shape:
        try:
            out.append(operator.index(d))
        except TypeError:
            raise TypeError(f"{what}: sizes must be integers, got {d!r} "
                            f"({type(d).__name__}) in {tuple(shape)}") from None
    try:
        shapes.check_static(out)
    except shapes.ShapeError as e:
        raise ValueError(f"{what}: shape {shapes.fmt(out)}: {e}") from None
    return tuple(out)


PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad_pairs(padding: Sequence[Any], rank: int) -> list[tuple[int, int]]:
    """(before, after) for each axis, from pairs per axis or torch's flat tuple."""
    items = list(padding)
    if items and all(isinstance(p, int) for p in items):  # torch: last axis first
        if len(items) % 2 or len(items) > 2 * rank:
            raise ValueError(f"pad: a flat padding needs an even count of at most {2 * rank} "
                             f"values (two per axis, the last axis first), got {len(items)}")
        flat = [(items[i], items[i + 1]) for i in range(0, len(items), 2)]
        return [(0, 0)] * (rank - len(flat)) + flat[::-1]
    if len(items) != rank:
        raise ValueError(f"pad needs {rank} (before, after) pairs, got {len(items)}")
    pairs = []
    for p in items:
        if p is not None and (len(p) != 2 or not all(isinstance(v, int) for v in p)):
            raise ValueError(f"pad: {p!r} is not a (before, after) pair of ints")
        pairs.append((int(p[0]), int(p[1])) if p is not None else (0, 0))
    return pairs


def pad_axis(x: Tensor, axis: int, before: int, after: int, mode: str) -> Tensor:
    """`x` padded along `axis` by copies of its own values (`pad`'s non-constant modes)."""
    if not before and not after:
        return x
    n = x.shape[axis]
    limit = n - 1 if mode == "reflect" else n
    if (mode != "replicate" and max(before, after) > limit) or n == 0:
        raise ValueError(f"pad: {mode} padding of ({before}, {after}) on axis {axis} of size "
                         f"{n}; at most {limit} a side")
    lead: list[tuple[int, int] | None] = [None] * axis

    def part(start: int, stop: int) -> Tensor:
        return x.shrink([*lead, (start, stop)] + [None] * (x.ndim - axis - 1))

    if mode == "reflect":
        left, right = part(1, before + 1).flip(axis), part(n - 1 - after, n - 1).flip(axis)
    elif mode == "circular":
        left, right = part(n - before, n), part(0, after)
    else:
        grow = list(x.shape)
        left = part(0, 1).expand(*grow[:axis], before, *grow[axis + 1:])
        right = part(n - 1, n).expand(*grow[:axis], after, *grow[axis + 1:])
    pieces = ([left] if before else []) + [x] + ([right] if after else [])
    return pieces[0].cat(*pieces[1:], dim=axis)


def tensors_of(first: Any, others: Sequence[Any]) -> list[Any]:
    """`Tensor.cat(a, b)`, `a.cat(b)` and `Tensor.cat([a, b])` / `Tensor.cat((a, b))`."""
    if isinstance(first, list | tuple):
        return [*first, *others]
    return [first, *others]


class MovementMixin:
    def reshape(self: Tensor, *shape: int | None) -> Tensor:
        """One size may be -1 (inferred); None keeps the size of that axis (tinygrad)."""
        given = argfix(*shape)
        new = [self.shape[i] if d is None and i < self.ndim else operator.index(d)  # type: ignore[arg-type]
               for i, d in enumerate(given)]  # ints, numpy's too; no floats
        if new.count(-1) > 1:
            raise ValueError(f"reshape {tuple(new)}: only one size may be -1")
        if -1 in new:
            known = shapes.numel([d for d in new if d != -1])
            if known == 0 or self.numel() % known:
                raise ValueError(f"cannot reshape {self.shape} to {tuple(new)}")
            new[new.index(-1)] = self.numel() // known
        shapes.reshape(self.shape, new)
        if tuple(new) == self.shape:
            return self
        return self._new(hl.ReshapeOp, self, args=(tuple(new),))

    view = reshape

    def permute(self: Tensor, *order: int) -> Tensor:
        perm = tuple(normalize_axis(a, self.ndim) for a in argfix(*order))
        if perm == tuple(range(self.ndim)):
            return self
        return self._new(hl.PermuteOp, self, args=(perm,))

    def transpose(self: Tensor, dim0: int = 1, dim1: int = 0) -> Tensor:
        order = list(range(self.ndim))
        a, b = normalize_axis(dim0, self.ndim), normalize_axis(dim1, self.ndim)
        order[a], order[b] = order[b], order[a]
        return self.permute(order)

    @property
    def T(self: Tensor) -> Tensor:
        """transpose() of axes 1 and 0, as in tinygrad (for matrices, the transpose)."""
        return self.transpose()

    def expand(self: Tensor, *shape: int) -> Tensor:
        """numpy's broadcast_to; -1 keeps a size."""
        new = argfix(*shape)
        offset = len(new) - self.ndim
        new = sizes([self.shape[i - offset] if d == -1 and i >= offset else d
                     for i, d in enumerate(new)], "expand")
        if new == self.shape:
            return self
        return self._new(hl.BroadcastToOp, self, args=(new,))

    def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        if self.ndim == 0:
            return self.reshape(1)
        s, e = normalize_axis(start_dim, self.ndim), normalize_axis(end_dim, self.ndim)
        return self.reshape(*self.shape[:s], -1, *self.shape[e + 1:])

    def unflatten(self: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
        d = normalize_axis(dim, self.ndim)
        return self.reshape(*self.shape[:d], *sizes, *self.shape[d + 1:])

    def squeeze(self: Tensor, dim: int | None = None) -> Tensor:
        if dim is None:
            return self.reshape([d for d in self.shape if d != 1])
        d = normalize_axis(dim, self.ndim)
        return self if self.shape[d] != 1 else self.reshape(self.shape[:d] + self.shape[d + 1:])

    def unsqueeze(self: Tensor, dim: int) -> Tensor:
        d = normalize_axis(dim, self.ndim + 1)
        return self.reshape(*self.shape[:d], 1, *self.shape[d:])

    def pad(self: Tensor, padding: Sequence[Any], value: float = 0.0, mode: str = "constant"
            ) -> Tensor:
        """((before, after), ...) per axis, None for none, or torch's flat form (before,
        after) of the last axis, then of the one before, ...; negative amounts crop.
        `mode`: "constant" (`value`), "reflect" (mirrored, the edge not repeated),
        "replicate" (the edge repeated) or "circular" (wrapped around), as torch."""
        pairs = pad_pairs(padding, self.ndim)
        if mode != "constant":
            if mode not in PAD_MODES:
                raise ValueError(f"pad: mode {mode!r}; expected one of {', '.join(PAD_MODES)}")
            x = self.pad([(min(b, 0), min(a, 0)) for b, a in pairs])  # crops first
            for axis, (b, a) in enumerate(pairs):
                x = pad_axis(x, axis, max(b, 0), max(a, 0), mode)
            return x
        x = self.shrink([(max(-b, 0), d - max(-a, 0)) for (b, a), d in zip(pairs, self.shape,
                                                                          strict=True)])
        low, high = tuple(max(b, 0) for b, _ in pairs), tuple(max(a, 0) for _, a in pairs)
        if not any(low) and not any(high):
            return x
        return x._new(hl.PadOp, x, args=(low, high, float(value)))

    def shrink(self: Tensor, arg: Sequence[tuple[int, int] | None]) -> Tensor:
        """[(start, end)] per axis, None to keep an axis whole (tinygrad's shrink)."""
        bounds = [b or (0, d) for b, d in zip(arg, self.shape, strict=True)]
        if all(b == (0, d) for b, d in zip(bounds, self.shape, strict=True)):
            return self
        starts, limits = tuple(b[0] for b in bounds), tuple(b[1] for b in bounds)
        return self._new(hl.SliceOp, self, args=(starts, limits, (1,) * self.ndim))

    def flip(self: Tensor, axis: int | Sequence[int]) -> Tensor:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        listed = [normalize_axis(a, self.ndim) for a in axes]
        if len(set(listed)) != len(listed):
            raise ValueError(f"flip: axis {tuple(axes)} names an axis twice (as torch refuses)")
        norm = tuple(sorted(listed))
        return self._new(hl.FlipOp, self, args=(norm,)) if norm else self

    def repeat(self: Tensor, *repeats: int) -> Tensor:
        """tinygrad's repeat (numpy's tile): the whole tensor repeated along each axis."""
        reps = argfix(*repeats)
        if len(reps) < self.ndim:
            raise ValueError(f"repeat needs at least {self.ndim} counts, got {len(reps)}")
        base = self.reshape((1,) * (len(reps) - self.ndim) + self.shape)
        interleaved = [v for d in base.shape for v in (1, d)]
        grown = [v for r, d in zip(reps, base.shape, strict=True) for v in (r, d)]
        out = base.reshape(interleaved).expand(grown)
        return out.reshape([r * d for r, d in zip(reps, base.shape, strict=True)])

    def cat(self: Tensor, *others: Tensor, dim: int = 0) -> Tensor:
        """Concatenate along `dim`; dtypes promote. The tensors may come as one list."""
        tensors = tensors_of(self, others)
        if not tensors:
            raise ValueError("cat needs at least one tensor")
        if tensors[0] is not self:
            return tensors[0].cat(*tensors[1:], dim=dim)
        d = normalize_axis(dim, self.ndim)
        dtype = tensors[0].dtype
        for t in tensors[1:]:
            dtype = dtypes.promote(dtype, t.dtype)
        parts = [t.cast(dtype) for t in tensors]
        return self._new(hl.ConcatOp, *parts, args=(d,)) if len(parts) > 1 else self.cast(dtype)

    def stack(self: Tensor, *others: Tensor, dim: int = 0) -> Tensor:
        """Stack along a new axis `dim`; the tensors may come as one list."""
        tensors = tensors_of(self, others)
        if not tensors:
            raise ValueError("stack needs at least one tensor")
        if tensors[0] is not self:
            return tensors[0].stack(*tensors[1:], dim=dim)
        d = normalize_axis(dim, self.ndim + 1)
        return self.unsqueeze(d).cat(*[t.unsqueeze(d) for t in others], dim=d)

    def split(self: Tensor, sizes: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
        """Pieces of `sizes` (or of equal size `sizes`, the last one smaller) along `dim`."""
        d = normalize_axis(dim, self.ndim)
        n = self.shape[d]
        if isinstance(sizes, int):
            if sizes < 1:
                raise ValueError(f"split size must be at least 1, got {sizes}")
            sizes = [min(sizes, n - i) for i in range(0, n, sizes)] or [0]
        if sum(sizes) != n:
            raise ValueError(f"split sizes {list(sizes)} do not add up to {n} (axis {d})")
        bounds, start = [], 0
        for size in sizes:
            bounds.append((start, start + size))
            start += size
        return tuple(self.shrink([b if i == d else None for i in range(self.ndim)])
                     for b in bounds)

    def chunk(self: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        d = normalize_axis(dim, self.ndim)
        if chunks < 1:
            raise ValueError(f"chunk count must be at least 1, got {chunks}")
        return self.split(max(-(-self.shape[d] // chunks), 1), d)

    def __getitem__(self: Tensor, index: Any) -> Tensor:
        """ints, slices (negative and stepped), None and Ellipsis, and tensor indices
        (integer Tensors, lists or arrays, as numpy's advanced indexing: they broadcast
        together and their shape takes the place of the axes they index; negative
        indices count from the end, out of range ones pick 0 as gather does); a bool
        mask of the whole shape is `masked_select`."""
        items = index_items(index)
        tensors = [k for k, item in enumerate(items)
                   if isinstance(item, type(self) | list | np.ndarray)]
        if tensors:
            return self._tensor_index(items, tensors)
        return _apply_index(self, basic_items(items, self.ndim, TENSOR_INDEX_HINT))


    def _tensor_index(self: Tensor, items: list[Any], tensors: list[int]) -> Tensor:
        """`self[items]` where items[tensors[0]] is a tensor index: the rest applied as
        views first, then the indexed axis replaced by the index's axes (numpy's place
        for a single advanced index)."""
        if len(tensors) > 1:
            return self._tensor_indices(items, tensors)
        k = tensors[0]
        index = self._index_tensor(items[k])
        if index.dtype.is_bool:
            if len(items) != 1 or index.shape != self.shape:
                raise TypeError(f"a bool index must be a mask of the whole shape {self.shape} "
                                f"and the only index, got shape {index.shape}")
            return self.masked_select(index)
        if not index.dtype.is_int:
            raise TypeError(f"a tensor index must hold integers, got {index.dtype.name}")
        given = [*items[:k], slice(None), *items[k + 1:]]
        rest = basic_items(given, self.ndim, TENSOR_INDEX_HINT)
        if Ellipsis in given[:k]:  # the ellipsis before the index grew into slices
            k += len(rest) - len(given)
        viewed = _apply_index(self, rest)
        # numpy: ints beside a tensor index are advanced indices too; when a slice or
        # None parts them from it, the index's axes go first
        advanced = [j for j, i in enumerate(rest) if j == k or isinstance(i, int)]
        together = advanced == list(range(advanced[0], advanced[-1] + 1))
        axis = sum(1 for i in rest[:k] if not isinstance(i, int))  # in `viewed`
        picked = take(viewed, axis, index)
        if together or axis == 0:
            return picked
        dims = list(range(axis, axis + index.ndim))
        return picked.permute(*dims, *[d for d in range(picked.ndim) if d not in dims])


    def _index_tensor(self: Tensor, item: Any) -> Tensor:
        """A tensor index as a Tensor on this tensor's device ([] is an empty int index)."""
        cls = type(self)
        if isinstance(item, cls):
            return item
        array = np.asarray(item)
        return cls(array.astype(np.int32) if array.size == 0 else array, device=self.device)

    def _tensor_indices(self: Tensor, items: list[Any], tensors: list[int]) -> Tensor:
        """`self[items]` with several tensor indices (numpy's advanced indexing): they
        broadcast together, and their shape takes the place of the indexed axes when
        those are adjacent, else goes first. One gather on the indexed axes flattened."""
        indices = [self._index_tensor(items[k]) for k in tensors]
        for index in indices:
            if not index.dtype.is_int:
                raise TypeError(f"a tensor index beside another must hold integers, got "
                                f"{index.dtype.name}")
        given = [slice(None) if j in tensors else item for j, item in enumerate(items)]
        rest = basic_items(given, self.ndim, TENSOR_INDEX_HINT)
        grown = len(rest) - len(given)  # the ellipsis grew into this many more slices
        at = given.index(Ellipsis) if Ellipsis in given else len(given)
        ks = [k + grown if k > at else k for k in tensors]
        viewed = _apply_index(self, rest)
        axes = [sum(1 for i in rest[:k] if not isinstance(i, int)) for k in ks]
        advanced = [j for j, i in enumerate(rest) if j in ks or isinstance(i, int)]
        together = advanced == list(range(advanced[0], advanced[-1] + 1))
        sizes = [viewed.shape[a] for a in axes]
        total = math.prod(sizes)
        wide = "int64" if total >= 2**31 else None
        linear, inside = None, None
        for index, n in zip(indices, sizes, strict=True):
            index = index.cast(wide) if wide else index
            index = (index < 0).where(index + n, index)
            ok = (index >= 0) & (index < n)
            linear = index if linear is None else linear * n + index
            inside = ok if inside is None else inside & ok
        assert linear is not None and inside is not None
        linear = inside.where(linear, total)  # out of range picks as one index out of range
        others = [d for d in range(viewed.ndim) if d not in axes]
        flat = viewed.permute(*axes, *others).reshape(total, *[viewed.shape[d] for d in others])
        picked = take(flat, 0, linear)
        if not together:
            return picked
        n_b, before = linear.ndim, axes[0]
        return picked.permute(*range(n_b, n_b + before), *range(n_b),
                              *range(n_b + before, picked.ndim))


def take(x: Tensor, axis: int, index: Tensor) -> Tensor:
    """x with `axis` replaced by the index's axes: x.shape[:axis] + index.shape + the rest."""
    n = x.shape[axis]
    idx = (index < 0).where(index + n, index).flatten()
    moved = x.permute(axis, *[i for i in range(x.ndim) if i != axis])
    picked = moved.gather(0, idx.reshape(-1, *[1] * (x.ndim - 1)).expand(
        idx.shape[0], *moved.shape[1:])) if idx.shape[0] else moved.shrink(
        [(0, 0)] + [None] * (x.ndim - 1))
    picked = picked.reshape(*index.shape, *moved.shape[1:])
    lead = list(range(index.ndim, index.ndim + axis))
    return picked.permute(*lead, *range(index.ndim), *range(index.ndim + axis, picked.ndim))


@dataclass
class Box:
    """What basic indexing (ints, slices, None; the ellipsis expanded) picks: the axes
    to flip, then per axis a strided range, and the result's shape."""

    flips: list[int]
    starts: list[int]
    limits: list[int]
    steps: list[int]
    out_shape: list[int]


def index_box(shape: tuple[int, ...], items: list[Any]) -> Box:
    box = Box([], [], [], [], [])
    axis = 0
    for item in items:
        if item is None:
            box.out_shape.append(1)
            continue
        size = shape[axis]
        if isinstance(item, int):
            if not -size <= item < size:
                raise IndexError(f"index {item} is out of bounds for axis {axis} of size {size}")
            i = item % size
            box.starts.append(i), box.limits.append(i + 1), box.steps.append(1)
        else:
            start, stop, step = item.indices(size)
            if step < 0:  # a negative step walks a flipped axis forwards
                box.flips.append(axis)
                start, stop, step = size - 1 - start, size - 1 - stop, -step
            stop = max(stop, start)
            box.starts.append(start), box.limits.append(stop), box.steps.append(step)
            box.out_shape.append(-(-(stop - start) // step))
        axis += 1
    return box


def index_items(index: Any) -> list[Any]:
    """`t[index]`'s items as a list, numpy's ints as Python's."""
    items = list(index) if isinstance(index, tuple) else [index]
    return [int(i) if isinstance(i, np.integer) else i for i in items]


TENSOR_INDEX_HINT = ", and integer tensors, lists or arrays are supported"


def basic_items(items: list[Any], rank: int, hint: str) -> list[Any]:
    """Basic index items (ints, slices, None, one `...`) checked, with `...` (or the
    missing trailing axes) as whole slices; `hint` ends the message for another item."""
    for item in items:
        if not (item is None or item is Ellipsis or isinstance(item, int | slice)):
            raise TypeError(f"index {item!r}: only ints, slices, None, ...{hint}")
    if items.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis")
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    if used > rank:
        raise IndexError(f"too many indices for a tensor of rank {rank}")
    at = items.index(Ellipsis) if Ellipsis in items else len(items)
    return [*items[:at], *[slice(None)] * (rank - used), *items[at + 1:]]


def _apply_index(x: Tensor, items: list[Any]) -> Tensor:
    box = index_box(x.shape, items)
    if box.flips:
        x = x.flip(box.flips)
    if any((s, e, st) != (0, d, 1) for s, e, st, d in zip(box.starts, box.limits, box.steps,
                                                           x.shape, strict=True)):
        x = x._new(hl.SliceOp, x, args=(tuple(box.starts), tuple(box.limits),
                                        tuple(box.steps)))
    return x.reshape(box.out_shape)
