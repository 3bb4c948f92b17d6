"""The LLVM JIT: compiling for the host, calling with checks, assembly, objects, threads."""

from __future__ import annotations

import pickle
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import ml_dtypes
import numpy as np
import pytest

from irtensor.ir import parse
from irtensor.passes.llvm import jit as llvm_jit
from irtensor.passes.llvm import opt_level

ADD = """func.func @add(%x: memref<64x32xf32>, %y: memref<64x32xf32>, %out: memref<64x32xf32>,
                   %start: index, %stop: index) attributes {irtensor.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %start to %stop step %c1 {
    scf.for %j = %c0 to %c32 step %c1 {
      %a = memref.load %x[%i, %j] : memref<64x32xf32>
      %b = memref.load %y[%i, %j] : memref<64x32xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %out[%i, %j] : memref<64x32xf32>
    }
  }
  func.return
}"""

SCALARS = """func.func @axpy(%x: memref<8xf32>, %out: memref<8xf32>, %a: f32, %b: bf16, %flag: i1,
                    %n: i32, %start: index, %stop: index) attributes {irtensor.kernel} {
  %c1 = arith.constant 1 : index
  %bf = arith.extf %b : bf16 to f32
  %nf = arith.sitofp %n : i32 to f32
  scf.for %i = %start to %stop step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %s = arith.mulf %v, %a : f32
    %t = arith.addf %s, %bf : f32
    %u = arith.addf %t, %nf : f32
    %r = arith.select %flag, %u, %v : f32
    memref.store %r, %out[%i] : memref<8xf32>
  }
  func.return
}"""


@pytest.fixture(scope="module")
def add() -> llvm_jit.KernelFunction:
    return llvm_jit.compile_module(parse(ADD)).function("add")


def arrays(n: int = 3) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal((64, 32)).astype(np.float32) for _ in range(n)]


def test_call_on_numpy_arrays(add: llvm_jit.KernelFunction) -> None:
    x, y, out = arrays()
    add(x, y, out, 0, 64)
    np.testing.assert_array_equal(out, x + y)
    assert "add(%x: 64x32 float32, %y: 64x32 float32, %out: 64x32 float32" in repr(add)


@pytest.mark.parametrize(("args", "error", "message"), [
    (lambda x, y, o: (x, y, o, 0), TypeError, r"@add takes 5 arguments \(%x: 64x32"),
    (lambda x, y, o: (x.astype(np.float64), y, o, 0, 64), TypeError,
     r"argument 0 \(%x\): expected dtype float32, got float64"),
    (lambda x, y, o: (x, y[:, :16], o, 0, 64), ValueError,
     r"argument 1 \(%y\): expected shape \(64, 32\), got \(64, 16\)"),
    (lambda x, y, o: (x, y, np.asfortranarray(o), 0, 64), ValueError, "not C-contiguous"),
    (lambda x, y, o: (x.tolist(), y, o, 0, 64), TypeError, "expected a numpy array, got list"),
    (lambda x, y, o: (x, y, o, 0.0, 64), TypeError, r"argument 3 \(%start\): expected an integ"),
    (lambda x, y, o: (x, y, o, True, 64), TypeError, "expected an integer, got bool"),
    (lambda x, y, o: (x, y, o, 0, 2**64), ValueError, "does not fit in index"),
])
def test_bad_arguments_raise_naming_the_argument(
        add: llvm_jit.KernelFunction, args: Callable[..., tuple[object, ...]],
        error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        add(*args(*arrays()))


def test_read_only_and_misaligned_arrays(add: llvm_jit.KernelFunction) -> None:
    x, y, out = arrays()
    x.flags.writeable = False  # inputs may be read-only
    add(x, y, out, 0, 64)
    out.flags.writeable = False
    with pytest.raises(ValueError, match=r"argument 2 \(%out\).*read-only"):
        add(x, y, out, 0, 64)
    raw = np.zeros(64 * 32 * 4 + 1, np.uint8)
    misaligned = raw[1:].view(np.float32).reshape(64, 32)
    assert not misaligned.flags.aligned
    with pytest.raises(ValueError, match="not aligned"):
        add(misaligned, y, y.copy(), 0, 64)


def test_unknown_function_is_a_key_error() -> None:
    jit = llvm_jit.compile_module(parse(ADD))
    with pytest.raises(KeyError, match=r"no function @sub .*it has @add"):
        jit.function("sub")


def test_scalar_arguments() -> None:
    fn = llvm_jit.compile_module(parse(SCALARS)).function("axpy")
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    fn(x, out, 2.0, 0.3, True, 5, 0, 8)
    b = np.float32(np.float32(0.3).astype(ml_dtypes.bfloat16))
    np.testing.assert_array_equal(out, (x * 2 + b) + 5)
    fn(x, out, np.float32(2), 1, False, np.int32(5), 0, 8)
    np.testing.assert_array_equal(out, x)
    with pytest.raises(TypeError, match=r"argument 4 \(%flag\): expected a bool"):
        fn(x, out, 2.0, 0.3, 1, 5, 0, 8)
    with pytest.raises(ValueError, match="does not fit in i32"):
        fn(x, out, 2.0, 0.3, True, 2**40, 0, 8)


def test_threads_share_a_kernel_on_disjoint_ranges(add: llvm_jit.KernelFunction) -> None:
    x, y, out = arrays()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda r: add(x, y, out, *r), [(0, 32), (32, 64)]))
    np.testing.assert_array_equal(out, x + y)


