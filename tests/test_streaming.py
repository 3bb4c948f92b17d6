"""Streaming stores (passes/loops/streaming.py): a large elementwise output written
non-temporally, in blocks of four cache lines, with plain head and tail points.

The loops keep the kernel's results under xDSL's interpreter for any [start, stop) the
threads take; on llvm and opencl the program gives the interpreter's results; the
compiled kernel stores non-temporally and fences; an output that is not line-aligned is
written right.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import vector
from xdsl.dialects.builtin import IntegerAttr, MemRefType, f32, f64, i64

from conftest import device_param
from irtensor import host, ir
from irtensor.interp import run
from irtensor.passes.llvm import jit
from irtensor.runtime import llvm_device, opencl_device
from test_lower_kernels_to_loops import from_memref, functions, interpreter, lower, to_memref

OPS = ("arith.addf", "arith.subf", "arith.mulf", "arith.maximumf")


def kernel_text(rows: int, columns: int, dtype: str, ops: list[str], broadcast: bool) -> str:
    """An elementwise kernel over [rows, columns] (or [columns] when rows is 0) reading
    x and y (y along the columns only when `broadcast`), folding `ops` over them."""
    space = [rows, columns] if rows else [columns]
    dims = ", ".join(f"d{i}" for i in range(len(space)))
    shape = "x".join(map(str, space))
    full = f"#kernel.access<({dims}) -> ({dims})>"
    last = f"#kernel.access<({dims}) -> (d{len(space) - 1})>"
    y_type = f"tensor<{columns}x{dtype}>" if broadcast else f"tensor<{shape}x{dtype}>"
    body, value = [], "%x"
    for i, op in enumerate(ops):
        body.append(f"    %v{i} = {op} {value}, {'%y' if i % 2 == 0 else '%x'} : {dtype}")
        value = f"%v{i}"
    zeros = ", ".join("0" for _ in space)
    order = ", ".join(str(i) for i in range(len(space)))
    return f"""
func.func @main(%a: tensor<{shape}x{dtype}>, %b: {y_type}) -> tensor<{shape}x{dtype}> {{
  %r = kernel.kernel @E(%a, %b) space [{", ".join(map(str, space))}] reads [{full}, \
{last if broadcast else full}] writes affine_map<({dims}) -> ({dims})> schedule <order \
[{order}], tiles [{zeros}], vector 8, unroll 1, parallel [0]> : (tensor<{shape}x{dtype}>, \
{y_type}) -> tensor<{shape}x{dtype}> {{
  ^bb0(%x: {dtype}, %y: {dtype}):
{chr(10).join(body)}
    kernel.yield {value} : {dtype}
  }}
  func.return %r : tensor<{shape}x{dtype}>
}}"""


@st.composite
def kernels(draw: st.DrawFn) -> tuple[str, list[np.ndarray]]:
    dtype = draw(st.sampled_from(["f32", "f64"]))
    line = 16 if dtype == "f32" else 8
    rows = draw(st.integers(0, 3))
    columns = draw(st.integers(0, 300)) if rows == 0 else line * draw(st.integers(1, 12))
    ops = draw(st.lists(st.sampled_from(OPS), min_size=1, max_size=3))
    broadcast = rows > 0 and draw(st.booleans())
    text = kernel_text(rows, columns, dtype, ops, broadcast)
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    shape = (rows, columns) if rows else (columns,)
    numpy_type = np.float32 if dtype == "f32" else np.float64
    x = rng.standard_normal(shape).astype(numpy_type)
    y = rng.standard_normal((columns,) if broadcast else shape).astype(numpy_type)
    return text, [x, y]


def streamed_stores(module: ir.ModuleOp) -> int:
    return sum(1 for op in module.walk() if isinstance(op, vector.StoreOp)
               and op.nontemporal is not None and op.nontemporal.value.data)


@pytest.fixture
def stream_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_STREAM_BYTES", "1")


@settings(max_examples=40, deadline=None)
@given(kernel=kernels(), cuts=st.lists(st.integers(0, 300), max_size=3))
def test_streamed_loops_keep_the_results_over_any_split(
        kernel: tuple[str, list[np.ndarray]], cuts: list[int]) -> None:
    """Called on the pieces of its outermost loop that threads would take (any cuts, so
    heads and tails of any length), the streamed kernel function writes what the kernel
    computes there, exactly (each point computes the same arithmetic), and nothing
    outside its piece."""
    text, inputs = kernel
    module = ir.parse(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IRTENSOR_STREAM_BYTES", "1")
        loops = lower(module)
    (want,) = run(module, inputs)
    outer = inputs[0].shape[0]
    blocks = (inputs[0].shape[-1] // (16 if inputs[0].dtype == np.float32 else 8)) // 4
    if inputs[0].ndim == 2 or blocks:
        assert streamed_stores(loops) > 0
    bounds = sorted({0, outer, *(min(c, outer) for c in cuts)})
    interp = interpreter(loops)
    (name,) = [n for n in functions(loops) if n != "main"]
    element = f32 if want.dtype == np.float32 else f64
    for start, stop in itertools.pairwise(bounds):
        out = to_memref(np.full_like(want, np.nan))
        interp.call_op(name, (*(to_memref(a) for a in inputs), out,
                              IntegerAttr(start, i64), IntegerAttr(stop, i64)))
        got = from_memref(out, MemRefType(element, want.shape))
        np.testing.assert_array_equal(got[start:stop], want[start:stop])
        assert np.isnan(got[:start]).all() and np.isnan(got[stop:]).all()


@pytest.mark.parametrize("device", [device_param("llvm"), device_param("opencl")])
@settings(max_examples=15, deadline=None)
@given(kernel=kernels())
def test_streamed_kernels_run_as_the_interpreter_says(
        device: str, kernel: tuple[str, list[np.ndarray]]) -> None:
    """On llvm (its loop split across the threads) the streamed kernel gives the
    interpreter's results exactly; opencl, which stores plainly, gives them too."""
    text, inputs = kernel
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IRTENSOR_STREAM_BYTES", "1")
        (want,) = run(ir.parse(text), inputs)
        device_run = llvm_device.run if device == "llvm" else opencl_device.run
        (got,) = device_run(ir.parse(text), inputs)
    np.testing.assert_array_equal(got, want)


