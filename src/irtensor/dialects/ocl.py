"""The `ocl` dialect: OpenCL kernels as IR, printed to OpenCL C by
`irtensor.passes.opencl.c_printer`.

    ocl.kernel @E_4_8 range [8, 4] (%in0 : !ocl.ptr<f32, global>,
                                     %out : !ocl.ptr<f32, global>) {
      %g0 = ocl.global_id 0
      %v = ocl.load %in0[%g0] : !ocl.ptr<f32, global> -> f32
      ocl.store %v, %out[%g0] : f32, !ocl.ptr<f32, global>
      ocl.return
    }

`range` is the kernel's NDRange (global sizes, dimension 0 first); `local`,
when present, its work-group size. Pointers carry an address space (`global`,
`constant`, `local`, `private`); loads and stores take one linear index.
Scalar arithmetic stays `arith`/`math`, loops stay `scf`. In the host
function, `ocl.enqueue @name(%inputs)` stands for the launch that computes a
tensor.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
    i64,
)
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, Pure, SymbolOpInterface

from irtensor.dialects._base import I64_ATTR, INT_ARRAY, fail, int_array, ints

ADDRESS_SPACES = ("global", "constant", "local", "private")


@irdl_attr_definition
class PtrType(ParametrizedAttribute, TypeAttribute):
    """`!ocl.ptr<f32, global>`: a pointer to `f32` in the global address space."""

    name = "ocl.ptr"
    element: Attribute
    space: StringAttr

    def __init__(self, element: Attribute, space: str = "global"):
        super().__init__(element, StringAttr(space))

    @property
    def address_space(self) -> str:
        return self.space.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            element = parser.parse_type()
            parser.parse_punctuation(",")
            space = parser.parse_identifier()
        if space not in ADDRESS_SPACES:
            parser.raise_error(f"address space must be one of {', '.join(ADDRESS_SPACES)}")
        return [element, StringAttr(space)]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_attribute(self.element)
        printer.print_string(f", {self.address_space}>")

    def verify(self) -> None:
        if self.address_space not in ADDRESS_SPACES:
            raise ValueError(f"!ocl.ptr address space {self.address_space!r} must be one of "
                             f"{', '.join(ADDRESS_SPACES)}")


def _in_kernel(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, KernelOp):
        parent = parent.parent_op()
    return parent is not None


@irdl_op_definition
class KernelOp(IRDLOperation):
    """`ocl.kernel @name range [sizes] local [sizes]? (%args) { ... }`: an OpenCL kernel."""

    name = "ocl.kernel"
    sym_name = prop_def(SymbolNameConstraint())
    range = prop_def(INT_ARRAY)
    local = opt_prop_def(INT_ARRAY)
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())

    def __init__(self, name: str, arg_types: Sequence[Attribute], global_size: Sequence[int],
                 body: Region | None = None, local_size: Sequence[int] | None = None):
        props: dict[str, Attribute] = {"sym_name": StringAttr(name),
                                       "range": int_array(global_size)}
        if local_size is not None:
            props["local"] = int_array(local_size)
        super().__init__(properties=props,
                         regions=[body if body is not None else Region(Block(arg_types=arg_types))])

    @property
    def global_size(self) -> tuple[int, ...]:
        return ints(self.range)

    @property
    def local_size(self) -> tuple[int, ...] | None:
        return ints(self.local) if self.local is not None else None

    def verify_(self) -> None:
        sizes = self.global_size
        if not 1 <= len(sizes) <= 3 or any(s < 0 for s in sizes):
            fail(self, f"range {list(sizes)} must give 1 to 3 sizes >= 0")
        if (local := self.local_size) is not None and (
                len(local) != len(sizes) or any(n < 1 for n in local)):
            fail(self, f"local {list(local)} must give one size >= 1 per range dimension")
        for i, arg in enumerate(self.body.block.args):
            if not isinstance(arg.type, PtrType) or arg.type.address_space not in (
                    "global", "constant"):
                fail(self, f"argument #{i} has type {arg.type}; kernel arguments are "
                           "!ocl.ptr in the global or constant address space")
        if not isinstance(self.body.block.last_op, ReturnOp):
            fail(self, "body must end with ocl.return")

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name = parser.parse_symbol_name().data
        parser.parse_keyword("range")
        sizes = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
        local = None
        if parser.parse_optional_keyword("local"):
            local = parser.parse_comma_separated_list(parser.Delimiter.SQUARE,
                                                      parser.parse_integer)
        args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_argument)
        region = parser.parse_region(args)
        return cls(name, [a.type for a in args], sizes, region, local)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.sym_name.data} range {list(self.global_size)}")
        if (local := self.local_size) is not None:
            printer.print_string(f" local {list(local)}")
        printer.print_string(" (")
        printer.print_list(self.body.block.args, printer.print_block_argument)
        printer.print_string(") ")
        printer.print_region(self.body, print_entry_block_args=False)


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """`ocl.return` ends a kernel."""

    name = "ocl.return"
    traits = traits_def(IsTerminator(), HasParent(KernelOp))
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


class _WorkItemOp(IRDLOperation):
    dim = prop_def(I64_ATTR)
    res = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$dim attr-dict"

    def __init__(self, dim: int):
        super().__init__(properties={"dim": IntegerAttr(dim, i64)}, result_types=[IndexType()])

    @property
    def dimension(self) -> int:
        return self.dim.value.data

    def verify_(self) -> None:
        if not 0 <= self.dimension <= 2:
            fail(self, f"dimension {self.dimension} must be 0, 1 or 2")
        if not _in_kernel(self):
            fail(self, "must be inside an ocl.kernel")


@irdl_op_definition
class GlobalIdOp(_WorkItemOp):
    """`%i = ocl.global_id 0`: get_global_id(0)."""

    name = "ocl.global_id"


@irdl_op_definition
class LocalIdOp(_WorkItemOp):
    """`%i = ocl.local_id 0`: get_local_id(0)."""

    name = "ocl.local_id"


@irdl_op_definition
class GroupIdOp(_WorkItemOp):
    """`%i = ocl.group_id 0`: get_group_id(0)."""

    name = "ocl.group_id"


@irdl_op_definition
class GlobalSizeOp(_WorkItemOp):
    """`%n = ocl.global_size 0`: get_global_size(0)."""

    name = "ocl.global_size"


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """`ocl.barrier local` (or `global`): barrier(CLK_LOCAL_MEM_FENCE)."""

    name = "ocl.barrier"
    fence = prop_def(StringAttr)

    def __init__(self, fence: str = "local"):
        super().__init__(properties={"fence": StringAttr(fence)})

    @classmethod
    def parse(cls, parser: Parser) -> BarrierOp:
        return cls(parser.parse_identifier())

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.fence.data}")

    def verify_(self) -> None:
        if self.fence.data not in ("local", "global"):
            fail(self, f"fence {self.fence.data!r} must be local or global")
        if not _in_kernel(self):
            fail(self, "must be inside an ocl.kernel")


@irdl_op_definition
class LocalArrayOp(IRDLOperation):
    """`%a = ocl.local_array 256 : !ocl.ptr<f32, local>`: `__local float a[256];`."""

    name = "ocl.local_array"
    size = prop_def(I64_ATTR)
    res = result_def(PtrType)
    assembly_format = "$size attr-dict `:` type($res)"

    def __init__(self, element: Attribute, size: int):
        super().__init__(properties={"size": IntegerAttr(size, i64)},
                         result_types=[PtrType(element, "local")])

    def verify_(self) -> None:
        t = self.res.type
        assert isinstance(t, PtrType)
        if t.address_space != "local":
            fail(self, f"result {t} must be in the local address space")
        if self.size.value.data < 1:
            fail(self, f"size {self.size.value.data} must be at least 1")
        if not _in_kernel(self):
            fail(self, "must be inside an ocl.kernel")


@irdl_op_definition
class LoadOp(IRDLOperation):
    """`%v = ocl.load %p[%i] : !ocl.ptr<f32, global> -> f32`."""

    name = "ocl.load"
    ptr = operand_def(PtrType)
    index = operand_def(IndexType)
    res = result_def()
    assembly_format = "$ptr `[` $index `]` attr-dict `:` type($ptr) `->` type($res)"

    def __init__(self, ptr: SSAValue, index: SSAValue, result_type: Attribute | None = None):
        if result_type is None:
            assert isinstance(ptr.type, PtrType)
            result_type = ptr.type.element
        super().__init__(operands=[ptr, index], result_types=[result_type])

    def verify_(self) -> None:
        t = self.ptr.type
        assert isinstance(t, PtrType)
        if self.res.type != t.element:
            fail(self, f"result type {self.res.type} must be the pointer's element {t.element}")


@irdl_op_definition
class StoreOp(IRDLOperation):
    """`ocl.store %v, %p[%i] : f32, !ocl.ptr<f32, global>`."""

    name = "ocl.store"
    value = operand_def()
    ptr = operand_def(PtrType)
    index = operand_def(IndexType)
    assembly_format = "$value `,` $ptr `[` $index `]` attr-dict `:` type($value) `,` type($ptr)"

    def __init__(self, value: SSAValue, ptr: SSAValue, index: SSAValue):
        super().__init__(operands=[value, ptr, index])

    def verify_(self) -> None:
        t = self.ptr.type
        assert isinstance(t, PtrType)
        if t.address_space == "constant":
            fail(self, f"cannot store through {t}: the constant address space is read-only")
        if self.value.type != t.element:
            fail(self, f"value of type {self.value.type} stored through {t}")


@irdl_op_definition
class EnqueueOp(IRDLOperation):
    """`%r = ocl.enqueue @E_4_8_0(%a, %b) : (tensor<..>, ..) -> tensor<..>`: the host's launch
    of an ocl.kernel, its last argument the result's buffer."""

    name = "ocl.enqueue"
    kernel = prop_def(SymbolRefAttr)
    inputs = var_operand_def(TensorType)
    res = result_def(TensorType)
    assembly_format = "$kernel `(` $inputs `)` attr-dict `:` functional-type($inputs, $res)"

    def __init__(self, kernel: str, inputs: Sequence[SSAValue], result_type: Attribute):
        super().__init__(properties={"kernel": SymbolRefAttr(kernel)}, operands=[list(inputs)],
                         result_types=[result_type])


OCL = Dialect(
    "ocl",
    [KernelOp, ReturnOp, GlobalIdOp, LocalIdOp, GroupIdOp, GlobalSizeOp, BarrierOp,
     LocalArrayOp, LoadOp, StoreOp, EnqueueOp],
    [PtrType],
)

__all__ = ["ADDRESS_SPACES", "OCL", "BarrierOp", "EnqueueOp", "GlobalIdOp", "GlobalSizeOp",
           "GroupIdOp", "KernelOp", "LoadOp", "LocalArrayOp", "LocalIdOp", "PtrType",
           "ReturnOp", "StoreOp"]
