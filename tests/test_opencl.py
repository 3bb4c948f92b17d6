"""The OpenCL backend: the ocl dialect, lower-to-opencl, the C printer, and device opencl.

Tests that build and run OpenCL programs skip when this host cannot build one
(`opencl_device.unavailable()` says why; e.g. PoCL 3.0's LLVM 14 does not know
the host CPU and fails with "unknown target CPU 'generic'"), except under
IRTENSOR_REQUIRE_OPENCL=1 (CI), where that is an error.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.dialects.builtin import IntegerType, bf16, f16, f32, f64, i1, i32, i64

from conftest import BF16, F16, F32, opencl_unavailable, ttype
from irtensor import interp
from irtensor.dialects.kernel import KernelOp, ScheduleAttr
from irtensor.dialects.ocl import OCL
from irtensor.ir import IRError, make_context, parse, to_text, verify
from irtensor.passes.opencl.c_printer import UnsupportedError, print_program
from irtensor.passes.opencl.lower_to_opencl import global_size, lower_kernel
from irtensor.pipeline import Pipeline
from irtensor.runtime import STATS, opencl_device
from irtensor.runtime.lru import LRU
from irtensor.testing import Program, assert_same_results, programs

ELEMENTWISE = """
func.func @add_bias(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = kernel.kernel @E_4_8(%x, %b) space [4, 8] reads [#kernel.access<(d0, d1) -> (d0, d1)>,
       #kernel.access<(d0, d1) -> (d1)>] writes affine_map<(d0, d1) -> (d0, d1)>
       : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%1: f32, %2: f32):
    %3 = arith.addf %1, %2 : f32
    kernel.yield %3 : f32
  }
  func.return %0 : tensor<4x8xf32>
}
"""

OCL_TEXT = """
ocl.kernel @k range [4] (%in0 : !ocl.ptr<f32, global>, %out : !ocl.ptr<f32, global>) {
  %g = ocl.global_id 0
  %v = ocl.load %in0[%g] : !ocl.ptr<f32, global> -> f32
  %l = ocl.local_array 16 : !ocl.ptr<f32, local>
  ocl.barrier local
  ocl.store %v, %out[%g] : f32, !ocl.ptr<f32, global>
  ocl.return
}
"""

needs_opencl = pytest.mark.skipif(
    opencl_unavailable() is not None,
    reason="this host cannot build OpenCL programs (see opencl_device.unavailable())")


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("IRTENSOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(opencl_device, "_MEMORY", LRU(lambda: 1 << 30))
    monkeypatch.setattr(opencl_device, "_BY_OP", weakref.WeakKeyDictionary())
    return tmp_path / "cache"


def ocl_context():  # type: ignore[no-untyped-def]
    ctx = make_context()
    if ctx.get_optional_dialect("ocl") is None:
        ctx.load_dialect(OCL)
    return ctx


# --------------------------------------------------------------------------- dialect


def test_ocl_round_trips_and_verifies() -> None:
    module = parse(OCL_TEXT, ocl_context())
    module.verify()
    text = to_text(module)
    assert "ocl.barrier local" in text and "!ocl.ptr<f32, local>" in text
    assert to_text(parse(text, ocl_context())) == text


@pytest.mark.parametrize("bad, message", [
    (OCL_TEXT.replace("%out : !ocl.ptr<f32, global>", "%out : !ocl.ptr<f32, constant>")
     .replace("f32, !ocl.ptr<f32, global>", "f32, !ocl.ptr<f32, constant>"),
     "constant address space is read-only"),
    ("%g = ocl.global_id 0", "must be inside an ocl.kernel"),
    ("ocl.barrier local", "must be inside an ocl.kernel"),
    ("%a = ocl.local_array 4 : !ocl.ptr<f32, local>", "must be inside an ocl.kernel"),
    (OCL_TEXT.replace("local_array 16 : !ocl.ptr<f32, local>",
                      "local_array 16 : !ocl.ptr<f32, global>"), "local address space"),
    (OCL_TEXT.replace("global_id 0", "global_id 3"), "must be 0, 1 or 2"),
])
def test_ocl_verifier_errors(bad: str, message: str) -> None:
    with pytest.raises(IRError, match=message):
        verify(parse(bad, ocl_context()))


# --------------------------------------------------------------------------- lowering + C


def test_lowering_maps_parallel_dims_to_the_ndrange() -> None:
    (kernel,) = [k for k in parse(ELEMENTWISE).walk() if isinstance(k, KernelOp)]
    assert global_size(kernel) == [8, 4]
    lowered = lower_kernel(kernel)
    lowered.verify()
    assert lowered.global_size == (8, 4)


def test_printer_writes_an_elementwise_kernel() -> None:
    (kernel,) = [k for k in parse(ELEMENTWISE).walk() if isinstance(k, KernelOp)]
    program = print_program([lower_kernel(kernel)])
    assert program.kernel_names == ("E_4_8",) and not program.needs_fp64
    assert program.source.startswith(
        "/* range [8, 4] */\n__kernel void E_4_8(__global const float* in0, "
        "__global const float* in1, __global float* out) {\n  long i1 = (long)get_global_id(0);\n"
        "  long i0 = (long)get_global_id(1);\n")
    assert "float v5 = v3 + v4;\n  out[v2] = v5;\n}" in program.source
    assert "pragma" not in program.source


def hl_kernels(text: str, pipeline: str = "hl-to-kernel") -> list[KernelOp]:
    module = parse(text)
    Pipeline(pipeline).run(module)
    return [k for k in module.walk() if isinstance(k, KernelOp)]


def test_printer_guards_integer_division_nan_max_casts_and_f64() -> None:
    source = print_program([lower_kernel(k) for k in hl_kernels("""
    func.func @main(%a: tensor<5xi32>, %b: tensor<5xi32>, %x: tensor<5xf64>,
        %y: tensor<5xf64>) -> (tensor<5xi32>,
        tensor<5xi32>, tensor<5xf64>, tensor<5xi64>) {
      %q = hl.idiv %a, %b : tensor<5xi32>, tensor<5xi32> -> tensor<5xi32>
      %r = hl.mod %a, %b : tensor<5xi32>, tensor<5xi32> -> tensor<5xi32>
      %m = hl.maximum %x, %y : tensor<5xf64>, tensor<5xf64> -> tensor<5xf64>
      %c = hl.cast %x : tensor<5xf64> -> tensor<5xi64>
      func.return %q, %r, %m, %c : tensor<5xi32>, tensor<5xi32>, tensor<5xf64>, tensor<5xi64>
    }""")]).source
    assert source.startswith("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    assert "static inline int irt_floordiv_int(int a, int b)" in source
    assert "if (b == -1) return (int)(-(uint)a);" in source
    assert "isnan(" in source and "fmax(" in source
    assert "irt_fptosi_double_long" in source and "(-9223372036854775807L - 1L)" in source


@pytest.mark.parametrize(("dtype", "load", "store", "rounding"), [
    ("f16", "vload_half(", "vstore_half_rte(", "irt_round_f16("),
    ("bf16", "irt_from_bf16(in0[", "= irt_to_bf16(", "irt_round_bf16("),
])
def test_half_types_are_stored_as_halves_and_computed_in_float(
        dtype: str, load: str, store: str, rounding: str) -> None:
    kernels = hl_kernels(f"""
    func.func @main(%a: tensor<3x{dtype}>) -> tensor<3x{dtype}> {{
      %0 = hl.mul %a, %a : tensor<3x{dtype}>, tensor<3x{dtype}> -> tensor<3x{dtype}>
      func.return %0 : tensor<3x{dtype}>
    }}""")
    source = print_program([lower_kernel(k) for k in kernels]).source
    memory = "half" if dtype == "f16" else "ushort"
    assert f"__global const {memory}* in0" in source and f"__global {memory}* out" in source
    assert load in source and store in source
    assert f"float v1 = {rounding}" in source.replace("float v2", "float v1")
    assert "cl_khr_fp16" not in source


def test_unknown_element_types_are_refused_with_a_clear_error() -> None:
    from irtensor.passes.opencl.c_printer import OpenCLPrinter

    with pytest.raises(UnsupportedError, match="no C type for i128"):
        OpenCLPrinter().ctype(IntegerType(128))


def test_pass_replaces_kernels_with_enqueues() -> None:
    module = parse(ELEMENTWISE)
    Pipeline("lower-to-opencl").run(module)
    text = to_text(module)
    assert "ocl.kernel @E_4_8_0 range [8, 4]" in text
    assert "ocl.enqueue @E_4_8_0(%x, %b)" in text and "kernel.kernel" not in text


# --------------------------------------------------------------------------- runtime


def test_fp64_error_when_the_device_lacks_it(monkeypatch: pytest.MonkeyPatch) -> None:
    if not opencl_device_present():
        pytest.skip("no OpenCL device")
    monkeypatch.setattr(opencl_device, "supports_fp64", lambda dev: False)
    module = parse(ELEMENTWISE.replace("f32", "f64"))
    x = np.ones((4, 8)), np.ones(8)
    with pytest.raises(opencl_device.OpenCLError, match="needs f64"):
        opencl_device.run(module, list(x), "add_bias")


def test_norms_and_var_run_in_f32_where_the_device_lacks_fp64(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The one-pass moments sum in f64: on a device without it, realizing takes the
    two-pass f32 form (`default-opencl-no-fp64`), and layer norm and var still run."""
    if not opencl_device_present():
        pytest.skip("no OpenCL device")
    from irtensor import Tensor
    from irtensor.frontend.realize import pipeline_for

    assert pipeline_for("opencl") == "default-opencl"
    monkeypatch.setattr(opencl_device, "supports_fp64", lambda dev: False)
    assert pipeline_for("opencl") == "default-opencl-no-fp64"
    x = (np.random.default_rng(3).standard_normal((6, 40)) * 2 + 50).astype(np.float32)
    t = Tensor(x, device="opencl")
    mean, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    np.testing.assert_allclose(t.layernorm().numpy(), (x - mean) / np.sqrt(var + 1e-5),
                               rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(t.var(1).numpy(), x.var(1, ddof=1), rtol=1e-4)


def test_build_failure_shows_the_log_and_kernel_name() -> None:
    if not opencl_device_present():
        pytest.skip("no OpenCL device")
    from irtensor.passes.opencl.c_printer import CProgram

    bad = CProgram("__kernel void broken(__global float* a) { a[0] = undefined_thing; }\n",
                   ("broken",), False)
    with pytest.raises(opencl_device.OpenCLError, match="build of kernel broken failed"):
        opencl_device.build(bad, opencl_device.device())


def opencl_device_present() -> bool:
    try:
        opencl_device.device()
    except Exception:
        return False
    return True


def on_opencl(program: Program) -> list[np.ndarray]:
    module = program.module.clone()
    Pipeline("hl-to-kernel").run(module)
    return opencl_device.run(module, program.inputs)


@needs_opencl
@settings(max_examples=25, deadline=None)
@given(programs(dialect="hl", dtypes=(f32, f64, i32, i64, i1), max_ops=5, max_dim=7))
def test_generated_programs_agree_with_the_interpreter(program: Program) -> None:
    want = interp.run(program.module, program.inputs)
    assert_same_results(on_opencl(program), want, rtol=2e-4, atol=2e-4)


@needs_opencl
@settings(max_examples=25, deadline=None)
@given(programs(dialect="hl", dtypes=(f16, bf16, i32, i1), max_ops=3, max_dim=7))
def test_generated_half_precision_programs_agree_with_the_interpreter(program: Program) -> None:
    """Each op rounds to f16/bf16 as numpy does; OpenCL's float math may differ by a few
    f32 ulp before that rounding, so a result may differ by one half-precision step."""
    want = interp.run(program.module, program.inputs)
    assert_same_results(on_opencl(program), want, rtol=2e-2, atol=2e-2)


def run_hl(text: str, inputs: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    module = parse(text)
    want = interp.run(module, inputs)
    Pipeline("hl-to-kernel").run(module)
    return opencl_device.run(module, inputs), want


@needs_opencl
@pytest.mark.parametrize("n", [1, 7, 1023, 0])
def test_odd_and_empty_sizes(n: int) -> None:
    x = np.random.default_rng(n).standard_normal((n, 5)).astype(np.float32)
    got, want = run_hl(f"""
    func.func @main(%x: tensor<{n}x5xf32>) -> (tensor<{n}x5xf32>, tensor<5xf32>) {{
      %e = hl.exp2 %x : tensor<{n}x5xf32>
      %s = hl.sum %e axes [0] : tensor<{n}x5xf32> -> tensor<5xf32>
      func.return %e, %s : tensor<{n}x5xf32>, tensor<5xf32>
    }}""", [x])
    assert_same_results(got, want, rtol=1e-5, atol=1e-5)


@needs_opencl
def test_integer_division_by_zero_and_int_min() -> None:
    a = np.array([7, -7, -2**31, 5, -2**31, 3], np.int32)
    b = np.array([2, 2, -1, 0, 1, -1], np.int32)
    got, want = run_hl("""
    func.func @main(%a: tensor<6xi32>, %b: tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>) {
      %q = hl.idiv %a, %b : tensor<6xi32>, tensor<6xi32> -> tensor<6xi32>
      %r = hl.mod %a, %b : tensor<6xi32>, tensor<6xi32> -> tensor<6xi32>
      func.return %q, %r : tensor<6xi32>, tensor<6xi32>
    }""", [a, b])
    assert_same_results(got, want)


@needs_opencl
def test_nan_max_and_cache_hit() -> None:
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -np.inf]], np.float32)
    text = """
    func.func @main(%x: tensor<2x3xf32>) -> tensor<2xf32> {
      %m = hl.max %x axes [1] : tensor<2x3xf32> -> tensor<2xf32>
      func.return %m : tensor<2xf32>
    }"""
    got, _want = run_hl(text, [x])
    assert np.isnan(got[0][0]) and got[0][1] == 5.0
    before = STATS.cache_hits_memory
    run_hl(text, [x])
    assert STATS.cache_hits_memory > before


