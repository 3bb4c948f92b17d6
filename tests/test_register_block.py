"""Tiles, register blocks and packed copies in lower-kernels-to-loops keep each kernel's
meaning.

Properties: matmul-like kernels (batched or not, B plain or transposed, with and
without a bias + relu epilogue, f32 and i32) and padded convolutions (masked
reads, which the register block packs) of random small sizes, with random tiles
(0, 1, smaller than, dividing, not dividing and larger than their dimension),
random block shapes (`unroll` x `vector`) and loop orders that do and do not
give a register block, run with xDSL's interpreter against `irtensor.interp`.
Targeted: the schemes chosen, split [start, stop) ranges, and on device llvm
the shapes that only large sizes reach (a tiled reduction, column tiles with a
tail, a packed page-strided operand) for f32, f16, bf16 and i32, against numpy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, VectorType, f32, i64

from irtensor import ir
from irtensor.dialects.kernel import KernelOp, ScheduleAttr
from irtensor.interp import run
from irtensor.passes.kernel.schedule_blocks import block_rows
from irtensor.passes.loops.register_block import block_dims, column_widths, row_widths
from irtensor.pipeline import Pipeline
from irtensor.runtime import llvm_device
from test_lower_kernels_to_loops import (
    assert_close,
    float_sum_terms,
    from_memref,
    interpreter,
    lower,
    rng_array,
    run_loops,
    to_memref,
)

# --------------------------------------------------------------------------- kernels

EPILOGUE = """ epilogue {
  ^bb0(%s: T, %c: T):
    %y = ADD %s, %c : T
    %z = arith.constant ZERO : T
    %r = MAX %y, %z : T
    kernel.yield %r : T
  }"""


def matmul_text(batch: int, m: int, k: int, n: int, t: str = "f32", transposed: bool = False,
                epilogue: bool = False, order: Sequence[int] | None = None,
                tiles: Sequence[int] | None = None, vector: int = 1, unroll: int = 1) -> str:
    """out[b, i, j] = sum_k a[b, i, k] * w[k, j] (w[j, k] transposed), + bias, relu;
    space (b, i, k, j), reduce [2]."""
    order = list(order) if order is not None else [0, 1, 2, 3]
    tiles = list(tiles) if tiles is not None else [0, 0, 0, 0]
    w_shape, w_map = ((n, k), "(d3, d2)") if transposed else ((k, n), "(d2, d3)")
    mul, add, maximum, zero = (("arith.mulf", "arith.addf", "arith.maximumf", "0.0")
                               if t.startswith(("f", "bf")) else
                               ("arith.muli", "arith.addi", "arith.maxsi", "0"))
    ins = [f"tensor<{batch}x{m}x{k}x{t}>", f"tensor<{w_shape[0]}x{w_shape[1]}x{t}>"]
    reads = ["#kernel.access<(d0, d1, d2, d3) -> (d0, d1, d2)>",
             f"#kernel.access<(d0, d1, d2, d3) -> {w_map}>"]
    if epilogue:
        ins.append(f"tensor<{n}x{t}>")
        reads.append("#kernel.access<(d0, d1, d2, d3) -> (d3)>")
    out = f"tensor<{batch}x{m}x{n}x{t}>"
    args = ", ".join(f"%a{i}: {ty}" for i, ty in enumerate(ins))
    names = ", ".join(f"%a{i}" for i in range(len(ins)))
    tail = EPILOGUE.replace("ADD", add).replace("MAX", maximum).replace("ZERO", zero) \
        if epilogue else ""
    return f"""func.func @main({args}) -> {out} {{
  %0 = kernel.kernel @mm({names}) space [{batch}, {m}, {k}, {n}] reduce [2] sum
      reads [{', '.join(reads)}] writes affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
      {"epilogue_inputs 1" if epilogue else ""}
      schedule <order {order}, tiles {tiles}, vector {vector}, unroll {unroll}, parallel []>
      : ({', '.join(ins)}) -> {out} {{
  ^bb0(%x: {t}, %w: {t}):
    %p = {mul} %x, %w : {t}
    kernel.yield %p : {t}
  }}{tail}
  func.return %0 : {out}
}}""".replace(" T", f" {t}").replace("T\n", f"{t}\n")


def conv_text(n: int, ci: int, co: int, h: int, w: int, pad: int) -> str:
    """A padded 3x3 conv2d through hl-to-kernel: one kernel with a masked read."""
    return f"""func.func @main(%x: tensor<{n}x{ci}x{h}x{w}xf32>, %k: tensor<{co}x{ci}x3x3xf32>)
    -> tensor<{n}x{co}x{h + 2 * pad - 2}x{w + 2 * pad - 2}xf32> {{
  %c = hl.conv2d %x, %k padding [{pad}, {pad}, {pad}, {pad}]
      : tensor<{n}x{ci}x{h}x{w}xf32>, tensor<{co}x{ci}x3x3xf32>
      -> tensor<{n}x{co}x{h + 2 * pad - 2}x{w + 2 * pad - 2}xf32>
  func.return %c : tensor<{n}x{co}x{h + 2 * pad - 2}x{w + 2 * pad - 2}xf32>
}}"""


# hl-to-kernel with the window read in place: pack-operands would give a conv of rows
# shorter than two vectors (all of these) a padded copy instead of the masked read.
MASKED_WINDOWS = "hl-to-ll,fuse,split-reductions,pack-operands{pad-windows=false},cse,reorder-loops"


def the_kernel(module: ModuleOp) -> KernelOp:
    return next(op for op in module.walk() if isinstance(op, KernelOp))


def inputs_for(module: ModuleOp, seed: int) -> list[np.ndarray]:
    main = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    out = []
    for i, t in enumerate(main.function_type.inputs.data):
        dtype = np.int32 if "i32" in str(t) else np.float32
        out.append(rng_array(tuple(t.get_shape()), dtype, seed + i))  # type: ignore[attr-defined]
    return out


def check_loops(module: ModuleOp, inputs: Sequence[np.ndarray]) -> ModuleOp:
    """The loops (fast reductions) compute what the interpreter computes; the loops."""
    want = run(module, list(inputs))
    loops = lower(module)
    assert_close(run_loops(loops, inputs), want, float_sum_terms(module))
    return loops


def uses_register_block(loops: ModuleOp) -> bool:
    """A reduction loop carrying more than one accumulator, or a row of them (a vector)."""
    from xdsl.dialects import scf

    return any(isinstance(op, scf.ForOp) and (len(op.iter_args) > 1 or any(
        isinstance(a.type, VectorType) for a in op.iter_args)) for op in loops.walk())


def vector_ops(loops: ModuleOp) -> list[str]:
    return sorted({op.name for op in loops.walk() if op.name.startswith("vector.")})


# --------------------------------------------------------------------------- properties

tile = st.sampled_from([0, 0, 1, 2, 3, 4, 16])


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 2), m=st.integers(1, 7), k=st.integers(1, 6),
       n=st.integers(1, 9), dtype=st.sampled_from(["f32", "i32"]),
       transposed=st.booleans(), epilogue=st.booleans(),
       order=st.sampled_from([[0, 1, 2, 3], [1, 0, 2, 3], [0, 2, 1, 3], [0, 1, 3, 2]]),
       tiles=st.lists(tile, min_size=4, max_size=4), vector=st.integers(1, 9),
       unroll=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_tiled_and_blocked_matmuls_keep_their_results(
        batch: int, m: int, k: int, n: int, dtype: str, transposed: bool, epilogue: bool,
        order: list[int], tiles: list[int], vector: int, unroll: int, seed: int) -> None:
    module = ir.parse(matmul_text(batch, m, k, n, dtype, transposed, epilogue, order, tiles,
                                  vector, unroll))
    check_loops(module, inputs_for(module, seed))


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 2), ci=st.integers(1, 3), co=st.integers(1, 5),
       h=st.integers(1, 5), w=st.integers(1, 7), pad=st.integers(1, 2),
       tiles=st.lists(tile, min_size=8, max_size=8), vector=st.integers(1, 9),
       unroll=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_blocked_convolutions_with_packed_masked_reads_keep_their_results(
        n: int, ci: int, co: int, h: int, w: int, pad: int, tiles: list[int], vector: int,
        unroll: int, seed: int) -> None:
    module = ir.parse(conv_text(n, ci, co, h, w, pad))
    Pipeline(MASKED_WINDOWS).run(module)
    kernel = the_kernel(module)
    assert kernel.schedule is not None
    kernel.schedule = ScheduleAttr(kernel.schedule.order_dims, tiles, vector, unroll, [])
    check_loops(module, inputs_for(module, seed))


# --------------------------------------------------------------------------- targeted


def test_the_block_shape_and_its_column_widths() -> None:
    assert block_dims((0, 1, 2), (1,), (4, 4, 4)) == ([0], 0, [1], 2)
    assert block_dims((0, 2, 1), (1,), (4, 4, 4)) is None  # reduction innermost
    assert block_dims((1, 0, 2), (1,), (4, 4, 4)) is None  # a parallel loop between
    assert block_dims((1, 2), (1,), (4, 4, 4)) == ([], None, [1], 2)
    assert block_dims((1, 2, 0), (1,), (4, 4, 4)) is None  # a parallel loop between
    # the rows are the last parallel loop longer than 1: M of a batch-1 matmul
    assert block_dims((1, 0, 2, 3), (2,), (1, 256, 512, 256)) == ([1, 0], 1, [2], 3)
    assert block_dims((1, 0, 2, 3), (2,), (1, 1, 512, 256)) == ([1, 0], 0, [2], 3)
    assert column_widths(32) == [32, 16, 8, 4, 2, 1]
    assert column_widths(56) == [56, 32, 16, 8, 4, 2, 1]
    assert column_widths(32, 1024) == [32]
    assert column_widths(32, 56) == [32, 16, 8]
    assert column_widths(16, 7) == [4, 2, 1]


def test_a_conv_block_packs_its_masked_window() -> None:
    """Space (n, group, co, ci, oh, ow, kh, kw): ow by co blocks, the window packed."""
    module = ir.parse(conv_text(1, 2, 4, 4, 5, 1))
    Pipeline(MASKED_WINDOWS).run(module)
    the_kernel(module).schedule = ScheduleAttr([0, 1, 4, 2, 3, 6, 7, 5], [0] * 8, 5, 4, [])
    loops = check_loops(module, inputs_for(module, 0))
    assert uses_register_block(loops)
    packs = [op for op in loops.walk() if isinstance(op, memref.AllocOp)
             and op.memref.name_hint == "pack0"]
    assert len(packs) == 1 and str(packs[0].memref.type) == "memref<2x3x3x5xf32>"


def test_split_ranges_of_a_blocked_matmul_give_the_full_result() -> None:
    """Rows [0, 3) and [3, 7) (as two threads would run them) write what one call writes."""
    module = ir.parse(matmul_text(1, 7, 5, 11, order=[1, 0, 2, 3], tiles=[0, 0, 2, 4],
                                  vector=4, unroll=3))
    x, w = inputs_for(module, 3)
    (want,) = run(module, [x, w])
    loops = lower(module)
    interp = interpreter(loops)
    out = to_memref(np.zeros((1, 7, 11), np.float32))
    for start, stop in ((0, 3), (3, 7)):
        interp.call_op("mm_0", (to_memref(x), to_memref(w), out,
                                IntegerAttr(start, i64), IntegerAttr(stop, i64)))
    got = from_memref(out, MemRefType(f32, [1, 7, 11]))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


LARGE_CASES = [
    # (m, k, n): a tiled reduction (k > 256), column tiles with a tail (n > 512), a
    # page-strided B (n >= 1024 f32) that the block packs, odd rows.
    (7, 300, 1030),
    (13, 257, 515),
    (1, 3, 2050),
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32"])
@pytest.mark.parametrize(("m", "k", "n"), LARGE_CASES)
def test_large_blocked_matmuls_on_llvm_match_numpy(dtype: str, m: int, k: int, n: int,
                                                   tmp_path: object,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_CACHE_DIR", str(tmp_path))
    import ml_dtypes  # noqa: F401 (numpy learns bfloat16)

    t = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "i32"}[dtype]
    text = f"""func.func @main(%a: tensor<{m}x{k}x{t}>, %b: tensor<{k}x{n}x{t}>)
        -> tensor<{m}x{n}x{t}> {{
      %0 = hl.matmul %a, %b : tensor<{m}x{k}x{t}>, tensor<{k}x{n}x{t}> -> tensor<{m}x{n}x{t}>
      func.return %0 : tensor<{m}x{n}x{t}>
    }}"""
    module = ir.parse(text)
    Pipeline("hl-to-kernel").run(module)
    rng = np.random.default_rng(0)
    if t == "i32":
        a, b = (rng.integers(-8, 9, s).astype(np.int32) for s in ((m, k), (k, n)))
    else:
        a, b = (rng.standard_normal(s).astype(np.dtype(dtype)) for s in ((m, k), (k, n)))
    (got,) = llvm_device.run(module, [a, b])
    (want,) = run(module, [a, b])
    if t == "i32":
        np.testing.assert_array_equal(got, want)
    else:
        exact = a.astype(np.float64) @ b.astype(np.float64)
        # Low-precision sums round at every step, in another order than the interpreter.
        tol = {"f32": 1e-4, "f16": 0.05, "bf16": 0.3}[t] * np.sqrt(k)
        np.testing.assert_allclose(got.astype(np.float64), exact, rtol=0, atol=tol)
        np.testing.assert_allclose(want.astype(np.float64), exact, rtol=0, atol=tol)


@settings(max_examples=12, deadline=None)
@given(m=st.integers(2, 13), k=st.integers(2, 40), n=st.integers(256, 300),
       column_tile=st.sampled_from([0, 24, 64, 100]), vector=st.sampled_from([4, 8, 16]),
       unroll=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_panel_packed_matmuls_on_llvm_match_numpy(m: int, k: int, n: int, column_tile: int,
                                                  vector: int, unroll: int, seed: int) -> None:
    """B's rows 1 KiB apart or more: the block copies each column tile of B in panels of
    `vector` columns (`[column // vector, k, column % vector]`), the last one partial
    where the tile is not a multiple of it; compiled, the block reads its runs there."""
    module = ir.parse(matmul_text(1, m, k, n, tiles=[0, 0, 0, column_tile], vector=vector,
                                  unroll=unroll))
    extent = column_tile or n
    panels = -(-extent // vector)
    assert f"memref<{panels}x{k}x{vector}xf32>" in ir.to_text(lower(module.clone()))
    a, b = inputs_for(module, seed)
    (got,) = llvm_device.run(module, [a, b])
    exact = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got.astype(np.float64), exact, rtol=1e-5, atol=1e-4)


def test_blocks_take_six_rows_and_the_rest_as_one_block() -> None:
    """6 rows, at most the rows there are; a block whose columns a conv's taps read (and
    that the threads do not split) keeps a count from 6 down to 4 that divides them. The
    rows left over are one block where their count is known, else one at a time."""
    assert [block_rows(n) for n in (1, 4, 6, 64, 1024)] == [1, 4, 6, 6, 6]
    assert [block_rows(n, windowed=True) for n in (64, 1024, 40, 7)] == [4, 4, 5, 6]
    assert row_widths(6, 64) == [6, 4]
    assert row_widths(6, 60) == [6]
    assert row_widths(6, 4) == [4]
    assert row_widths(6, None) == [6, 1]  # the threads' rows: a remainder of any size
    assert row_widths(1, None) == [1]


@settings(max_examples=10, deadline=None)
@given(n=st.integers(2, 3), ci=st.integers(4, 40), co=st.integers(7, 40),
       points=st.integers(65, 100), seed=st.integers(0, 2**16))
def test_pointwise_convs_blocked_by_the_model_match_numpy_on_llvm(
        n: int, ci: int, co: int, points: int, seed: int) -> None:
    """A 1x1 conv's register block, as reorder-loops chooses it (its rows the output
    channels, inside the batch loop the threads split), is 6 output channels, not a count
    that divides them, the rest as one block; compiled, it computes the conv. (Rows of
    more than four vectors of points even with AVX-512: shorter ones are one block across,
    with fewer rows where it ends in a part of a vector, or blocked across the channels.)"""
    from irtensor import Tensor

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, ci, 1, points)).astype(np.float32)
    w = rng.standard_normal((co, ci, 1, 1)).astype(np.float32)
    module = ir.parse(f"""func.func @main(%x: tensor<{n}x{ci}x1x{points}xf32>,
                %k: tensor<{co}x{ci}x1x1xf32>) -> tensor<{n}x{co}x1x{points}xf32> {{
  %c = hl.conv2d %x, %k : tensor<{n}x{ci}x1x{points}xf32>, tensor<{co}x{ci}x1x1xf32>
      -> tensor<{n}x{co}x1x{points}xf32>
  func.return %c : tensor<{n}x{co}x1x{points}xf32>
}}""")
    Pipeline("hl-to-kernel").run(module)
    (conv,) = [op for op in module.walk() if isinstance(op, KernelOp)]
    assert conv.schedule is not None and conv.schedule.unroll.data == 6, conv.schedule
    got = Tensor(x, device="llvm").conv2d(Tensor(w, device="llvm")).numpy()
    exact = np.einsum("oc,ncp->nop", w[:, :, 0, 0].astype(np.float64),
                      x[:, :, 0, :].astype(np.float64))[:, :, None, :]
    np.testing.assert_allclose(got, exact, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_a_tiled_reduction_applies_the_epilogue_in_its_last_tile(dtype: str) -> None:
    """K = 7 in tiles of 3 (the last one short): the partial sums wait in the output and
    bias + relu apply once, after the last tile."""
    module = ir.parse(matmul_text(2, 5, 7, 9, dtype, epilogue=True, tiles=[0, 0, 3, 4],
                                  vector=4, unroll=2))
    loops = check_loops(module, inputs_for(module, 5))
    assert uses_register_block(loops)


# --------------------------------------------------------------------------- vector rows


@pytest.mark.parametrize(("dtype", "transposed", "vectors"), [
    ("f32", False, True), ("f32", True, False), ("i32", False, False)])
def test_rows_are_vectors_where_the_kernel_allows(dtype: str, transposed: bool,
                                                  vectors: bool) -> None:
    """f32 with B's columns contiguous: one vector per row, loads of B's run, a
    vector epilogue and vector stores; B transposed (its columns a row apart) or an
    i32 sum: the scalar block. Both give the interpreter's results."""
    module = ir.parse(matmul_text(1, 5, 4, 9, dtype, transposed=transposed, epilogue=True,
                                  vector=4, unroll=2))
    loops = check_loops(module, inputs_for(module, 1))
    assert uses_register_block(loops)
    if vectors:
        assert vector_ops(loops) == ["vector.broadcast", "vector.load", "vector.store"]
        stores = [op for op in loops.walk() if isinstance(op, memref.StoreOp)]
        assert all(op.memref.type.get_shape() != [1, 5, 9] for op in stores)  # type: ignore[attr-defined]
    else:
        assert vector_ops(loops) == []


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vector_rows_on_llvm_keep_numpys_ties_and_nans(dtype: type) -> None:
    """maximum/minimum in a vector epilogue as np.maximum/np.minimum: between +0 and -0
    the second operand, NaN from either side (the columns of B that are zeros give
    +0 sums)."""
    from irtensor import Tensor

    rng = np.random.default_rng(4)
    a = rng.standard_normal((7, 5)).astype(dtype)
    b = rng.standard_normal((5, 24)).astype(dtype)
    b[:, ::3] = 0.0
    other = rng.standard_normal(24).astype(dtype)
    other[::3] = -0.0
    other[1::6] = np.nan
    product = a @ b
    for got, want in [
        ((Tensor(a) @ Tensor(b)).maximum(Tensor(other)).numpy(), np.maximum(product, other)),
        ((Tensor(a) @ Tensor(b)).minimum(Tensor(other)).numpy(), np.minimum(product, other)),
        (Tensor(other).maximum(Tensor(a) @ Tensor(b)).numpy(), np.maximum(other, product)),
    ]:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert np.array_equal(np.signbit(got), np.signbit(want))
    program = (Tensor(a) @ Tensor(b)).maximum(Tensor(other)).ir("loops")
    assert "vector.store" in program and "arith.maximumf" in program



