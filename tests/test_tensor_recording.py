"""The light recording graph: what a Tensor call records, when a program is built, and
scalars that do not recompile (on every device)."""

from __future__ import annotations

import gc
import re
import weakref
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import irtensor
from irtensor import Tensor
from irtensor.frontend import graph, realize
from irtensor.runtime import STATS

PACKAGE = Path(irtensor.__file__).parent
# Attributes xDSL keeps to itself (its IR objects' internals) and ways into a closure.
PRIVATE = ("_operands", "_operand_uses", "_args", "_results", "_uses", "_parent", "_next_op",
           "_prev_op", "_first_op", "_last_op", "_successor_uses", "__closure__",
           "cell_contents")


def test_the_package_uses_no_private_attribute_of_xdsl() -> None:
    pattern = re.compile(r"\.(" + "|".join(map(re.escape, PRIVATE)) + r")\b")
    private_import = re.compile(r"from xdsl[\w.]* import [^\n]*\b_\w+|import xdsl[\w.]*\._")
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line) or private_import.search(line):
                found.append(f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_the_same_call_on_the_same_operands_records_one_node() -> None:
    a = Tensor(np.arange(4, dtype=np.float32))
    b = (a * 2 + 1).exp()
    c = (a * 2 + 1).exp()
    assert b._value is c._value
    assert (a * 2)._value is not (a * 3)._value
    # -0.0 and 0.0 are equal in Python but not the same constant; NaN is itself
    assert Tensor.full((), -0.0)._value is not Tensor.full((), 0.0)._value
    assert Tensor.full((), float("nan"))._value is Tensor.full((), float("nan"))._value
    assert (Tensor.full((), -0.0) + 0.0).numpy().tobytes() == np.float32(0.0).tobytes()
    assert np.signbit((a * 0 + Tensor.full((), -0.0)).numpy()[0]) == np.signbit(np.float32(0.0))


def test_recording_a_seen_signature_builds_no_xdsl_op(monkeypatch: pytest.MonkeyPatch) -> None:
    a = Tensor(np.ones(8, np.float32))
    (a * 1.5 + 1.0).relu().sum()  # every signature seen once
    built: list[object] = []
    real = graph.make_op
    monkeypatch.setattr(graph, "make_op", lambda *args: built.append(args) or real(*args))
    x = a
    for _ in range(50):
        x = (x * 1.5 + 1.0).relu()
    x.sum()
    assert built == []


def test_a_mistake_raises_at_the_call_that_made_it() -> None:
    a, b = Tensor.ones(2, 3), Tensor.ones(4, 3)
    with pytest.raises(ValueError, match=r"'hl.add' op .*\(2, 3\).*\(4, 3\)|broadcast"):
        a + b
    with pytest.raises(ValueError, match=r"contracted sizes differ: lhs \(2, 3\) has 3, rhs "
                       r"\(4, 3\) has 4"):
        a @ b
    a + Tensor.ones(1, 3)  # the failed signatures are not remembered as good ones
    with pytest.raises(ValueError):
        a + b


def test_a_replayed_program_builds_no_module(monkeypatch: pytest.MonkeyPatch) -> None:
    w = Tensor(np.full((4, 4), 0.5, np.float32))
    x = Tensor(np.ones((2, 4), np.float32))
    first = (x @ w).relu().numpy()
    monkeypatch.setattr(graph, "build", lambda *args: pytest.fail("built a module again"))
    x2 = Tensor(np.full((2, 4), 2.0, np.float32))
    np.testing.assert_allclose((x2 @ w).relu().numpy(), 2 * first)


def test_a_dropped_intermediate_frees_its_buffer() -> None:
    a = Tensor(np.ones(1000, np.float32))
    b = (a * 2).realize()
    buffer = realize.buffer_of(b._value)
    assert buffer is not None
    gone = weakref.ref(b._value)
    c = (b + 1).realize()
    del b, buffer
    assert gone() is None  # no reference cycle: gone without the cycle collector
    assert c.numpy()[0] == 3.0


def steps_compiled(steps: int, step) -> tuple[int, Tensor]:  # type: ignore[no-untyped-def]
    before = STATS.pipeline_runs
    x = Tensor(np.zeros(16, np.float32)).realize()
    for i in range(steps):
        x = step(x, i).realize()
    return STATS.pipeline_runs - before, x


def test_a_loop_changing_one_scalar_compiles_at_most_two_programs() -> None:
    runs, x = steps_compiled(1000, lambda x, i: x + 0.001 * (i % 7))
    assert runs <= 2
    want = np.float32(0)
    for i in range(1000):
        want = np.float32(want + np.float32(0.001 * (i % 7)))
    np.testing.assert_array_equal(x.numpy(), np.full(16, want, np.float32))


def test_the_seed_loop_changing_its_scalar_each_step_compiles_twice() -> None:
    x = Tensor.zeros(1).realize()  # a program of its own: a constant, no input
    before = STATS.pipeline_runs
    for i in range(200):
        x += i
        x.realize()
    assert x.item() == sum(range(200))
    assert STATS.pipeline_runs - before <= 2


def test_constants_that_never_change_stay_folded(monkeypatch: pytest.MonkeyPatch) -> None:
    modules: list[str] = []
    real = realize.execute

    def spy(module, *args, **kwargs):  # type: ignore[no-untyped-def]
        modules.append(irtensor.ir.to_text(module))
        return real(module, *args, **kwargs)

    monkeypatch.setattr(realize, "execute", spy)
    w = Tensor(np.ones(8, np.float32)).realize()
    for i in range(4):
        w = (w * 0.5 + (i + 1) * 0.25).realize()
    assert len(modules) == 2
    second = modules[1]
    assert "%s0: tensor<f32>" in second  # the varying constant is an argument
    assert "ll.const 0.5 " in second  # the one that never changed is not
    assert "0.25" not in second and "0.75" not in second
    want = np.ones(8, np.float32)
    for i in range(4):
        want = want * np.float32(0.5) + np.float32((i + 1) * 0.25)
    np.testing.assert_array_equal(w.numpy(), want)


def test_the_seed_loop_realized_once_still_folds_to_a_constant() -> None:
    x = Tensor.zeros(1)
    for i in range(5):
        x += i
    (kernel,) = x.schedule()  # one kernel, reading nothing, storing the folded 10
    assert "reads []" in str(kernel) and "arith.constant 1.000000e+01" in str(kernel)
    assert x.item() == 10.0


SCALARS = st.floats(-4, 4, allow_nan=False, width=32)


@given(st.lists(SCALARS, min_size=3, max_size=3), st.lists(SCALARS, min_size=3, max_size=3),
       st.lists(SCALARS, min_size=3, max_size=3))
def test_a_program_with_its_constants_as_arguments_means_the_same(
        c1: list[float], c2: list[float], c3: list[float]) -> None:
    """Folded (first run), with the changed constants as arguments (second), replayed
    (third): each as numpy computes it with those constants."""
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    for a, b, c in (c1, c2, c3):
        got = ((Tensor(x) * a + b).maximum(c) - Tensor.full((3, 4), a) * b).numpy()
        f = np.float32
        want = np.maximum(x * f(a) + f(b), f(c)) - np.full((3, 4), f(a)) * f(b)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_a_varying_integer_and_boolean_constant_keep_their_dtypes() -> None:
    for i in range(3):
        n = Tensor(np.arange(5, dtype=np.int32))
        assert ((n + i) * 3).numpy().tolist() == [(k + i) * 3 for k in range(5)]
        b = Tensor(np.array([True, False]))
        assert (b & (i % 2 == 0)).numpy().tolist() == [i % 2 == 0, False]


def test_names_given_to_nodes_name_the_values_of_the_module() -> None:
    a = Tensor(np.ones(3, np.float32))
    b = a + 1
    graph.NAMES[b._value] = "bias_added"
    assert "%bias_added = hl.add" in b.ir()
    gc.collect()
