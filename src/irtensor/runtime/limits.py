"""How large a tensor a device can take: its memory, and the check made before running.

The rule is one for every device and every stage: each tensor of a program must
fit in the memory of the device that runs it. Fusion often keeps a value out of
memory, but no pass promises that it will (the interpreter holds every value),
so a program is taken only if it could run with each of its tensors stored.
The check is made where a tensor is first named: at the Tensor call that makes
it, and before `irtensor-opt --run` draws inputs or starts a device. Without it,
a 4 TiB constant summed on `llvm` runs for hours, and random inputs of that size
take all the host's memory before numpy gives up.

The host's memory is its physical memory, or a smaller cgroup limit; an
OpenCL device's is its global memory.
"""

from __future__ import annotations

import functools
import math
import os
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from irtensor import dtypes
from irtensor.ir import location

CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


class TooLargeError(ValueError):
    """A tensor (or a buffer drawn on the host) larger than the memory that would hold it."""


@functools.cache
def host_memory() -> int:
    """Bytes of memory this process can have: physical memory, or a cgroup limit below it."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # a system without these names
        total = 2**63 - 1
    for path in CGROUP_LIMITS:
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


@functools.cache
def device_memory(device: str) -> int:
    """Bytes a tensor on `device` can take (OpenCL: the device's global memory; where no
    OpenCL device works, the host's, and running says why it cannot)."""
    if device == "opencl":
        from irtensor.runtime import opencl_device

        if opencl_device.unavailable() is None:
            return int(opencl_device.device().device.global_mem_size)
    return host_memory()


ITEM_BYTES = {element: dtypes.to_numpy(element).itemsize for element in dtypes.ELEMENT_TYPES}


def nbytes(t: TensorType) -> int:
    """Bytes of a tensor of type `t`, stored densely."""
    return math.prod(t.get_shape()) * ITEM_BYTES[t.element_type]


def format_bytes(n: int) -> str:
    """`512 B`, `1.5 KiB`, ..., `4.0 TiB`, `8.0 EiB`."""
    if n < 1024:
        return f"{n} B"
    units = ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    exponent = min(int(math.log2(n) // 10), len(units))
    return f"{n / 1024**exponent:.1f} {units[exponent - 1]}"


def too_large(what: str, size: int, limit: int, where: str) -> TooLargeError:
    return TooLargeError(f"{what} needs {format_bytes(size)}, more than the "
                         f"{format_bytes(limit)} of memory of {where}")


def check_tensor(t: TensorType, device: str, what: str) -> None:
    """Raise TooLargeError when a tensor of type `t` does not fit in `device`'s memory."""
    if (item := ITEM_BYTES.get(t.element_type)) is None:
        return  # the verifier names an unsupported element type
    if (size := math.prod(t.get_shape()) * item) > (limit := device_memory(device)):
        raise too_large(f"{what} ({t})", size, limit, f"device {device}")


def check_function(function: func.FuncOp, device: str) -> None:
    """Each tensor `function` takes or makes fits in `device`'s memory, and so do its
    arguments together (they are all held before it starts)."""
    name = f"@{function.sym_name.data}"
    total = 0
    for arg in function.body.block.args:
        if isinstance(arg.type, TensorType) and dtypes.is_supported(arg.type.element_type):
            label = f"%{arg.name_hint}" if arg.name_hint else f"#{arg.index}"
            check_tensor(arg.type, device, f"argument {label} of {name}")
            total += nbytes(arg.type)
    if total > (limit := device_memory(device)):
        raise too_large(f"the arguments of {name} together", total, limit, f"device {device}")
    for op in function.walk():
        for result in op.results:
            if _is_folded_constant(op, result):
                continue
            if isinstance(result.type, TensorType):
                check_tensor(result.type, device, f"the result of '{op.name}' at {location(op)}")


def _is_folded_constant(op: Operation, result: SSAValue) -> bool:
    """An `ll.const` that is not returned is one scalar: it is never stored whole."""
    return op.name == "ll.const" and all(not isinstance(use.operation, func.ReturnOp)
                                         for use in result.uses)


def check_host(count: int, itemsize: int, what: str) -> None:
    """Raise TooLargeError when `count` items of `itemsize` bytes do not fit in the host's
    memory (a buffer numpy is about to make)."""
    if (size := count * itemsize) > (limit := host_memory()):
        raise too_large(what, size, limit, "this host")


__all__ = ["TooLargeError", "check_function", "check_host", "check_tensor", "device_memory",
           "format_bytes", "host_memory", "nbytes"]
