"""reorder-loops: every kernel gets a valid schedule, chosen by a small cost model.

Properties: on random hl programs taken through the pipeline to kernels, the
pass keeps the interpreter's results, every schedule it writes fits its
kernel, and running it again changes nothing. Units: each function of the
cost model on hand-made kernels (strides, costs, order, tiles, vector width,
unroll, parallel loops, `describe`), the options, and hand-written schedules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir.affine import AffineExpr

from conftest import device_param
from irtensor import Tensor, ir, passes
from irtensor.dialects.kernel import KernelOp, ScheduleAttr
from irtensor.passes.kernel import cost_model as cm
from irtensor.passes.kernel import reorder_loops as rl
from irtensor.passes.kernel import schedule_blocks as sb
from irtensor.passes.kernel.reorder_loops import ReorderLoops
from irtensor.pipeline import Pipeline, PipelineError
from irtensor.testing import Program, assert_preserves_semantics, programs

TO_KERNELS = "decompose-hlops,conv-to-mul-sum,fold-constants,cse,dce,fuse"
NCHW = (32, 64, 56, 56)

# --------------------------------------------------------------------------- helpers


def kernel_text(
    space: Sequence[int],
    reads: Sequence[tuple[str, Sequence[int]]],
    writes: str,
    out: Sequence[int],
    reduce: Sequence[int] = (),
    element: str = "f32",
    schedule: str = "",
) -> str:
    """A function holding one kernel that yields its first read."""

    def ttype(shape: Sequence[int]) -> str:
        return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{element}>"

    args = ", ".join(f"%a{i}: {ttype(s)}" for i, (_, s) in enumerate(reads))
    names = ", ".join(f"%a{i}" for i in range(len(reads)))
    accesses = ", ".join(f"#kernel.access<{m}>" for m, _ in reads)
    types = ", ".join(ttype(s) for _, s in reads)
    block_args = ", ".join(f"%b{i}: {element}" for i in range(len(reads)))
    red = f" reduce {list(reduce)} sum" if reduce else ""
    sched = f" schedule <{schedule}>" if schedule else ""
    return (
        f"func.func @main({args}) -> {ttype(out)} {{\n"
        f"  %r = kernel.kernel @k({names}) space {list(space)}{red} reads [{accesses}] "
        f"writes affine_map<{writes}>{sched} : ({types}) -> {ttype(out)} {{\n"
        f"  ^bb0({block_args}):\n    kernel.yield %b0 : {element}\n  }}\n"
        f"  func.return %r : {ttype(out)}\n}}\n"
    )


def the_kernel(module: ModuleOp) -> KernelOp:
    (kernel,) = [op for op in module.walk() if isinstance(op, KernelOp)]
    return kernel


def make(*args: object, **kwargs: object) -> KernelOp:
    return the_kernel(ir.parse(kernel_text(*args, **kwargs)))  # type: ignore[arg-type]


def kernels(module: ModuleOp) -> list[KernelOp]:
    return [op for op in module.walk() if isinstance(op, KernelOp)]


def elementwise(shape: Sequence[int] = (256, 1024)) -> KernelOp:
    ident = ", ".join(f"d{i}" for i in range(len(shape)))
    return make(shape, [(f"({ident}) -> ({ident})", shape)], f"({ident}) -> ({ident})", shape)


def row_sum(m: int = 256, n: int = 1024) -> KernelOp:
    return make([m, n], [("(d0, d1) -> (d0, d1)", (m, n))], "(d0, d1) -> (d0, 0)", [m, 1], [1])


def column_sum(m: int = 1024, n: int = 256) -> KernelOp:
    return make([m, n], [("(d0, d1) -> (d0, d1)", (m, n))], "(d0, d1) -> (0, d1)", [1, n], [0])


def matmul(m: int, k: int, n: int) -> KernelOp:
    return make([m, k, n], [("(d0, d1, d2) -> (d0, d1)", (m, k)),
                            ("(d0, d1, d2) -> (d1, d2)", (k, n))],
                "(d0, d1, d2) -> (d0, d2)", [m, n], [1])


def batch_norm_stats() -> KernelOp:
    return make(NCHW, [("(d0, d1, d2, d3) -> (d0, d1, d2, d3)", NCHW)],
                "(d0, d1, d2, d3) -> (0, d1, 0, 0)", [1, 64, 1, 1], [0, 2, 3])


GN_READ = ("(d0, d1, d2) -> (d0, (((d1 * 6272) + d2) floordiv 3136), "
           "((((d1 * 6272) + d2) floordiv 56) mod 56), (((d1 * 6272) + d2) mod 56))")


def group_norm_stats() -> KernelOp:
    return make([32, 32, 6272], [(GN_READ, NCHW)], "(d0, d1, d2) -> (d0, d1, 0)",
                [32, 32, 1], [2])


CONV_READ = ("(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d3 + d5 - 1, d4 + d6 - 1), valid "
             "(d0, d1, d2, d3, d4, d5, d6) : (d3 + d5 - 1 >= 0, -d3 - d5 + 56 >= 0, "
             "d4 + d6 - 1 >= 0, -d4 - d6 + 56 >= 0), pad 0.0")


def conv() -> KernelOp:
    """conv2d N=8, 64->64, 56x56, 3x3, pad 1: space (N, CO, CI, OH, OW, KH, KW)."""
    return make([8, 64, 64, 56, 56, 3, 3],
                [(CONV_READ, (8, 64, 56, 56)),
                 ("(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d5, d6)", (64, 64, 3, 3))],
                "(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d3, d4)", [8, 64, 56, 56], [2, 5, 6])


def expr(text: str, rank: int) -> AffineExpr:
    dims = ", ".join(f"d{i}" for i in range(rank))
    module = ir.parse(kernel_text([1] * rank, [(f"({dims}) -> ({text})", [1])],
                                  f"({dims}) -> ({', '.join('0' for _ in range(rank))})",
                                  [1] * rank))
    return the_kernel(module).accesses[0].affine_map.results[0]


def check_schedule(kernel: KernelOp) -> None:
    """The schedule fits the kernel, checked here independently of `schedule_errors`."""
    assert kernel.schedule is not None
    v = kernel.schedule.values()
    rank = len(kernel.sizes)
    assert sorted(v["order"]) == list(range(rank))  # type: ignore[arg-type]
    assert len(v["tiles"]) == rank and all(t >= 0 for t in v["tiles"])  # type: ignore[arg-type,union-attr]
    assert v["vector"] >= 1 and v["unroll"] >= 1  # type: ignore[operator]
    parallel = v["parallel"]
    assert isinstance(parallel, list) and len(set(parallel)) == len(parallel)
    assert set(parallel) <= set(kernel.parallel_dims)
    assert rl.schedule_errors(kernel, kernel.schedule) == []


def to_kernels(program: Program) -> ModuleOp:
    module = program.module.clone()
    Pipeline(TO_KERNELS).run(module)
    return module


# --------------------------------------------------------------------------- properties

options = st.builds(
    ReorderLoops,
    vector_width=st.sampled_from([0, 1, 4, 16]),
    no_tiles=st.booleans(),
    register_blocks=st.booleans(),
    threads=st.integers(1, 32),
    keep_existing=st.booleans(),
)


@given(programs(dialect="hl", max_ops=6))
def test_reorder_loops_keeps_the_meaning_of_fused_programs(program: Program) -> None:
    fused = to_kernels(program)
    after = assert_preserves_semantics("reorder-loops", fused, program.inputs)
    for kernel in kernels(after):
        check_schedule(kernel)


@given(programs(dialect="hl", max_ops=6, max_rank=4, max_dim=6), options)
def test_every_schedule_fits_its_kernel_and_a_second_run_changes_nothing(
    program: Program, pass_: ReorderLoops
) -> None:
    module = to_kernels(program)
    Pipeline([pass_]).run(module)
    once = ir.to_text(module)
    for kernel in kernels(module):
        check_schedule(kernel)
        v = kernel.schedule.values()  # type: ignore[union-attr]
        if pass_.no_tiles:
            assert set(v["tiles"]) <= {0}  # type: ignore[arg-type]
        if pass_.threads == 1:
            assert v["parallel"] == []
        if pass_.vector_width:
            assert v["vector"] <= pass_.vector_width  # type: ignore[operator]
    Pipeline([pass_]).run(module)
    assert ir.to_text(module) == once


@given(programs(dialect="ll", max_ops=6))
def test_the_whole_pipeline_from_ll_keeps_the_meaning(program: Program) -> None:
    after = assert_preserves_semantics("fuse,reorder-loops", program.module, program.inputs)
    assert all(k.schedule is not None for k in kernels(after))


SIZES = [1, 2, 3, 5, 16, 56, 100, 512, 1024]


@st.composite
def big_kernels(draw: st.DrawFn) -> str:
    """Kernels too big to interpret, with plain, transposed, broadcast, window and
    floordiv reads: for checking schedules, not results."""
    rank = draw(st.integers(1, 4))
    sizes = [draw(st.sampled_from(SIZES)) for _ in range(rank)]
    reduce = sorted(draw(st.sets(st.integers(0, rank - 1), max_size=rank - 1)))
    dims = ", ".join(f"d{i}" for i in range(rank))
    reads = []
    for _ in range(draw(st.integers(1, 3))):
        exprs, shape = [], []
        for _ in range(draw(st.integers(0, rank))):
            a, b = draw(st.integers(0, rank - 1)), draw(st.integers(0, rank - 1))
            kind = draw(st.sampled_from(["dim", "window", "div"]))
            if kind == "dim":
                exprs.append(f"d{a}")
                shape.append(sizes[a])
            elif kind == "window":
                exprs.append(f"d{a} + d{b}")
                shape.append(sizes[a] + sizes[b] - 1)
            else:
                exprs.append(f"(d{a} * 7 + d{b}) floordiv 4")
                shape.append((sizes[a] * 7 + sizes[b]) // 4 + 1)
        reads.append((f"({dims}) -> ({', '.join(exprs)})", shape))
    parallel = [d for d in range(rank) if d not in reduce]
    written = draw(st.permutations(parallel))
    out = [sizes[d] for d in written] + [1] * draw(st.integers(0, 1))
    results = [f"d{d}" for d in written] + ["0"] * (len(out) - len(written))
    return kernel_text(sizes, reads, f"({dims}) -> ({', '.join(results)})", out, reduce)


@given(big_kernels(), options)
def test_schedules_of_big_kernels_fit_and_follow_the_options(text: str, pass_: ReorderLoops
                                                            ) -> None:
    module = ir.parse(text)
    Pipeline([pass_]).run(module)
    kernel = the_kernel(module)
    check_schedule(kernel)
    v = kernel.schedule.values()  # type: ignore[union-attr]
    order, tiles = v["order"], v["tiles"]
    assert isinstance(order, list) and isinstance(tiles, list)
    extent = tiles[order[-1]] or kernel.sizes[order[-1]] if order else 1
    if any(tiles):  # contractions too big for cache, and transposing copies
        assert not pass_.no_tiles
        assert kernel.reduction_dims or rl.transpose_tiles(rl.model_of(kernel), order)
    assert all(t <= s for t, s in zip(tiles, kernel.sizes, strict=True))
    assert_stable(module, pass_)
    shape = sb.block_shape(rl.model_of(kernel), order)
    if shape is not None and pass_.register_blocks:
        # A register block: `unroll` rows of the dim before the reductions by `vector`
        # columns (at most 2 x BLOCK_VECTORS vectors, else all of them).
        rows, column = shape
        model = rl.model_of(kernel)
        across_channels = column == sb.channel_column(model)
        lanes = pass_.vector_width or (sb.write_lanes(model) if across_channels
                                       else rl.lanes_for(model, column))
        assert v["vector"] <= min(kernel.sizes[column], 2 * sb.BLOCK_VECTORS * lanes)
        assert v["unroll"] <= (kernel.sizes[rows] if rows is not None else 1)
        assert v["unroll"] <= (8 if across_channels else sb.BLOCK_ROWS)  # type: ignore[operator]
        return
    assert v["vector"] <= max(extent, 1) and v["unroll"] <= max(extent, 1)  # type: ignore[operator]
    assert v["vector"] == 1 or v["unroll"] == 1
    if pass_.vector_width:
        assert v["vector"] <= pass_.vector_width  # type: ignore[operator]


def assert_stable(module: ModuleOp, pass_: ReorderLoops) -> None:
    again = ir.to_text(module)
    Pipeline([pass_]).run(module)
    assert ir.to_text(module) == again


# --------------------------------------------------------------------------- strides


def test_row_major_strides() -> None:
    assert cm.row_major_strides((32, 64, 56, 56)) == (200704, 3136, 56, 1)
    assert cm.row_major_strides(()) == ()
    assert cm.row_major_strides((3, 0, 2)) == (2, 2, 1)


def test_linear_coefficients_and_floordiv_mod() -> None:
    assert cm.linear_coefficient(expr("d0 * 3 + d1 - 1", 2), 0) == 3
    assert cm.linear_coefficient(expr("d0 * 3 + d1 - 1", 2), 1) == 1
    assert cm.linear_coefficient(expr("(d0 + d1) floordiv 4", 2), 0) is None
    assert cm.linear_coefficient(expr("(d0 + d1) floordiv 4", 2), 2) == 0


def test_strides_of_plain_transposed_broadcast_and_reshaped_reads() -> None:
    d = [AffineExpr.dimension(i) for i in range(3)]
    assert rl.strides_of([d[0], d[1]], (4, 8), (4, 8, 5)) == (8, 1, 0)
    assert rl.strides_of([d[1], d[0]], (8, 4), (4, 8, 5)) == (1, 4, 0)
    assert rl.strides_of([d[2]], (5,), (4, 8, 1)) == (0, 0, 0)  # size-1 dims move nothing
    gn = group_norm_stats()
    read = gn.accesses[0].affine_map.results
    assert rl.strides_of(read, NCHW, gn.sizes) == (200704, 6272, 1)


def test_strides_of_a_window_written_with_mod_is_measured() -> None:
    # fuse's conv window `((59 * kh + oh) mod 58) - 1` is oh + kh - 1.
    d = [AffineExpr.dimension(i) for i in range(2)]
    window = (d[1] * 59 + d[0]) % 58 - 1
    assert rl.strides_of([window], (56,), (56, 3)) == (1, 1)


def test_footprint_of_a_window_is_the_tile_plus_the_taps() -> None:
    x = conv().accesses[0].affine_map.results
    assert rl.footprint(x, (8, 64, 56, 56), (1, 1, 4, 8, 16, 3, 3)) == 4 * 10 * 18
    assert rl.footprint(x, (8, 64, 56, 56), (8, 64, 64, 56, 56, 3, 3)) == 8 * 64 * 56 * 56
    assert rl.footprint(x, (8, 64, 56, 56), (0, 1, 1, 1, 1, 1, 1)) == 0


def test_model_weights_the_write_twice() -> None:
    model = rl.model_of(elementwise((64, 64)))
    assert model.reads[0].weight == 64 * 64 * 4
    assert model.write.weight == 2 * 64 * 64 * 4
    assert model.main_read is model.reads[0]


# --------------------------------------------------------------------------- order


def test_dim_costs_are_lines_per_step() -> None:
    costs = rl.dim_costs(rl.model_of(batch_norm_stats()))
    assert costs[0] == pytest.approx(1.0, abs=1e-3) and costs[2] == pytest.approx(1.0, abs=1e-3)
    assert costs[3] == pytest.approx(4 / 64, abs=1e-3)


@pytest.mark.parametrize(("make_kernel", "order"), [
    (elementwise, (0, 1)),
    (row_sum, (0, 1)),  # the reduction innermost
    (column_sum, (0, 1)),  # the columns innermost, the reduction outside
    (lambda: matmul(64, 32, 48), (0, 1, 2)),  # i-k-j
    (batch_norm_stats, (1, 0, 2, 3)),  # channel outermost, H and W innermost
    (group_norm_stats, (0, 1, 2)),
    (conv, (0, 3, 1, 2, 5, 6, 4)),  # N, OH, CO, CI, KH, KW, OW
])
def test_choose_order(make_kernel, order: tuple[int, ...]) -> None:  # type: ignore[no-untyped-def]
    assert rl.choose_order(make_kernel()) == order


def test_a_transposed_read_keeps_the_write_contiguous() -> None:
    t = make([512, 1024], [("(d0, d1) -> (d1, d0)", (1024, 512))], "(d0, d1) -> (d0, d1)",
             [512, 1024])
    assert rl.choose_order(t) == (0, 1)
    swapped = make([1024, 512], [("(d0, d1) -> (d0, d1)", (1024, 512))],
                   "(d0, d1) -> (d1, d0)", [512, 1024])
    assert rl.choose_order(swapped) == (1, 0)


def test_broadcast_loops_go_outside_and_size_one_loops_second() -> None:
    k = make([4096, 8, 1], [("(d0, d1, d2) -> (d0)", (4096,))], "(d0, d1, d2) -> (d0, 0, 0)",
             [4096, 1, 1], [1])
    model = rl.model_of(k)
    assert rl.is_trivial(model, 2) and rl.is_broadcast(model, 1)
    assert rl.choose_order(k) == (1, 2, 0)  # the outermost loop is one worth splitting


def test_both_normalisations_walk_x_contiguously_innermost() -> None:
    for make_kernel, run in [(batch_norm_stats, 56 * 56), (group_norm_stats, 32 * 64 * 3136)]:
        model = rl.model_of(make_kernel())
        order = rl.choose_order(model)
        x = model.reads[0]
        assert x.strides[order[-1]] == 1
        assert rl.contiguous_run(model, order, x) == run


# --------------------------------------------------------------------------- tiles, vector, threads


def test_tiles_for_a_matmul_that_does_not_fit() -> None:
    model = rl.model_of(matmul(1024, 1024, 1024))
    assert rl.needs_tiles(model)
    tiles = rl.choose_tiles(model)
    assert tiles == (32, 64, 64)
    assert rl.tile_bytes(model, tiles) <= rl.TILE_BYTES


def test_no_tiles_for_small_or_elementwise_or_streaming_kernels() -> None:
    assert rl.choose_tiles(matmul(64, 32, 48)) == (0, 0, 0)
    assert rl.choose_tiles(elementwise((2048, 2048))) == (0, 0)
    assert rl.choose_tiles(batch_norm_stats()) == (0, 0, 0, 0)  # no reuse across a parallel dim


def test_conv_tiles_keep_the_taps_whole_and_fit_l1() -> None:
    model = rl.model_of(conv())
    tiles = rl.choose_tiles(model)
    assert tiles == (1, 16, 8, 4, 0, 0, 0)
    full = [t or s for t, s in zip(tiles, model.sizes, strict=True)]
    assert rl.tile_bytes(model, full) <= rl.TILE_BYTES


def test_vector_width_follows_the_element_size_and_the_loop_length() -> None:
    assert rl.choose_vector(elementwise(), (0, 1), (0, 0)) == 16
    assert rl.choose_vector(elementwise(), (0, 1), (0, 0), lanes=4) == 4
    f64 = make([64, 64], [("(d0, d1) -> (d0, d1)", (64, 64))], "(d0, d1) -> (d0, d1)",
               [64, 64], element="f64")
    assert rl.choose_vector(f64, (0, 1), (0, 0)) == 8
    f16 = make([64, 64], [("(d0, d1) -> (d0, d1)", (64, 64))], "(d0, d1) -> (d0, d1)",
               [64, 64], element="f16")
    assert rl.choose_vector(f16, (0, 1), (0, 0)) == 32
    assert rl.choose_vector(elementwise((8, 12)), (0, 1), (0, 0)) == 8  # capped, a power of 2
    assert rl.choose_vector(elementwise((8, 3)), (0, 1), (0, 0)) == 1  # too short
    assert rl.choose_vector(elementwise(), (1, 0), (0, 0)) == 1  # stride 1024


def test_short_innermost_loops_are_unrolled() -> None:
    k = make([4096, 2, 3], [("(d0, d1, d2) -> (d0, d1, d2)", (4096, 2, 3))],
             "(d0, d1, d2) -> (d0, d1)", [4096, 2], [2])
    order = rl.choose_order(k)
    assert order == (0, 1, 2)
    vector = rl.choose_vector(k, order, (0, 0, 0))
    assert (vector, rl.choose_unroll(k, order, (0, 0, 0), vector)) == (1, 3)
    assert rl.choose_unroll(row_sum(), (0, 1), (0, 0), 16) == 1


def test_parallel_loops_are_outer_parallel_dims_never_reductions() -> None:
    bn = batch_norm_stats()
    assert rl.choose_parallel(bn, (1, 0, 2, 3), (0, 0, 0, 0), 8) == (1,)
    assert rl.choose_parallel(bn, (0, 2, 3, 1), (0, 0, 0, 0), 8) == (1,)
    assert rl.choose_parallel(bn, (1, 0, 2, 3), (0, 0, 0, 0), 1) == ()
    big = elementwise((4, 4, 4096))
    assert rl.choose_parallel(big, (0, 1, 2), (0, 0, 0), 8) == (0, 1)
    assert rl.choose_parallel(elementwise((16, 16)), (0, 1), (0, 0), 8) == ()  # too small
    assert rl.choose_parallel(matmul(1024, 1024, 1024), (0, 1, 2), (512, 0, 0), 8) == (0, 2)


def test_zero_size_and_rank_zero_kernels_get_trivial_schedules() -> None:
    for k in (elementwise((0, 5)), make([], [("() -> ()", ())], "() -> ()", [])):
        k.properties["schedule"] = rl.choose_schedule(k)
        check_schedule(k)


# --------------------------------------------------------------------------- describe


def test_describe_explains_each_loop() -> None:
    lines = rl.describe(batch_norm_stats()).splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("d1 (64, parallel)") and "threads" in lines[0]
    assert "parallel loops go outside reductions" in lines[0]
    assert lines[1].startswith("d0 (32, reduction)") and "stride 200704" not in lines[1]
    assert "read #0 200704" in lines[1]
    assert lines[3].startswith("d3 (56, reduction): innermost") and "runs of 3136" in lines[3]
    assert "vector 16" in lines[3]
    conv_lines = rl.describe(conv()).splitlines()
    assert conv_lines[2].startswith("d1 (64, parallel)") and "vectorize" in conv_lines[5]
    assert "register block 4 x 56 (d1 x d4)" in conv_lines[6]
    mm_lines = rl.describe(matmul(1024, 1024, 1024)).splitlines()
    assert "tile 512, reduction" in mm_lines[1] and "tile 256, parallel" in mm_lines[2]
    assert "register block 6 x 32 (d0 x d2)" in mm_lines[2]


def test_describe_says_a_hand_written_schedule_is_kept() -> None:
    k = make([256, 1024], [("(d0, d1) -> (d0, d1)", (256, 1024))], "(d0, d1) -> (d0, d1)",
             [256, 1024], schedule="order [1, 0], tiles [0, 0], vector 1, unroll 1, parallel []")
    lines = rl.describe(k).splitlines()
    assert lines[0].startswith("d1 ") and "by hand" in lines[0]
    assert rl.describe(k, ReorderLoops(keep_existing=False)).startswith("d0 ")


# --------------------------------------------------------------------------- the pass


def test_hand_written_schedules_are_kept_unless_told_otherwise() -> None:
    hand = "order [1, 0], tiles [0, 128], vector 4, unroll 2, parallel [1]"
    text = kernel_text([256, 1024], [("(d0, d1) -> (d0, d1)", (256, 1024))],
                       "(d0, d1) -> (d0, d1)", [256, 1024], schedule=hand)
    module = ir.parse(text)
    Pipeline("reorder-loops").run(module)
    assert f"schedule <{hand}>" in ir.to_text(module)
    Pipeline("reorder-loops{keep-existing=false}").run(module)
    assert the_kernel(module).schedule == ScheduleAttr((0, 1), (0, 0), 16, 1, (0,))


def test_a_hand_written_schedule_that_does_not_fit_is_an_error() -> None:
    bad = "order [0, 0], tiles [0], vector 0, unroll 1, parallel [0]"
    module = ir.parse(kernel_text([256, 1024], [("(d0, d1) -> (d0, d1)", (256, 1024))],
                                  "(d0, d1) -> (0, d1)", [1, 1024], reduce=[0], schedule=bad))
    with pytest.raises(PipelineError, match="kernel @k: the schedule it has does not fit") as e:
        Pipeline("reorder-loops").run(module)
    for part in ("not a permutation", "one size >= 0 per dimension", "vector 0",
                 "distinct parallel dimensions"):
        assert part in str(e.value)
    Pipeline("reorder-loops{keep-existing=false}").run(module)  # replaced: no error


@pytest.mark.parametrize(("spec", "message"), [
    ("reorder-loops{vector-width=3}", "vector-width must be 0 or a power of two"),
    ("reorder-loops{threads=0}", "threads must be at least 1"),
    ("reorder-loops{tiles=4}", "not found in expected arguments"),
])
def test_bad_options_are_reported(spec: str, message: str) -> None:
    with pytest.raises(PipelineError, match=message):
        Pipeline(spec)


def test_registered_with_a_description_and_options() -> None:
    assert passes.get_pass("reorder-loops") is ReorderLoops
    assert passes.describe("reorder-loops").startswith("give each kernel a schedule")
    names = [name for name, _, _ in passes.pass_options(ReorderLoops)]
    assert names == ["vector-width", "no-tiles", "register-blocks", "threads", "keep-existing"]


def test_the_pipeline_gives_bn_and_gn_kernels_contiguous_inner_loops() -> None:
    t = "tensor<32x64x56x56xf32>"
    text = "".join(
        f"func.func @{name}(%x: {t}) -> {t} {{\n  %r = hl.{op} : {t}\n  func.return %r : {t}\n}}\n"
        for name, op in [("bn", "batch_norm %x"), ("gn", "group_norm %x groups 32")]
    )
    module = ir.parse(text)
    Pipeline(TO_KERNELS + ",reorder-loops").run(module)
    found = kernels(module)
    assert len(found) == 4  # per norm: the statistics (one read of x), the normalisation
    for kernel in found:
        check_schedule(kernel)
        model = rl.model_of(kernel)
        order = kernel.schedule.values()["order"]  # type: ignore[union-attr]
        x = model.reads[0]
        assert x.shape == NCHW and x.strides[order[-1]] == 1  # type: ignore[index]
        if model.sizes[0] == 2 and model.reductions:  # the statistics' pair (d, d**2)
            # the pair loop inside the walk of x: each row (or tile) twice, from cache
            assert all(x.strides[d] == 0 or model.sizes[d] == 1 or d in model.reductions
                       for d in order[order.index(0):])
            assert rl.contiguous_run(model, order, x) >= 56  # type: ignore[arg-type]
        else:
            assert rl.contiguous_run(model, order, x) >= 56 * 56  # type: ignore[arg-type]


@pytest.mark.parametrize("device", [device_param(d) for d in ("llvm", "opencl")])
def test_a_batch1_convs_register_rows_are_its_output_channels(device: str) -> None:
    """The cost model puts a batch-1 conv's output channels first and its output rows
    last of the parallel loops; the block's rows go on the channels (the input's
    columns are the same for each), the output rows first for the threads."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 128, 32, 32)).astype(np.float32)
    w = rng.standard_normal((128, 128, 3, 3)).astype(np.float32)
    out = Tensor(x, device=device).conv2d(Tensor(w, device=device), padding=1)
    [conv] = [k.kernel for k in out.schedule() if k.kernel.reduction_dims]
    assert conv.schedule is not None and conv.schedule.order_dims[:4] == [4, 0, 1, 2]
    windows = np.lib.stride_tricks.sliding_window_view(
        np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1))), (3, 3), axis=(2, 3))
    expected = np.einsum("nchwij,ocij->nohw", windows, w.astype(np.float64))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-3)