@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vector_rows_on_llvm_keep_ties_with_constant_zeros(dtype: type) -> None:
    """A relu's max(x, 0.0) lowers to llvm.maximum alone (a constant settles the zeros'
    tie); a constant -0.0 (+0.0 for the minimum) keeps the mask. Both give numpy's signs
    on the +0 and -0 sums of a matmul's zero columns (negated by a vector multiply)."""
    from irtensor import Tensor

    rng = np.random.default_rng(5)
    a = rng.standard_normal((7, 5)).astype(dtype)
    b = rng.standard_normal((5, 24)).astype(dtype)
    b[:, ::3] = 0.0
    sign = np.where(np.arange(24) % 2 == 0, -1.0, 1.0).astype(dtype)
    product = (a @ b) * sign
    for constant in (0.0, -0.0, 2.0):
        for name in ("maximum", "minimum"):
            got = getattr((Tensor(a) @ Tensor(b)) * Tensor(sign), name)(constant).numpy()
            want = getattr(np, name)(product, dtype(constant))
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
            assert np.array_equal(np.signbit(got), np.signbit(want)), (name, constant)
    assert np.signbit(product[:, 0]).all() and not np.signbit(product[:, 3]).any()
    program = ((Tensor(a) @ Tensor(b)) * Tensor(sign)).relu().ir("loops")
    assert "vector.store" in program and "arith.maximumf" in program