def test_avx512_is_used_for_a_large_elementwise_kernel() -> None:
    target = llvm_jit.host_target()
    if not target.has("avx512f"):
        pytest.skip(f"the host CPU ({target.cpu}) has no AVX-512F")
    text = ADD.replace("64x32", "256x1024").replace("%c32 = arith.constant 32",
                                                    "%c32 = arith.constant 1024")
    asm = llvm_jit.assembly(llvm_jit.compile_module(parse(text)))
    assert re.search(r"vaddps\s+.*zmm", asm), "no 512-bit vector add in the assembly"


def test_target_and_ir_text() -> None:
    target = llvm_jit.host_target()
    description = llvm_jit.target_description()
    assert target.cpu in description and target.triple in description
    assert target.features in description
    ir_text = llvm_jit.llvm_ir(parse(ADD))
    assert re.search(r'define void @"?add"?\(ptr %"?\.?\w*"?, ptr', ir_text)
    jit = llvm_jit.compile_module(ir_text)  # LLVM IR text: pointers are unchecked arrays
    fn = jit.function("add")
    assert [p.buffer for p in fn.params] == [True, True, True, False, False]
    x, y, out = arrays()
    fn(x, y, out, 0, 64)
    np.testing.assert_array_equal(out, x + y)
    assert "fadd" in jit.optimized_ir and target.triple in jit.optimized_ir


def test_object_code_loads_without_compiling() -> None:
    jit = llvm_jit.compile_module(parse(ADD))
    data = jit.object_code()
    assert data
    signatures = pickle.loads(pickle.dumps(jit.signatures))
    again = llvm_jit.load_object(data, signatures)
    x, y, out = arrays()
    again.function("add")(x, y, out, 0, 64)
    np.testing.assert_array_equal(out, x + y)


def test_missing_symbols_are_reported_not_called() -> None:
    text = "declare void @no_such_function()\ndefine void @f() {\n  call void " \
           "@no_such_function()\n  ret void\n}\n"
    with pytest.raises(RuntimeError, match="@no_such_function"):
        llvm_jit.compile_module(text)


def test_f16_scalars_are_refused_at_lookup() -> None:
    text = """func.func @k(%h: f16, %o: memref<1xf16>, %start: index, %stop: index)
                  attributes {irtensor.kernel} {
      %c0 = arith.constant 0 : index
      memref.store %h, %o[%c0] : memref<1xf16>
      func.return
    }"""
    with pytest.raises(TypeError, match="scalars of type f16"):
        llvm_jit.compile_module(parse(text)).function("k")


def test_compile_times_are_small() -> None:
    """Compile time of a small elementwise kernel and a matmul (reported in the docs)."""
    from test_convert_to_llvm import matmul_text

    for text in (ADD, matmul_text(64, 64, 64)):
        module = parse(text)
        llvm_jit.compile_module(module)  # warm
        start = time.perf_counter()
        jit = llvm_jit.compile_module(module)
        seconds = time.perf_counter() - start
        assert seconds < 2.0, jit.timings
        assert set(jit.timings) >= {"lower", "optimize", "codegen", "total"}


