"""The LLVM JIT: llvm-dialect modules -> LLVM IR -> host machine code -> ctypes calls.

    jit = compile_module(module)             # loop-level or llvm-dialect xDSL module
    add = jit.function("add_0")              # or LLVM IR text: compile_module(text)
    add(x, y, out, 0, 16)                    # numpy arrays, then start and stop

`compile_module` lowers a loop-level module with `convert-to-llvm` (a copy; the
argument is not changed), exports it with xDSL's `convert_module`, and compiles
it for the host CPU: its real name and feature string (AVX-512 where present,
preferring 512-bit vectors), LLVM's optimisation pipeline with loop and SLP
vectorization at the levels `opt_level.kernel_levels` chooses (O3 for scalar
float loops and code on x86 intrinsics, O2 for vector blocks and copies, none for
a kernel marked `irtensor.small`, whose machine code is made at O2;
`IRTENSOR_LLVM_OPT` fixes one), then MCJIT. Each kernel keeps its signature from
the IR (`irtensor.arg_types`), so a call checks every array's dtype, shape,
contiguity, alignment and (for buffers the kernel writes) writability, and raises
TypeError or ValueError naming the argument instead of crashing. The call itself
goes through ctypes, which releases the GIL, so kernels on disjoint [start, stop)
ranges can run in threads.

`llvm_ir(module)` is the LLVM IR text, `assembly(jit)` the machine assembly,
`target_description()` the host target for cache keys; `jit.object_code()` and
`load_object()` let a cache skip compiling in a later process.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import struct
import threading
import time
import weakref
from collections.abc import Mapping
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp

from irtensor.passes.llvm.host_checks import check_host_can_run
from irtensor.passes.llvm.lowering import KERNEL_ATTR, NO_UNROLL_ATTR, SMALL_ATTR
from irtensor.passes.llvm.opt_level import (
    OPT_POLICY,
    forced_opt_level,
    kernel_levels,
    slp_pays,
)
from irtensor.passes.llvm.signatures import (
    Parameter,
    parameter_of,
    result_type,
    signature_from_ir,
    signature_of,
)

_LOCK = threading.Lock()

# --------------------------------------------------------------------------- the target


@functools.cache
def _binding() -> Any:
    """llvmlite.binding, with the native target initialised (once)."""
    import llvmlite.binding as binding

    binding.initialize_native_target()
    binding.initialize_native_asmprinter()
    _expose_libc(binding)
    if binding.get_host_cpu_features().get("amx-tile"):
        # a kernel on tiles may come from another process's compile or the disk cache
        from irtensor.tile_state import enable_tile_data

        enable_tile_data()
    return binding


def _expose_libc(binding: Any) -> None:
    """Kernels call malloc, calloc and free for large accumulators: give MCJIT libc's."""
    if all(binding.address_of_symbol(name) for name in ("malloc", "calloc", "free")):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
    for name in ("malloc", "calloc", "free"):
        address = ctypes.cast(getattr(libc, name), ctypes.c_void_p).value
        if address:
            binding.add_symbol(name, address)


@dataclass(frozen=True)
class HostTarget:
    """The CPU code is compiled for: LLVM's triple, CPU name and feature string."""

    triple: str
    cpu: str
    features: str
    llvm_version: str

    def has(self, feature: str) -> bool:
        return f"+{feature}" in self.features.split(",")

    def features_for(self, vector_width: int | None) -> str:
        """The feature string, steering LLVM's preferred vector width (x86): 512 turns
        off `prefer-256-bit` (Intel's AVX-512 CPUs have it on), 256 turns it on."""
        if vector_width is None or not self.triple.startswith(("x86_64", "i686")):
            return self.features
        return f"{self.features},{'-' if vector_width >= 512 else '+'}prefer-256-bit"

    def default_vector_width(self) -> int | None:
        return 512 if self.has("avx512f") else None


@functools.cache
def host_target() -> HostTarget:
    b = _binding()
    version = ".".join(str(v) for v in b.llvm_version_info)
    return HostTarget(b.get_process_triple(), b.get_host_cpu_name(),
                      b.get_host_cpu_features().flatten(), version)


def target_description() -> str:
    """Everything about the target that changes generated code (for cache keys)."""
    t = host_target()
    return (f"triple={t.triple} cpu={t.cpu} features={t.features} "
            f"vector-width={t.default_vector_width()} llvm={t.llvm_version} "
            f"opt={OPT_POLICY if (forced := forced_opt_level()) is None else forced}")