TRAILING_ONES = (
    "func.func @main(%a: tensor<5x7x1xf32>, %w: tensor<7x11xf32>, %bias: tensor<11xf32>)"
    " -> tensor<5x11x1xf32> {\n"
    "  %0 = kernel.kernel @dense(%a, %w, %bias) space [5, 7, 11] reduce [1] sum reads ["
    "#kernel.access<(d0, d1, d2) -> (d0, d1, 0)>, #kernel.access<(d0, d1, d2) -> (d1, d2)>, "
    "#kernel.access<(d0, d1, d2) -> (d2)>] writes affine_map<(d0, d1, d2) -> (d0, d2, 0)> "
    "epilogue_inputs 1 schedule <order [0, 1, 2], tiles [0, 0, 0], vector 4, unroll 2, "
    "parallel [0]> : (tensor<5x7x1xf32>, tensor<7x11xf32>, tensor<11xf32>) "
    "-> tensor<5x11x1xf32> {"
    """
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    kernel.yield %m : f32
  } epilogue {
  ^bb0(%s: f32, %c: f32):
    %t = arith.addf %s, %c : f32
    %zero = arith.constant 0.000000e+00 : f32
    %r = arith.maximumf %t, %zero : f32
    kernel.yield %r : f32
  }
  func.return %0 : tensor<5x11x1xf32>
}""")