COPY = """func.func @copy(%x: memref<64x32xf32>, %out: memref<64x32xf32>, %start: index,
                    %stop: index) attributes {irtensor.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %start to %stop step %c1 {
    scf.for %j = %c0 to %c32 step %c1 {
      %a = memref.load %x[%i, %j] : memref<64x32xf32>
      memref.store %a, %out[%i, %j] : memref<64x32xf32>
    }
  }
  func.return
}"""

ROWS = """func.func @rows(%x: memref<64x32xf32>, %out: memref<64x32xf32>, %start: index,
                    %stop: index) attributes {irtensor.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %start to %stop step %c1 {
    scf.for %j = %c0 to %c32 step %c8 {
      %a = vector.load %x[%i, %j] : memref<64x32xf32>, vector<8xf32>
      %d = arith.addf %a, %a : vector<8xf32>
      vector.store %d, %out[%i, %j] : memref<64x32xf32>, vector<8xf32>
    }
  }
  func.return
}"""


def test_the_level_follows_what_llvm_has_left_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    """O3 for float arithmetic in scalar loops (LLVM vectorises them) and for code on x86
    intrinsics; O2 for code already in vectors and for kernels that only move data."""
    monkeypatch.delenv(opt_level.OPT_LEVEL_ENV, raising=False)
    x, y, out = arrays()
    add = llvm_jit.compile_module(parse(ADD))
    add.function("add")(x, y, out, 0, 64)
    np.testing.assert_array_equal(out, x + y)
    copy = llvm_jit.compile_module(parse(COPY))
    copy.function("copy")(x, out, 0, 64)
    np.testing.assert_array_equal(out, x)
    rows = llvm_jit.compile_module(parse(ROWS))
    rows.function("rows")(x, out, 0, 64)
    np.testing.assert_array_equal(out, x + x)
    assert (add.opt_level, copy.opt_level, rows.opt_level) == (3, 2, 2)
    tiles = "declare void @llvm.x86.tilerelease()\ndefine void @f() {\n  ret void\n}\n"
    assert opt_level.kernel_opt_level(tiles) == 3
    assert llvm_jit.compile_module(parse(ADD), opt_level=1).opt_level == 1