def _target_machine(opt_level: int, vector_width: int | None, jit: bool) -> Any:
    t = host_target()
    target = _binding().Target.from_triple(t.triple)
    return target.create_target_machine(cpu=t.cpu, features=t.features_for(vector_width),
                                        opt=opt_level, jit=jit)


# --------------------------------------------------------------------------- functions


class KernelFunction:
    """A compiled function, called with numpy arrays and Python scalars.

    `fn(*arrays, start, stop)` checks every argument against the signature;
    `fn.raw` is the bare ctypes function (pointers and ints, no checks).
    """

    def __init__(self, owner: JitModule, name: str, params: tuple[Parameter, ...],
                 result: str | None, address: int):
        self.owner, self.name, self.params, self.result = owner, name, params, result
        self.address = address
        restype = None if result is None else (
            ctypes.c_void_p if result == "ptr" else Parameter("result", result, False).ctype)
        self.raw = ctypes.CFUNCTYPE(restype, *(p.ctype for p in params))(address)
        self._where = [f"@{name} argument {i} ({p.name})" for i, p in enumerate(params)]

    def __repr__(self) -> str:
        args = ", ".join(p.describe() for p in self.params)
        return f"<KernelFunction @{self.name}({args}) -> {self.result or 'void'}>"

    def __call__(self, *args: object) -> Any:
        if len(args) != len(self.params):
            names = ", ".join(p.describe() for p in self.params)
            raise TypeError(f"@{self.name} takes {len(self.params)} arguments ({names}), "
                            f"got {len(args)}")
        return self.raw(*[p.convert(a, where) for p, a, where in
                          zip(self.params, args, self._where, strict=True)])


@dataclass
class JitModule:
    """Machine code for one LLVM module, held alive with its execution engine."""

    engine: Any
    llvm_ir: str
    optimized_ir: str
    signatures: dict[str, tuple[tuple[Parameter, ...], str | None]]
    opt_level: int = 3
    vector_width: int | None = None
    codegen_level: int | None = None  # the machine code's level, where not `opt_level`
    timings: dict[str, float] = field(default_factory=dict)
    _object: bytes | None = None
    # Weak: a function holds its module (and so the machine code) alive, not the other way
    # round, so a module nobody calls into is freed at once, without waiting for the
    # cycle collector.
    _functions: weakref.WeakValueDictionary[str, KernelFunction] = field(
        default_factory=weakref.WeakValueDictionary)

    @property
    def names(self) -> list[str]:
        return sorted(self.signatures)

    def function(self, name: str) -> KernelFunction:
        """The function @name, ready to call; KeyError names the ones there are."""
        if (known := self._functions.get(name)) is not None:
            return known
        if name not in self.signatures:
            have = ", ".join(f"@{n}" for n in self.names) or "none"
            raise KeyError(f"no function @{name} in the compiled module (it has {have})")
        params, result = self.signatures[name]
        address = self.engine.get_function_address(name)
        if not address:  # calling address 0 would crash the process
            raise KeyError(f"the compiled module has no code for @{name}")
        made = self._functions[name] = KernelFunction(self, name, params, result, address)
        return made

    def assembly(self) -> str:
        """The host machine assembly of the optimised module."""
        with _LOCK:
            level = self.opt_level if self.codegen_level is None else self.codegen_level
            tm = _target_machine(level, self.vector_width, jit=False)
            return tm.emit_assembly(_binding().parse_assembly(self.optimized_ir))

    def object_code(self) -> bytes | None:
        """The relocatable object MCJIT loaded (for `load_object`); None if none was seen."""
        return self._object


# --------------------------------------------------------------------------- compiling


def _clone_lowered(module: ModuleOp, kernels_only: bool | None) -> ModuleOp:
    """`module` in the llvm dialect: a copy lowered with convert-to-llvm when it has
    functions to lower, else `module` itself (exporting only reads it; copying a large
    kernel's llvm ops cost a tenth of its compile)."""
    from irtensor.passes.llvm.convert_to_llvm import convert_to_llvm

    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if not functions:
        return module
    if kernels_only is None:
        kernels_only = any(KERNEL_ATTR in f.attributes for f in functions)
    copy = module.clone()
    convert_to_llvm(copy, kernels_only=kernels_only)
    return copy


def _export(module: ModuleOp) -> str:
    from xdsl.backend.llvm.convert import convert_module

    exported = convert_module(module, fallback_target_triple=host_target().triple)
    mark_nontemporal(module, exported)
    return str(exported)


