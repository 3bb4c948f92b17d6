"""The `kernel` dialect: fused kernels, each computing one output over an iteration space.

A kernel is linalg.generic's shape with tinygrad's masked views::

    %r = kernel.kernel @r_16_32_8(%a, %b) space [16, 32, 8] reduce [2] sum
           reads [#kernel.access<(d0, d1, d2) -> (d0, d2)>,
                  #kernel.access<(d0, d1, d2) -> (d2, d1)>]
           writes affine_map<(d0, d1, d2) -> (d0, d1)>
           : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32> {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      kernel.yield %m : f32
    }

For every point of the iteration space the body computes one scalar from the
inputs, each read through its access: an affine map from the iteration space
to the input's indices, valid where its mask holds (elsewhere the read gives
the pad value and touches no memory). Without `reduce`, that scalar is the
output element at `writes(point)`; with it, the scalars are combined (`sum` or
`max`) over the reduction dimensions, and an optional `epilogue` region maps
the combined value (and reads of the trailing `epilogue_inputs`, which may use
only parallel dimensions) to the output element. The `schedule` says how to
run it (loop order, tiles, vector width, unroll, parallel loops) and never
changes what it computes.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    AffineMapAttr,
    AffineSetAttr,
    ArrayAttr,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, ParametrizedAttribute, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSet,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    opt_region_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from irtensor import dtypes
from irtensor.dialects._base import (
    I64_ATTR,
    INT_ARRAY,
    element_of,
    f64_attr,
    fail,
    format_scalar,
    int_array,
    ints,
    pad_value_problem,
    parse_scalar,
    shape_of,
)
from irtensor.dialects.ll import ReduceKindAttr


@irdl_attr_definition
class AccessAttr(ParametrizedAttribute):
    """How a kernel reads one input: `#kernel.access<MAP>` or, masked,
    `#kernel.access<MAP, valid (d0, d1) : (d0 - 1 >= 0), pad 0.0>`."""

    name = "kernel.access"
    map: AffineMapAttr
    mask: AffineSetAttr
    pad: FloatAttr

    def __init__(self, map: AffineMap, mask: AffineSet | None = None, pad: float = 0.0):
        mask = mask or AffineSet(map.num_dims, 0, ())
        super().__init__(AffineMapAttr(map), AffineSetAttr(mask), f64_attr(pad))

    @property
    def affine_map(self) -> AffineMap:
        return self.map.data

    @property
    def constraints(self) -> AffineSet:
        return self.mask.data

    @property
    def pad_value(self) -> float:
        return self.pad.value.data

    @property
    def is_masked(self) -> bool:
        return bool(self.mask.data.constraints)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            amap = parser.parse_affine_map()
            mask, pad = AffineSet(amap.num_dims, 0, ()), 0.0
            if parser.parse_optional_punctuation(","):
                parser.parse_keyword("valid")
                mask = parser.parse_affine_set()
                parser.parse_punctuation(",")
                parser.parse_keyword("pad")
                pad = float(parse_scalar(parser))
        return [AffineMapAttr(amap), AffineSetAttr(mask), f64_attr(pad)]

    def print_parameters(self, printer: Printer) -> None:
        text = str(self.affine_map)
        if self.is_masked:
            text += f", valid {self.constraints}, pad {format_scalar(self.pad_value)}"
        printer.print_string(f"<{text}>")

    def verify(self) -> None:
        if self.mask.data.num_dims != self.map.data.num_dims:
            raise VerifyException(
                f"access mask has {self.mask.data.num_dims} dims, its map "
                f"{self.map.data.num_dims}"
            )


SCHEDULE_FIELDS = ("order", "tiles", "vector", "unroll", "parallel")


@irdl_attr_definition
class ScheduleAttr(ParametrizedAttribute):
    """`#kernel.schedule<order [2, 0, 1], tiles [0, 64, 0], vector 8, unroll 1, parallel [0]>`

    `order` lists the loops outermost first (dimensions of the iteration space);
    `tiles` gives a tile size per dimension (0: untiled); `vector` is the width
    of the innermost loop's vectors; `unroll` unrolls the innermost loop;
    `parallel` names the dimensions whose loops may run on several threads.
    """

    name = "kernel.schedule"
    order: ArrayAttr[IntAttr]
    tiles: ArrayAttr[IntAttr]
    vector: IntAttr
    unroll: IntAttr
    parallel: ArrayAttr[IntAttr]

    def __init__(
        self,
        order: Sequence[int],
        tiles: Sequence[int],
        vector: int = 1,
        unroll: int = 1,
        parallel: Sequence[int] = (),
    ):
        def arr(values: Sequence[int]) -> ArrayAttr[IntAttr]:
            return ArrayAttr([IntAttr(v) for v in values])

        super().__init__(arr(order), arr(tiles), IntAttr(vector), IntAttr(unroll), arr(parallel))

    @property
    def order_dims(self) -> list[int]:
        return [x.data for x in self.order.data]

    @property
    def tile_sizes(self) -> list[int]:
        return [x.data for x in self.tiles.data]

    @property
    def parallel_dims(self) -> list[int]:
        return [x.data for x in self.parallel.data]

    def values(self) -> dict[str, list[int] | int]:
        def get(a: Attribute) -> list[int] | int:
            return [x.data for x in a.data] if isinstance(a, ArrayAttr) else a.data  # type: ignore[union-attr]

        return {f: get(getattr(self, f)) for f in SCHEDULE_FIELDS}

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        found: dict[str, list[int] | int] = {}
        with parser.in_angle_brackets():
            while True:
                key = parser.parse_identifier()
                if key not in SCHEDULE_FIELDS or key in found:
                    parser.raise_error(f"expected one of {', '.join(SCHEDULE_FIELDS)} (once each)")
                if key in ("vector", "unroll"):
                    found[key] = parser.parse_integer()
                else:
                    found[key] = parser.parse_comma_separated_list(
                        parser.Delimiter.SQUARE, parser.parse_integer
                    )
                if not parser.parse_optional_punctuation(","):
                    break
        missing = [f for f in SCHEDULE_FIELDS if f not in found]
        if missing:
            parser.raise_error(f"schedule lacks {', '.join(missing)}")
        made = cls(**found)  # type: ignore[arg-type]
        return list(made.parameters)

    def print_parameters(self, printer: Printer) -> None:
        v = self.values()
        printer.print_string(
            f"<order {v['order']}, tiles {v['tiles']}, vector {v['vector']}, "
            f"unroll {v['unroll']}, parallel {v['parallel']}>"
        )


def split_of(expr: AffineExpr) -> tuple[int, int, int | None] | None:
    """(dim, stride, modulus) when `expr` is one digit of a dim written row-major:
    `d floordiv stride`, `d mod modulus` or `(d floordiv stride) mod modulus`."""
    modulus = None
    if (isinstance(expr, AffineBinaryOpExpr) and expr.kind == AffineBinaryOpKind.Mod
            and isinstance(expr.rhs, AffineConstantExpr)):
        modulus, expr = expr.rhs.value, expr.lhs
    stride = 1
    if (isinstance(expr, AffineBinaryOpExpr) and expr.kind == AffineBinaryOpKind.FloorDiv
            and isinstance(expr.rhs, AffineConstantExpr)):
        stride, expr = expr.rhs.value, expr.lhs
    if not isinstance(expr, AffineDimExpr) or stride < 1 or (modulus or 1) < 1:
        return None
    if stride == 1 and modulus is None:
        return None  # a plain dim
    return expr.position, stride, modulus


@irdl_op_definition
class KernelOp(IRDLOperation):
    """One fused kernel; see the module docstring for its meaning."""

    name = "kernel.kernel"
    inputs = var_operand_def(TensorType)
    sym_name = prop_def(SymbolNameConstraint())
    space = prop_def(INT_ARRAY)
    reduce = opt_prop_def(INT_ARRAY)
    combiner = opt_prop_def(ReduceKindAttr)
    reads = prop_def(ArrayAttr[AccessAttr])
    writes = prop_def(AffineMapAttr)
    epilogue_inputs = prop_def(I64_ATTR, default_value=IntegerAttr(0, i64))
    schedule = opt_prop_def(ScheduleAttr)
    res = result_def(TensorType)
    body = region_def("single_block")
    epilogue = opt_region_def("single_block")
    traits = traits_def(Pure())
    assembly_format = (
        "$sym_name `(` $inputs `)` `space` $space (`reduce` $reduce^ $combiner)? "
        "`reads` $reads `writes` $writes (`epilogue_inputs` $epilogue_inputs^)? "
        "(`schedule` $schedule^)? attr-dict `:` functional-type($inputs, $res) "
        "$body (`epilogue` $epilogue^)?"
    )

    def __init__(
        self,
        name: str,
        inputs: Sequence[SSAValue],
        space: Sequence[int],
        reads: Sequence[AccessAttr],
        writes: AffineMap,
        result_type: TensorType,
        body: Region,
        reduce: Sequence[int] = (),
        combiner: str | None = None,
        epilogue: Region | None = None,
        epilogue_inputs: int = 0,
        schedule: ScheduleAttr | None = None,
    ):
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "space": int_array(space),
            "reads": ArrayAttr(list(reads)),
            "writes": AffineMapAttr(writes),
            "epilogue_inputs": IntegerAttr(epilogue_inputs, i64),
        }
        if reduce:
            props["reduce"] = int_array(reduce)
            props["combiner"] = ReduceKindAttr(combiner or "sum")  # type: ignore[arg-type]
        if schedule is not None:
            props["schedule"] = schedule
        super().__init__(
            operands=[list(inputs)],
            properties=props,
            result_types=[result_type],
            regions=[body, epilogue if epilogue is not None else []],
        )

    # ------------------------------------------------------------------ queries

    @property
    def sizes(self) -> tuple[int, ...]:
        return ints(self.space)

    @property
    def reduction_dims(self) -> tuple[int, ...]:
        return ints(self.reduce) if self.reduce is not None else ()

    @property
    def parallel_dims(self) -> tuple[int, ...]:
        return tuple(d for d in range(len(self.sizes)) if d not in self.reduction_dims)

    @property
    def accesses(self) -> tuple[AccessAttr, ...]:
        return tuple(self.reads.data)

    @property
    def n_epilogue_inputs(self) -> int:
        return self.epilogue_inputs.value.data

    @property
    def epilogue_block(self) -> Block | None:
        region = self.epilogue
        return region.blocks.first if region is not None and region.blocks else None

    @property
    def body_inputs(self) -> tuple[SSAValue, ...]:
        return tuple(self.inputs[: len(self.inputs) - self.n_epilogue_inputs])

    # ------------------------------------------------------------------ verification

    def verify_(self) -> None:
        rank = len(self.sizes)
        if any(s < 0 for s in self.sizes):
            fail(self, f"space {list(self.sizes)} has a negative size")
        self._verify_reduce(rank)
        self._verify_reads(rank)
        self._verify_writes(rank)
        self._verify_regions()
        if self.schedule is not None and (problems := self.schedule_problems(self.schedule)):
            fail(self, "schedule: " + "; ".join(problems))

    def schedule_problems(self, schedule: ScheduleAttr) -> list[str]:
        """What is wrong with `schedule` for this kernel (nothing: an empty list)."""
        rank = len(self.sizes)
        order, tiles, parallel = schedule.order_dims, schedule.tile_sizes, schedule.parallel_dims
        problems = []
        if sorted(order) != list(range(rank)):
            problems.append(f"order {order} is not a permutation of the {rank} dimensions")
        if len(tiles) != rank or any(t < 0 for t in tiles):
            problems.append(f"tiles {tiles} must give one size >= 0 per dimension ({rank})")
        for name, value in (("vector", schedule.vector.data), ("unroll", schedule.unroll.data)):
            if value < 1:
                problems.append(f"{name} {value} must be at least 1")
        if len(set(parallel)) != len(parallel) or any(
                d not in self.parallel_dims for d in parallel):
            problems.append(f"parallel {parallel} must name distinct parallel dimensions "
                            f"(here {list(self.parallel_dims)})")
        return problems

    def _verify_reduce(self, rank: int) -> None:
        dims = self.reduction_dims
        if len(set(dims)) != len(dims) or any(not 0 <= d < rank for d in dims):
            fail(self, f"reduce {list(dims)} must name distinct dimensions of the {rank}-d space")
        if (self.reduce is None) != (self.combiner is None):
            fail(self, "reduce and its combiner come together")
        if self.epilogue_block is not None and not dims:
            fail(self, "an epilogue needs reduction dimensions")
        if self.n_epilogue_inputs and self.epilogue_block is None:
            fail(self, "epilogue_inputs without an epilogue")

    def _verify_reads(self, rank: int) -> None:
        if len(self.accesses) != len(self.inputs):
            fail(self, f"has {len(self.inputs)} inputs but {len(self.accesses)} reads")
        for i, (value, access) in enumerate(zip(self.inputs, self.accesses, strict=True)):
            amap = access.affine_map
            if amap.num_dims != rank or amap.num_symbols:
                fail(self, f"read #{i} maps {amap.num_dims} dims, the space has {rank}")
            if len(amap.results) != len(shape_of(value)):
                fail(self, f"read #{i} gives {len(amap.results)} indices for input #{i} of "
                           f"type {value.type}")
            if i >= len(self.body_inputs) and set(amap.used_dims()) & set(self.reduction_dims):
                fail(self, f"read #{i} is an epilogue read but uses a reduction dimension")
            element = element_of(value)
            if access.is_masked and (problem := pad_value_problem(access.pad_value, element)):
                fail(self, f"read #{i} pads with {format_scalar(access.pad_value)}, not a "
                           f"value of its element type {element}: it {problem}")

    def _verify_writes(self, rank: int) -> None:
        wmap = self.writes.data
        out_shape = shape_of(self.res)
        if wmap.num_dims != rank or len(wmap.results) != len(out_shape):
            fail(self, f"writes {wmap} does not map the {rank}-d space to the result "
                       f"{self.res.type}")
        seen: list[int] = []
        splits: dict[int, list[tuple[int, int]]] = {}  # dim -> (stride, size) per axis
        for expr, size in zip(wmap.results, out_shape, strict=True):
            if isinstance(expr, AffineDimExpr) and expr.position in self.parallel_dims:
                if self.sizes[expr.position] != size:
                    fail(self, f"writes puts dimension d{expr.position} (size "
                               f"{self.sizes[expr.position]}) on a result axis of size {size}")
                seen.append(expr.position)
            elif (part := split_of(expr)) is not None and part[0] in self.parallel_dims:
                dim, stride, modulus = part
                if modulus is not None and modulus != size:
                    fail(self, f"writes result {expr} ranges over {modulus}, its axis has {size}")
                splits.setdefault(dim, []).append((stride, size))
            elif not (str(expr) == "0" and size == 1):
                fail(self, f"writes result {expr} must be a parallel dimension, a split of "
                           "one (`d floordiv s`, `d mod n`) or 0 on a size-1 axis")
        for dim, parts in splits.items():
            # the axes of a split dim, outermost first, are its row-major digits
            stride = 1
            for step, size in reversed(parts):
                if step != stride:
                    fail(self, f"writes {wmap} splits d{dim} into axes that are not its "
                               "row-major digits")
                stride *= size
            if stride != self.sizes[dim]:
                fail(self, f"writes {wmap} splits d{dim} (size {self.sizes[dim]}) into "
                           f"{stride} elements")
            seen.append(dim)
        # Each element is written once: every parallel dimension of size > 1 appears once.
        wide = [d for d in self.parallel_dims if self.sizes[d] != 1]
        if len(set(seen)) != len(seen) or not set(wide) <= set(seen):
            fail(self, f"writes {wmap} must use every parallel dimension once")

    def _verify_regions(self) -> None:
        body = self.body.block
        # regions compute in arith's types: an unsigned input is read as its signless twin
        want = [dtypes.signless(element_of(v)) for v in self.body_inputs]
        if [a.type for a in body.args] != want:
            fail(self, f"body arguments {[str(a.type) for a in body.args]} must be the "
                       f"element types of its inputs {[str(t) for t in want]}")
        if not isinstance(body.last_op, YieldOp):
            fail(self, "body must end with kernel.yield")
        produced = body.last_op.value.type
        out = element_of(self.res)
        if (block := self.epilogue_block) is not None:
            epi = [dtypes.signless(element_of(v)) for v in self.inputs[len(self.body_inputs):]]
            if [a.type for a in block.args] != [produced, *epi]:
                fail(self, "epilogue arguments must be the combined value and the element "
                           "types of the epilogue inputs")
            if not isinstance(block.last_op, YieldOp):
                fail(self, "epilogue must end with kernel.yield")
            produced = block.last_op.value.type
        if produced != dtypes.signless(out):
            fail(self, f"yields {produced}, the result's element type is {out}")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """`kernel.yield %v : f32` ends a kernel's body or epilogue with its scalar."""

    name = "kernel.yield"
    value = operand_def()
    traits = traits_def(IsTerminator(), HasParent(KernelOp), Pure())
    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value])


