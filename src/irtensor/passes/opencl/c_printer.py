"""`ocl` IR -> OpenCL C 1.2 text.

`print_program([kernel])` gives a `CProgram`: the source of the kernels with
the helpers they use, and whether it needs fp64. Values keep their IR names
where they have one (`in0`, `out`, `i0`, `acc`), constants are written inline,
`scf.for` becomes a `for` loop whose iter_args are variables declared before it.

numpy's meaning is kept where C's differs: integer `+ - *` wrap (computed
unsigned), floor division and remainder give 0 for a zero divisor and wrap
`INT_MIN / -1` (helpers `irt_floordiv_*`, `irt_rem_*`), `maximumf`/`minimumf`
propagate NaN (`fmax` does not), `fptosi` of NaN or of a value out of range
gives INT_MIN (numpy on x86). i1 is `bool` in registers and `uchar` in memory.
f16 and bf16 are `float` in registers, rounded to their type after every op
(numpy's half ufuncs compute in f32 and round once), and `half` (through
`vload_half`/`vstore_half_rte`, core OpenCL 1.2: no cl_khr_fp16 needed) and
`ushort` (the top half of an f32, rounded to nearest even) in memory.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from irtensor.dialects import ocl
from irtensor.passes.llvm.vector_math import (
    EXP2_Q,
    INV_LN2_HI,
    INV_LN2_LO,
    LOG2_Q,
    MIN_NORMAL,
    SQRT_HALF_BITS,
)


class UnsupportedError(ValueError):
    """IR the OpenCL printer cannot write (an element type or an op)."""


@dataclass(frozen=True)
class CProgram:
    source: str
    kernel_names: tuple[str, ...]
    needs_fp64: bool


C_KEYWORDS = frozenset((
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "bool", "uchar", "uint", "ulong", "half",
    "global", "local", "constant", "private", "kernel", "max", "min", "exp", "log", "sin",
    "sqrt"))

# arith predicates (MLIR's numbering) -> a C expression on a, b.
CMPF = {0: "false", 1: "{a} == {b}", 2: "{a} > {b}", 3: "{a} >= {b}", 4: "{a} < {b}",
        5: "{a} <= {b}", 6: "({a} < {b} || {a} > {b})", 7: "!(isnan({a}) || isnan({b}))",
        8: "!({a} < {b} || {a} > {b})", 9: "!({a} <= {b})", 10: "!({a} < {b})",
        11: "!({a} >= {b})", 12: "!({a} > {b})", 13: "{a} != {b}",
        14: "(isnan({a}) || isnan({b}))", 15: "true"}
CMPI = {0: "{a} == {b}", 1: "{a} != {b}", 2: "{a} < {b}", 3: "{a} <= {b}", 4: "{a} > {b}",
        5: "{a} >= {b}", 6: "({u}){a} < ({u}){b}", 7: "({u}){a} <= ({u}){b}",
        8: "({u}){a} > ({u}){b}", 9: "({u}){a} >= ({u}){b}"}
MATH = {xmath.Exp2Op: "exp2", xmath.Log2Op: "log2", xmath.SqrtOp: "sqrt", xmath.SinOp: "sin",
        xmath.CosOp: "cos", xmath.ExpOp: "exp", xmath.LogOp: "log", xmath.AbsFOp: "fabs",
        xmath.TanhOp: "tanh", xmath.FloorOp: "floor", xmath.CeilOp: "ceil"}
PLAIN = {arith.AddfOp: "+", arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/",
         arith.AndIOp: "&", arith.OrIOp: "|", arith.XOrIOp: "^"}
WRAPPING = {arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*"}

HELPERS = {
    "floordiv": """static inline {t} irt_floordiv_{t}({t} a, {t} b) {{
  if (b == 0) return 0;
  if (b == -1) return ({t})(-({u})a);  /* INT_MIN / -1 wraps */
  {t} q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}}""",
    "rem": """static inline {t} irt_rem_{t}({t} a, {t} b) {{
  return (b == 0 || b == -1) ? 0 : a % b;
}}""",
    "divsi": """static inline {t} irt_div_{t}({t} a, {t} b) {{
  if (b == 0) return 0;
  return (b == -1) ? ({t})(-({u})a) : a / b;
}}""",
    "fptosi": """static inline {t} irt_fptosi_{f}_{t}({f} x) {{  /* numpy on x86 */
  return (isnan(x) || x < -{lim} || x >= {lim}) ? {tmin} : ({t})x;
}}""",
    "f16": """static inline float irt_round_f16(float x) {{  /* to the nearest half, ties even */
  ushort h;
  vstore_half_rte(x, 0, (__private half*)&h);
  return vload_half(0, (__private half*)&h);
}}""",
    "bf16": """static inline ushort irt_to_bf16(float x) {{  /* nearest even; NaN stays quiet NaN */
  uint u = as_uint(x);
  if (isnan(x)) return (ushort)((u >> 16) | 0x40);
  return (ushort)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}}

