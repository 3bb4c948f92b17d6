"""einsum and einops-style rearrange: index notation turned into movement ops, one
broadcast multiply and one sum (so a contraction is one reduction kernel, as matmul)."""

from __future__ import annotations

import functools
import operator
import re
import string
from typing import TYPE_CHECKING

from irtensor.frontend.movement import argfix

if TYPE_CHECKING:
    from irtensor.frontend.tensor import Tensor

LETTERS = set(string.ascii_letters)


def _expand_ellipsis(terms: list[str], ranks: list[int], formula: str) -> tuple[list[str], str]:
    """'...' replaced by letters the formula does not use, right-aligned across operands."""
    spare = [c for c in string.ascii_letters if c not in formula]
    width = max((r - (len(t) - 3) for t, r in zip(terms, ranks, strict=True) if "..." in t),
                default=0)
    if width < 0:
        raise ValueError(f"einsum {formula!r}: an operand has fewer axes than its letters")
    fill = "".join(spare[:width])
    out = []
    for t, r in zip(terms, ranks, strict=True):
        if "..." in t:
            own = r - (len(t) - 3)
            t = t.replace("...", fill[width - own:] if own else "")
        out.append(t)
    return out, fill


def _parse(formula: str, ranks: list[int]) -> tuple[list[str], str]:
    text = formula.replace(" ", "")
    lhs, arrow, rhs = text.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"einsum {formula!r} names {len(terms)} operands, got {len(ranks)}")
    terms, fill = _expand_ellipsis(terms, ranks, text)
    if arrow:
        rhs = rhs.replace("...", fill)
    else:
        counts = {c: sum(t.count(c) for t in terms) for t in terms for c in t}
        rhs = fill + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in fill))
    for t, r in zip(terms, ranks, strict=True):
        if len(t) != r or not set(t) <= LETTERS:
            raise ValueError(f"einsum {formula!r}: term {t!r} does not fit an operand of "
                             f"rank {r}")
    if not set(rhs) <= set("".join(terms)) or len(set(rhs)) != len(rhs):
        raise ValueError(f"einsum {formula!r}: the output {rhs!r} must name distinct letters "
                         "of the inputs")
    return terms, rhs