@pytest.mark.skipif(not host.is_x86(), reason="x86's non-temporal stores and sfence")
def test_the_compiled_kernel_stores_non_temporally_and_fences(stream_everything: None) -> None:
    module = ir.parse(kernel_text(0, 4096, "f32", ["arith.addf"], False))
    kernel = next(op for op in module.walk() if op.name == "kernel.kernel")
    compiled = llvm_device.compile_kernel(kernel)  # type: ignore[arg-type]
    assembly = jit.assembly(compiled.jit)
    assert re.search(r"\bmovnt\w*", assembly), "a non-temporal store"
    assert "sfence" in assembly
    assert "!nontemporal" in compiled.jit.llvm_ir


def test_an_output_that_is_not_line_aligned_is_written_right(stream_everything: None) -> None:
    """Non-temporal vector stores at element alignment: an output one float past a line
    boundary is written whole, and nothing before or after it."""
    n = 1000
    module = ir.parse(kernel_text(0, n, "f32", ["arith.mulf", "arith.subf"], False))
    kernel = next(op for op in module.walk() if op.name == "kernel.kernel")
    compiled = llvm_device.compile_kernel(kernel)  # type: ignore[arg-type]
    x, y = (np.random.default_rng(s).standard_normal(n).astype(np.float32) for s in (1, 2))
    backing = np.full(n + 32, 7.0, np.float32)
    offset = (-backing.ctypes.data // 4) % 16 + 1  # one float past a 64-byte boundary
    out = backing[offset:offset + n]
    llvm_device.call(compiled, [x, y], out)
    np.testing.assert_array_equal(out, x * y - x)
    assert (backing[:offset] == 7.0).all() and (backing[offset + n:] == 7.0).all()


def test_small_outputs_math_bodies_and_ragged_rows_store_plainly(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_STREAM_BYTES", str(4096 * 4))
    assert streamed_stores(lower(ir.parse(kernel_text(0, 4096, "f32", ["arith.addf"],
                                                      False)))) == 4
    assert streamed_stores(lower(ir.parse(kernel_text(0, 4095, "f32", ["arith.addf"],
                                                      False)))) == 0
    assert streamed_stores(lower(ir.parse(kernel_text(2, 4100, "f32", ["arith.addf"],
                                                      False)))) == 0
    exp = kernel_text(0, 8192, "f32", ["arith.addf"], False).replace(
        "%v0 = arith.addf %x, %y", "%v0 = math.exp %x")
    assert streamed_stores(lower(ir.parse(exp))) == 0
    monkeypatch.setenv("IRTENSOR_STREAM_BYTES", "0")
    assert streamed_stores(lower(ir.parse(kernel_text(0, 4096, "f32", ["arith.addf"],
                                                      False)))) == 0


def test_rank_zero_and_empty_outputs_store_plainly(stream_everything: None) -> None:
    """A rank-0 output has no innermost loop to stream (this raised once); an empty one
    writes nothing."""
    from irtensor import Tensor

    x = np.array(2.5, np.float32)
    np.testing.assert_array_equal((Tensor(x, device="llvm") * 3).numpy(), x * 3)
    empty = np.zeros((0, 32), np.float32)
    assert (Tensor(empty, device="llvm") + 1).numpy().shape == (0, 32)
