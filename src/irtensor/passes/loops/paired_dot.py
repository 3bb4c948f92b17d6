"""A bf16 register block's reduction on `vdpbf16ps` (`vector_block`, AVX512-BF16 hosts).

A bf16 matmul or conv sums exact f32 products of bf16 operands (`ll_builder.
sum_of_products`: the kernel body is `extf a`, `extf b`, `mulf`). AVX512-BF16's
`vdpbf16ps` (`x86vector.avx512.dot`) adds two such products per f32 lane in one
instruction, twice the multiply-adds of an f32 FMA on the same register width, from
operands half as wide. It takes the two products of a lane from adjacent bf16s of each
operand, so the block's innermost reduction loop steps by two (k, k + 1); where that
loop is odd and another is even (a 3x3 conv's kw = 3 and its input channels), the
even one is paired, moved innermost:

    pairs loop %k = 0 to 2 * (K / 2) step 2, carrying the rows' f32 vectors
      a row's uniform operand (matmul's A[m, k], k + 1): two scalar loads, paired and
        broadcast to every lane: [a_k, a_k+1, a_k, a_k+1, ...]
      a column run (B[k, n:n+16], B[k + 1, n:n+16]): two vector loads, interleaved
        [b_k,n, b_k+1,n, b_k,n+1, ...] once for all rows
      acc = x86vector.avx512.dot acc, pairs(A), pairs(B)    per row and 16 columns
    an odd K's last k: the widened FMA of the plain row

Rows narrower than 4 columns take the plain row's FMAs for both ks. The sum of a
lane is the same set of exact products in another order (and `vdpbf16ps` reads a
denormal bf16 as zero); the pairs loop is split in blocked levels as every
reduction is (`blocked`), so its error grows as a pairwise sum's does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import BFloat16Type, DenseArrayBase, MemRefType, VectorType, f32, i64
from xdsl.ir import Block, SSAValue

from irtensor.dialects.kernel import YieldOp
from irtensor.dialects.x86vector import DOT_LANES, DotBF16Op
from irtensor.passes.loops import blocked
from irtensor.passes.loops.loop_parts import Env, Loop, Planned

if TYPE_CHECKING:
    from irtensor.passes.loops.vector_block import VectorRows

RowPoint = tuple[Env, int]  # a row piece's point (its first column) and its width


def is_bf16_product(block: Block) -> bool:
    """Whether `block` is `yield extf(x) * extf(y)` of its two bf16 arguments, in f32."""
    ops = list(block.ops)
    if len(block.args) != 2 or len(ops) != 4:
        return False
    widen_x, widen_y, product, end = ops
    if not all(isinstance(o, arith.ExtFOp) and isinstance(o.input.type, BFloat16Type)
               and o.result.type == f32 for o in (widen_x, widen_y)):
        return False
    assert isinstance(widen_x, arith.ExtFOp) and isinstance(widen_y, arith.ExtFOp)
    if {widen_x.input, widen_y.input} != set(block.args):
        return False
    return (isinstance(product, arith.MulfOp)
            and {product.lhs, product.rhs} == {widen_x.result, widen_y.result}
            and isinstance(end, YieldOp) and end.value == product.result)


class PairedDot:
    """The pairs loop of one `VectorRows`' blocks (see the module docstring)."""

    widest = 16  # the 512-bit form's f32 lanes: a row's pieces are at most this wide

    def __init__(self, rows: VectorRows, uniform: int, run: int, dim: int, extent: int):
        self.rows, self.kf = rows, rows.kf
        self.uniform, self.run, self.dim, self.extent = uniform, run, dim, extent
        self.pairs: dict[tuple[object, ...], SSAValue] = {}

    @staticmethod
    def of(rows: VectorRows, uniform: int | None, run: int | None) -> PairedDot | None:
        """The pairs loop for `rows`' kernel, or None when it is not a bf16 product sum
        of one operand uniform along the columns (read #`uniform`) and one contiguous
        run (read #`run`), over a reduction dim of a static extent of two or more."""
        kf = rows.kf
        op = kf.op
        if not kf.contract or len(op.body_inputs) != 2 or kf.accumulator_type() != f32:
            return None
        if uniform is None or run is None or not is_bf16_product(op.body.block):
            return None
        for buffer in kf.inputs[:2]:
            assert isinstance(buffer.type, MemRefType)
            if not isinstance(buffer.type.element_type, BFloat16Type):
                return None
        extents = {d: e for d in rows.reductions
                   if not kf.tile(d) and (e := rows.owner.static_extent(d)) is not None
                   and e >= 2}
        if not extents:
            return None
        # the innermost reduction, unless it is odd and another is even (a 3x3 conv's
        # kw = 3 would leave a third of its products to the FMAs; its channels pair up)
        even = [d for d in rows.reductions if extents.get(d, 1) % 2 == 0]
        dim = even[-1] if even else max(extents, key=rows.reductions.index)
        return PairedDot(rows, uniform, run, dim, extents[dim])

    def accumulate(self, points: Sequence[RowPoint], inits: Sequence[SSAValue], env: Env
                   ) -> list[SSAValue]:
        """The rows' sums: the outer reduction loops as planned, the pairs loop inside."""
        kf = self.kf
        outer = [Planned(d, "point", kf.tile(d)) if kf.tile(d) else Planned(d)
                 for d in self.rows.reductions if d != self.dim]

        def over_pairs(e: Env, carried: list[SSAValue]) -> list[SSAValue]:
            pairs = self.extent // 2
            loop = Loop(self.dim, kf.index(0), kf.index(2 * pairs), 2, trips=pairs)
            totals = blocked.accumulate(kf, [loop], carried,
                                        lambda s, c: self.step(points, s, c), e)
            if self.extent % 2:
                last = {**e, self.dim: kf.index(self.extent - 1)}
                totals = self.plain_step(points, last, totals)
            return totals

        if outer:
            return blocked.accumulate(kf, outer, list(inits), over_pairs, env)
        return over_pairs(dict(env), list(inits))

    def reductions_at(self, e: Env) -> Env:
        return {d: e[d] for d in self.rows.reductions}

    def plain_step(self, points: Sequence[RowPoint], e: Env, carried: list[SSAValue]
                   ) -> list[SSAValue]:
        kf, rows = self.kf, self.rows
        kf.read_cache, rows.loads = {}, {}
        try:
            at = self.reductions_at(e)
            return [kf.combine(acc, rows.body_value({**p, **at}, n))
                    for acc, (p, n) in zip(carried, points, strict=True)]
        finally:
            kf.read_cache = None

    def step(self, points: Sequence[RowPoint], e: Env, carried: list[SSAValue]
             ) -> list[SSAValue]:
        kf, rows = self.kf, self.rows
        kf.read_cache, rows.loads, self.pairs = {}, {}, {}
        try:
            first = self.reductions_at(e)
            second = {**first, self.dim: kf.emit(arith.AddiOp(e[self.dim], kf.index(1)))}
            out = []
            for acc, (p, n) in zip(carried, points, strict=True):
                at_k, at_next = {**p, **first}, {**p, **second}
                if n in DOT_LANES:
                    dot = DotBF16Op(acc, self.uniform_pairs(at_k, at_next, n),
                                    self.run_pairs(at_k, at_next, n))
                    out.append(kf.emit(dot))
                else:
                    acc = kf.combine(acc, rows.body_value(at_k, n))
                    out.append(kf.combine(acc, rows.body_value(at_next, n)))
            return out
        finally:
            kf.read_cache = None

    def shuffle(self, x: SSAValue, y: SSAValue, mask: list[int]) -> SSAValue:
        kind = VectorType(BFloat16Type(), [len(mask)])
        return self.kf.emit(vector.ShuffleOp(x, y, DenseArrayBase.from_list(i64, mask),
                                             result_type=kind))

    def uniform_pairs(self, at_k: Env, at_next: Env, n: int) -> SSAValue:
        """[u_k, u_k+1] in every one of `n` lanes (2n bf16s), once per row and step."""
        kf = self.kf
        first, second = (kf.read(self.uniform, at, kf.sizes) for at in (at_k, at_next))
        key = ("uniform", first, second, n)
        if key not in self.pairs:
            lanes = VectorType(BFloat16Type(), [n])
            x, y = (kf.emit(vector.BroadcastOp(v, lanes)) for v in (first, second))
            self.pairs[key] = self.shuffle(x, y, [0, n] * n)
        return self.pairs[key]

    def run_pairs(self, at_k: Env, at_next: Env, n: int) -> SSAValue:
        """The runs at k and k + 1 interleaved lane by lane, once per step for all rows."""
        rows = self.rows
        first, second = (rows.read(self.run, at, n, self.kf.sizes) for at in (at_k, at_next))
        key = ("run", first, second)
        if key not in self.pairs:
            self.pairs[key] = self.shuffle(first, second,
                                           [j for lane in range(n) for j in (lane, n + lane)])
        return self.pairs[key]


__all__ = ["PairedDot", "is_bf16_product"]
