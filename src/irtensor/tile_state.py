"""AMX's tile state, which Linux gives a process only when it asks.

Kept apart from `irtensor.host` so that the JIT (which `host` imports) can ask too: a
kernel on tiles may come from another process's compile or from the disk cache, and the
first tile instruction of a process that did not ask dies of SIGILL.
"""

from __future__ import annotations

import functools

_ARCH_REQ_XCOMP_PERM = 0x1023
_XFEATURE_XTILEDATA = 18
_SYS_ARCH_PRCTL = {"x86_64": 158}


@functools.cache
def enable_tile_data() -> bool:
    """Ask Linux (arch_prctl ARCH_REQ_XCOMP_PERM) for AMX's tile state in this process,
    once; whether it may use the tiles. False off Linux x86-64, or where the kernel
    refuses (older than 5.16, or the state disabled)."""
    import ctypes
    import platform

    number = _SYS_ARCH_PRCTL.get(platform.machine())
    if number is None or platform.system() != "Linux":
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.syscall(number, _ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA)) == 0
    except (OSError, AttributeError):
        return False


__all__ = ["enable_tile_data"]