def test_a_small_kernel_skips_llvms_ir_passes_and_is_made_at_o2(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A function marked irtensor.small compiles with no IR optimisation (its loop stays
    scalar and rolled) and machine code at O2; on x86 intrinsics it keeps O3; a level
    IRTENSOR_LLVM_OPT fixes holds for both; the mark survives the disk cache's meta."""
    monkeypatch.delenv(opt_level.OPT_LEVEL_ENV, raising=False)
    x, y, out = arrays()
    small = llvm_jit.compile_module(parse(ADD.replace("{irtensor.kernel}",
                                                      "{irtensor.kernel, irtensor.small}")))
    small.function("add")(x, y, out, 0, 64)
    np.testing.assert_array_equal(out, x + y)
    assert (small.opt_level, small.codegen_level) == (0, 2)
    assert "<8 x float>" not in small.optimized_ir and "fadd float" in small.optimized_ir
    assert "add:" in small.assembly()
    large = llvm_jit.compile_module(parse(ADD))
    assert (large.opt_level, large.codegen_level) == (3, None)
    tiles = "declare void @llvm.x86.tilerelease()\ndefine void @f() {\n  ret void\n}\n"
    assert opt_level.kernel_levels(tiles, small=True) == (3, 3)
    assert opt_level.kernel_levels("", small=True) == (0, 2)
    monkeypatch.setenv(opt_level.OPT_LEVEL_ENV, "1")
    assert opt_level.kernel_levels("", small=True) == (1, 1)


@pytest.mark.parametrize("level", [0, 3])
def test_irtensor_llvm_opt_fixes_the_level_and_keys_the_cache(
        level: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(opt_level.OPT_LEVEL_ENV, raising=False)
    policy = llvm_jit.target_description()
    monkeypatch.setenv(opt_level.OPT_LEVEL_ENV, str(level))
    assert llvm_jit.target_description() != policy  # a kernel cached at another level
    jit = llvm_jit.compile_module(parse(ADD))
    assert jit.opt_level == level and opt_level.kernel_opt_level("") == level
    x, y, out = arrays()
    jit.function("add")(x, y, out, 0, 64)
    np.testing.assert_array_equal(out, x + y)


@pytest.mark.parametrize("bad", ["4", "O2", "-1", "fast"])
def test_a_bad_irtensor_llvm_opt_is_one_clear_error(
        bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(opt_level.OPT_LEVEL_ENV, bad)
    with pytest.raises(ValueError, match=f"IRTENSOR_LLVM_OPT must be one of 0, 1, 2, 3; "
                                         f"got '{bad}'"):
        llvm_jit.compile_module(parse(ADD))


def test_a_stack_slot_through_a_view_keeps_its_element_pointer() -> None:
    """Arguments are addressed with one GEP over their array type; the function's own
    buffers (here a stack slot behind a collapse_shape view) keep the element pointer
    llvmlite checks vector stores through."""
    text = """func.func @k(%x: memref<4x8xf32>, %out: memref<4x8xf32>, %start: index,
                     %stop: index) attributes {irtensor.kernel} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %buf = memref.alloca() : memref<4x8x1xf32>
      %view = memref.collapse_shape %buf [[0], [1, 2]] : memref<4x8x1xf32> into memref<4x8xf32>
      scf.for %i = %start to %stop step %c1 {
        %v = vector.load %x[%i, %c0] : memref<4x8xf32>, vector<8xf32>
        vector.store %v, %view[%i, %c0] : memref<4x8xf32>, vector<8xf32>
        %w = vector.load %view[%i, %c0] : memref<4x8xf32>, vector<8xf32>
        vector.store %w, %out[%i, %c0] : memref<4x8xf32>, vector<8xf32>
      }
      func.return
    }"""
    jit = llvm_jit.compile_module(parse(text))
    assert "getelementptr inbounds [8 x float]" in jit.llvm_ir  # the arguments
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    out = np.zeros_like(x)
    jit.function("k")(x, out, 0, 4)
    np.testing.assert_array_equal(out, x)


def test_a_gathering_pack_compiles_without_llvms_unroller() -> None:
    """A weight's channels-last pack is marked irtensor.no_unroll by lower-kernels-to-loops:
    the JIT turns LLVM's unroller off for it, so its optimised IR stays small (unrolled,
    the 3x3 taps and the vectorised gathers multiply it), and it copies the same numbers."""
    from irtensor.dialects.kernel import KernelOp
    from irtensor.passes.loops.unroll_hint import NO_UNROLL_ATTR, gathers_across_rows
    from irtensor.pipeline import Pipeline

    pack = """func.func @main(%w: tensor<64x32x3x3xf32>) -> tensor<32x3x3x64xf32> {
      %0 = kernel.kernel @pack(%w) space [32, 3, 3, 64] reads [#kernel.access<(d0, d1, d2, d3)
        -> (d3, d0, d1, d2)>] writes affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
        schedule <order [0, 1, 2, 3], tiles [0, 0, 0, 32], vector 8, unroll 1, parallel [0]>
        : (tensor<64x32x3x3xf32>) -> tensor<32x3x3x64xf32> {
      ^bb0(%x: f32):
        kernel.yield %x : f32
      }
      func.return %0 : tensor<32x3x3x64xf32>
    }"""
    kernel = next(op for op in parse(pack).walk() if isinstance(op, KernelOp))
    assert gathers_across_rows(kernel)
    marked = parse(pack)
    Pipeline("lower-kernels-to-loops").run(marked)
    function = next(op for op in marked.ops if "irtensor.kernel" in op.attributes)
    assert NO_UNROLL_ATTR in function.attributes
    unmarked = marked.clone()
    next(op for op in unmarked.ops if "irtensor.kernel" in op.attributes) \
        .attributes.pop(NO_UNROLL_ATTR)
    w = np.random.default_rng(0).standard_normal((64, 32, 3, 3)).astype(np.float32)
    sizes = []
    for module in (marked, unmarked):
        jit = llvm_jit.compile_module(module)
        out = np.zeros((32, 3, 3, 64), np.float32)
        jit.function("pack_0")(w, out, 0, 32)
        np.testing.assert_array_equal(out, w.transpose(1, 2, 3, 0))
        sizes.append(len(jit.optimized_ir))
    assert sizes[0] * 2 < sizes[1], sizes
