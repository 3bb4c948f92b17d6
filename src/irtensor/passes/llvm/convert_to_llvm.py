"""convert-to-llvm: loop-level kernel functions into `llvm.func`s on bare pointers.

The input is what `lower-kernels-to-loops` makes: `func.func`s marked
`irtensor.kernel` whose bodies use scf, arith, math, memref (static, row-major),
vector (a register block's rows) and func. The output is a module of
`llvm.func`s (and the `malloc`/`free` declarations they need) that
`xdsl.backend.llvm.convert.convert_module` turns into LLVM IR for the JIT
(`irtensor.passes.llvm.jit`).

The steps, each reusing xDSL where it can:

1. `kernels-only=true` (the default) erases the functions that are not kernels
   (the host function that allocates and calls them): the runtime compiles one
   kernel per LLVM module. `kernels-only=false` lowers every function, calls too.
2. xDSL's `convert-scf-to-cf` patterns turn loops and ifs into blocks and branches
   (applied as a conversion, `trace.convert_module`, as the op patterns of step 4).
3. `FuncToLLVMFunc` turns each `func.func` into an `llvm.func` whose memref
   arguments are `!llvm.ptr` and index arguments i64 (block arguments of every
   block are converted too, with casts back to the old types for their users).
   The function keeps its argument types as `irtensor.arg_types`, and the
   arguments it may write as `irtensor.written_args`, for the JIT's checks.
4. The op patterns (`llvm_patterns_arith`, `_math`, `_memref`, `_vector`, and the
   cf/func ones here) rewrite every op, casting operands and results with
   `builtin.unrealized_conversion_cast` where types change.
5. xDSL's `reconcile-unrealized-casts` pattern, tried once on each cast in order,
   removes the cast pairs; anything that is not an llvm op by then is reported by
   name.

Fast-math flags are off unless the arith op carries them; `fast-math=true` adds
`contract` to float arithmetic. `noalias=true` marks pointer arguments `noalias`
(only right when no two buffers of a call overlap).
"""

from __future__ import annotations

import platform
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import cf, func, llvm, memref, scf, vector
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    MemRefType,
    ModuleOp,
    TensorType,
    UnitAttr,
    UnrealizedConversionCastOp,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.convert_scf_to_cf import ForLowering, IfLowering, SwitchLowering
from xdsl.transforms.reconcile_unrealized_casts import ReconcileUnrealizedCastsPattern

from irtensor import ir
from irtensor.dialects.amx import TileLoadOp
from irtensor.passes import trace
from irtensor.passes.llvm.lowering import (
    ARG_TYPES_ATTR,
    KERNEL_ATTR,
    NO_UNROLL_ATTR,
    SMALL_ATTR,
    WRITTEN_ATTR,
    Emitter,
    LLVMLoweringError,
    llvm_type,
)
from irtensor.passes.llvm.patterns_amx import amx_patterns
from irtensor.passes.llvm.patterns_arith import arith_patterns
from irtensor.passes.llvm.patterns_math import math_patterns
from irtensor.passes.llvm.patterns_memref import (
    AllocPlan,
    heap_declarations,
    is_nontemporal,
    memref_patterns,
)
from irtensor.passes.llvm.patterns_vector import vector_patterns
from irtensor.passes.registry import register_pass

# --------------------------------------------------------------------------- functions


def written_arguments(function: func.FuncOp) -> list[int]:
    """Indices of the memref arguments used by anything but a load (through views)."""
    if not function.body.blocks:
        return []
    return [
        i for i, arg in enumerate(function.body.blocks[0].args)
        if isinstance(arg.type, MemRefType) and not _only_loaded(arg)
    ]


def _only_loaded(buffer: SSAValue) -> bool:
    return all(isinstance(use.operation, memref.LoadOp | vector.LoadOp | TileLoadOp) or (
        isinstance(use.operation, memref.CollapseShapeOp)
        and _only_loaded(use.operation.result)) for use in buffer.uses)


def convert_block_arguments(block: Block, rewriter: PatternRewriter) -> None:
    """Give each argument its lowered type; its users get a cast back to the old one."""
    for arg in list(block.args):
        target = llvm_type(arg.type)
        if target == arg.type:
            continue
        old_type = arg.type
        new = rewriter.replace_value_with_new_type(arg, target)
        if not new.uses:
            continue
        cast = UnrealizedConversionCastOp.get([new], [old_type])
        rewriter.insert(cast, InsertPoint.at_start(block))
        rewriter.replace_uses_with_if(new, cast.results[0],
                                      lambda use, c=cast: use.operation is not c)


def _argument_attributes(inputs: list[Attribute]) -> ArrayAttr[DictionaryAttr]:
    return ArrayAttr([
        DictionaryAttr({"llvm.noalias": UnitAttr()} if isinstance(t, llvm.LLVMPointerType)
                       else {})
        for t in inputs
    ])