# --------------------------------------------------------------------------- work-groups


def test_only_long_reductions_with_few_outputs_use_work_groups() -> None:
    from irtensor.passes.opencl.lower_to_opencl import uses_group_reduction

    def kernel(rows: int, length: int) -> KernelOp:
        (k,) = hl_kernels(f"""
        func.func @main(%x: tensor<{rows}x{length}xf32>) -> tensor<{rows}xf32> {{
          %s = hl.sum %x axes [1] : tensor<{rows}x{length}xf32> -> tensor<{rows}xf32>
          func.return %s : tensor<{rows}xf32>
        }}""", "hl-to-ll,fuse")
        return k

    assert uses_group_reduction(kernel(3, 4096), 128, 512)
    assert not uses_group_reduction(kernel(3, 1000), 128, 512)  # short: a loop per item
    assert not uses_group_reduction(kernel(1024, 4096), 128, 512)  # many outputs
    assert not uses_group_reduction(kernel(3, 4096), 0, 512)  # turned off
    lowered = lower_kernel(kernel(3, 4096), group=64)
    assert lowered.global_size == (64, 3) and lowered.local_size == (64, 1)
    with pytest.raises(ValueError, match="work-group-size 48 must be a power of two"):
        lower_kernel(kernel(3, 4096), group=48)


