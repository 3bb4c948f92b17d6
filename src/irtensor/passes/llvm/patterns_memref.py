"""`memref` -> `llvm` patterns of `convert-to-llvm`: bare pointers and static strides.

A memref is one `!llvm.ptr` to its first element. `memref.load %m[%i, %j]`
becomes a `getelementptr inbounds` over the row-major linear index
`i * stride0 + j` (strides and offset are static) and an `llvm.load`; a rank-0
memref is loaded from the pointer itself. In memory an i1 is a byte (numpy's
bool) and a bf16 is its 16 bits (see `llvm_lowering`).

`memref.alloc` becomes a stack slot (`llvm.alloca` in the entry block, so a loop
reuses it) when the buffer is small and never leaves the function, and a call
to `malloc` otherwise; `memref.dealloc` becomes `free`, or nothing for a stack
slot. `AllocPlan` makes that choice once for the module, before any rewriting.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import llvm, memref, vector
from xdsl.dialects.builtin import (
    BFloat16Type,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnrealizedConversionCastOp,
    i1,
    i64,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from irtensor.passes.llvm.lowering import (
    PTR,
    Emitter,
    LLVMLoweringError,
    byte_size,
    constant_index,
    memory_type,
)

NSW = llvm.OverflowAttr([llvm.OverflowFlag.NO_SIGNED_WRAP])
STACK_ALIGNMENT = 64  # one cache line, a full AVX-512 vector


def static_memref(t: object, what: str) -> MemRefType:
    if not isinstance(t, MemRefType) or any(d < 0 for d in t.get_shape()):
        raise LLVMLoweringError(f"convert-to-llvm: {what} needs a memref of static shape, "
                                f"got {t}")
    return t


def linear_index(e: Emitter, t: MemRefType, indices: Sequence[SSAValue]) -> SSAValue | None:
    """offset + sum(index_k * stride_k) as i64 (`nsw`: accesses are in bounds); None for
    a rank-0 memref at offset 0. A dimension of size 1 adds nothing (an access in bounds
    has index 0 there) and a constant index joins the offset: a kernel's 8-d buffers
    (`8x1x1x512x7x7x1x1`) otherwise cost a multiply and an add per dimension per access."""
    strides, offset = t.get_strides(), t.get_offset()
    if strides is None or offset is None or None in strides:
        raise LLVMLoweringError(f"convert-to-llvm: {t} has no static strides and offset")
    total: SSAValue | None = None
    for index, stride, size in zip(indices, strides, t.get_shape(), strict=True):
        if size == 1:
            continue
        if (known := constant_index(index)) is not None:
            offset += known * stride
            continue
        term = e.value(index)
        if stride != 1:
            term = e.emit(llvm.MulOp(term, e.int_const(stride), overflow=NSW))
        total = term if total is None else e.emit(llvm.AddOp(total, term, overflow=NSW))
    if offset:
        const = e.int_const(offset)
        total = const if total is None else e.emit(llvm.AddOp(total, const, overflow=NSW))
    return total


def row_major(t: MemRefType) -> bool:
    """Whether `t` is laid out as its shape's row-major array, from offset 0."""
    strides, offset = t.get_strides(), t.get_offset()
    return offset == 0 and strides is not None and \
        list(strides) == _contiguous_strides(t.get_shape())


def buffer_origin(buffer: SSAValue) -> Operation | None:
    """The op that made `buffer`, through the casts of convert-to-llvm and the
    collapse_shape views (a view's pointer is its source's)."""
    owner = buffer.owner
    while isinstance(owner, UnrealizedConversionCastOp | memref.CollapseShapeOp) and \
            len(owner.operands) == 1:
        owner = owner.operands[0].owner
    return owner if isinstance(owner, Operation) else None


def _allocated_here(buffer: SSAValue) -> bool:
    """Whether `buffer` is the function's own allocation. llvmlite types a stack slot's
    pointer by its element and checks the stores through it, so those keep the linear
    index (a pointer to the element type)."""
    return isinstance(buffer_origin(buffer),
                      memref.AllocOp | memref.AllocaOp | llvm.AllocaOp | llvm.CallOp)


def _contiguous_strides(shape: Sequence[int]) -> list[int]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return strides[::-1]


# The largest constant a GEP's index list holds in place (LLVM IR's i32 there).
_GEP_CONSTANT = 2**31 - 1


def nested_pointer(e: Emitter, base: SSAValue, t: MemRefType,
                   indices: Sequence[SSAValue]) -> SSAValue:
    """One `getelementptr inbounds` over the row-major array type of `t`'s trailing
    dimensions, indexed by every index (a constant one, or a size-1 dimension's 0, held in
    the op): LLVM computes the address. The linearised form cost a multiply and an add per
    dimension per access, about a third of a conv kernel's llvm ops for xDSL to build."""
    shape = t.get_shape()
    pointee = memory_type(t.element_type)
    for size in reversed(shape[1:]):
        pointee = llvm.LLVMArrayType(size, pointee)
    mixed: list[int | SSAValue] = []
    for index, size in zip(indices, shape, strict=True):
        known = 0 if size == 1 else constant_index(index)
        mixed.append(known if known is not None and 0 <= known <= _GEP_CONSTANT
                     else e.value(index))
    if all(m == 0 for m in mixed):
        return base
    return e.gep(base, mixed, pointee)


