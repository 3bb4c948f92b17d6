"""Streaming stores (`lower-kernels-to-loops`): a large elementwise output written past the caches.

A store to memory the cache does not hold first reads the line in (write-allocate):
writing a 64 MiB output moves 128 MiB. A non-temporal store writes the line to
memory without reading it. It pays for an output larger than the last-level cache,
which no later kernel finds there anyway (`host.stream_bytes`); a smaller output is
stored plainly, so that the next kernel reads it from the cache.

An elementwise kernel whose output qualifies (`streams`) writes its innermost loop in
blocks of four cache lines (256 bytes of elements):

    head:   the points before the first block boundary, stored plainly
    blocks: the block's points computed into a stack row (LLVM vectorises the
            loop), then the row copied out a line at a time, `vector.store {nontemporal}`
    tail:   the points after the last block boundary, stored plainly

Each point computes what the plain nest's point computes: the results are the same.
The stores are element-aligned, as a buffer's address is not known when its kernel
is compiled: LLVM writes each vector as 8-byte non-temporal stores (`movnti`, or
SSE4A's `movntsd`), which measured within 5% of aligned vector ones on a memory-bound
loop. convert-to-llvm ends a function that stores non-temporally with a store fence,
as such stores are ordered by nothing else.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import BoolAttr, Float32Type, Float64Type, MemRefType, VectorType
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr

from irtensor import host
from irtensor.passes.loops.loop_parts import Env

if TYPE_CHECKING:
    from irtensor.passes.loops.loop_builder import KernelFunction

LINE_BYTES = 64
BLOCK_LINES = 4


def line_elements(memory: MemRefType) -> int:
    """The elements of a 64-byte cache line of `memory`."""
    element = memory.element_type
    return LINE_BYTES // (4 if isinstance(element, Float32Type) else 8)


def streams(kernel: KernelFunction) -> bool:
    """Whether the elementwise kernel stores its output non-temporally: an f32 or f64
    output of at least `host.stream_bytes()` (0: never), written contiguously along the
    innermost loop, in whole lines per row (or in one row), untiled, by a body without
    `math` functions (those are bound by their arithmetic, and the unaligned
    non-temporal stores' extra instructions then cost 7-11%)."""
    op, out = kernel.op, kernel.output.type
    threshold = host.stream_bytes()
    if op.reduction_dims or any(kernel.tiles) or threshold <= 0 or not kernel.order:
        return False
    if any(inner.name.startswith("math.") for inner in op.body.walk()):
        return False
    if not isinstance(out, MemRefType) or \
            not isinstance(out.element_type, Float32Type | Float64Type):
        return False
    shape = out.get_shape()
    if math.prod(shape) * (out.element_type.bitwidth // 8) < threshold:
        return False
    inner = kernel.order[-1]
    writes = op.writes.data.results
    if writes[-1] != AffineDimExpr(inner) or shape[-1] != kernel.sizes[inner]:
        return False
    if any(inner in e.used_dims() for e in writes[:-1]):
        return False
    return len(kernel.order) == 1 or kernel.sizes[inner] % line_elements(out) == 0


def store_streamed(kernel: KernelFunction) -> None:
    """The elementwise nest with its innermost loop in head, blocks and tail."""
    out = kernel.output.type
    assert isinstance(out, MemRefType)
    block = BLOCK_LINES * line_elements(out)
    row = kernel.emit(memref.AllocaOp.get(out.element_type, shape=[block]))
    inner = kernel.order[-1]
    outer = kernel.plan([d for d in kernel.order if d != inner])

    def per_row(env: Env, carried: list[SSAValue]) -> list[SSAValue]:
        lower, upper = kernel.dim_range(inner)
        if inner != kernel.order[0]:  # the whole row, [0, size): its blocks are known
            size = kernel.sizes[inner]
            first, last = lower, kernel.index(size // block * block)
            head, tail = False, size % block != 0
        else:  # the threads' [start, stop): block boundaries computed here
            step = kernel.index(block)
            up = kernel.emit(arith.AddiOp(lower, kernel.index(block - 1)))
            first = kernel.emit(arith.MinSIOp(kernel.emit(arith.MuliOp(
                kernel.emit(arith.DivSIOp(up, step)), step)), upper))
            last = kernel.emit(arith.MaxSIOp(kernel.emit(arith.MuliOp(
                kernel.emit(arith.DivSIOp(upper, step)), step)), first))
            head = tail = True
        if head:
            kernel.loop(lower, first, 1, lambda i: store_at(kernel, env, inner, i),
                        f"i{inner}h")
        kernel.loop(first, last, block, lambda b: store_block(kernel, env, inner, b, row),
                    f"i{inner}b")
        if tail:
            kernel.loop(last, upper, 1, lambda i: store_at(kernel, env, inner, i),
                        f"i{inner}t")
        return []

    kernel.nest(outer, [], per_row)


def store_at(kernel: KernelFunction, env: Env, inner: int, point: SSAValue) -> None:
    """A plain store of the body at `point` of the innermost loop."""
    kernel.store_point({**env, inner: point}, [])


def store_block(kernel: KernelFunction, env: Env, inner: int, first: SSAValue,
               row: SSAValue) -> None:
    """One block's points into `row`, then `row` to the output in vectors, non-temporally."""
    out, memory = kernel.output.type, row.type
    assert isinstance(out, MemRefType) and isinstance(memory, MemRefType)
    (block,) = memory.get_shape()

    def compute(k: SSAValue) -> None:
        point = kernel.emit(arith.AddiOp(first, k))
        kernel.store(kernel.body_value({**env, inner: point}), row, [k])

    kernel.loop(kernel.index(0), kernel.index(block), 1, compute, "k")
    width = line_elements(out)  # LLVM splits a line into the host's vector registers
    lanes = VectorType(out.element_type, [width])
    for start in range(0, block, width):
        part = kernel.emit(vector.LoadOp(row, [kernel.index(start)], lanes))
        at = kernel.emit(arith.AddiOp(first, kernel.index(start))) if start else first
        indices = kernel.write_indices({**env, inner: at})
        kernel.at.insert(vector.StoreOp(part, kernel.output, indices,
                                        nontemporal=BoolAttr.from_bool(True)))


__all__ = ["BLOCK_LINES", "LINE_BYTES", "line_elements", "store_streamed", "streams"]