@dataclass
class FuncToLLVMFunc(RewritePattern):
    """func.func -> llvm.func: memrefs become !llvm.ptr, index i64; the original argument
    types and the written arguments are kept as attributes for the JIT."""

    noalias: bool = False

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        name = op.sym_name.data
        outputs = op.function_type.outputs.data
        if len(outputs) > 1:
            raise LLVMLoweringError(f"convert-to-llvm: @{name} returns {len(outputs)} values; "
                                    "an llvm.func returns at most one")
        originals = list(op.function_type.inputs.data)
        inputs = [llvm_type(t) for t in originals]
        output = llvm_type(outputs[0]) if outputs else llvm.LLVMVoidType()
        attributes: dict[str, Attribute] = {
            ARG_TYPES_ATTR: ArrayAttr(originals),
            WRITTEN_ATTR: DenseArrayBase.from_list(i64, written_arguments(op)),
        }
        for kept in (KERNEL_ATTR, NO_UNROLL_ATTR, SMALL_ATTR):
            if kept in op.attributes:
                attributes[kept] = UnitAttr()
        for block in op.body.blocks:
            convert_block_arguments(block, rewriter)
        properties = {"arg_attrs": _argument_attributes(inputs)} if self.noalias else None
        new = llvm.FuncOp(
            name, llvm.LLVMFunctionType(inputs, output), linkage=llvm.LinkageAttr("external"),
            body=rewriter.move_region_contents_to_new_regions(op.body),
            other_props=properties, extra_attrs=attributes,
        )
        rewriter.replace(op, new)


# --------------------------------------------------------------------------- cf and func


