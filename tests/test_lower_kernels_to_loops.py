"""lower-kernels-to-loops: the loop functions compute what the kernels compute.

The lowered module is run with xDSL's own interpreter (arith, scf, memref, func,
math) and compared with `irtensor.interp.run` on the kernel module. xDSL's
interpreter lacks some ops that kernel bodies contain; `MissingOps` below adds
them with numpy at the op's element type (the same scalar semantics as
`irtensor.interp.kernel_impls`; its sqrt/log/exp raise where numpy gives NaN,
so they are replaced too). Float sums may be added in another order than
numpy's pairwise sum, so when a module has a float sum its float results are
compared with a tolerance scaled by the number of terms; everything else is
compared exactly.

Properties: random hl programs through hl-to-kernel, with their schedules and
with random loop orders, lowered with both reduction schemes. Targeted: the
contract's shape (signature, start/stop, attribute, main, deallocs), matmul +
bias + relu (epilogue) in four orders, a padded conv (masked reads), pads,
row sums and maxes with the reduction loop outer and inner (f32, i32, i1), max
with NaN, int overflow, rank 0, zero-size axes, `kernel.index` in body and
epilogue, split [start, stop) runs, a refused non-kernel op.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf, vector
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    VectorType,
    f32,
    i1,
    i16,
    i32,
    i64,
)
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.interpreters import register_implementations
from xdsl.interpreters.builtin import xtype_for_el_type
from xdsl.interpreters.math import MathFunctions
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import TypedPtr
from xdsl.ir import Attribute, Operation

from irtensor import dtypes, ir
from irtensor.dialects.kernel import KernelOp, ScheduleAttr
from irtensor.interp import run
from irtensor.interp.kernel_impls import CASTS, SCALAR_OPS, signless_view, unsigned_view
from irtensor.passes.loops.loop_builder import loop_order
from irtensor.passes.loops.lower_kernels_to_loops import LoweringError, LowerKernelsToLoopsPass
from irtensor.pipeline import Pipeline, PipelineError
from irtensor.testing import Program, programs

# --------------------------------------------------------------------------- xDSL's interpreter

MISSING: tuple[type[Operation], ...] = (
    arith.DivfOp, arith.NegfOp, arith.MaxSIOp, arith.MinSIOp, arith.MaxUIOp,
    xmath.Exp2Op, xmath.Log2Op, xmath.SinOp, *CASTS,
)
# xDSL implements these with Python's `math`, which raises on sqrt(-1) and log(0)
# where numpy (and LLVM) give NaN and -inf: they are replaced, too.
REPLACED: tuple[type[Operation], ...] = (xmath.SqrtOp, xmath.LogOp, xmath.ExpOp)


def to_numpy_scalar(value: Any, t: Attribute) -> Any:
    dtype = dtypes.to_numpy(t)
    if isinstance(value, IntegerAttr):
        if dtypes.is_bool(t):
            return np.bool_(value.value.data != 0)
        width = dtype.itemsize * 8
        v = value.value.data & ((1 << width) - 1)
        return dtype.type(v - (1 << width) if v >= 1 << (width - 1) else v)
    return dtype.type(value.value.data)


def from_numpy_scalar(value: Any, t: Attribute) -> Attribute:
    if dtypes.is_float(t):
        return FloatAttr(float(value), t)  # type: ignore[arg-type]
    if dtypes.is_bool(t):
        return IntegerAttr.from_bool(bool(value))
    return IntegerAttr(int(value), t, truncate_bits=True)  # type: ignore[arg-type]


def numpy_impl(self: InterpreterFunctions, interp: Interpreter, op: Operation,
               args: tuple[Any, ...]) -> tuple[Any, ...]:
    """One scalar op with numpy at its element type, as kernel_impls runs it (index
    min/max, the bounds of tiles, on Python ints)."""
    if isinstance(op.results[0].type, IndexType):
        pick = min if isinstance(op, arith.MinSIOp) else max
        return (pick(args, key=lambda a: a.value.data),)
    values = [to_numpy_scalar(a, v.type) for a, v in zip(args, op.operands, strict=True)]
    t = op.results[0].type
    with np.errstate(all="ignore"):
        if isinstance(op, arith.ExtUIOp | arith.UIToFPOp):  # read as unsigned, as the kernel
            out = unsigned_view(values[0]).astype(dtypes.to_numpy(t))  # interpreter does
        elif isinstance(op, CASTS):
            out = np.asarray(values[0]).astype(dtypes.to_numpy(t))
        else:
            out = np.asarray(SCALAR_OPS[type(op)](op, *values)).astype(dtypes.to_numpy(t))
    return (from_numpy_scalar(out[()], t),)


# The ops kernel bodies use that xDSL 0.75's interpreter does not implement.
MissingOps = register_impls(type("MissingOps", (InterpreterFunctions,), {
    f"run_{op.name.replace('.', '_')}": impl(op)(numpy_impl) for op in MISSING + REPLACED
}))


FLOAT_LANE_OPS: dict[type[Operation], Any] = {
    arith.AddfOp: lambda a, b: a + b, arith.SubfOp: lambda a, b: a - b,
    arith.MulfOp: lambda a, b: a * b,
}


def lane_wise(self: InterpreterFunctions, interp: Interpreter, op: Operation,
              args: tuple[Any, ...]) -> tuple[Any, ...]:
    """A float op on scalars as before; on vectors (tuples of lanes, as `VectorOps`
    keeps them), the scalar op lane by lane."""
    if not any(isinstance(a, tuple) for a in args):
        if type(op) in FLOAT_LANE_OPS:  # what xDSL's own arith impls compute
            values = [a.value.data for a in args]
            return (FloatAttr(FLOAT_LANE_OPS[type(op)](*values), op.results[0].type),)
        return numpy_impl(self, interp, op, args)
    t = op.results[0].type
    assert isinstance(t, VectorType)
    width = t.get_shape()[0]
    spread = [a if isinstance(a, tuple) else (a,) * width for a in args]
    return (tuple(lane_wise(self, interp, _scalar_twin(op, t.element_type), lanes)[0]
                  for lanes in zip(*spread, strict=True)),)


def _scalar_twin(op: Operation, element: Attribute) -> Operation:
    """`op` on scalars of `element` (for numpy_impl, which reads the op's types)."""
    if isinstance(op, arith.NegfOp):
        return arith.NegfOp(arith.ConstantOp(FloatAttr(0.0, element)))
    zero = arith.ConstantOp(FloatAttr(0.0, element))
    return type(op)(zero, zero)  # type: ignore[call-arg]


@register_impls
class VectorOps(InterpreterFunctions):
    """The vector ops of register blocks' rows (a vector value is a tuple of lanes) and
    the views they store through."""

    @impl(vector.LoadOp)
    def run_vector_load(self, interp: Interpreter, op: vector.LoadOp,
                        args: tuple[Any, ...]) -> tuple[Any, ...]:
        base, *indices = args
        at = [i.value.data for i in indices]
        t = op.result.type
        assert isinstance(t, VectorType)
        return (tuple(FloatAttr(base.load((*at[:-1], at[-1] + k)), t.element_type)
                      for k in range(t.get_shape()[0])),)

    @impl(vector.StoreOp)
    def run_vector_store(self, interp: Interpreter, op: vector.StoreOp,
                         args: tuple[Any, ...]) -> tuple[Any, ...]:
        value, base, *indices = args
        at = [i.value.data for i in indices]
        for k, lane in enumerate(value):
            base.store((*at[:-1], at[-1] + k), lane.value.data)
        return ()

    @impl(memref.AllocaOp)
    def run_alloca(self, interp: Interpreter, op: memref.AllocaOp,
                   args: tuple[Any, ...]) -> tuple[Any, ...]:
        t = op.memref.type  # a stack slot: zeros, like memref.alloc
        assert isinstance(t, MemRefType)
        xtype = xtype_for_el_type(t.element_type, interp.index_bitwidth)
        shape = list(t.get_shape())
        return (ShapedArray(TypedPtr[Any].zeros(int(np.prod(shape)), xtype=xtype), shape),)

    @impl(memref.CollapseShapeOp)
    def run_collapse_shape(self, interp: Interpreter, op: memref.CollapseShapeOp,
                           args: tuple[Any, ...]) -> tuple[Any, ...]:
        t = op.result.type
        assert isinstance(t, MemRefType)
        return (ShapedArray(args[0].data_ptr, list(t.get_shape())),)  # the same elements

    @impl(vector.BroadcastOp)
    def run_vector_broadcast(self, interp: Interpreter, op: vector.BroadcastOp,
                             args: tuple[Any, ...]) -> tuple[Any, ...]:
        return ((args[0],) * op.vector.type.get_shape()[0],)


LaneWiseOps = register_impls(type("LaneWiseOps", (InterpreterFunctions,), {
    f"run_{op.__name__}": impl(op)(lane_wise)
    for op in (arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.NegfOp,
               arith.MaximumfOp, arith.MinimumfOp)
}))


def interpreter(module: ModuleOp) -> Interpreter:
    interp = Interpreter(module)
    register_implementations(interp, Context())
    interp.register_implementations(MathFunctions())
    interp.register_implementations(MissingOps(), override=True)
    interp.register_implementations(VectorOps())
    interp.register_implementations(LaneWiseOps(), override=True)
    return interp


def to_memref(a: np.ndarray) -> ShapedArray[Any]:
    element = dtypes.from_numpy(a.dtype)
    values = [bool(x) if a.dtype == np.bool_ else x.item() for x in a.ravel()]
    return ShapedArray(TypedPtr.new(values, xtype=element), list(a.shape))  # type: ignore[arg-type]


def from_memref(s: ShapedArray[Any], t: Attribute) -> np.ndarray:
    assert isinstance(t, MemRefType)
    dtype = dtypes.to_numpy(t.element_type)
    data = np.array(s.data)
    data = data != 0 if dtype == np.bool_ else data.astype(dtype)
    return data.reshape(tuple(t.get_shape()))


def run_loops(module: ModuleOp, inputs: Sequence[np.ndarray], fn: str = "main"
              ) -> list[np.ndarray]:
    """Call `fn` of a lowered module with xDSL's interpreter; fresh arrays out."""
    function = next(f for f in module.ops if isinstance(f, func.FuncOp)
                    and f.sym_name.data == fn)
    outs = interpreter(module).call_op(fn, tuple(to_memref(a) for a in inputs))
    types = function.function_type.outputs.data
    return [from_memref(o, t) for o, t in zip(outs, types, strict=True)]


# --------------------------------------------------------------------------- helpers


def lower(module: ModuleOp, fast: bool = True) -> ModuleOp:
    out = module.clone()
    Pipeline([LowerKernelsToLoopsPass(fast_reductions=fast)]).run(out)
    return out


def float_sum_terms(module: ModuleOp) -> int:
    """The most terms any float sum of the module adds (0: there is no float sum)."""
    n = 0
    for op in module.walk():
        if (isinstance(op, KernelOp) and op.reduction_dims and op.combiner is not None
                and op.combiner.data == "sum"):
            body_yield = op.body.block.last_op
            if body_yield is not None and dtypes.is_float(body_yield.operands[0].type):
                n = max(n, math.prod(op.sizes[d] for d in op.reduction_dims))
    return n


def assert_close(got: Sequence[np.ndarray], want: Sequence[np.ndarray], n_terms: int = 0
                 ) -> None:
    """Equal dtypes and shapes; equal values (NaN matching NaN), except that floats may
    differ by the rounding of sums of `n_terms` terms added in another order."""
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        if np.issubdtype(w.dtype, np.floating) and n_terms:
            finite = np.abs(w[np.isfinite(w)].astype(np.float64))
            scale = max(1.0, float(finite.max())) if finite.size else 1.0
            tol = 4 * n_terms * float(np.finfo(w.dtype).eps)
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64),
                                       rtol=tol, atol=tol * scale, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)