def test_rows_store_through_a_view_without_trailing_unit_dims() -> None:
    """The output [5, 11, 1] (a dense layer as fusion leaves it) is stored row by row
    through one memref.collapse_shape to [5, 11], in the interpreter and on llvm."""
    module = ir.parse(TRAILING_ONES)
    inputs = inputs_for(module, 2)
    loops = check_loops(module, inputs)
    assert vector_ops(loops) == ["vector.broadcast", "vector.load", "vector.store"]
    views = [op for op in loops.walk() if isinstance(op, memref.CollapseShapeOp)]
    assert [str(v.result.type) for v in views] == ["memref<5x11xf32>"]
    (got,) = llvm_device.run(module, inputs)
    (want,) = run(module, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", ["llvm", "opencl"])
def test_an_epilogue_the_rows_cannot_run_goes_lane_by_lane(device: str) -> None:
    """A matmul + sigmoid: the body's rows are vectors, the epilogue (exp, a division)
    is not one the rows run, so each row's sums go through the scalar epilogue lane by
    lane from a stack row; the results are the interpreter's on llvm and opencl."""
    from conftest import opencl_unavailable
    from irtensor import Tensor

    if device == "opencl" and (why := opencl_unavailable()) is not None:
        pytest.skip(f"no OpenCL device builds programs here: {why}")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((13, 20)).astype(np.float32)
    b = rng.standard_normal((20, 40)).astype(np.float32)
    y = ((Tensor(a, device=device) @ Tensor(b, device=device)) * 0.1).sigmoid()
    if device == "llvm":
        loops = y.ir("loops")
        assert "vector.load" in loops and "scf.for %lane" in loops
    want = ((Tensor(a, device="interp") @ Tensor(b, device="interp")) * 0.1).sigmoid()
    np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
