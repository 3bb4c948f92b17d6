"""Convs blocked across their output channels (`schedule_blocks.channel_column`) keep
their results.

Which kernels get the block (short output rows, a stride along them; not a matmul, not
wide contiguous rows); a property that random small convs with bias, residual and relu
epilogues, lowered to loops with the channel block, compute what the interpreter
computes; and on llvm and opencl, against numpy in float64, the shapes only real
sizes reach: 7 x 7 maps, a stride-2 stem, a channel count that leaves a tail, a
tiled reduction (the partial sums gathered from the output between tiles), float64.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import sliding_window_view

from irtensor import Tensor, ir
from irtensor.dialects.kernel import KernelOp, ScheduleAttr
from irtensor.interp import run
from irtensor.passes.kernel.cost_model import model_of
from irtensor.passes.kernel.schedule_blocks import channel_column
from irtensor.pipeline import Pipeline
from irtensor.runtime import llvm_device
from test_lower_kernels_to_loops import lower
from test_register_block import check_loops, inputs_for, uses_register_block


def conv_text(n: int, ci: int, co: int, h: int, w: int, k: int, stride: int, pad: int,
              epilogue: bool) -> str:
    """conv2d (+ bias, + residual, relu) in hl."""
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    out = f"tensor<{n}x{co}x{oh}x{ow}xf32>"
    args = f"%x: tensor<{n}x{ci}x{h}x{w}xf32>, %w: tensor<{co}x{ci}x{k}x{k}xf32>"
    body = (f"%c = hl.conv2d %x, %w strides [{stride}, {stride}] padding [{pad}, {pad}, {pad}, "
            f"{pad}] : tensor<{n}x{ci}x{h}x{w}xf32>, tensor<{co}x{ci}x{k}x{k}xf32> -> {out}")
    result = "%c"
    if epilogue:
        args += f", %b: tensor<{co}xf32>, %res: {out}"
        body += f"""
  %b4 = hl.reshape %b : tensor<{co}xf32> -> tensor<1x{co}x1x1xf32>
  %y = hl.add %c, %b4 : {out}, tensor<1x{co}x1x1xf32> -> {out}
  %z = hl.add %y, %res : {out}, {out} -> {out}
  %r = hl.relu %z : {out}"""
        result = "%r"
    return f"func.func @main({args}) -> {out} {{\n  {body}\n  func.return {result} : {out}\n}}"


def conv_kernel(module: object) -> KernelOp:
    return next(op for op in module.walk()  # type: ignore[attr-defined]
                if isinstance(op, KernelOp) and op.reduction_dims)


def channel_of(text: str) -> int | None:
    module = ir.parse(text)
    Pipeline("hl-to-ll,fuse").run(module)
    return channel_column(model_of(conv_kernel(module)))


def test_which_convs_are_blocked_across_their_channels() -> None:
    # space (n, group, co, ci, oh, ow, kh, kw): the channels are d2
    assert channel_of(conv_text(1, 16, 64, 7, 7, 3, 1, 1, True)) == 2  # 7-wide rows
    assert channel_of(conv_text(1, 3, 64, 64, 64, 7, 2, 3, False)) == 2  # stride 2
    # a 1x1 conv is a matmul over its points (conv-to-mul-sum), whose rows are channels
    assert channel_of(conv_text(2, 16, 64, 14, 14, 1, 1, 0, False)) is None
    assert channel_of(conv_text(1, 16, 64, 7, 7, 1, 1, 0, False)) is None
    assert channel_of(conv_text(1, 8, 64, 32, 32, 3, 1, 1, False)) is None  # wide rows
    assert channel_of(conv_text(1, 8, 64, 28, 28, 3, 1, 1, False)) == 2  # 3.5 AVX2 vectors
    assert channel_of(conv_text(1, 8, 16, 7, 7, 3, 1, 1, False)) is None  # one vector of co
    matmul = """func.func @main(%a: tensor<64x256xf32>, %b: tensor<256x10xf32>)
        -> tensor<64x10xf32> {
      %m = hl.matmul %a, %b : tensor<64x256xf32>, tensor<256x10xf32> -> tensor<64x10xf32>
      func.return %m : tensor<64x10xf32>
    }"""
    assert channel_of(matmul) is None  # 10 columns, but a matmul's rows are not channels


@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 2), ci=st.integers(2, 3), co=st.sampled_from([32, 40]),
       hw=st.integers(1, 5), k=st.sampled_from([1, 3]), stride=st.integers(1, 2),
       pad=st.integers(0, 1), epilogue=st.booleans(), seed=st.integers(0, 2**16))
def test_channel_blocked_convs_keep_their_results(n: int, ci: int, co: int, hw: int, k: int,
                                                  stride: int, pad: int, epilogue: bool,
                                                  seed: int) -> None:
    assume((hw + 2 * pad - k) // stride + 1 >= 2)  # a row of one point is no block row
    text = conv_text(n, ci, co, hw, hw, k, stride, pad, epilogue)
    assume(k > 1)  # a 1x1 conv is a matmul over its points
    module = ir.parse(text)
    Pipeline("hl-to-kernel").run(module)
    kernel = conv_kernel(module)
    assert kernel.schedule is not None
    assert kernel.schedule.order_dims[-1] == 2, kernel.schedule  # the channels innermost
    packed = any(isinstance(op, KernelOp) and op.sym_name.data.startswith("pack_")
                 for op in module.walk())
    loops = check_loops(module, inputs_for(module, seed))
    assert uses_register_block(loops)
    if packed:  # (a weight reused at fewer than 8 points is read as it is: scalar blocks)
        assert any(op.name == "memref.alloca" for op in loops.walk())


def numpy_conv(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    k = w.shape[-1]
    windows = sliding_window_view(padded, (k, k), axis=(2, 3))[:, :, ::stride, ::stride]
    return np.einsum("nchwij,ocij->nohw", windows, w.astype(np.float64))


@pytest.mark.parametrize("device", ["llvm", "opencl"])
@pytest.mark.parametrize(("n", "ci", "co", "hw", "k", "stride", "pad", "dtype"), [
    (1, 64, 64, 7, 3, 1, 1, np.float32),     # ResNet's last stage, smaller
    (2, 32, 40, 5, 3, 1, 1, np.float32),     # 40 channels: blocks of 32, 8
    (1, 3, 64, 30, 7, 2, 3, np.float32),     # the stem: stride 2, wide rows
    (2, 16, 32, 28, 3, 2, 1, np.float32),    # stride 2 on 14 x 14 outputs: rows of 7
    (1, 520, 32, 9, 1, 1, 0, np.float32),    # ci 520: the reduction tiled by 512
    (1, 16, 24, 5, 3, 1, 1, np.float64),     # f64: 8 lanes, blocks of 16, 8
])
def test_channel_blocked_convs_on_devices_match_numpy(
        device: str, n: int, ci: int, co: int, hw: int, k: int, stride: int, pad: int,
        dtype: type, monkeypatch: pytest.MonkeyPatch) -> None:
    if device == "opencl":
        from conftest import opencl_unavailable

        if (why := opencl_unavailable()) is not None:
            pytest.skip(f"no OpenCL device builds programs here: {why}")
    rng = np.random.default_rng(ci * co + hw)
    x = rng.standard_normal((n, ci, hw, hw)).astype(dtype)
    w = rng.standard_normal((co, ci, k, k)).astype(dtype)
    b = rng.standard_normal(co).astype(dtype)
    want_conv = numpy_conv(x, w, stride, pad)
    res = rng.standard_normal(want_conv.shape).astype(dtype)
    want = np.maximum(want_conv + b.astype(np.float64)[None, :, None, None] + res, 0)
    X, W, B, R = (Tensor(a, device=device) for a in (x, w, b, res))
    got = (X.conv2d(W, B, stride=stride, padding=pad) + R).relu().numpy()
    tol = (1e-4 if dtype == np.float32 else 1e-10) * np.sqrt(ci * k * k)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 70), min_size=2, max_size=3),
       seed=st.integers(0, 2**16), data=st.data())
def test_tiled_transposing_copies_keep_their_values(shape: list[int], seed: int,
                                                    data: st.DataObject) -> None:
    """`reorder_loops.transpose_tiles`: copies through a permutation, tiled by 32 where
    a dimension is longer, give numpy's values on llvm and opencl."""
    from conftest import opencl_unavailable

    perm = data.draw(st.permutations(range(len(shape))))
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    devices = ["llvm"] + ([] if opencl_unavailable() else ["opencl"])
    for device in devices:
        got = Tensor(a, device=device).permute(*perm).contiguous().numpy()
        np.testing.assert_array_equal(got, a.transpose(perm))


