"""A kernel's machine code in the disk cache: what is recorded with it, and the checks
that an entry loaded by a later process is the kernel it is asked for (its name, its
function, the types of its parameters), so a stale or forged entry is compiled again."""

from __future__ import annotations

from typing import Any

from irtensor.dialects.kernel import KernelOp
from irtensor.passes.loops.loop_builder import memref_of
from irtensor.runtime import STATS, cache

OBJECT_KIND = "llvm-object"


def function_name(kernel: KernelOp) -> str:
    """The function lower-kernels-to-loops makes of the only kernel of a compile unit."""
    return f"{kernel.sym_name.data}_0"


def expected_signature(kernel: KernelOp) -> list[tuple[str, bool]]:
    """(type, is a buffer) of each parameter of the kernel's function: a memref per input,
    the output's, then the `start, stop` range of the outer loop."""
    types = [str(memref_of(v.type)) for v in (*kernel.inputs, kernel.res)]
    return [(t, True) for t in types] + [("index", False), ("index", False)]


def object_entry(kernel: KernelOp, jit: Any, name: str) -> dict[str, Any] | None:
    """What the disk cache records with a kernel's object code (None: a later process
    could not check it against the kernel, so it compiles the kernel itself)."""
    params, result = jit.signatures[name]
    signature = [[p.type, p.buffer, p.written, p.name] for p in params]
    if jit.object_code() is None or result is not None or name != function_name(kernel) \
            or [(t, b) for t, b, _, _ in signature] != expected_signature(kernel):
        return None
    return {"kernel": kernel.sym_name.data, "function": name, "signature": signature,
            "llvm_ir": jit.llvm_ir, "optimized_ir": jit.optimized_ir, "opt_level": jit.opt_level,
            "codegen_level": jit.codegen_level}


def store(key: str, kernel: KernelOp, jit: Any, name: str) -> None:
    if (meta := object_entry(kernel, jit, name)) is not None:
        cache.store(key, OBJECT_KIND, meta, jit.object_code())


def from_disk(key: str, kernel: KernelOp) -> tuple[Any, str]:
    entry = cache.load(key, OBJECT_KIND)
    if entry is None:
        return None, ""
    try:
        jit, name = loaded(entry.meta, entry.payload, kernel)
    except (cache.Discarded, ValueError, KeyError) as e:
        cache.discard(key, str(e))
        return None, ""
    STATS.cache_hits_disk += 1
    return jit, name


def loaded(meta: dict[str, Any], code: bytes, kernel: KernelOp) -> tuple[Any, str]:
    """The object code an entry (`object_entry`) holds, loaded once the entry is checked
    to be `kernel`'s; Discarded, ValueError or KeyError say why it is not."""
    from irtensor.passes.llvm import jit as llvm_jit

    name, params, texts = _checked_meta(meta, kernel)
    level = meta.get("opt_level")
    codegen = meta.get("codegen_level")
    if type(level) is not int or not 0 <= level <= 3 \
            or not (codegen is None or (type(codegen) is int and 0 <= codegen <= 3)):
        raise cache.Discarded("its LLVM optimisation level is missing")
    jit = llvm_jit.load_object(code, {name: (params, None)}, llvm_ir_text=texts[0],
                               optimized_ir=texts[1])
    jit.opt_level, jit.codegen_level = level, codegen
    jit.function(name)
    return jit, name


def _checked_meta(meta: dict[str, Any], kernel: KernelOp) -> tuple[str, tuple[Any, ...],
                                                                    tuple[str, str]]:
    """The function name, parameters and IR texts an entry records, if they are those of
    `kernel`; else Discarded saying what differs."""
    from irtensor.passes.llvm import jit as llvm_jit

    if meta.get("kernel") != kernel.sym_name.data:
        raise cache.Discarded(f"it holds kernel {str(meta.get('kernel'))[:40]!r}, "
                              f"not {kernel.sym_name.data!r}")
    if meta.get("function") != (name := function_name(kernel)):
        raise cache.Discarded(f"its function is not @{name}")
    want = expected_signature(kernel)
    stored = meta.get("signature")
    if not isinstance(stored, list) or len(stored) != len(want) or not all(
            isinstance(p, list) and len(p) == 4 and (p[0], p[1]) == w
            and isinstance(p[2], bool) and isinstance(p[3], str)
            for p, w in zip(stored, want, strict=False)):
        raise cache.Discarded("its signature is not the kernel's")
    if not stored[len(kernel.inputs)][2]:
        raise cache.Discarded("it does not write the kernel's output")
    texts = (meta.get("llvm_ir"), meta.get("optimized_ir"))
    if not all(isinstance(t, str) for t in texts):
        raise cache.Discarded("its IR texts are missing")
    types = [*(memref_of(v.type) for v in kernel.inputs), memref_of(kernel.res.type)]
    params = tuple(llvm_jit.parameter_of(t, p[3][:40], p[2]) for t, p in zip(
        types, stored, strict=False)) + tuple(
        llvm_jit.Parameter(p[3][:40], "index", False) for p in stored[len(types):])
    return name, params, texts  # type: ignore[return-value]
