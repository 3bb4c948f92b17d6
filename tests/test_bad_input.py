"""Bad input to the Python API raises at the call that got it, with what was expected.

Tensor arguments raise TypeError (a wrong kind of value), ValueError (a wrong
value) or OverflowError (an integer the dtype cannot hold) where they are
passed, not at realize; a tensor larger than its device's memory, and a host
buffer larger than the host's, is refused before any memory is asked for.
Pipelines refuse instrumentation and folders they cannot use, and the pass
registry a plugin that fails to import.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from irtensor import Tensor, ir, passes
from irtensor.passes.kernel.split_reductions import SplitReductions
from irtensor.pipeline import Instrumentation, Pipeline, PipelineError
from irtensor.runtime import limits

GIB = 1 << 30

# --------------------------------------------------------------------------- Tensor arguments


def test_a_negative_expand_size_is_refused_at_the_call() -> None:
    with pytest.raises(ValueError, match=r"expand: shape \(-5, 4\): size -5 is negative"):
        Tensor.ones(1, 4).expand(-5, 4)
    # -1 keeps an existing size only; a new leading axis has none to keep.
    with pytest.raises(ValueError, match=r"expand: shape \(-1, 3\): size -1 is negative"):
        Tensor.ones(3).expand(-1, 3)
    assert Tensor.ones(1, 4).expand(3, -1).shape == (3, 4)


def test_sizes_must_be_integers() -> None:
    with pytest.raises(TypeError, match=r"Tensor.full: sizes must be integers, got 1.5 "
                                        r"\(float\) in \(1.5,\)"):
        Tensor.zeros(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sizes must be integers"):
        Tensor.ones(2).expand(2.0, 2)  # type: ignore[arg-type]
    assert Tensor.zeros(np.int64(2), 3).shape == (2, 3)  # numpy's integers are integers


def test_arange_refuses_a_zero_or_non_finite_step() -> None:
    with pytest.raises(ValueError, match=r"Tensor\.arange: step must not be zero"):
        Tensor.arange(0, 10, 0)
    with pytest.raises(TypeError, match="step must be a finite int or float, got nan"):
        Tensor.arange(0, 1, float("nan"))
    assert Tensor.arange(5, 0, -2).tolist() == [5, 3, 1]
    assert Tensor.arange(np.int64(3)).tolist() == [0, 1, 2]


def test_realize_takes_tensors() -> None:
    with pytest.raises(TypeError, match=r"realize\(\) takes Tensors to realize with this "
                                        "one; argument #0 is int"):
        Tensor.ones(2).realize(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(("data", "what"), [
    ([1 + 2j], "complex128 data"),
    (None, "None"),
    ("abc", "<U3 data"),
    ([1, None], "data numpy holds as objects"),
    ([2**70], "data numpy holds as objects"),
])
def test_data_that_is_not_real_numbers_is_refused(data: object, what: str) -> None:
    with pytest.raises(TypeError, match=rf"Tensor: {what}.* is not supported; a tensor holds "
                                        "booleans, integers or real numbers"):
        Tensor(data)


def test_python_integers_beyond_the_dtype_are_refused_as_numpy_2_does() -> None:
    with pytest.raises(OverflowError, match="Python integer 1099511627776 out of bounds for "
                                            "int32"):
        Tensor([2**40], dtype="int32")
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        Tensor([2**40])  # the default int is int32, as in tinygrad
    assert Tensor([2**40], dtype="int64").tolist() == [2**40]
    # numpy data is cast as numpy's astype casts (it wraps), as before.
    assert Tensor(np.array([2**32 + 5]), dtype="int32").tolist() == [5]


# --------------------------------------------------------------------------- sizes


def test_an_element_count_beyond_int64_is_refused_at_the_call() -> None:
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"Tensor.full: shape \(4294967296, 4294967296\): "
                                         r"18446744073709551616 elements are more than int64"):
        Tensor.ones(2**32, 2**32).sum()
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("device", ["llvm", "interp"])
def test_a_constant_larger_than_any_memory_folds_when_summed_and_is_refused_when_held(
        device: str) -> None:
    ones = Tensor.ones(2**20, 2**20, device=device)  # one scalar: nothing is held yet
    start = time.perf_counter()
    assert ones.sum().item() == 2.0**40  # folded: no 2**40 additions run
    assert ones.mean().item() == 1.0
    assert time.perf_counter() - start < 30
    too_large = (r"\(tensor<1048576x1048576xf32>\) needs 4.0 TiB, more than the "
                 rf"[0-9.]+ [KMGT]iB of memory of device {device}")
    with pytest.raises(limits.TooLargeError, match=r"the result of ll.const " + too_large):
        ones.numpy()
    with pytest.raises(limits.TooLargeError, match=r"the result of hl.mul " + too_large):
        ones * Tensor([2.0], device=device)  # a computed value is refused at the call


def test_each_op_result_must_fit_in_the_devices_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "device_memory", lambda device: 1 << 20)
    x = Tensor.ones(256, 256, device="interp")  # 256 KiB
    y = x.reshape(256, 1, 256)
    with pytest.raises(limits.TooLargeError, match=r"the result of hl.broadcast_to "
                       r"\(tensor<256x8x256xf32>\) needs 2.0 MiB, more than the 1.0 MiB of "
                       "memory of device interp"):
        y.expand(256, 8, 256)
    assert (x + 1).sum().item() == 2 * 256 * 256


def test_host_draws_are_refused_before_numpy_allocates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "host_memory", lambda: 16 * GIB)
    start = time.perf_counter()
    with pytest.raises(limits.TooLargeError, match=r"Tensor.rand\(17179869184,\) \(8 bytes a "
                       r"value\) needs 128.0 GiB, more than the 16.0 GiB of memory of this host"):
        Tensor.rand(2**34)
    with pytest.raises(limits.TooLargeError, match=r"Tensor.randn\(131072, 131072\)"):
        Tensor.randn(2**17, 2**17)
    with pytest.raises(limits.TooLargeError, match=r"Tensor.eye\(65536, 65536\)"):
        Tensor.eye(2**16)
    with pytest.raises(limits.TooLargeError, match=r"Tensor.arange\(4294967296,\)"):
        Tensor.arange(2**32)
    assert time.perf_counter() - start < 5
    assert Tensor.rand(3, 4).shape == (3, 4)


def test_format_bytes() -> None:
    assert [limits.format_bytes(n) for n in (0, 1023, 1024, 1536, 4 << 40, 2**70)] == [
        "0 B", "1023 B", "1.0 KiB", "1.5 KiB", "4.0 TiB", "1024.0 EiB"]


def test_host_memory_is_what_the_machine_reports() -> None:
    import os

    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert 0 < limits.host_memory() <= physical


# --------------------------------------------------------------------------- IR, pipelines, passes


def test_the_verifier_refuses_sizes_no_stage_can_index() -> None:
    for text, message in [
        ("tensor<?x4xf32>", "dynamic sizes (?) are not supported"),
        ("tensor<18446744073709551616xf32>", "size 18446744073709551616 is larger than 2**63"),
        ("tensor<4294967296x4294967296xi1>", "18446744073709551616 elements are more than"),
    ]:
        module = ir.parse(f"func.func @f(%x: {text}) {{\n  func.return\n}}\n")
        with pytest.raises(ir.IRError, match=r"'func.func' op argument #0 has type "
                                             rf"{text.replace('?', '[?]')}: .*"):
            ir.verify(module)
        with pytest.raises(ir.IRError) as info:
            ir.verify(module)
        assert message in info.value.message


def test_parse_reports_deep_nesting_as_an_error() -> None:
    with pytest.raises(ir.IRError, match=r"<input>:1:\d+: error: the input nests too deeply"):
        ir.parse("builtin.module {" * 3000 + "}" * 3000)


def test_print_ir_names_must_be_passes() -> None:
    with pytest.raises(PipelineError, match="print-ir-after: unknown pass 'nosuch'"):
        Pipeline("cse", Instrumentation(print_ir_after=frozenset({"nosuch"})))
    with pytest.raises(PipelineError, match=r"print-ir-before: unknown pass 'csee' \(did you "
                                            "mean 'cse'"):
        Pipeline("cse", Instrumentation(print_ir_before=frozenset({"csee"})))


def test_a_dump_folder_that_is_a_file_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "stages"
    file.write_text("")
    module = ir.parse("func.func @f() {\n  func.return\n}\n")
    with pytest.raises(PipelineError, match=r"cannot dump stages into .*stages: it is a file, "
                                            "not a folder"):
        Pipeline("cse", Instrumentation(dump_dir=file)).run(module)


@pytest.mark.parametrize(("source", "reason"), [
    ("def broken(:\n", r"SyntaxError \(line 1\): invalid syntax"),
    ("import math\nmath.sqrt(-1)\n", "ValueError: math domain error"),
])
def test_a_plugin_that_fails_to_import_is_a_registry_error(tmp_path: Path, source: str,
                                                           reason: str) -> None:
    plugin = tmp_path / "plugin.py"
    plugin.write_text(source)
    with pytest.raises(passes.PassRegistryError, match=rf"pass plugin .*plugin.py failed to "
                                                       rf"load: {reason}"):
        passes.load_pass_plugin(plugin)


def test_split_reductions_refuses_negative_options() -> None:
    with pytest.raises(ValueError, match="chunks must not be negative, got -3"):
        SplitReductions(chunks=-3)
    with pytest.raises(PipelineError, match="min-ratio must not be negative, got -1"):
        Pipeline("split-reductions{min-ratio=-1}")
    assert SplitReductions(chunks=0).chunks == 0  # documented: never cut into chunks


@pytest.mark.parametrize("mistake", [
    lambda: Tensor.ones(2, 3) + Tensor.ones(4, 3),
    lambda: Tensor.ones(2, 3) @ Tensor.ones(2, 3),
    lambda: Tensor.ones(2, 3).reshape(4, 2),
    lambda: Tensor.ones(2, 3).permute(0, 0),
], ids=["broadcast", "matmul", "reshape", "permute"])
def test_a_shape_mistake_is_a_shape_error_caught_as_numpy_and_as_torch_users_catch_it(
        mistake: Callable[[], object]) -> None:
    from irtensor.shapes import ShapeError

    with pytest.raises(ShapeError) as caught:
        mistake()
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, RuntimeError)
    assert "(2, 3)" in str(caught.value) or "permutation" in str(caught.value)