@pytest.fixture
def every_reduction_in_small_work_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    """Work-group reductions on every reduction, with work-groups of 4 (so trees of
    several levels and work items with nothing to add are both common)."""
    from irtensor.passes import lower_to_opencl

    monkeypatch.setattr(lower_to_opencl, "uses_group_reduction",
                        lambda op, group, max_outputs: bool(op.reduction_dims) and group > 1)
    monkeypatch.setattr(opencl_device, "work_group_size", lambda dev: 4)


@needs_opencl
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # same patch for all
@given(programs(dialect="hl", dtypes=(f32, i32, i64, i1), max_ops=4, max_dim=7))
def test_work_group_reductions_agree_with_the_interpreter(
        every_reduction_in_small_work_groups: None, program: Program) -> None:
    want = interp.run(program.module, program.inputs)
    assert_same_results(on_opencl(program), want, rtol=2e-4, atol=2e-4)


@needs_opencl
@pytest.mark.parametrize("shape", [(3, 5000), (1, 1031), (2, 3, 1100)])
def test_work_group_reduction_of_long_rows(shape: tuple[int, ...]) -> None:
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    full, rows = ttype(shape, F32), ttype(shape[:-1], F32)
    text = f"""
    func.func @main(%x: {full}) -> ({rows}, {rows}) {{
      %s = hl.sum %x axes [{len(shape) - 1}] : {full} -> {rows}
      %m = hl.max %x axes [{len(shape) - 1}] : {full} -> {rows}
      func.return %s, %m : {rows}, {rows}
    }}"""
    module = parse(text)
    want = interp.run(module, [x])
    Pipeline("hl-to-ll,fuse").run(module)  # no split: each row is one long reduction
    assert all(uses_group_reduction_here(k) for k in module.walk() if isinstance(k, KernelOp))
    got = opencl_device.run(module, [x])
    assert_same_results(got, want, rtol=1e-5, atol=1e-4)


