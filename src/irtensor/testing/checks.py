"""Checks for property tests: same results, meaning kept by a pipeline, reads in bounds."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


def assert_same_results(
    got: Sequence[np.ndarray], want: Sequence[np.ndarray], rtol: float = 1e-6, atol: float = 1e-6
) -> None:
    """Equal dtypes and shapes; floats close (NaN where NaN), ints and bools exact."""
    assert len(got) == len(want), f"{len(got)} results, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.dtype == w.dtype, f"result #{i}: dtype {g.dtype}, expected {w.dtype}"
        assert g.shape == w.shape, f"result #{i}: shape {g.shape}, expected {w.shape}"
        if np.issubdtype(w.dtype, np.integer) or w.dtype == np.bool_:
            np.testing.assert_array_equal(g, w, err_msg=f"result #{i}")
        else:
            g64, w64 = g.astype(np.float64), w.astype(np.float64)
            np.testing.assert_allclose(g64, w64, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"result #{i}")


def assert_preserves_semantics(
    pipeline: str | ModulePass | Sequence[ModulePass | str],
    module: ModuleOp,
    inputs: Sequence[np.ndarray],
    rtol: float = 1e-6,
    atol: float = 1e-6,
    fn: str = "main",
) -> ModuleOp:
    """Run `pipeline` on a copy of `module`; the interpreter must give the same results.

    Returns the rewritten module. On a mismatch the assertion shows the IR
    before and after; inside a hypothesis test, hypothesis shrinks the program
    to the smallest that still fails.
    """
    from irtensor import ir
    from irtensor.interp import run
    from irtensor.pipeline import Pipeline

    after = module.clone()
    Pipeline([pipeline] if isinstance(pipeline, ModulePass) else pipeline).run(after)
    want = run(module, list(inputs), fn=fn)
    got = run(after, list(inputs), fn=fn)
    try:
        assert_same_results(got, want, rtol, atol)
    except AssertionError as e:
        raise AssertionError(
            f"the pipeline changed the results of @{fn}: {e}\n"
            f"--- IR before ---\n{ir.to_text(module)}--- IR after ---\n{ir.to_text(after)}"
        ) from None
    return after


def assert_reads_in_bounds(module: ModuleOp) -> int:
    """Every read of every kernel, at every point of its space where its mask
    holds, indexes inside its input. Returns how many reads were checked."""
    from irtensor.dialects.kernel import KernelOp
    from irtensor.interp.kernel_impls import eval_expr, index_grid, valid_points

    checked = 0
    for op in module.walk():
        if not isinstance(op, KernelOp):
            continue
        n_body = len(op.body_inputs)
        full = op.sizes
        reduced = tuple(1 if d in op.reduction_dims else s for d, s in enumerate(full))
        for i, (value, access) in enumerate(zip(op.inputs, op.accesses, strict=True)):
            space = full if i < n_body else reduced
            grid = index_grid(space)
            valid = valid_points(access, grid, space)
            shape = value.type.get_shape()  # type: ignore[attr-defined]
            for axis, expr in enumerate(access.affine_map.results):
                index = np.broadcast_to(eval_expr(expr, grid), space)
                bad = valid & ((index < 0) | (index >= shape[axis]))
                assert not bad.any(), (
                    f"kernel @{op.sym_name.data} read #{i} axis {axis}: index "
                    f"{int(index[bad][0])} outside size {shape[axis]}"
                )
            checked += 1
    return checked