static inline float irt_from_bf16(ushort b) {{
  return as_float((uint)b << 16);
}}

static inline float irt_round_bf16(float x) {{
  return irt_from_bf16(irt_to_bf16(x));
}}""",
    "odd_int": """static inline float irt_odd_from_ulong(ulong a) {{  /* 24 bits, rounded to odd */
  int n = 64 - (int)clz(a);
  if (n <= 24) return (float)a;
  int shift = n - 24;
  ulong kept = (a >> shift) | (ulong)((a & ((1UL << shift) - 1)) != 0);
  return (float)(kept << shift);
}}

static inline float irt_odd_from_long(long a) {{
  float m = irt_odd_from_ulong(a < 0 ? (ulong)0 - (ulong)a : (ulong)a);
  return a < 0 ? -m : m;
}}""",
    "odd_f64": """static inline float irt_odd_from_double(double d) {{  /* to f32, rounded to odd */
  float t = (float)d;
  if (isnan(d) || (double)t == d) return t;
  uint b = as_uint(t);
  if (fabs((double)t) > fabs(d)) b -= 1;
  return as_float(b | 1u);
}}""",
}


def _horner(name: str, x: str, coefficients: Sequence[float]) -> str:
    """`name = c0 + x*(c1 + x*(...))` as C statements, one fma per step."""
    lines = [f"  float {name} = {coefficients[-1]!r}f;"]
    lines += [f"  {name} = fma({name}, {x}, {c!r}f);" for c in reversed(coefficients[:-1])]
    return "\n".join(lines)


# exp2 and log2 of floats as polynomials (the coefficients and reductions of the LLVM
# lowering, irtensor.passes.llvm.vector_math): an OpenCL compiler vectorises them across
# work items, where its own exp2/log2 may run once per item (PoCL: 9x slower).
EXP2_F32 = f"""#pragma OPENCL FP_CONTRACT OFF
static inline float irt_exp2(float x) {{  /* 2^x = 2^n * 2^r, |r| <= 1/2 */
  float xc = fmin(fmax(x, -151.0f), 129.0f);
  float nf = rint(xc);
  float r = xc - nf;
{_horner("q", "r", EXP2_Q)}
  float p = fma(r, q, 1.0f);
  int n = (int)nf;
  int h = n >> 1;  /* two scalings: a subnormal result is rounded once */
  float y = p * as_float((h + 127) << 23) * as_float((n - h + 127) << 23);
  return isnan(x) ? x : y;
}}
#pragma OPENCL FP_CONTRACT ON"""

LOG2_F32 = f"""#pragma OPENCL FP_CONTRACT OFF
static inline float irt_log2(float x) {{  /* x = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt(2)) */
  bool tiny = x < {MIN_NORMAL!r}f;
  int bits = as_int(tiny ? x * 8388608.0f : x);
  int e = (bits - {SQRT_HALF_BITS:#x}) >> 23;
  float f = as_float(bits - (e << 23)) - 1.0f;
  float ef = (float)(e - (tiny ? 23 : 0));
  float t = f * {INV_LN2_HI!r}f;
  float t_err = fma(f, {INV_LN2_HI!r}f, -t);
{_horner("q", "f", LOG2_Q)}
  float tail = fma(f * f, q, fma(f, {INV_LN2_LO!r}f, t_err));
  float hi = ef + t;
  float lo = t - (hi - ef);
  float special = x == 0.0f ? -INFINITY : (x < 0.0f ? NAN : x + x);
  return (x > 0.0f && x < INFINITY) ? hi + (lo + tail) : special;
}}
#pragma OPENCL FP_CONTRACT ON"""

INT_MIN = {"int": "(-2147483647 - 1)", "long": "(-9223372036854775807L - 1L)"}
INT_LIMIT = {"int": "2147483648.0", "long": "9223372036854775808.0"}


def c_name(name: str) -> str:
    """A C identifier for a kernel name."""
    name = re.sub(r"\W", "_", name)
    return name if name and not name[0].isdigit() else f"k_{name}"