def test_a_transpose_gets_tiles() -> None:
    module = ir.parse("""func.func @main(%x: tensor<64x48xf32>) -> tensor<48x64xf32> {
      %t = hl.permute %x [1, 0] : tensor<64x48xf32> -> tensor<48x64xf32>
      func.return %t : tensor<48x64xf32>
    }""")
    Pipeline("hl-to-kernel").run(module)
    (kernel,) = [op for op in module.walk() if isinstance(op, KernelOp)]
    assert kernel.schedule is not None and list(kernel.schedule.tile_sizes) == [32, 32]


@pytest.mark.parametrize(("l2", "ci", "want"), [
    (512 << 10, 512, 16),   # ResNet's 7 x 7 stage on Zen 1: 256 (c tile) x 9 x 4 B a channel
    (2 << 20, 512, 32),     # 2 MiB: the reduction untiled (512 x 9 x 4 B), 32 channels
    (512 << 10, 64, 64),    # a short reduction: 448 channels in tiles of 64
])
def test_a_channel_blocks_tile_holds_its_weight_slice_in_half_the_l2(
        monkeypatch: pytest.MonkeyPatch, l2: int, ci: int, want: int) -> None:
    """The channels of a channel block's tile: the most blocks (a power of two of them)
    whose weight over the reduction's tile fits half the L2, so the batch's output rows
    reuse it from there."""
    monkeypatch.setenv("IRTENSOR_L2_BYTES", str(l2))
    monkeypatch.setenv("IRTENSOR_VECTOR_BYTES", "32")
    module = ir.parse(conv_text(8, ci, 448, 7, 7, 3, 1, 1, True))
    Pipeline("hl-to-kernel").run(module)
    schedule = conv_kernel(module).schedule
    assert schedule is not None
    values = schedule.values()
    assert values["vector"] == 16 and values["tiles"][2] == want, schedule


