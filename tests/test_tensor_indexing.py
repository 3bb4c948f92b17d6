"""Tensor indices and view helpers (frontend/indexing.py), einsum and rearrange
(frontend/einsum.py) against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import F32, I32, I64, check
from irtensor import Tensor

RNG = np.random.default_rng(0)
A = RNG.uniform(-2, 2, (3, 4, 5)).astype(F32)
M = RNG.uniform(-2, 2, (4, 6)).astype(F32)


def T(x: np.ndarray) -> Tensor:
    return Tensor(x, dtype=x.dtype)


def realize_all(outs: dict[str, Tensor]) -> dict[str, np.ndarray]:
    ts = list(outs.values())
    ts[0].realize(*ts[1:])
    return {k: t.numpy() for k, t in outs.items()}


def test_gather_along_each_axis_with_a_smaller_index() -> None:
    i0 = RNG.integers(0, 3, (2, 4, 5)).astype(I32)
    i2 = RNG.integers(0, 5, (3, 2, 7)).astype(I64)
    ints = (A * 10).astype(I32)
    outs = realize_all({"d0": T(A).gather(0, T(i0)), "d2": T(A).gather(2, T(i2)),
                        "neg": T(A).gather(-1, T(i2)), "int": T(ints).gather(0, T(i0)),
                        "bool": T(A > 0).gather(2, T(i2)),
                        "empty": T(A).gather(1, T(np.zeros((3, 0, 5), I32)))})
    check(outs["d0"], np.take_along_axis(A[:, :, :], i0, 0))
    check(outs["d2"], np.take_along_axis(A[:, :2, :], i2, 2))
    check(outs["neg"], outs["d2"])
    check(outs["int"], np.take_along_axis(ints, i0, 0))
    check(outs["bool"], np.take_along_axis(A[:, :2] > 0, i2, 2))
    assert outs["empty"].shape == (3, 0, 5)


def test_gather_rejects_bad_indices() -> None:
    with pytest.raises(TypeError, match="index must be an integer tensor"):
        T(A).gather(0, T(A))
    with pytest.raises(ValueError, match="index of rank 1 for a tensor of rank 3"):
        T(A).gather(0, Tensor([0]))
    with pytest.raises(ValueError, match="exceeds"):
        T(A).gather(0, T(np.zeros((1, 9, 1), I32)))


def _scatter_ref(x: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray,
                 reduce: str | None = None, include_self: bool = True) -> np.ndarray:
    out = x.copy()
    touched = np.zeros(x.shape, bool)
    for p in np.ndindex(*index.shape):
        q = list(p)
        q[dim] = index[p]
        q = tuple(q)
        v = src[p]
        if reduce is None or (not include_self and not touched[q]):
            out[q] = v
        elif reduce == "sum":
            out[q] += v
        elif reduce == "prod":
            out[q] *= v
        elif reduce == "amax":
            out[q] = max(out[q], v)
        elif reduce == "amin":
            out[q] = min(out[q], v)
        touched[q] = True
    return out


def test_scatter_last_write_wins_and_reductions() -> None:
    x = RNG.uniform(-1, 1, (4, 3)).astype(F32)
    index = np.array([[1, 0, 2], [1, 3, 2]], I32)  # (1, 0) and (1, 2) repeat
    src = RNG.uniform(-1, 1, (2, 3)).astype(F32)
    outs = realize_all({"set": T(x).scatter(0, T(index), T(src)),
                        "scalar": T(x).scatter(0, T(index), 7.0),
                        "add": T(x).scatter(0, T(index), T(src), reduce="add"),
                        **{r: T(x).scatter_reduce(0, T(index), T(src), r)
                           for r in ("sum", "prod", "amax", "amin", "mean")},
                        "amax_new": T(x).scatter_reduce(0, T(index), T(src), "amax",
                                                        include_self=False),
                        "dim1": T(x).scatter(1, T(index[:, :2].T.copy() % 3), T(src.T.copy()))})
    check(outs["set"], _scatter_ref(x, 0, index, src))
    check(outs["scalar"], _scatter_ref(x, 0, index, np.full((2, 3), 7, F32)))
    check(outs["add"], _scatter_ref(x, 0, index, src, "sum"))
    for r in ("sum", "prod", "amax", "amin"):
        check(outs[r], _scatter_ref(x, 0, index, src, r))
    total = _scatter_ref(x, 0, index, src, "sum")
    counts = _scatter_ref(np.ones_like(x), 0, index, np.ones_like(src), "sum")
    check(outs["mean"], total / counts)
    check(outs["amax_new"], _scatter_ref(x, 0, index, src, "amax", include_self=False))
    check(outs["dim1"], _scatter_ref(x, 1, index[:, :2].T % 3, src.T))
    with pytest.raises(ValueError, match="reduce 'max'"):
        T(x).scatter_reduce(0, T(index), T(src), "max")


def test_masked_select_and_nonzero_realize_the_mask() -> None:
    mask = A > 0.5
    sel = T(A).masked_select(T(mask))
    row = T(M).masked_select(T(M[0] > 0))  # the mask broadcasts
    assert sel.shape == (int(mask.sum()),)
    outs = realize_all({"sel": sel, "row": row, "none": T(A).masked_select(T(A > 9)),
                        "nz": T(mask).nonzero(), "nz_int": Tensor([0, 3, 0, -1]).nonzero()})
    check(outs["sel"], A[mask])
    check(outs["row"], M[np.broadcast_to(M[0] > 0, M.shape)])
    assert outs["none"].shape == (0,)
    check(outs["nz"], np.argwhere(mask).astype(I32))
    assert outs["nz_int"].tolist() == [[1], [3]]


def test_view_helpers() -> None:
    v = np.arange(4, dtype=F32) + 1
    outs = realize_all({
        "ri": T(A).repeat_interleave(2, 1), "ri_flat": T(M).repeat_interleave(3),
        "unfold": T(M).unfold(1, 3, 2), "unfold0": T(A).unfold(0, 2, 1),
        "diag": T(v).diag(), "diag_k": T(v).diag(2), "diag_neg": T(v).diag(-1),
        "diag2": T(M).diag(1), "diagonal": T(A).diagonal(), "diagonal_o": T(A).diagonal(-1, 1, 2),
        "diagonal_far": T(M).diagonal(9), "roll": T(A).roll(2, 1),
        "roll2": T(A).roll((-1, 7), (0, 2)), "roll_flat": T(M).roll(5)})
    check(outs["ri"], np.repeat(A, 2, 1))
    check(outs["ri_flat"], np.repeat(M, 3))
    check(outs["unfold"], np.lib.stride_tricks.sliding_window_view(M, 3, 1)[:, ::2])
    check(outs["unfold0"], np.moveaxis(np.lib.stride_tricks.sliding_window_view(A, 2, 0), 0, 0))
    check(outs["diag"], np.diag(v))
    check(outs["diag_k"], np.diag(v, 2))
    check(outs["diag_neg"], np.diag(v, -1))
    check(outs["diag2"], np.diag(M, 1))
    check(outs["diagonal"], np.diagonal(A))
    check(outs["diagonal_o"], np.diagonal(A, -1, 1, 2))
    assert outs["diagonal_far"].shape == (0,)
    check(outs["roll"], np.roll(A, 2, 1))
    check(outs["roll2"], np.roll(A, (-1, 7), (0, 2)))
    check(outs["roll_flat"], np.roll(M, 5))


def test_meshgrid_both_indexings() -> None:
    a, b, c = np.arange(3, dtype=F32), np.arange(4, dtype=F32) * 2, np.arange(2, dtype=F32)
    ij = T(a).meshgrid(T(b), T(c))
    xy = T(a).meshgrid(T(b), T(c), indexing="xy")
    for got, want in zip([*ij, *xy], [*np.meshgrid(a, b, c, indexing="ij"),
                                      *np.meshgrid(a, b, c, indexing="xy")], strict=True):
        check(got.numpy(), want)
    with pytest.raises(ValueError, match="indexing 'ji'"):
        T(a).meshgrid(T(b), indexing="ji")


def test_view_helper_errors() -> None:
    with pytest.raises(ValueError, match="unfold: size 9 and step 1 do not fit an axis of 6"):
        T(M).unfold(1, 9, 1)
    with pytest.raises(ValueError, match="diag needs a 1-D or 2-D tensor"):
        T(A).diag()
    with pytest.raises(ValueError, match="dim1 and dim2 are both axis 1"):
        T(A).diagonal(0, 1, -2)
    with pytest.raises(ValueError, match="2 shifts for 1 dims"):
        T(A).roll((1, 2), 0)


# --------------------------------------------------------------------------- einsum


EINSUM = [
    ("ij,jk->ik", [(4, 6), (6, 3)]),
    ("ij,jk", [(4, 6), (6, 3)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->ji", [(3, 5)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 2)]),
    ("b h q d, b h k d -> b h q k", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ijk->", [(2, 3, 4)]),
    ("ij,ij,ij->i", [(3, 4), (3, 4), (3, 4)]),
]


def test_einsum_matches_numpy() -> None:
    operands = [[RNG.uniform(-1, 1, s).astype(F32) for s in shapes] for _, shapes in EINSUM]
    outs = realize_all({f: Tensor.einsum(f, *[T(o) for o in ops])
                        for (f, _), ops in zip(EINSUM, operands, strict=True)})
    for (f, _), ops in zip(EINSUM, operands, strict=True):
        check(outs[f], np.asarray(np.einsum(f.replace(" ", ""), *ops)).astype(F32), 4)


def test_einsum_takes_a_list_promotes_and_is_one_kernel() -> None:
    a, b = Tensor.ones(3, 4, dtype="int32"), Tensor.ones(4, 2)
    out = Tensor.einsum("ij,jk->ik", [a, b])
    assert out.dtype.name == "float32" and out.tolist() == [[4.0, 4.0]] * 3
    assert len(Tensor.einsum("ij,jk->ik", Tensor.ones(8, 8), Tensor.ones(8, 8)).schedule()) == 1


def test_einsum_errors() -> None:
    with pytest.raises(ValueError, match="names 2 operands, got 1"):
        Tensor.einsum("ij,jk->ik", Tensor.ones(2, 2))
    with pytest.raises(ValueError, match="term 'ijk' does not fit an operand of rank 2"):
        Tensor.einsum("ijk->i", Tensor.ones(2, 2))
    with pytest.raises(ValueError, match="letter 'j' has sizes 3 and 4"):
        Tensor.einsum("ij,jk->ik", Tensor.ones(2, 3), Tensor.ones(4, 2))
    with pytest.raises(ValueError, match="the output 'iz' must name"):
        Tensor.einsum("ij->iz", Tensor.ones(2, 2))


def test_rearrange() -> None:
    x = T(A)
    outs = realize_all({"split": x.rearrange("a b (c d) -> a b c d", d=1),
                        "merge": x.rearrange("a b c -> (a c) b"),
                        "perm": x.rearrange("a b c -> c a b"),
                        "dots": x.rearrange("a ... -> ... a"),
                        "both": T(M).rearrange("(h w) c -> w (c h)", h=2)})
    check(outs["split"], A.reshape(3, 4, 5, 1))
    check(outs["merge"], A.transpose(0, 2, 1).reshape(15, 4))
    check(outs["perm"], A.transpose(2, 0, 1))
    check(outs["dots"], np.moveaxis(A, 0, -1))
    check(outs["both"], M.reshape(2, 2, 6).transpose(1, 2, 0).reshape(2, 12))
    with pytest.raises(ValueError, match="both sides must name the same axes once"):
        x.rearrange("a b c -> a b")
    with pytest.raises(ValueError, match="sizes of \\['c', 'd'\\] are not known"):
        x.rearrange("a b (c d) -> a b c d")
    with pytest.raises(ValueError, match="expected 'input -> output'"):
        x.rearrange("a b c")
