"""Generated programs print, parse and print back to the same text, in both syntaxes."""

from __future__ import annotations

from hypothesis import given
from xdsl.dialects.builtin import bf16, f16, f32, f64, i1, i32, i64

from irtensor import ir
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