def pack_fills(loops: object) -> list[list[str]]:
    """For each store into a register block's weight copy, the loops around it (their
    indices' names, outermost first)."""
    from xdsl.dialects import memref, scf

    out = []
    for op in loops.walk():  # type: ignore[attr-defined]
        if isinstance(op, memref.StoreOp) and (op.memref.name_hint or "").startswith("pack"):
            names, parent = [], op.parent_op()
            while parent is not None:
                if isinstance(parent, scf.ForOp):
                    names.append(parent.body.block.args[0].name_hint or "")
                parent = parent.parent_op()
            out.append(names[::-1])
    return out


@settings(max_examples=6, deadline=None)
@given(n=st.integers(1, 3), hw=st.integers(3, 6), ci=st.integers(1, 3),
       tile=st.sampled_from([8, 16, 24]), co=st.sampled_from([176, 184]),
       seed=st.integers(0, 2**16))
def test_a_weight_copy_is_filled_once_per_tile_outside_the_rows(
        n: int, hw: int, ci: int, tile: int, co: int, seed: int) -> None:
    """A channel block's weight, copied per tile of channels (its rows 3 x co x 4 bytes apart,
    over 2 KiB: `register_block.should_pack`), is filled inside the tile loop and outside
    the batch's and the output rows' loops (it varies along neither); on llvm the block
    keeps the interpreter's results with any tile of channels, a tail tile among them."""
    module = ir.parse(conv_text(n, ci, co, hw, hw, 3, 1, 1, True))
    Pipeline("hl-to-kernel").run(module)
    kernel = conv_kernel(module)
    assert kernel.schedule is not None
    values = kernel.schedule.values()
    tiles = list(values["tiles"])
    tiles[2] = tile
    kernel.properties["schedule"] = ScheduleAttr(values["order"], tiles, 8, values["unroll"],
                                                 values["parallel"])
    fills = pack_fills(lower(module))
    assert fills, "the weight is copied"
    for around in fills:
        assert around[0] == "t2" and "i0" not in around and "i4" not in around, around
    inputs = inputs_for(module, seed)
    (got,) = llvm_device.run(module, inputs)
    (want,) = run(module, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.sqrt(ci * 9))