@needs_opencl
@pytest.mark.parametrize("dtype", [F16, BF16], ids=str)
def test_half_work_group_reductions_meet_in_float(dtype: np.dtype) -> None:
    """f16/bf16 max, and a kernel-level f16 sum, reduce through an f32 local array."""
    x = (np.random.default_rng(4).standard_normal((2, 3000)) * 4).astype(dtype)
    full, rows = ttype(x.shape, dtype), ttype(x.shape[:-1], dtype)
    text = f"""
    func.func @main(%x: {full}) -> ({rows}, {rows}) {{
      %m = hl.max %x axes [1] : {full} -> {rows}
      %n = hl.min %x axes [1] : {full} -> {rows}
      func.return %m, %n : {rows}, {rows}
    }}"""
    module = parse(text)
    want = interp.run(module, [x])
    Pipeline("hl-to-ll,fuse").run(module)
    kernels = [k for k in module.walk() if isinstance(k, KernelOp)]
    assert kernels and all(uses_group_reduction_here(k) for k in kernels)
    assert "ocl.local_array 128 : !ocl.ptr<f32, local>" in str(lower_kernel(kernels[0]))
    got = opencl_device.run(module, [x])
    assert_same_results(got, want, rtol=0, atol=0)


@needs_opencl
def test_a_half_local_array_is_ushort_storage_seen_as_half() -> None:
    text = """
    ocl.kernel @k range [4] local [4] (%in0 : !ocl.ptr<f16, global>,
                                       %out : !ocl.ptr<f16, global>) {
      %g = ocl.local_id 0
      %v = ocl.load %in0[%g] : !ocl.ptr<f16, global> -> f16
      %l = ocl.local_array 4 : !ocl.ptr<f16, local>
      ocl.store %v, %l[%g] : f16, !ocl.ptr<f16, local>
      ocl.barrier local
      %c3 = arith.constant 3 : index
      %r = arith.subi %c3, %g : index
      %w = ocl.load %l[%r] : !ocl.ptr<f16, local> -> f16
      ocl.store %w, %out[%g] : f16, !ocl.ptr<f16, global>
      ocl.return
    }"""
    import pyopencl as cl

    (kernel,) = parse(text, ocl_context()).ops
    program = print_program([kernel])
    assert "__local ushort l_bits[4];" in program.source
    assert "__local half* l = (__local half*)l_bits;" in program.source
    dev = opencl_device.device()
    built = opencl_device.build(program, dev)
    x, got = np.array([1.5, -2.0, 3.25, 65504.0], F16), np.zeros(4, F16)
    flags = cl.mem_flags
    source = cl.Buffer(dev.context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x)
    out = cl.Buffer(dev.context, flags.WRITE_ONLY, got.nbytes)
    built.k(dev.queue, (4,), (4,), source, out)
    cl.enqueue_copy(dev.queue, got, out)
    np.testing.assert_array_equal(got, x[::-1])