@irdl_op_definition
class IndexOp(IRDLOperation):
    """`%i = kernel.index 0 : index`: the current index along iteration dimension 0."""

    name = "kernel.index"
    dim = prop_def(I64_ATTR)
    res = result_def(IndexType)
    traits = traits_def(HasParent(KernelOp), Pure())
    assembly_format = "$dim attr-dict `:` type($res)"

    def __init__(self, dim: int):
        super().__init__(properties={"dim": IntegerAttr(dim, i64)}, result_types=[IndexType()])

    def verify_(self) -> None:
        parent = self.parent_op()
        while parent is not None and not isinstance(parent, KernelOp):
            parent = parent.parent_op()
        if parent is not None and not 0 <= self.dim.value.data < len(parent.sizes):
            fail(self, f"dimension {self.dim.value.data} is not one of the kernel's "
                       f"{len(parent.sizes)}")


def identity_access(rank: int, dims: Sequence[int] | None = None) -> AccessAttr:
    """Read an input whose axes are the iteration dimensions `dims` (default: all)."""
    dims = list(range(rank)) if dims is None else list(dims)
    return AccessAttr(AffineMap(rank, 0, tuple(AffineDimExpr(d) for d in dims)))


KERNEL = Dialect("kernel", [KernelOp, YieldOp, IndexOp], [AccessAttr, ScheduleAttr])

__all__ = ["KERNEL", "AccessAttr", "IndexOp", "KernelOp", "ScheduleAttr", "YieldOp"]