def mark_nontemporal(module: ModuleOp, exported: Any) -> None:
    """Give the stores of `exported` (xDSL's export of `module`, an llvmlite module) whose
    `llvm.store` is `nontemporal` LLVM's `!nontemporal` metadata, which the export leaves
    out. The export makes one store instruction per `llvm.store`, in the same order."""
    from llvmlite import ir as llir

    stores = [op for op in module.walk() if isinstance(op, llvm.StoreOp)]
    if all(op.nontemporal is None for op in stores):
        return
    made = [i for f in exported.functions for b in f.blocks for i in b.instructions
            if isinstance(i, llir.StoreInstr)]
    if len(made) != len(stores):
        raise ValueError(f"LLVM IR export: {len(stores)} llvm.store ops became {len(made)} "
                         "store instructions; cannot place !nontemporal")
    flag = exported.add_metadata([llir.Constant(llir.IntType(32), 1)])
    for op, instruction in zip(stores, made, strict=True):
        if op.nontemporal is not None:
            instruction.set_metadata("nontemporal", flag)


def llvm_ir(module: ModuleOp | str, kernels_only: bool | None = None) -> str:
    """The LLVM IR text of a module (loop-level or llvm dialect) before optimisation."""
    if isinstance(module, str):
        return module
    return _export(_clone_lowered(module, kernels_only))


def assembly(jit: JitModule) -> str:
    return jit.assembly()


def _signatures(module: ModuleOp) -> dict[str, tuple[tuple[Parameter, ...], str | None]]:
    return {
        op.sym_name.data: (signature_of(op), result_type(op.function_type.output))
        for op in module.ops if isinstance(op, llvm.FuncOp) and op.body.blocks
    }


def _optimize(ref: Any, tm: Any, opt_level: int, slp: bool = True, unroll: bool = True
              ) -> None:
    b = _binding()
    tuning = b.PipelineTuningOptions(speed_level=opt_level)
    tuning.loop_vectorization = opt_level >= 2
    tuning.slp_vectorization = opt_level >= 2 and slp
    tuning.loop_unrolling = unroll
    builder = b.PassBuilder(tm, tuning)
    builder.getModulePassManager().run(ref, builder)


def _check_symbols(ref: Any) -> None:
    """Every external function must resolve in this process (MCJIT would call address 0)."""
    b = _binding()
    for fn in ref.functions:
        name = fn.name
        if fn.is_declaration and not name.startswith("llvm.") and not b.address_of_symbol(name):
            raise RuntimeError(f"the module calls @{fn.name}, which this process lacks")


def compile_module(module: ModuleOp | str, *, opt_level: int | None = None,
                   vector_width: int | None = -1, kernels_only: bool | None = None,
                   ) -> JitModule:
    """Compile a module for the host CPU and JIT it.

    `module` is an xDSL module (loop level, lowered here on a copy, or llvm
    dialect) or LLVM IR text. `vector_width` steers the preferred SIMD width
    (-1: 512 where AVX-512 exists; None: the CPU model's own preference).
    `opt_level` is LLVM's, for the IR and the machine code (None: `kernel_levels` of
    the module's IR).
    `kernels_only` (default: when the module has kernels) drops other functions.
    """
    return compile_module_later(module, None, opt_level=opt_level, vector_width=vector_width,
                                kernels_only=kernels_only).result()


def compile_module_later(module: ModuleOp | str, executor: Executor | None, *,
                         opt_level: int | None = None, vector_width: int | None = -1,
                         kernels_only: bool | None = None) -> Future[JitModule]:
    """`compile_module`, with LLVM's share (optimising, machine code) run by `executor`
    (None: here, before returning). The lowering to LLVM IR text is Python and runs in
    the caller; LLVM's calls release the GIL, so the caller can lower the next module
    while `executor` compiles this one."""
    start = time.perf_counter()
    unroll, small = True, False
    if isinstance(module, str):
        text, signatures = module, {}
    else:
        lowered = _clone_lowered(module, kernels_only)
        text, signatures = _export(lowered), _signatures(lowered)
        functions = [op for op in lowered.ops if isinstance(op, llvm.FuncOp)]
        unroll = not any(NO_UNROLL_ATTR in op.attributes for op in functions)
        small = bool(functions) and all(SMALL_ATTR in op.attributes for op in functions
                                        if op.body.blocks)
    lowered_at = time.perf_counter()
    level, codegen = kernel_levels(text, small) if opt_level is None else (opt_level, opt_level)
    if vector_width == -1:
        vector_width = host_target().default_vector_width()
    check_host_can_run(text, host_target())

    def compile_text() -> JitModule:
        with _LOCK:  # llvmlite's module parsing and pass managers share LLVM's global context
            jit = _compile_text(text, signatures, level, vector_width, unroll, codegen)
        jit.timings["lower"] = lowered_at - start
        jit.timings["total"] = jit.timings["lower"] + jit.timings["optimize"] \
            + jit.timings["codegen"]
        return jit

    if executor is not None:
        return executor.submit(compile_text)
    done: Future[JitModule] = Future()
    try:
        done.set_result(compile_text())
    except Exception as e:  # raised by .result(), as from the executor
        done.set_exception(e)
    return done