def check(kernels: ModuleOp, inputs: Sequence[np.ndarray]) -> tuple[ModuleOp, ModuleOp]:
    """Both reduction schemes give the interpreter's results; the lowered modules."""
    want = run(kernels, list(inputs))
    # loops compute in signless types (as MLIR's arith does): uint8 data is int8 there
    want = [signless_view(np.asarray(w)) for w in want]
    inputs = [signless_view(np.asarray(a)) for a in inputs]
    lowered = []
    for fast in (True, False):
        loops = lower(kernels, fast)
        assert_close(run_loops(loops, inputs), want, float_sum_terms(kernels))
        lowered.append(loops)
    return lowered[0], lowered[1]


def to_kernels(text: str) -> ModuleOp:
    module = ir.parse(text)
    Pipeline("hl-to-kernel").run(module)
    return module


def functions(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}


def rng_array(shape: Sequence[int], dtype: Any = np.float32, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-8, 9, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------- property


@given(programs(dialect="hl", dtypes=(f32, i32, i1), max_ops=6, max_dim=3))
def test_random_programs_keep_their_results(program: Program) -> None:
    kernels = program.module.clone()
    Pipeline("hl-to-kernel").run(kernels)
    check(kernels, program.inputs)


@given(programs(dialect="hl", dtypes=(dtypes.ui8, dtypes.ui32, i16, f32), max_ops=6,
                max_dim=3))
def test_random_unsigned_programs_keep_their_results(program: Program) -> None:
    kernels = program.module.clone()
    Pipeline("hl-to-kernel").run(kernels)
    check(kernels, program.inputs)


def test_unsigned_casts_read_the_unsigned_value() -> None:
    """uitofp and extui of a ui8 of 252 give 252, not -4, in the loops and the kernels."""
    kernels = to_kernels("""
func.func @main(%0: tensor<2x2xui8>) -> tensor<2x2xi32> {
  %1 = hl.cast %0 : tensor<2x2xui8> -> tensor<2x2xf32>
  %2 = hl.cast %0 : tensor<2x2xui8> -> tensor<2x2xi32>
  %3 = hl.cast %1 : tensor<2x2xf32> -> tensor<2x2xi32>
  %4 = hl.add %2, %3 : tensor<2x2xi32>, tensor<2x2xi32> -> tensor<2x2xi32>
  func.return %4 : tensor<2x2xi32>
}""")
    x = np.array([[6, 2], [0, 252]], np.uint8)
    np.testing.assert_array_equal(run(kernels, [x])[0], 2 * x.astype(np.int32))
    check(kernels, [x])


def with_orders(module: ModuleOp, seed: int) -> ModuleOp:
    """A copy of `module` whose kernels get a random loop order (a hand-written schedule)."""
    out = module.clone()
    rng = np.random.default_rng(seed)
    for op in out.walk():
        if isinstance(op, KernelOp):
            n = len(op.sizes)
            order = [int(d) for d in rng.permutation(n)]
            op.schedule = ScheduleAttr(order, [0] * n, 1, 1, [])
    return out


@given(programs(dialect="hl", dtypes=(f32, i32, i1), max_ops=6, max_dim=3,
                ops=("reduce", "movement", "elementwise")), st.integers(0, 2**32 - 1))
def test_any_loop_order_keeps_the_results(program: Program, seed: int) -> None:
    kernels = program.module.clone()
    Pipeline("hl-to-kernel").run(kernels)
    check(with_orders(kernels, seed), program.inputs)


# --------------------------------------------------------------------------- the contract

MLP = """
func.func @main(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %b1: tensor<16xf32>,
                %w2: tensor<16x3xf32>, %b2: tensor<3xf32>) -> tensor<4x3xf32> {
  %h = hl.matmul %x, %w1 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %hb = hl.add %h, %b1 : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %a = hl.relu %hb : tensor<4x16xf32>
  %o = hl.matmul %a, %w2 : tensor<4x16xf32>, tensor<16x3xf32> -> tensor<4x3xf32>
  %ob = hl.add %o, %b2 : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
  func.return %ob : tensor<4x3xf32>
}
"""


def test_kernel_functions_follow_the_contract() -> None:
    kernels = to_kernels(MLP)
    ops = [op for op in kernels.walk() if isinstance(op, KernelOp)]
    loops = lower(kernels)
    fns = functions(loops)
    names = [f"{op.sym_name.data}_{k}" for k, op in enumerate(ops)]
    assert list(fns) == [*names, "main"]
    for op, name in zip(ops, names, strict=True):
        f = fns[name]
        assert "irtensor.kernel" in f.attributes
        want = [str(v.type).replace("tensor", "memref") for v in op.inputs]
        want += [str(op.res.type).replace("tensor", "memref"), "index", "index"]
        assert [str(t) for t in f.function_type.inputs.data] == want
        assert not f.function_type.outputs.data
        start, stop = f.body.block.args[-2:]
        outer = next(o for o in f.body.block.ops if isinstance(o, scf.ForOp))
        # [start, stop), or a register block's rows: blocks up to stop - (rows - 1).
        assert outer.lb == start
        assert outer.ub == stop or stop in outer.ub.owner.operands  # type: ignore[union-attr]
    main = fns["main"]
    assert [str(t) for t in main.function_type.inputs.data] == [
        "memref<4x8xf32>", "memref<8x16xf32>", "memref<16xf32>", "memref<16x3xf32>",
        "memref<3xf32>"]
    assert [str(t) for t in main.function_type.outputs.data] == ["memref<4x3xf32>"]
    calls = [o for o in main.walk() if isinstance(o, func.CallOp)]
    assert [c.callee.root_reference.data for c in calls] == names
    for call, op in zip(calls, ops, strict=True):
        *_, out, start, stop = call.arguments
        assert isinstance(out.owner, memref.AllocOp)
        extents = [c.owner.value.value.data for c in (start, stop)]  # type: ignore[union-attr]
        assert extents == [0, op.sizes[loop_order(op)[0]]]
    assert not any(isinstance(o, KernelOp) for o in loops.walk())
    check(kernels, [rng_array(t.get_shape(), seed=i) for i, t in  # type: ignore[attr-defined]
                    enumerate(main.function_type.inputs.data)])


def test_intermediate_buffers_are_freed_after_their_last_use() -> None:
    main = functions(lower(to_kernels(MLP)))["main"]
    text = str(main)
    assert text.count("memref.alloc") == 2 and text.count("memref.dealloc") == 1
    last = list(main.body.block.ops)[-2]
    assert isinstance(last, memref.DeallocOp)
    kept = to_kernels(MLP)
    Pipeline("lower-kernels-to-loops{free-intermediates=false}").run(kept)
    assert "memref.dealloc" not in str(functions(kept)["main"])


def test_a_returned_argument_is_returned_as_it_is() -> None:
    text = """
    func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>)
        -> (tensor<2x3xf32>, tensor<2x3xf32>) {
      %s = hl.add %x, %y : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
      func.return %x, %s : tensor<2x3xf32>, tensor<2x3xf32>
    }"""
    kernels = to_kernels(text)
    loops, _ = check(kernels, [rng_array((2, 3)), rng_array((2, 3), seed=1)])
    main = functions(loops)["main"]
    returned = main.body.block.last_op
    assert returned is not None and returned.operands[0] is main.body.block.args[0]


def test_a_function_with_other_tensor_ops_is_refused() -> None:
    module = ir.parse("""
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = hl.exp %x : tensor<2xf32>
      func.return %y : tensor<2xf32>
    }""")
    with pytest.raises((LoweringError, PipelineError), match=r"hl\.exp, which is not a kernel"):
        Pipeline("lower-kernels-to-loops").run(module)


# --------------------------------------------------------------------------- kernels


def test_matmul_bias_relu_is_one_kernel_with_an_epilogue() -> None:
    kernels = to_kernels("""
    func.func @main(%a: tensor<5x7xf32>, %b: tensor<7x3xf32>, %bias: tensor<3xf32>)
        -> tensor<5x3xf32> {
      %m = hl.matmul %a, %b : tensor<5x7xf32>, tensor<7x3xf32> -> tensor<5x3xf32>
      %s = hl.add %m, %bias : tensor<5x3xf32>, tensor<3xf32> -> tensor<5x3xf32>
      %r = hl.relu %s : tensor<5x3xf32>
      func.return %r : tensor<5x3xf32>
    }""")
    (op,) = [o for o in kernels.walk() if isinstance(o, KernelOp)]
    assert op.epilogue_block is not None
    inputs = [rng_array((5, 7)), rng_array((7, 3), seed=1), rng_array((3,), seed=2)]
    # The accumulator covers the parallel dims inside the first reduction loop.
    accumulators = {(0, 2, 1): "memref<f32>", (1, 0, 2): "memref<5x3xf32>",
                    (2, 1, 0): "memref<5xf32>", (0, 1, 2): "memref<3xf32>"}
    for order, accumulator in accumulators.items():
        op.schedule = ScheduleAttr(order, [0, 0, 0], 1, 1, [])
        fast, general = check(kernels, inputs)
        text = str(functions(general)["r_5_7_3_0"])
        assert f"%accumulator = memref.alloc() : {accumulator}" in text
        assert "memref.dealloc %accumulator" in text
        assert ("iter_args" in str(fast)) == (order == (0, 2, 1))


def test_padded_conv_reads_through_a_mask() -> None:
    kernels = to_kernels("""
    func.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32> {
      %c = hl.conv2d %x, %w padding [1, 1, 1, 1]
          : tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32> -> tensor<1x2x4x4xf32>
      func.return %c : tensor<1x2x4x4xf32>
    }""")
    assert any(a.is_masked for o in kernels.walk() if isinstance(o, KernelOp) for a in o.accesses)
    x = rng_array((1, 2, 4, 4)) + 10  # no zero among the values: a pad would show
    fast, _ = check(kernels, [x, rng_array((2, 2, 3, 3), seed=1)])
    text = str(fast)
    assert "arith.select" in text and "arith.cmpi sge" in text


def test_pad_values_convert_like_the_interpreter() -> None:
    kernels = to_kernels("""
    func.func @main(%x: tensor<2x2xi32>, %b: tensor<2xi1>, %f: tensor<0x2xf32>)
        -> (tensor<4x2xi32>, tensor<3xi1>, tensor<2x2xf32>, tensor<2x4xi32>) {
      %p = hl.pad %x low [1, 0] high [1, 0] value -inf : tensor<2x2xi32> -> tensor<4x2xi32>
      %q = hl.pad %b low [1] high [0] value inf : tensor<2xi1> -> tensor<3xi1>
      %r = hl.pad %f low [1, 0] high [1, 0] value nan : tensor<0x2xf32> -> tensor<2x2xf32>
      %e = hl.exp %f : tensor<0x2xf32>
      %s = hl.pad %x low [0, 1] high [0, 1] value inf : tensor<2x2xi32> -> tensor<2x4xi32>
      func.return %p, %q, %r, %s : tensor<4x2xi32>, tensor<3xi1>, tensor<2x2xf32>, tensor<2x4xi32>
    }""")
    inputs = [rng_array((2, 2), np.int32), np.array([False, True]), np.zeros((0, 2), np.float32)]
    check(kernels, inputs)


# A row sum written as a kernel, its loop order chosen by hand.
ROW_SUM = """
func.func @main(%x: tensor<{rows}x{cols}x{t}>) -> tensor<{rows}x{t}> {{
  %r = kernel.kernel @row_{kind}(%x) space [{rows}, {cols}] reduce [1] {kind}
      reads [#kernel.access<(d0, d1) -> (d0, d1)>] writes affine_map<(d0, d1) -> (d0)>
      schedule <order {order}, tiles [0, 0], vector 1, unroll 1, parallel [0]>
      : (tensor<{rows}x{cols}x{t}>) -> tensor<{rows}x{t}> {{
  ^bb0(%v: {t}):
    kernel.yield %v : {t}
  }}
  func.return %r : tensor<{rows}x{t}>
}}
"""


def row_kernel(kind: str, t: str, order: Sequence[int], rows: int = 3, cols: int = 4
               ) -> ModuleOp:
    return ir.parse(ROW_SUM.format(kind=kind, t=t, order=list(order), rows=rows, cols=cols))


@pytest.mark.parametrize("kind", ["sum", "max"])
@pytest.mark.parametrize("t", ["f32", "i32", "i1"])
def test_row_reduction_in_both_orders(kind: str, t: str) -> None:
    dtype = dtypes.to_numpy({"f32": f32, "i32": i32, "i1": i1}[t])
    x = rng_array((3, 4), dtype)
    results = []
    for order in ([1, 0], [0, 1]):
        kernels = row_kernel(kind, t, order)
        fast, general = check(kernels, [x])
        results.append(run_loops(fast, [x])[0])
        inner = "iter_args" in str(fast)
        assert inner == (order == [0, 1])  # the fast path only when the reduction is inner
        assert "iter_args" not in str(general)
    np.testing.assert_array_equal(results[0], results[1])


def test_reduction_loop_outermost_runs_start_to_stop() -> None:
    f = functions(lower(row_kernel("sum", "f32", [1, 0])))["row_sum_0"]
    start, stop = f.body.block.args[-2:]
    init, nest = [o for o in f.body.block.ops if isinstance(o, scf.ForOp)]
    assert (init.lb, init.ub) != (start, stop)  # the parallel dim d0: 0 to 3
    assert (nest.lb, nest.ub) == (start, stop)  # the reduction dim d1 is outermost
    assert nest.body.block.args[0].name_hint == "i1"


def test_max_propagates_nan_and_starts_at_the_lowest_value() -> None:
    x = np.array([[1.0, np.nan, 3.0, -1.0], [-np.inf, -np.inf, -np.inf, -np.inf],
                  [-0.5, 2.0, np.inf, 0.0]], np.float32)
    for order in ([1, 0], [0, 1]):
        kernels = row_kernel("max", "f32", order)
        for loops in check(kernels, [x]):
            got = run_loops(loops, [x])[0]
            assert np.isnan(got[0]) and got[1] == -np.inf and got[2] == np.inf


def test_int_reduction_is_exact() -> None:
    x = np.array([[2**31 - 1, 1, 0, 5], [-(2**31), -1, 3, 4], [7, 7, 7, 7]], np.int32)
    for kind in ("sum", "max"):
        for order in ([1, 0], [0, 1]):
            check(row_kernel(kind, "i32", order), [x])  # sums wrap around like numpy


def test_rank_zero() -> None:
    kernels = to_kernels("""
    func.func @main(%x: tensor<3x4xf32>, %s: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
      %t = hl.sum %x axes [0, 1] : tensor<3x4xf32> -> tensor<f32>
      %e = hl.mul %s, %s : tensor<f32>, tensor<f32> -> tensor<f32>
      func.return %t, %e : tensor<f32>, tensor<f32>
    }""")
    fast, _ = check(kernels, [rng_array((3, 4)), np.array(1.5, np.float32)])
    fns = functions(fast)
    (elementwise,) = [f for n, f in fns.items() if n.startswith("E")]
    assert not any(isinstance(o, scf.ForOp) for o in elementwise.walk())  # no loop at rank 0
    assert "memref<f32>" in str(fns["main"].function_type)
    call = [o for o in fns["main"].walk() if isinstance(o, func.CallOp)][-1]
    assert call.arguments[-1].owner.value.value.data == 1  # type: ignore[union-attr]


def test_zero_size_axes() -> None:
    kernels = to_kernels("""
    func.func @main(%x: tensor<0x3xf32>, %y: tensor<2x0xi32>)
        -> (tensor<3xf32>, tensor<3xf32>, tensor<2xi32>, tensor<0x3xf32>) {
      %s = hl.sum %x axes [0] : tensor<0x3xf32> -> tensor<3xf32>
      %m = hl.max %x axes [0] : tensor<0x3xf32> -> tensor<3xf32>
      %n = hl.max %y axes [1] : tensor<2x0xi32> -> tensor<2xi32>
      %e = hl.exp %x : tensor<0x3xf32>
      func.return %s, %m, %n, %e : tensor<3xf32>, tensor<3xf32>, tensor<2xi32>, tensor<0x3xf32>
    }""")
    inputs = [np.zeros((0, 3), np.float32), np.zeros((2, 0), np.int32)]
    fast, _ = check(kernels, inputs)
    s, m, n, e = run_loops(fast, inputs)
    assert (s == 0).all() and (m == -np.inf).all() and (n == np.iinfo(np.int32).min).all()
    assert e.shape == (0, 3)


EPILOGUE_INDEX = """
func.func @main(%x: tensor<3x4xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %r = kernel.kernel @k(%x, %b) space [3, 4] reduce [1] max
      reads [#kernel.access<(d0, d1) -> (d0, d1)>, #kernel.access<(d0, d1) -> (d0)>]
      writes affine_map<(d0, d1) -> (d0)> epilogue_inputs 1
      schedule <order ORDER, tiles [0, 0], vector 1, unroll 1, parallel []>
      : (tensor<3x4xf32>, tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%v: f32):
    %i = kernel.index 1 : index
    %c = arith.constant 2 : index
    %lt = arith.cmpi slt, %i, %c : index
    %z = arith.constant 0.0 : f32
    %w = arith.select %lt, %v, %z : f32
    kernel.yield %w : f32
  } epilogue {
  ^bb0(%acc: f32, %bias: f32):
    %i0 = kernel.index 0 : index
    %i1 = kernel.index 1 : index
    %s = arith.addi %i0, %i1 : index
    %c0 = arith.constant 0 : index
    %eq = arith.cmpi eq, %s, %c0 : index
    %y = arith.addf %acc, %bias : f32
    %w = arith.select %eq, %bias, %y : f32
    kernel.yield %w : f32
  }
  func.return %r : tensor<3xf32>
}
"""


def test_kernel_index_in_body_and_epilogue() -> None:
    """The body sees the reduction index; the epilogue sees it at 0."""
    inputs = [rng_array((3, 4)), rng_array((3,), seed=1)]
    for order in ("[0, 1]", "[1, 0]"):
        check(ir.parse(EPILOGUE_INDEX.replace("ORDER", order)), inputs)


@pytest.mark.parametrize("order", [[0, 1], [1, 0]])
@pytest.mark.parametrize("fast", [True, False])
def test_split_ranges_give_the_full_result(order: list[int], fast: bool) -> None:
    """Calling a kernel function on [0, k) and [k, n) of a parallel outermost loop (as
    threads would) writes what one call on [0, n) writes."""
    kernels = ir.parse(EPILOGUE_INDEX.replace("ORDER", str(order)))
    loops = lower(kernels, fast)
    x, b = rng_array((3, 4)), rng_array((3,), seed=1)
    (want,) = run(kernels, [x, b])
    n = 3 if order[0] == 0 else 4
    splits = [(0, 1), (1, n)] if order[0] == 0 else [(0, n)]  # a reduction dim: full range
    interp = interpreter(loops)
    out = to_memref(np.zeros(3, np.float32))
    for start, stop in splits:
        bounds = (IntegerAttr(start, i64), IntegerAttr(stop, i64))
        interp.call_op("k_0", (to_memref(x), to_memref(b), out, *bounds))
    np.testing.assert_allclose(from_memref(out, MemRefType(f32, [3])), want, rtol=1e-6)