def element_pointer(e: Emitter, buffer: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
    t = static_memref(buffer.type, "a load or store")
    base = e.value(buffer)
    if indices and row_major(t) and not _allocated_here(buffer):
        return nested_pointer(e, base, t, indices)
    index = linear_index(e, t, indices)
    if index is None:
        return base
    element = memory_type(t.element_type)
    return e.gep(base, [index], element)


class LoadToLLVM(RewritePattern):
    """memref.load -> getelementptr inbounds + llvm.load (i1 from a byte, bf16 from i16)."""

    op_types = (memref.LoadOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        pointer = element_pointer(e, op.memref, op.indices)
        element = op.res.type
        value = e.load(pointer, memory_type(element))
        if element == i1:
            value = e.icmp("ne", value, e.int_const(0, value.type))
        elif isinstance(element, BFloat16Type):
            value = e.bf16_from_i16(value)
        e.finish(value)


class StoreToLLVM(RewritePattern):
    """memref.store -> getelementptr inbounds + llvm.store (i1 as a byte, bf16 as i16;
    `nontemporal` kept)."""

    op_types = (memref.StoreOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        pointer = element_pointer(e, op.memref, op.indices)
        element = op.value.type
        value = e.value(op.value)
        if element == i1:
            value = e.zext(value, memory_type(element))
        elif isinstance(element, BFloat16Type):
            value = e.bf16_to_i16(value)
        e.store(value, pointer, nontemporal=is_nontemporal(op))
        rewriter.erase(op)


def is_nontemporal(op: memref.StoreOp | vector.StoreOp) -> bool:
    return op.nontemporal is not None and op.nontemporal.value.data != 0


# --------------------------------------------------------------------------- allocation

LOCAL_USERS = (memref.LoadOp, memref.StoreOp, memref.DeallocOp, vector.LoadOp, vector.StoreOp)


def _stays_local(buffer: SSAValue) -> bool:
    """Only loaded from, stored into (as the memref) and freed: never passed on."""
    for use in buffer.uses:
        user = use.operation
        if not isinstance(user, LOCAL_USERS):
            return False
        if isinstance(user, memref.StoreOp | vector.StoreOp) and use.index != 1:
            return False
    return True


@dataclass
class AllocPlan:
    """Which allocations become stack slots (and so which deallocs vanish)."""

    stack: set[Operation] = field(default_factory=set)
    no_free: set[Operation] = field(default_factory=set)
    uses_heap: bool = False

    @staticmethod
    def of(ops: Sequence[Operation], alloca_limit: int) -> AllocPlan:
        plan = AllocPlan()
        for op in ops:
            if isinstance(op, memref.AllocaOp):
                plan.stack.add(op)
            elif isinstance(op, memref.AllocOp):
                t = static_memref(op.memref.type, "memref.alloc")
                size = pymath.prod(t.get_shape()) * byte_size(t.element_type)
                if size <= alloca_limit and _stays_local(op.memref):
                    plan.stack.add(op)
                else:
                    plan.uses_heap = True
        for op in ops:
            if isinstance(op, memref.DeallocOp):
                source = op.memref.owner
                if isinstance(source, Block):
                    raise LLVMLoweringError(
                        "convert-to-llvm: memref.dealloc of a function argument (a buffer "
                        "this function did not allocate)")
                if source in plan.stack:
                    plan.no_free.add(op)
        return plan


def entry_block(op: Operation) -> Block:
    parent = op
    while not isinstance(parent.parent_op(), ModuleOp | None):
        parent = parent.parent_op()  # type: ignore[assignment]
    assert parent.regions and parent.regions[0].blocks, "an op outside a function"
    return parent.regions[0].blocks[0]


@dataclass
class AllocToLLVM(RewritePattern):
    """memref.alloc/alloca -> llvm.alloca at the top of the function (planned stack
    slots) or a call to malloc (the rest)."""

    op_types = (memref.AllocOp, memref.AllocaOp)

    plan: AllocPlan

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, memref.AllocOp | memref.AllocaOp):
            return
        t = static_memref(op.memref.type, op.name)
        count = pymath.prod(t.get_shape())
        e = Emitter(rewriter, op)
        if op in self.plan.stack:
            entry = entry_block(op)
            size = llvm.ConstantOp(IntegerAttr(max(count, 1), i64), i64)
            slot = llvm.AllocaOp(size, memory_type(t.element_type), alignment=STACK_ALIGNMENT)
            rewriter.insert(size, InsertPoint.at_start(entry))
            rewriter.insert(slot, InsertPoint.after(size))
            pointer = slot.results[0]
        else:
            nbytes = e.int_const(count * byte_size(t.element_type))
            pointer = e.emit(llvm.CallOp("malloc", nbytes, return_type=PTR))
        e.finish(pointer)


@dataclass
class DeallocToLLVM(RewritePattern):
    """memref.dealloc -> call to free (nothing for a stack slot)."""

    op_types = (memref.DeallocOp,)

    plan: AllocPlan

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DeallocOp, rewriter: PatternRewriter) -> None:
        if op not in self.plan.no_free:
            e = Emitter(rewriter, op)
            e.insert(llvm.CallOp("free", e.value(op.memref)))
        rewriter.erase(op)


def heap_declarations() -> list[llvm.FuncOp]:
    """`llvm.func @malloc(i64) -> !llvm.ptr` and `llvm.func @free(!llvm.ptr)`."""
    external = llvm.LinkageAttr("external")
    return [
        llvm.FuncOp("malloc", llvm.LLVMFunctionType([i64], PTR), linkage=external),
        llvm.FuncOp("free", llvm.LLVMFunctionType([PTR]), linkage=external),
    ]


def memref_patterns(plan: AllocPlan) -> list[RewritePattern]:
    return [LoadToLLVM(), StoreToLLVM(), AllocToLLVM(plan), DeallocToLLVM(plan)]


__all__ = ["AllocPlan", "heap_declarations", "memref_patterns"]