class OpenCLPrinter:
    """Prints kernels; collects the helpers and extensions they need."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.indent = 1
        self.names: dict[SSAValue, str] = {}
        self.used: set[str] = set()
        self.helpers: dict[str, str] = {}
        self.fp64 = False

    # ------------------------------------------------------------------ types and names

    def ctype(self, t: Attribute, memory: bool = False) -> str:
        if isinstance(t, Float32Type):
            return "float"
        if isinstance(t, Float64Type):
            self.fp64 = True
            return "double"
        if isinstance(t, IndexType):
            return "long"
        if isinstance(t, IntegerType):
            width = t.width.data
            if width == 1:
                return "uchar" if memory else "bool"
            # signless: the unsigned meaning is in the ops, which cast where it matters
            if width in (8, 16, 32, 64):
                return {8: "char", 16: "short", 32: "int", 64: "long"}[width]
        if isinstance(t, Float16Type):
            return "half" if memory else "float"
        if isinstance(t, BFloat16Type):
            return "ushort" if memory else "float"
        raise UnsupportedError(f"the OpenCL backend has no C type for {t}")

    def name(self, value: SSAValue) -> str:
        if value not in self.names:
            hint = value.name_hint or "v"
            base = hint if re.fullmatch(r"[A-Za-z_]\w*", hint) and hint not in C_KEYWORDS \
                else "v"
            text, n = base, 0
            while text in self.used or text == "v":
                n += 1
                text = f"{base}_{n}" if base != "v" else f"v{n}"
            self.used.add(text)
            self.names[value] = text
        return self.names[value]

    def line(self, text: str) -> None:
        self.lines.append("  " * self.indent + text)

    def define(self, value: SSAValue, expr: str) -> None:
        expr = self.rounded(expr, value.type)
        self.line(f"{self.ctype(value.type)} {self.name(value)} = {expr};")

    def rounded(self, expr: str, t: Attribute) -> str:
        """`expr` (computed in float) rounded to f16 or bf16 when that is its type."""
        if isinstance(t, Float16Type | BFloat16Type):
            kind = "f16" if isinstance(t, Float16Type) else "bf16"
            self.helper(kind, "")
            return f"irt_round_{kind}({expr})"
        return expr

    def helper(self, kind: str, t: str, f: str = "") -> str:
        key = f"{kind}_{f}_{t}" if f else f"{kind}_{t}"
        if kind in ("f16", "bf16", "odd_int", "odd_f64"):
            self.helpers.setdefault(kind, HELPERS[kind].format())
            return f"irt_round_{kind}"
        if key not in self.helpers:
            self.helpers[key] = HELPERS[kind].format(
                t=t, u=f"u{t}", f=f, tmin=INT_MIN.get(t, ""),
                lim=INT_LIMIT.get(t, "") + ("f" if f == "float" else ""))
        return {"floordiv": f"irt_floordiv_{t}", "rem": f"irt_rem_{t}",
                "divsi": f"irt_div_{t}", "fptosi": f"irt_fptosi_{f}_{t}"}[kind]

    # ------------------------------------------------------------------ kernels

    def kernel(self, op: ocl.KernelOp) -> str:
        block = op.body.block
        self.names, self.used = {}, set()
        stored = {s.ptr for s in op.walk() if isinstance(s, ocl.StoreOp)}
        params = []
        for arg in block.args:
            t = arg.type
            assert isinstance(t, ocl.PtrType)
            const = "" if arg in stored else "const "
            params.append(f"__{t.address_space} {const}{self.ctype(t.element, True)}* "
                          f"{self.name(arg)}")
        start = len(self.lines)
        self.block(block)
        body = self.lines[start:]
        del self.lines[start:]
        launch = f"/* range {list(op.global_size)}"
        attribute = ""
        if (local := op.local_size) is not None:
            launch += f", local {list(local)}"
            sizes = ", ".join(str(n) for n in [*local, 1, 1][:3])
            attribute = f"__attribute__((reqd_work_group_size({sizes}))) "
        head = f"__kernel {attribute}void {c_name(op.sym_name.data)}({', '.join(params)}) {{"
        return "\n".join([launch + " */", head, *body, "}"])

    def block(self, block: Block) -> None:
        for op in block.ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        handler = self.HANDLERS.get(type(op))
        if handler is not None:
            handler(self, op)
        elif type(op) in MATH:
            (x,) = op.operands
            fn = MATH[type(op)]
            if fn in ("exp2", "log2") and self.ctype(x.type) == "float":
                self.helpers.setdefault(fn, EXP2_F32 if fn == "exp2" else LOG2_F32)
                fn = f"irt_{fn}"
            self.define(op.results[0], f"{fn}({self.name(x)})")
        else:
            self.define(op.results[0], self.expression(op))

    # ------------------------------------------------------------------ structure

    def for_op(self, op: scf.ForOp) -> None:
        body = op.body.block
        for init, arg, res in zip(op.iter_args, body.args[1:], op.results, strict=True):
            self.names[res] = self.name(arg)
            self.line(f"{self.ctype(res.type)} {self.names[res]} = {self.name(init)};")
        i = self.name(body.args[0])
        step = self.name(op.step)
        advance = f"{i}++" if step == "1" else f"{i} += {step}"
        self.line(f"for (long {i} = {self.name(op.lb)}; {i} < {self.name(op.ub)}; {advance}) {{")
        self.indent += 1
        self.block(body)
        self.indent -= 1
        self.line("}")

    def if_op(self, op: scf.IfOp) -> None:
        if op.results or (op.false_region.blocks and list(op.false_region.block.ops)[:-1]):
            raise UnsupportedError("the OpenCL printer writes scf.if without results or else")
        self.line(f"if ({self.name(op.cond)}) {{")
        self.indent += 1
        self.block(op.true_region.block)
        self.indent -= 1
        self.line("}")

    def yield_op(self, op: scf.YieldOp) -> None:
        loop = op.parent_op()
        if isinstance(loop, scf.IfOp):
            return
        assert isinstance(loop, scf.ForOp)
        values = [self.name(v) for v in op.operands]
        targets = [self.name(r) for r in loop.results]
        if len(values) > 1:  # through temporaries: a yield may swap its values
            temps = [f"{t}_next" for t in targets]
            for t, v, r in zip(temps, values, loop.results, strict=True):
                self.line(f"{self.ctype(r.type)} {t} = {v};")
            values = temps
        for t, v in zip(targets, values, strict=True):
            if t != v:
                self.line(f"{t} = {v};")

    def constant(self, op: arith.ConstantOp) -> None:
        self.names[op.result] = literal(op.value, op.result.type)
        self.ctype(op.result.type)  # notes fp64

    def work_item(self, op: ocl.GlobalIdOp) -> None:
        fn = {"ocl.global_id": "get_global_id", "ocl.local_id": "get_local_id",
              "ocl.group_id": "get_group_id", "ocl.global_size": "get_global_size"}[op.name]
        self.define(op.res, f"(long){fn}({op.dimension})")

    def load(self, op: ocl.LoadOp) -> None:
        ptr, index, t = self.name(op.ptr), self.name(op.index), op.res.type
        if isinstance(t, Float16Type):
            expr = f"vload_half({index}, {ptr})"
        elif isinstance(t, BFloat16Type):
            self.helper("bf16", "")
            expr = f"irt_from_bf16({ptr}[{index}])"
        elif isinstance(t, IntegerType) and t.width.data == 1:
            expr = f"({ptr}[{index}] != 0)"
        else:
            expr = f"{ptr}[{index}]"
        self.line(f"{self.ctype(t)} {self.name(op.res)} = {expr};")  # exact: no rounding

    def store(self, op: ocl.StoreOp) -> None:
        ptr, index, t = self.name(op.ptr), self.name(op.index), op.value.type
        value = self.name(op.value)
        if isinstance(t, Float16Type):
            self.line(f"vstore_half_rte({value}, {index}, {ptr});")
            return
        if isinstance(t, BFloat16Type):
            self.helper("bf16", "")
            value = f"irt_to_bf16({value})"
        elif isinstance(t, IntegerType) and t.width.data == 1:
            value = f"(uchar){value}"
        self.line(f"{ptr}[{index}] = {value};")

    def local_array(self, op: ocl.LocalArrayOp) -> None:
        t = op.res.type
        assert isinstance(t, ocl.PtrType)
        name, size = self.name(op.res), op.size.value.data
        if isinstance(t.element, Float16Type):
            # No `half` arrays without cl_khr_fp16, only pointers to half: ushort storage
            # seen through a `half *` (which vload_half/vstore_half_rte take).
            self.line(f"__local ushort {name}_bits[{size}];")
            self.line(f"__local half* {name} = (__local half*){name}_bits;")
            return
        self.line(f"__local {self.ctype(t.element, True)} {name}[{size}];")

    def barrier(self, op: ocl.BarrierOp) -> None:
        self.line(f"barrier(CLK_{op.fence.data.upper()}_MEM_FENCE);")

    def return_op(self, op: ocl.ReturnOp) -> None:
        if op.parent_block() is None or op is not op.parent_block().last_op:  # type: ignore[union-attr]
            self.line("return;")

    # ------------------------------------------------------------------ scalar expressions

    def expression(self, op: Operation) -> str:
        """The C expression of an arith op."""
        args = [self.name(v) for v in op.operands]
        t = op.results[0].type if op.results else None
        kind = type(op)
        if kind in PLAIN:
            return f"{args[0]} {PLAIN[kind]} {args[1]}"
        if kind in WRAPPING:
            if isinstance(t, IndexType):
                return f"{args[0]} {WRAPPING[kind]} {args[1]}"
            c = self.ctype(t)  # type: ignore[arg-type]
            if c == "bool":
                return f"{args[0]} {'|' if kind is not arith.MuliOp else '&'} {args[1]}"
            return f"({c})((u{c}){args[0]} {WRAPPING[kind]} (u{c}){args[1]})"
        if (conv := self.conversion(op, args)) is not None:
            return conv
        return self.other(op, args)

    def conversion(self, op: Operation, args: list[str]) -> str | None:
        if not isinstance(op, CASTS):
            return None
        target = self.ctype(op.results[0].type)
        source = op.operands[0].type
        if isinstance(op, arith.FPToSIOp):
            f = self.ctype(source)
            return f"{self.helper('fptosi', target, f)}({args[0]})"
        if target == "bool":
            return f"({args[0]} & 1) != 0"
        if isinstance(op.results[0].type, Float16Type | BFloat16Type):
            return self.narrow_float(op, source, args[0])
        if isinstance(op, arith.ExtUIOp | arith.UIToFPOp) and self.ctype(source) != "bool":
            return f"({target})({self.unsigned(source)}){args[0]}"
        return f"({target}){args[0]}"

    def narrow_float(self, op: Operation, source: Attribute, a: str) -> str:
        """A float or integer as the float that rounds to f16/bf16 as `a` itself does
        (rounded to odd), so that the one rounding `define` adds is numpy's."""
        if isinstance(source, Float64Type):
            self.helper("odd_f64", "")
            return f"irt_odd_from_double({a})"
        if isinstance(source, IntegerType | IndexType) and not (
                isinstance(source, IntegerType) and source.width.data <= 24):
            self.helper("odd_int", "")
            if isinstance(op, arith.UIToFPOp):
                return f"irt_odd_from_ulong((ulong)({self.unsigned(source)}){a})"
            return f"irt_odd_from_long((long){a})"
        if isinstance(op, arith.UIToFPOp) and self.ctype(source) != "bool":
            return f"(float)({self.unsigned(source)}){a}"
        return f"(float){a}"

    def unsigned(self, t: Attribute) -> str:
        return "u" + self.ctype(t)

    def other(self, op: Operation, args: list[str]) -> str:
        t = op.results[0].type
        if isinstance(op, arith.NegfOp):
            return f"-{args[0]}"
        if isinstance(op, arith.SelectOp):
            return f"{args[0]} ? {args[1]} : {args[2]}"
        if isinstance(op, arith.CmpfOp):
            a, b = args
            return CMPF[op.predicate.value.data].format(a=a, b=b)
        if isinstance(op, arith.CmpiOp):
            c = self.ctype(op.lhs.type)
            u = "uint" if c == "bool" else f"u{c}"
            return CMPI[op.predicate.value.data].format(a=args[0], b=args[1], u=u)
        if isinstance(op, arith.MaximumfOp | arith.MinimumfOp):
            fn = "fmax" if isinstance(op, arith.MaximumfOp) else "fmin"
            a, b = args
            return f"(isnan({a}) || isnan({b})) ? {a} + {b} : {fn}({a}, {b})"
        if isinstance(op, arith.MaxSIOp | arith.MinSIOp | arith.MaxUIOp | arith.MinUIOp):
            return self.int_extremum(op, args)
        c = self.ctype(t)
        if isinstance(op, arith.FloorDivSIOp):
            return f"{self.helper('floordiv', c)}({args[0]}, {args[1]})"
        if isinstance(op, arith.RemSIOp):
            return f"{self.helper('rem', c)}({args[0]}, {args[1]})"
        if isinstance(op, arith.DivSIOp):
            return f"{self.helper('divsi', c)}({args[0]}, {args[1]})"
        if isinstance(op, arith.DivUIOp | arith.RemUIOp):
            sym = "/" if isinstance(op, arith.DivUIOp) else "%"
            return f"({c})((u{c}){args[0]} {sym} (u{c}){args[1]})"
        raise UnsupportedError(f"the OpenCL printer cannot write {op.name}")

    def int_extremum(self, op: Operation, args: list[str]) -> str:
        c = self.ctype(op.results[0].type)
        a, b = args
        if c == "bool":
            return f"{a} {'|' if isinstance(op, arith.MaxSIOp | arith.MaxUIOp) else '&'} {b}"
        if isinstance(op, arith.MaxUIOp | arith.MinUIOp):
            cmp = ">" if isinstance(op, arith.MaxUIOp) else "<"
            return f"((u{c}){a} {cmp} (u{c}){b}) ? {a} : {b}"
        # both operands of the result's type: an index literal prints as an int, and
        # min(long, int) would be ambiguous
        return f"{'max' if isinstance(op, arith.MaxSIOp) else 'min'}(({c}){a}, ({c}){b})"

    HANDLERS: dict[type[Operation], Callable[[OpenCLPrinter, Operation], None]] = {}