def _distinct(x: Tensor, term: str) -> tuple[Tensor, str]:
    """A letter repeated within one operand takes that operand's diagonal."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        i = term.index(c)
        j = term.index(c, i + 1)
        x = x.diagonal(0, i, j)
        term = term[:i] + term[i + 1:j] + term[j + 1:] + c
    return x, term


class EinsumMixin:
    @classmethod
    def einsum(cls: type[Tensor], formula: str, *operands: Tensor | list[Tensor]) -> Tensor:
        """numpy.einsum: 'ij,jk->ik', implicit output (letters used once, sorted), '...'
        and repeated letters (a diagonal); sizes of 1 broadcast.

        >>> a = Tensor([[1, 2], [3, 4]])
        >>> Tensor.einsum("ij,jk->ik", a, a).tolist(), Tensor.einsum("ii", a).item()
        ([[7, 10], [15, 22]], 5)
        """
        tensors: list[Tensor] = list(argfix(*operands))
        terms, out = _parse(formula, [t.ndim for t in tensors])
        pairs = [_distinct(t, term) for t, term in zip(tensors, terms, strict=True)]
        sizes: dict[str, int] = {}
        for t, term in pairs:
            for c, d in zip(term, t.shape, strict=True):
                if sizes.get(c, 1) not in (1, d) and d != 1:
                    raise ValueError(f"einsum {formula!r}: letter {c!r} has sizes "
                                     f"{sizes[c]} and {d}")
                sizes[c] = d if sizes.get(c, 1) == 1 else sizes[c]
        order = out + "".join(sorted(set(sizes) - set(out)))
        aligned = []
        for t, term in pairs:
            perm = sorted(range(len(term)), key=lambda i: order.index(term[i]))
            moved = t.permute(perm) if term else t
            shape = [t.shape[term.index(c)] if c in term else 1 for c in order]
            aligned.append(moved.reshape(shape))
        product = functools.reduce(operator.mul, aligned)
        summed = tuple(range(len(out), len(order)))
        result = product._sum_same(summed) if summed else product
        return result.expand([sizes[c] for c in out])

    def rearrange(self: Tensor, formula: str, **sizes: int) -> Tensor:
        """einops' rearrange: 'b (h w) c -> b h w c' with h=2; '...' stands for the
        axes not named; every name on one side is on the other.

        >>> Tensor.arange(6).rearrange("(h w) -> w h", h=2).tolist()
        [[0, 3], [1, 4], [2, 5]]
        """
        lhs, arrow, rhs = formula.partition("->")
        if not arrow:
            raise ValueError(f"rearrange {formula!r}: expected 'input -> output'")
        left, right = _groups(lhs, formula), _groups(rhs, formula)
        extra = self.ndim - sum(1 for g in left if g != ["..."])
        if extra < 0 or (extra and ["..."] not in left):
            raise ValueError(f"rearrange {formula!r}: {len(left)} axes named, the input has "
                             f"{self.ndim}")
        left, right = _dots(left, extra), _dots(right, extra)
        names_l = [n for g in left for n in g]
        names_r = [n for g in right for n in g]
        if sorted(names_l) != sorted(names_r) or len(set(names_l)) != len(names_l):
            raise ValueError(f"rearrange {formula!r}: both sides must name the same axes once")
        known = _solve(left, self.shape, sizes, formula)
        x = self.reshape([known[n] for n in names_l])
        x = x.permute([names_l.index(n) for n in names_r])
        return x.reshape([functools.reduce(operator.mul, (known[n] for n in g), 1)
                          for g in right])


NAME = r"[A-Za-z_][A-Za-z0-9_]*"


def _groups(side: str, formula: str) -> list[list[str]]:
    """The axes of one side: each a list of names (a group in parentheses, or one name)."""
    groups: list[list[str]] = []
    current: list[str] | None = None
    for tok in re.findall(rf"\(|\)|\.\.\.|{NAME}|\S", side):
        if tok == "(" and current is None:
            current = []
        elif tok == ")" and current is not None:
            groups.append(current)
            current = None
        elif tok == "..." or re.fullmatch(NAME, tok):
            if current is None:
                groups.append([tok])
            else:
                current.append(tok)
        else:
            raise ValueError(f"rearrange {formula!r}: unexpected {tok!r}")
    if current is not None:
        raise ValueError(f"rearrange {formula!r}: unbalanced parentheses")
    return groups


def _dots(groups: list[list[str]], extra: int) -> list[list[str]]:
    """'...' as `extra` names: separate axes alone, one group's members inside one."""
    names = [f"...{i}" for i in range(extra)]
    out: list[list[str]] = []
    for g in groups:
        if g == ["..."]:
            out.extend([n] for n in names)
        else:
            out.append([m for n in g for m in (names if n == "..." else [n])])
    return out


def _solve(left: list[list[str]], shape: tuple[int, ...], sizes: dict[str, int],
           formula: str) -> dict[str, int]:
    """Every name's size, from the input shape and the given sizes."""
    known = dict(sizes)
    for group, d in zip(left, shape, strict=True):
        unknown = [n for n in group if n not in known]
        if len(unknown) > 1:
            raise ValueError(f"rearrange {formula!r}: sizes of {unknown} are not known")
        rest = functools.reduce(operator.mul, (known[n] for n in group if n in known), 1)
        if unknown:
            if rest == 0 or d % rest:
                raise ValueError(f"rearrange {formula!r}: axis of size {d} does not split "
                                 f"by {rest}")
            known[unknown[0]] = d // rest
        elif rest != d:
            raise ValueError(f"rearrange {formula!r}: group {group} has size {rest}, the "
                             f"input axis {d}")
    return known