def uses_group_reduction_here(kernel: KernelOp) -> bool:
    from irtensor.passes.opencl.lower_to_opencl import uses_group_reduction

    return uses_group_reduction(kernel, opencl_device.work_group_size(
        opencl_device.device().device), 512)


@needs_opencl
def test_schedule_tiles_are_the_work_group_size() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((64, 32), np.float32), rng.standard_normal((32, 48), np.float32)
    module = parse("""
    func.func @main(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
      %0 = kernel.kernel @mm(%a, %b) space [64, 32, 48] reduce [1] sum
           reads [#kernel.access<(d0, d1, d2) -> (d0, d1)>,
                  #kernel.access<(d0, d1, d2) -> (d1, d2)>]
           writes affine_map<(d0, d1, d2) -> (d0, d2)>
           schedule <order [0, 2, 1], tiles [16, 0, 12], vector 1, unroll 1, parallel [0]>
           : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32> {
      ^bb0(%1: f32, %2: f32):
        %3 = arith.mulf %1, %2 : f32
        kernel.yield %3 : f32
      }
      func.return %0 : tensor<64x48xf32>
    }""")
    (kernel,) = [k for k in module.walk() if isinstance(k, KernelOp)]
    lowered = lower_kernel(kernel)
    # 16x8 outputs per work item: the 16-row tile is 2 work items; 12 columns are no
    # whole number of 16-column blocks, so that dimension's work-group size is 1
    assert lowered.global_size == (3, 8) and lowered.local_size == (1, 2)
    assert "reqd_work_group_size(1, 2, 1)" in print_program([lowered]).source
    (got,) = opencl_device.run(module, [a, b])
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-4)