class BranchToLLVM(RewritePattern):
    """cf.br -> llvm.br (block arguments become phi nodes in LLVM IR)."""

    op_types = (cf.BranchOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.BranchOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        e.insert(llvm.BrOp(op.successor, *e.values(op.arguments)))
        rewriter.erase(op)


class CondBranchToLLVM(RewritePattern):
    """cf.cond_br -> llvm.cond_br."""

    op_types = (cf.ConditionalBranchOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.ConditionalBranchOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        e.insert(llvm.CondBrOp(e.value(op.cond), op.then_block, e.values(op.then_arguments),
                               op.else_block, e.values(op.else_arguments)))
        rewriter.erase(op)


class ReturnToLLVM(RewritePattern):
    """func.return -> llvm.return; on x86, after a store fence where the function stores
    non-temporally (such stores are ordered by nothing else: the thread that reads the
    output next might not see them)."""

    op_types = (func.ReturnOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter) -> None:
        e = Emitter(rewriter, op)
        values = e.values(op.arguments)
        if platform.machine().lower() in ("x86_64", "amd64") \
                and (function := op.parent_op()) is not None \
                and stores_nontemporally(function):
            e.insert(llvm.CallIntrinsicOp("llvm.x86.sse.sfence", [], []))
        e.insert(llvm.ReturnOp(values[0] if values else None))
        rewriter.erase(op)


def stores_nontemporally(function: Operation) -> bool:
    """Whether a store in `function` (memref, vector or llvm) is non-temporal."""
    for op in function.walk():
        if isinstance(op, memref.StoreOp | vector.StoreOp) and is_nontemporal(op):
            return True
        if isinstance(op, llvm.StoreOp) and op.nontemporal is not None:
            return True
    return False


class CallToLLVM(RewritePattern):
    """func.call -> llvm.call (memref arguments passed as pointers)."""

    op_types = (func.CallOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter) -> None:
        if len(op.results) > 1:
            raise LLVMLoweringError(f"convert-to-llvm: a call of {op.callee} returns "
                                    f"{len(op.results)} values")
        e = Emitter(rewriter, op)
        result = llvm_type(op.results[0].type) if op.results else None
        call = e.insert(llvm.CallOp(op.callee, *e.values(op.arguments), return_type=result))
        if op.results:
            e.finish(call.results[0])
        else:
            rewriter.erase(op)


# --------------------------------------------------------------------------- the pass


def _where(op: Operation) -> str:
    location = getattr(op, "location", None)
    text = str(location) if location is not None else ""
    return f" at {text.removeprefix('loc(').removesuffix(')')}" if "unknown" not in text else ""


def check_llvm_only(module: ModuleOp) -> None:
    """Raise for the first op that is not in the llvm dialect (one the lowering lacks)."""
    for op in module.walk():
        if op is module or op.name.startswith("llvm."):
            continue
        parent = op
        while not isinstance(parent.parent_op(), ModuleOp | None):
            parent = parent.parent_op()  # type: ignore[assignment]
        inside = getattr(parent, "sym_name", None)
        where = f" in @{inside.data}" if inside is not None and parent is not op else ""
        raise LLVMLoweringError(f"convert-to-llvm: cannot lower '{op.name}'{where}{_where(op)}")


TENSOR_LEVEL = ("hl.", "ll.", "kernel.", "ocl.")


def check_loop_level(module: ModuleOp) -> None:
    """Raise for the first op of a tensor level, else the first on tensors: the pass
    lowers what lower-kernels-to-loops makes, and would erase such a host function whole."""
    ops = list(module.walk())
    found = next((op for op in ops if op.name.startswith(TENSOR_LEVEL)), None)
    what = "is a tensor-level op"
    if found is None:
        found = next((op for op in ops if any(isinstance(t, TensorType) for t in _types(op))),
                     None)
        what = "works on tensors"
    if found is not None:
        function = found if isinstance(found, func.FuncOp) else _function_of(found)
        inside = f" in @{function.sym_name.data}" if function not in (None, found) else ""
        where = "" if (at := ir.location(found)) == "<unknown>" else f" at {at}"
        raise LLVMLoweringError(
            f"convert-to-llvm: cannot lower '{found.name}'{inside}{where}: it {what}, and "
            "this pass lowers loops on memrefs (run hl-to-kernel and lower-kernels-to-loops "
            "first)")


class ScfForToCf(ForLowering):
    """xDSL's `convert-scf-to-cf` pattern for `scf.for`, saying which ops it takes (for
    `trace.convert_module`)."""

    op_types = (scf.ForOp,)


class ScfIfToCf(IfLowering):
    """xDSL's pattern for `scf.if`."""

    op_types = (scf.IfOp,)


class ScfSwitchToCf(SwitchLowering):
    """xDSL's pattern for `scf.index_switch`."""

    op_types = (scf.IndexSwitchOp,)


def _types(op: Operation) -> list[Attribute]:
    if isinstance(op, func.FuncOp):
        return [*op.function_type.inputs.data, *op.function_type.outputs.data]
    return [*op.operand_types, *op.result_types]


def _function_of(op: Operation) -> func.FuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent


def convert_to_llvm(module: ModuleOp, *, kernels_only: bool = True, fast_math: bool = False,
                    alloca_limit: int = 32768, noalias: bool = False) -> None:
    """Lower `module` in place (see the module docstring for the steps)."""
    check_loop_level(module)
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    for function in functions:
        if kernels_only and KERNEL_ATTR not in function.attributes:
            module.body.block.erase_op(function)
    trace.convert_module(module, [ScfSwitchToCf(), ScfIfToCf(), ScfForToCf()])
    plan = AllocPlan.of(list(module.walk()), alloca_limit)
    trace.rewrite_each([op for op in module.ops if isinstance(op, func.FuncOp)],
                       FuncToLLVMFunc(noalias))
    taken = {op.sym_name.data for op in module.ops if isinstance(op, llvm.FuncOp)}
    first = module.body.block.first_op
    if plan.uses_heap:
        for declaration in heap_declarations():
            if declaration.sym_name.data not in taken:
                if first is None:
                    module.body.block.add_op(declaration)
                else:
                    module.body.block.insert_op_before(declaration, first)
    patterns: list[RewritePattern] = [
        *arith_patterns(fast_math), *math_patterns(), *memref_patterns(plan), *vector_patterns(),
        *amx_patterns(),
        BranchToLLVM(), CondBranchToLLVM(), ReturnToLLVM(), CallToLLVM(),
    ]
    trace.convert_module(module, patterns)
    trace.rewrite_each([op for op in module.walk()
                        if isinstance(op, UnrealizedConversionCastOp)],
                       ReconcileUnrealizedCastsPattern())
    check_llvm_only(module)


@register_pass
@dataclass(frozen=True)
class ConvertToLLVMPass(ModulePass):
    """convert-to-llvm: kernel loop functions into llvm.func on bare pointers, for the JIT.

    scf/cf/arith/math/memref/func ops become llvm dialect ops, ready for LLVM IR export.

    `kernels-only=false` also lowers the functions not marked `irtensor.kernel`
    (by default they are erased); `fast-math=true` adds `contract` to float
    arithmetic; `alloca-limit` is the largest local buffer, in bytes, put on the
    stack; `noalias=true` marks pointer arguments noalias.
    """

    name = "convert-to-llvm"
    kernels_only: bool = True
    fast_math: bool = False
    alloca_limit: int = 32768
    noalias: bool = False

    def __post_init__(self) -> None:
        if self.alloca_limit < 0:
            raise ValueError(f"alloca-limit must not be negative, got {self.alloca_limit}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convert_to_llvm(op, kernels_only=self.kernels_only, fast_math=self.fast_math,
                        alloca_limit=self.alloca_limit, noalias=self.noalias)


__all__ = ["ConvertToLLVMPass", "LLVMLoweringError", "convert_to_llvm"]


