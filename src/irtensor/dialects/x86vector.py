"""The `x86vector` dialect: x86 vector instructions LLVM's generic IR cannot ask for.

Named as MLIR's `x86vector` dialect names them. One op so far:

    %acc2 = x86vector.avx512.dot %acc, %a, %b : vector<32xbf16> -> vector<16xf32>

is AVX512-BF16's `vdpbf16ps`: lane i of the f32 accumulator adds the products of the
bf16 pairs `a[2i] * b[2i]` and `a[2i+1] * b[2i+1]` (exact: 8 by 8 bits fit in f32),
with round-to-nearest-even, denormal inputs read as zero and denormal results flushed,
whatever MXCSR says. `lower-kernels-to-loops` builds it for the register block of a
bf16 matmul or conv where the host has the instruction (`irtensor.host.bf16_dot`);
convert-to-llvm calls `llvm.x86.avx512bf16.dpbf16ps.{128,256,512}`.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import BFloat16Type, Float32Type, VectorType
from xdsl.ir import Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

DOT_LANES = (4, 8, 16)  # the 128-, 256- and 512-bit forms


@irdl_op_definition
class DotBF16Op(IRDLOperation):
    """acc + the pairwise products of two vectors of bf16 pairs (`vdpbf16ps`)."""

    name = "x86vector.avx512.dot"

    ACC: ClassVar = VarConstraint("ACC", base(VectorType))
    PAIRS: ClassVar = VarConstraint("PAIRS", base(VectorType))
    acc = operand_def(ACC)
    a = operand_def(PAIRS)
    b = operand_def(PAIRS)
    res = result_def(ACC)

    traits = traits_def(Pure())
    assembly_format = "$acc `,` $a `,` $b attr-dict `:` type($a) `->` type($res)"

    def __init__(self, acc: SSAValue, a: SSAValue, b: SSAValue):
        super().__init__(operands=[acc, a, b], result_types=[acc.type])

    def verify_(self) -> None:
        acc, a, b, res = self.acc.type, self.a.type, self.b.type, self.res.type
        assert isinstance(acc, VectorType) and isinstance(a, VectorType)
        assert isinstance(b, VectorType) and isinstance(res, VectorType)
        lanes = acc.get_shape()[0] if acc.get_num_dims() == 1 else 0
        if (acc != res or not isinstance(acc.element_type, Float32Type)
                or lanes not in DOT_LANES):
            raise VerifyException(
                f"x86vector.avx512.dot: the accumulator and result must be one vector of "
                f"4, 8 or 16 f32, got {acc} and {res}")
        pairs = VectorType(BFloat16Type(), [2 * lanes])
        for which, t in (("a", a), ("b", b)):
            if t != pairs:
                raise VerifyException(f"x86vector.avx512.dot: operand {which} must be "
                                      f"{pairs} for {acc}, got {t}")


X86VECTOR = Dialect("x86vector", [DotBF16Op], [])

__all__ = ["DOT_LANES", "X86VECTOR", "DotBF16Op"]