@needs_opencl
def test_tensor_ir_opencl_is_the_c_the_device_builds() -> None:
    from irtensor import Tensor

    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3), device="opencl")
    source = (x * x).sum(axis=1).ir("opencl")
    assert source.startswith("/* range [2] */\n__kernel void r_2_3(")
    assert "for (long i1 = 0; i1 < 3; i1++)" in source
    np.testing.assert_array_equal((x * x).sum(axis=1).numpy(), [5.0, 50.0])


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in units of the last place of f32 (NaN to NaN and inf to inf: 0)."""
    def ordered(a: np.ndarray) -> np.ndarray:
        bits = a.view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)
    same = (np.isnan(got) & np.isnan(want)) | (got == want)
    return np.where(same, 0, np.abs(ordered(got) - ordered(want)))


def f32_sweep() -> np.ndarray:
    """Every 509th f32 bit pattern (both signs, subnormals, inf, NaN) and the edge cases."""
    bits = np.arange(0, 2**32, 509, dtype=np.uint64).astype(np.uint32)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.17549435e-38,
                      127.99999, 128.0, -126.0, -149.0, -150.0, -151.0, 1.0, 0.5, 2.0],
                     np.float32)
    return np.concatenate([bits.view(np.float32), edges])


@needs_opencl
@pytest.mark.parametrize(("op", "reference", "max_ulps"), [
    ("exp2", np.exp2, 2), ("log2", np.log2, 2)])
def test_float_exp2_and_log2_are_accurate_polynomials(op: str, reference: Callable[
        [np.ndarray], np.ndarray], max_ulps: int) -> None:
    x = f32_sweep()
    n = x.size
    module = parse(f"""
    func.func @main(%x: tensor<{n}xf32>) -> tensor<{n}xf32> {{
      %y = hl.{op} %x : tensor<{n}xf32>
      func.return %y : tensor<{n}xf32>
    }}""")
    Pipeline("hl-to-kernel").run(module)
    (kernel,) = [k for k in module.walk() if isinstance(k, KernelOp)]
    assert f"irt_{op}(" in print_program([lower_kernel(kernel)]).source
    (got,) = opencl_device.run(module, [x])
    with np.errstate(all="ignore"):
        want = reference(x)
    errors = ulps(got, want)
    worst = int(np.argmax(errors))
    assert errors.max() <= max_ulps, f"{op}({x[worst]!r}) = {got[worst]!r}, numpy {want[worst]!r}"


def test_register_blocks_divide_their_dims_and_fit_the_budget() -> None:
    from irtensor.passes.opencl.lower_to_opencl import register_block

    def matmul(m: int, k: int, n: int) -> KernelOp:
        (kernel,) = hl_kernels(f"""
        func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
          %c = hl.matmul %a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32> -> tensor<{m}x{n}xf32>
          func.return %c : tensor<{m}x{n}xf32>
        }}""", "hl-to-ll,fuse")
        return kernel

    assert register_block(matmul(1024, 64, 1024)) == {2: 16, 0: 8}
    assert register_block(matmul(24, 8, 12)) == {2: 4, 0: 8}
    assert register_block(matmul(7, 8, 5)) == {}  # odd sizes: one output per work item
    assert register_block(matmul(1024, 64, 1024), budget=320) == {2: 8, 0: 4}
    lowered = lower_kernel(matmul(1024, 64, 1024))
    assert lowered.global_size == (64, 128)


@needs_opencl
@pytest.mark.parametrize(("m", "k", "n"), [(48, 33, 80), (6, 5, 4), (2, 3, 1026)])
def test_blocked_matmuls_agree_with_numpy(m: int, k: int, n: int) -> None:
    rng = np.random.default_rng(m * n)
    a, b = rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)
    got, want = run_hl(f"""
    func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
      %c = hl.matmul %a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32> -> tensor<{m}x{n}xf32>
      func.return %c : tensor<{m}x{n}xf32>
    }}""", [a, b])
    assert_same_results(got, want, rtol=1e-5, atol=1e-4)


def test_a_work_group_over_the_device_limit_is_left_to_the_device() -> None:
    (kernel,) = [k for k in parse(ELEMENTWISE).walk()
                 if isinstance(k, KernelOp)]
    kernel.properties["schedule"] = ScheduleAttr([0, 1], [2, 4], 1, 1, [0])
    assert lower_kernel(kernel).local_size == (4, 2)
    assert lower_kernel(kernel, max_local=4).local_size is None
    assert lower_kernel(kernel, max_local_sizes=(2, 2, 2)).local_size is None
    assert "reqd_work_group_size" not in print_program(
        [lower_kernel(kernel, max_local=4)]).source


def test_a_convs_block_shares_its_masked_input_across_output_channels() -> None:
    from irtensor.passes.opencl.lower_to_opencl import register_block

    (kernel,) = hl_kernels("""
    func.func @main(%x: tensor<2x8x16x16xf32>, %w: tensor<16x8x3x3xf32>)
        -> tensor<2x16x16x16xf32> {
      %y = hl.conv2d %x, %w padding [1, 1, 1, 1]
           : tensor<2x8x16x16xf32>, tensor<16x8x3x3xf32> -> tensor<2x16x16x16xf32>
      func.return %y : tensor<2x16x16x16xf32>
    }""", "hl-to-ll,fuse")
    # space (n, group, c_out, c_in, h, w, kh, kw): blocks along w and c_out, not h
    assert kernel.sizes == (2, 1, 16, 8, 16, 16, 3, 3)
    block = register_block(kernel)
    assert set(block) == {5, 2}


def test_a_block_that_shares_no_load_is_not_made() -> None:
    from irtensor.passes.opencl.lower_to_opencl import register_block

    (row_max,) = hl_kernels("""
    func.func @main(%x: tensor<64x128xf32>) -> tensor<64xf32> {
      %m = hl.max %x axes [1] : tensor<64x128xf32> -> tensor<64xf32>
      func.return %m : tensor<64xf32>
    }""", "hl-to-ll,fuse")
    assert register_block(row_max) == {}