CASTS = (arith.ExtFOp, arith.TruncFOp, arith.SIToFPOp, arith.UIToFPOp, arith.FPToSIOp,
         arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp, arith.IndexCastOp)

OpenCLPrinter.HANDLERS.update({  # type: ignore[dict-item]
    scf.ForOp: OpenCLPrinter.for_op, scf.YieldOp: OpenCLPrinter.yield_op,
    scf.IfOp: OpenCLPrinter.if_op,
    arith.ConstantOp: OpenCLPrinter.constant, ocl.GlobalIdOp: OpenCLPrinter.work_item,
    ocl.LocalIdOp: OpenCLPrinter.work_item, ocl.GroupIdOp: OpenCLPrinter.work_item,
    ocl.GlobalSizeOp: OpenCLPrinter.work_item, ocl.LoadOp: OpenCLPrinter.load,
    ocl.StoreOp: OpenCLPrinter.store, ocl.LocalArrayOp: OpenCLPrinter.local_array,
    ocl.BarrierOp: OpenCLPrinter.barrier, ocl.ReturnOp: OpenCLPrinter.return_op,
})


def literal(attr: Attribute, t: Attribute) -> str:
    """A constant as a C literal of its type."""
    if isinstance(attr, FloatAttr):
        value = float(attr.value.data)
        suffix = "" if isinstance(t, Float64Type) else "f"
        # NAN and INFINITY are float constants in OpenCL C: a double's must be cast, or
        # fmax(double, float) has no unique overload and the kernel does not build
        cast = "(double)" if isinstance(t, Float64Type) else ""
        if math.isnan(value):
            return f"({cast}NAN)" if cast else "NAN"
        if math.isinf(value):
            return (f"({cast}INFINITY)" if cast else "INFINITY") if value > 0 \
                else f"(-{cast}INFINITY)"
        return f"{value!r}{suffix}" if value >= 0 else f"({value!r}{suffix})"
    assert isinstance(attr, IntegerAttr)
    value = int(attr.value.data)
    if isinstance(t, IntegerType) and t.width.data == 1:
        return "true" if value & 1 else "false"
    if isinstance(t, IntegerType) and t.width.data in (8, 16):
        return f"(({'char' if t.width.data == 8 else 'short'})({value}))"
    if isinstance(t, IntegerType) and t.width.data == 32:
        return INT_MIN["int"] if value == -(2**31) else (str(value) if value >= 0
                                                          else f"({value})")
    if value == -(2**63):
        return INT_MIN["long"]
    if isinstance(t, IndexType) and abs(value) < 2**31:
        return str(value) if value >= 0 else f"({value})"
    return f"{value}L" if value >= 0 else f"({value}L)"


def print_program(kernels: Sequence[ocl.KernelOp]) -> CProgram:
    """OpenCL C for `kernels`: pragmas, the helpers they use, the kernels."""
    printer = OpenCLPrinter()
    bodies = [printer.kernel(k) for k in kernels]
    parts = []
    if printer.fp64:
        parts.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    parts.extend(printer.helpers.values())
    parts.extend(bodies)
    names = tuple(c_name(k.sym_name.data) for k in kernels)
    return CProgram("\n\n".join(parts) + "\n", names, printer.fp64)


__all__ = ["CProgram", "OpenCLPrinter", "UnsupportedError", "c_name", "literal",
           "print_program"]