def _compile_text(text: str, signatures: dict[str, Any], opt_level: int,
                  vector_width: int | None, unroll: bool = True,
                  codegen_level: int | None = None) -> JitModule:
    b = _binding()
    t0 = time.perf_counter()
    codegen = opt_level if codegen_level is None else codegen_level
    tm = _target_machine(codegen, vector_width, jit=True)
    ref = b.parse_assembly(text)
    ref.triple, ref.data_layout = tm.triple, str(tm.target_data)
    ref.verify()
    for fn in ref.functions:
        if not fn.is_declaration and fn.name not in signatures:
            signatures[fn.name] = signature_from_ir(fn)
    _optimize(ref, tm, opt_level, slp_pays(text), unroll)
    _check_symbols(ref)
    optimized = str(ref)
    t1 = time.perf_counter()
    objects: list[bytes] = []
    engine = b.create_mcjit_compiler(ref, tm)
    engine.set_object_cache(lambda _module, data: objects.append(bytes(data)), None)
    engine.finalize_object()
    t2 = time.perf_counter()
    jit = JitModule(engine, text, optimized, signatures, opt_level, vector_width,
                    codegen if codegen != opt_level else None,
                    _object=objects[0] if objects else None)
    jit.timings.update(optimize=t1 - t0, codegen=t2 - t1)
    return jit


def load_object(data: bytes, signatures: Mapping[str, Any], *, llvm_ir_text: str = "",
                optimized_ir: str = "") -> JitModule:
    """A JitModule from an object `JitModule.object_code()` made, compiling nothing.

    `signatures` is `JitModule.signatures` of the module that made it. Bytes that are not
    an object file for this machine raise ValueError (LLVM would crash on them).
    """
    if problem := object_problem(data):
        raise ValueError(f"not an object file for this machine: {problem}")
    b = _binding()
    with _LOCK:
        tm = _target_machine(3, None, jit=True)
        empty = b.parse_assembly("")
        empty.triple = tm.triple
        engine = b.create_mcjit_compiler(empty, tm)
        engine.add_object_file(b.ObjectFileRef.from_data(data))
        engine.finalize_object()
    return JitModule(engine, llvm_ir_text, optimized_ir, dict(signatures), _object=data)


# e_machine of ELF objects by the triple's architecture
_ELF_MACHINES = {"x86_64": 62, "aarch64": 183, "arm64": 183, "riscv64": 243, "ppc64le": 21,
                 "powerpc64le": 21, "s390x": 22}
_OTHER_MAGICS = (b"\xcf\xfa\xed\xfe", b"\x64\x86", b"\x64\xaa")  # Mach-O 64, COFF


def object_problem(data: bytes) -> str:
    """Why `data` cannot be a relocatable object MCJIT made on this machine ('' if it
    can): the format's magic, and for ELF the class, byte order, type, machine and that
    the section table lies inside the bytes."""
    if not data.startswith(b"\x7fELF"):
        return "" if data.startswith(_OTHER_MAGICS) else "no object file magic"
    if len(data) < 64 or data[4] != 2 or data[5] != 1:
        return "not a 64-bit little-endian ELF"
    e_type, e_machine = struct.unpack_from("<HH", data, 16)
    (e_shoff,) = struct.unpack_from("<Q", data, 40)
    e_shentsize, e_shnum = struct.unpack_from("<HH", data, 58)
    want = _ELF_MACHINES.get(host_target().triple.split("-")[0])
    if e_type != 1:
        return f"ELF type {e_type}, expected 1 (relocatable)"
    if want is not None and e_machine != want:
        return f"ELF machine {e_machine}, expected {want}"
    if e_shentsize != 64 or e_shoff + e_shnum * e_shentsize > len(data):
        return "its section table lies outside the file"
    return ""


__all__ = [
    "HostTarget",
    "JitModule",
    "KernelFunction",
    "Parameter",
    "assembly",
    "compile_module",
    "host_target",
    "llvm_ir",
    "load_object",
    "object_problem",
    "parameter_of",
    "signature_of",
    "target_description",
]
