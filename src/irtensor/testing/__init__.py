"""Tools for property-testing irtensor IR with hypothesis.

`programs()` draws well-typed random programs in `hl` or `ll` together with
matching numpy inputs; shapes include size-1 and zero-size axes and rank 0; `weights`
steers the op families and `containing` plants a pattern in every program
(`irtensor.testing.planting`). `assert_preserves_semantics` checks that a pipeline keeps
a program's meaning under the interpreter. `register_profiles()` adds the `ci` and `dev`
hypothesis profiles. Use::

    from irtensor.testing import programs, assert_preserves_semantics
    from hypothesis import given

    @given(programs(dialect="hl", containing="hl.neg(hl.neg)"))
    def test_my_pass(program):
        assert_preserves_semantics("fold-neg-neg", program.module, program.inputs)
"""

from irtensor.testing.checks import (
    assert_preserves_semantics,
    assert_reads_in_bounds,
    assert_same_results,
)
from irtensor.testing.programs import *  # noqa: F403 (the generator and its tables)
from irtensor.testing.programs import Program, programs, random_input, register_profiles

__all__ = [
    "Program", "assert_preserves_semantics", "assert_reads_in_bounds", "assert_same_results",
    "programs", "random_input", "register_profiles",
]
