"""Device `opencl`: each kernel lowered to an `ocl.kernel`, printed as OpenCL C, built with
pyopencl, cached; buffers stay on the device until the host reads a result.

The device is `IRTENSOR_OPENCL_DEVICE` (an index into all platforms' devices, or a
substring of a device's name), else pyopencl's `PYOPENCL_CTX`, else the first
device that builds a one-line program (a PoCL whose LLVM does not know the host
CPU lists a device but fails every build; another platform may work). A program
is cached in memory (by the kernel's IR and the device, up to
`IRTENSOR_KERNEL_CACHE_MB` of binaries and sources) and on disk (by its OpenCL C
and the device name, as the device's binary, with the kernels' names and argument
counts, checked against the built binary before it runs).
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from irtensor import dtypes, ir, settings
from irtensor.dialects.kernel import KernelOp
from irtensor.passes.opencl.c_printer import CProgram, print_program
from irtensor.passes.opencl.lower_to_opencl import WORK_GROUP_SIZE, lower_kernel
from irtensor.pipeline import Pipeline
from irtensor.runtime import STATS, cache
from irtensor.runtime.llvm_device import compile_unit, debug_level, kernel_cache_bytes
from irtensor.runtime.lru import LRU

BUILD_OPTIONS = ["-cl-fp32-correctly-rounded-divide-sqrt"]
BINARY_KIND = "opencl-binary"


class OpenCLError(RuntimeError):
    """A device without what a program needs, or a program that does not build."""


@dataclass
class Device:
    context: Any
    queue: Any
    device: Any

    @property
    def name(self) -> str:
        return f"{self.device.platform.name}/{self.device.name}/{self.device.version}"

    @property
    def shares_host_memory(self) -> bool:
        """A CPU device (PoCL) works in host memory: buffers wrap numpy arrays
        (`USE_HOST_PTR`) instead of copying them."""
        try:
            return bool(self.device.host_unified_memory)
        except Exception:  # removed in OpenCL 3.0 for some devices
            return bool(self.device.type & _cl().device_type.CPU)


@dataclass
class CompiledKernel:
    name: str
    kernel: Any  # pyopencl.Kernel
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    program: CProgram
    nbytes: int = 0  # the device binary's size, for the memory limit


_DEVICE: Device | None = None
_MEMORY: LRU[str, CompiledKernel] = LRU(kernel_cache_bytes,
                                        lambda k: k.nbytes + len(k.program.source))
_LOCK = threading.Lock()


def _cl() -> Any:
    import pyopencl

    return pyopencl


def choose_device() -> Any:
    """The pyopencl device named by IRTENSOR_OPENCL_DEVICE (index or name substring)."""
    cl = _cl()
    devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    if not devices:
        raise OpenCLError("no OpenCL device found (install pocl-binary-distribution for a "
                          "CPU device)")
    wanted = os.environ.get("IRTENSOR_OPENCL_DEVICE", "")
    if wanted.isdigit():
        if int(wanted) >= len(devices):
            raise OpenCLError(f"IRTENSOR_OPENCL_DEVICE={wanted}: there are {len(devices)} "
                              "devices")
        return devices[int(wanted)]
    if wanted:
        for d in devices:
            if wanted.lower() in d.name.lower():
                return d
        raise OpenCLError(f"IRTENSOR_OPENCL_DEVICE={wanted!r} matches none of "
                          f"{[d.name for d in devices]}")
    if os.environ.get("PYOPENCL_CTX"):
        return cl.create_some_context(interactive=False).devices[0]
    failures = []
    for d in devices:
        why = _build_failure(d)
        if why is None:
            return d
        failures.append(f"{d.name}: {why}")
    raise OpenCLError("no OpenCL device here builds programs: " + "; ".join(failures))


def _build_failure(dev: Any) -> str | None:
    """Why `dev` cannot build a one-line kernel (None: it can)."""
    cl = _cl()
    try:
        cl.Program(cl.Context([dev]), PROBE_SOURCE).build()
        return None
    except Exception as e:  # a compiler that fails on this host
        return " ".join(str(e).split())[-200:] or type(e).__name__


PROBE_SOURCE = "__kernel void probe(__global int* a) { a[0] = 1; }"


def device() -> Device:
    global _DEVICE
    with _LOCK:
        if _DEVICE is None:
            cl = _cl()
            chosen = choose_device()
            context = cl.Context([chosen])
            _DEVICE = Device(context, cl.CommandQueue(context), chosen)
        return _DEVICE


def unavailable() -> str | None:
    """Why OpenCL programs cannot be built and run here (None: they can); checked once by
    building a one-line kernel."""
    global _PROBE
    if _PROBE is None:
        try:
            dev = device()
            _cl().Program(dev.context, PROBE_SOURCE).build()
            _PROBE = ""
        except Exception as e:  # no platform, or a compiler that fails on this host
            _PROBE = " ".join(str(e).split())[-300:] or type(e).__name__
    return _PROBE or None


_PROBE: str | None = None


def supports_fp64(dev: Any) -> bool:
    """Whether the device has double precision (tests monkeypatch this)."""
    return "cl_khr_fp64" in dev.extensions or bool(getattr(dev, "double_fp_config", 0))


def work_group_size(dev: Any) -> int:
    """The work-group size of work-group reductions: 128, or the device's largest power
    of two below that."""
    limit = min(WORK_GROUP_SIZE, int(dev.max_work_group_size), int(dev.max_work_item_sizes[0]))
    return 1 << (limit.bit_length() - 1)


# --------------------------------------------------------------------------- programs


# A realized program is cached with its kernel ops: each op remembers its compiled kernel,
# so a replay prints and hashes nothing.
_BY_OP: weakref.WeakKeyDictionary[KernelOp, CompiledKernel] = weakref.WeakKeyDictionary()


def compile_kernel(kernel: KernelOp) -> CompiledKernel:
    return cache.remembered(_BY_OP, kernel, _compile_kernel)


def forget(module: ModuleOp) -> None:
    """Drop what this device remembers by the kernel ops of `module`."""
    for op in module.walk():
        if isinstance(op, KernelOp):
            _BY_OP.pop(op, None)


def device_lowered(unit: ModuleOp, lowering: settings.PipelineLike) -> KernelOp:
    """The kernel of `unit` after the device pipeline (`device-opencl`, empty, unless one
    was chosen): the one the OpenCL C is printed from."""
    Pipeline([lowering] if isinstance(lowering, str | ModulePass) else list(lowering)).run(unit)
    kernels = [op for op in unit.walk() if isinstance(op, KernelOp)]
    if len(kernels) != 1:
        raise OpenCLError(f"device opencl: the device pipeline left {len(kernels)} "
                          "kernel.kernel ops in a kernel's module; expected one")
    return kernels[0]


def _compile_kernel(kernel: KernelOp) -> CompiledKernel:
    dev = device()
    unit = compile_unit(kernel)
    text = ir.to_text(unit)
    lowering = settings.device_pipeline_for("opencl")
    key = cache.key_of("opencl-ir", text, dev.name, repr(settings.pipeline_key(lowering)))
    if (known := _MEMORY.get(key)) is not None:
        STATS.cache_hits_memory += 1
        return known
    kernel = device_lowered(unit, lowering)
    lowered = lower_kernel(kernel, group=work_group_size(dev.device),
                           max_local=int(dev.device.max_work_group_size),
                           max_local_sizes=list(dev.device.max_work_item_sizes))
    program = print_program([lowered])
    if program.needs_fp64 and not supports_fp64(dev.device):
        raise OpenCLError(f"kernel @{kernel.sym_name.data} needs f64, which the OpenCL device "
                          f"{dev.device.name!r} does not support (no cl_khr_fp64)")
    built = build(program, dev, [len(kernel.inputs) + 1])
    compiled = CompiledKernel(program.kernel_names[0],
                              getattr(built, program.kernel_names[0]),
                              lowered.global_size, lowered.local_size, program,
                              _binary_size(built))
    _MEMORY.put(key, compiled)
    return compiled


def _binary_size(built: Any) -> int:
    try:
        return sum(built.get_info(_cl().program_info.BINARY_SIZES))
    except Exception:  # a device that does not report it
        return 0


def opencl_source(module: ModuleOp) -> str:
    """The OpenCL C of a kernel-level module's kernels, as device opencl builds them
    (with the work-group size of the device when there is one)."""
    group = WORK_GROUP_SIZE if unavailable() else work_group_size(device().device)
    kernels = [op for op in module.walk() if isinstance(op, KernelOp)]
    return print_program([lower_kernel(k, group=group) for k in kernels]).source


def build(program: CProgram, dev: Device, arities: Sequence[int] | None = None) -> Any:
    """A built pyopencl.Program: from the disk cache's binary, else from source (stored).
    `arities`: how many arguments each kernel takes, checked on a cached binary."""
    cl = _cl()
    key = cache.key_of("opencl-c", program.source, dev.name, " ".join(BUILD_OPTIONS))
    meta = {"kernels": list(program.kernel_names), "device": dev.name,
            "options": BUILD_OPTIONS, "arities": list(arities) if arities else None,
            "source_sha256": hashlib.sha256(program.source.encode()).hexdigest()}
    if (entry := cache.load(key, BINARY_KIND)) is not None:
        try:
            built = _from_binary(entry, meta, dev)
            STATS.cache_hits_disk += 1
            return built
        except cache.Discarded as e:
            cache.discard(key, str(e))
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():  # PoCL's informational output; failures raise below
            warnings.simplefilter("ignore", cl.CompilerWarning)
            built = cl.Program(dev.context, program.source).build(options=BUILD_OPTIONS)
    except cl.RuntimeError as e:
        log = getattr(e, "build_log", None) or str(e)
        raise OpenCLError(f"OpenCL build of kernel {', '.join(program.kernel_names)} failed "
                          f"on {dev.device.name}:\n{log}\n--- source ---\n{program.source}"
                          ) from None
    STATS.kernels_compiled += 1
    STATS.seconds_compiling += time.perf_counter() - start
    binaries = built.get_info(cl.program_info.BINARIES)
    if binaries and binaries[0] and meta["arities"] in (None, _arities(built, program)):
        cache.store(key, BINARY_KIND, meta, bytes(binaries[0]))
    return built


def _from_binary(entry: cache.Entry, meta: dict[str, Any], dev: Device) -> Any:
    """The program built from a cached binary whose record and kernels are those of the
    program asked for; else Discarded saying what differs."""
    cl = _cl()
    for field, want in meta.items():
        if entry.meta.get(field) != want:
            raise cache.Discarded(f"its {field} is not the program's")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cl.CompilerWarning)
            built = cl.Program(dev.context, [dev.device], [entry.payload]).build(
                options=BUILD_OPTIONS)
    except Exception as e:  # the device refuses the binary
        raise cache.Discarded(f"the device does not take it ({' '.join(str(e).split())[:80]})"
                              ) from None
    names = built.get_info(cl.program_info.KERNEL_NAMES).split(";")
    if sorted(names) != sorted(meta["kernels"]):
        raise cache.Discarded(f"its binary holds kernels {names}, not {meta['kernels']}")
    if meta["arities"] is not None and _arities(built, meta["kernels"]) != meta["arities"]:
        raise cache.Discarded("its kernels take other arguments")
    return built


def _arities(built: Any, program: CProgram | Sequence[str]) -> list[int]:
    names = program.kernel_names if isinstance(program, CProgram) else program
    cl = _cl()  # a Kernel of its own: the attribute lookup warns when it is repeated
    return [cl.Kernel(built, n).get_info(cl.kernel_info.NUM_ARGS) for n in names]


# --------------------------------------------------------------------------- running


@dataclass
class DeviceArray:
    """A tensor's buffer on the device (a 1-element dummy for an empty tensor); `host`:
    the numpy array a `USE_HOST_PTR` buffer wraps."""

    buffer: Any
    shape: tuple[int, ...]
    dtype: np.dtype
    host: np.ndarray | None = None

    def numpy(self, queue: Any) -> np.ndarray:
        cl = _cl()
        if self.host is None:
            out = np.empty(self.shape, self.dtype)
            if out.size:
                cl.enqueue_copy(queue, out, self.buffer)
            return out
        if self.host.size and int(np.prod(self.shape)):
            # The map makes the device's writes visible in `host` (the spec's rule for
            # USE_HOST_PTR); a device that wraps host memory maps it in place.
            mapped, _ = cl.enqueue_map_buffer(queue, self.buffer, cl.map_flags.READ, 0,
                                              self.host.shape, self.dtype, is_blocking=True)
            if mapped.ctypes.data != self.host.ctypes.data:
                self.host[...] = mapped
            mapped.base.release(queue)
        return self.host.reshape(self.shape) if self.host.size == int(np.prod(self.shape)) \
            else np.empty(self.shape, self.dtype)


def to_device(x: np.ndarray, dev: Device) -> DeviceArray:
    cl = _cl()
    x = np.ascontiguousarray(x)
    host = x if x.size else np.zeros(1, x.dtype)
    if dev.shares_host_memory:
        flags = cl.mem_flags.READ_ONLY | cl.mem_flags.USE_HOST_PTR
        return DeviceArray(cl.Buffer(dev.context, flags, hostbuf=host), x.shape, x.dtype, host)
    flags = cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR
    return DeviceArray(cl.Buffer(dev.context, flags, hostbuf=host), x.shape, x.dtype)


def allocate(t: TensorType, dev: Device) -> DeviceArray:
    cl = _cl()
    dtype = dtypes.to_numpy(t.element_type)
    shape = tuple(t.get_shape())
    if dev.shares_host_memory:
        host = np.empty(max(int(np.prod(shape)), 1), dtype)
        flags = cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR
        return DeviceArray(cl.Buffer(dev.context, flags, hostbuf=host), shape, dtype, host)
    nbytes = max(int(np.prod(shape)) * dtype.itemsize, dtype.itemsize)
    return DeviceArray(cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, nbytes), shape, dtype)


def run(module: ModuleOp, inputs: Sequence[np.ndarray], fn: str = "main") -> list[np.ndarray]:
    """Execute `@fn` of a kernel-level module on numpy arrays, on the OpenCL device."""
    main = next((op for op in module.walk()
                 if isinstance(op, func.FuncOp) and op.sym_name.data == fn), None)
    if main is None:
        raise ValueError(f"no function @{fn} in the module")
    dev = device()
    args = main.body.block.args
    host: dict[SSAValue, np.ndarray] = {
        a: np.asarray(x, order="C") for a, x in zip(args, inputs, strict=True)}
    env: dict[SSAValue, DeviceArray] = {}
    level = debug_level()
    for op in main.body.block.ops:
        if isinstance(op, func.ReturnOp):
            dev.queue.finish()
            return [host[v] if v in host else env[v].numpy(dev.queue) for v in op.operands]
        if not isinstance(op, KernelOp):
            raise TypeError(f"device opencl cannot run {op.name}; expected kernel.kernel ops")
        for v in op.inputs:
            if v not in env:
                env[v] = to_device(host[v], dev)
        t = op.res.type
        assert isinstance(t, TensorType)
        out = allocate(t, dev)
        compiled = compile_kernel(op)
        start = time.perf_counter()
        if int(np.prod(out.shape)):
            compiled.kernel(dev.queue, compiled.global_size, compiled.local_size,
                            *(env[v].buffer for v in op.inputs), out.buffer)
        STATS.kernels_run += 1
        if level >= 2:
            dev.queue.finish()
            _report(op, compiled, time.perf_counter() - start, level)
        env[op.res] = out
    raise ValueError(f"@{fn} has no func.return")


def _report(op: KernelOp, kernel: CompiledKernel, seconds: float, level: int) -> None:
    local = f" local {list(kernel.local_size)}" if kernel.local_size else ""
    sys.stderr.write(f"*** opencl {kernel.name:<24} {list(op.sizes)!s:<24} "
                     f"range {list(kernel.global_size)!s:<16}{local} {seconds * 1e3:9.3f} ms\n")
    if level >= 4:
        sys.stderr.write(kernel.program.source + "\n")


__all__ = ["CompiledKernel", "OpenCLError", "choose_device", "compile_kernel", "device",
           "opencl_source", "run", "supports_fp64", "unavailable"]
