"""Generated programs print, parse and print back to the same text, in both syntaxes."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, bf16, f16, f32, f64, i1, i32, i64
from xdsl.ir import Attribute, Block, Region

from irtensor import ir
from irtensor.dialects import ll
from irtensor.testing import Program, programs

ALL_TYPES = (f16, bf16, f32, f64, i32, i64, i1)


def assert_round_trips(program: Program) -> None:
    ir.verify(program.module)
    text = ir.to_text(program.module)
    again = ir.parse(text)
    ir.verify(again)
    assert ir.to_text(again) == text
    generic = ir.to_text(program.module, generic=True)
    from_generic = ir.parse(generic)
    assert from_generic.is_structurally_equivalent(program.module)
    assert ir.to_text(from_generic) == text


@given(programs(dialect="hl", dtypes=ALL_TYPES))
def test_hl_programs_round_trip(program: Program) -> None:
    assert_round_trips(program)


@given(programs(dialect="ll", dtypes=ALL_TYPES))
def test_ll_programs_round_trip(program: Program) -> None:
    assert_round_trips(program)


@given(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([f64, f32]))
def test_every_float_constant_and_pad_value_round_trips(value: float, element: Attribute) -> None:
    const = ll.ConstOp(value, TensorType(element, [2]))
    pad = ll.PadOp(const.res, (1,), (0,), value)
    body = Block([const, pad, func.ReturnOp()])
    module = ModuleOp([func.FuncOp("f", ([], []), Region(body))])
    c, p = list(ir.parse(ir.to_text(module)).walk())[2:4]
    assert isinstance(c, ll.ConstOp) and isinstance(p, ll.PadOp)
    same = (lambda x, y: math.isnan(x) and math.isnan(y)) if math.isnan(value) else float.__eq__
    assert same(float(c.scalar), float(const.scalar))
    assert same(p.pad_value, value)
