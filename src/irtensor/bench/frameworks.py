"""The tensor libraries a case runs on, behind one small interface.

A case writes its computation once, against `Framework`: the methods every library
shares (`+`, `@`, `.exp()`, `.sum(axis)`, `.softmax(-1)`, `.var(axes, keepdim=True,
correction=0)`, `.reshape(*shape)`, ...) are called on the tensors directly, and the
few that differ (making a tensor, zeros, conv2d, realizing, reading back, counting
kernels) go through the framework. irtensor runs once per device (`irtensor-llvm`,
`irtensor-opencl`); torch (CPU) and tinygrad run when they import.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Framework:
    """One implementation of the cases: a library, on one device."""

    name: str
    version: str
    tensor: Callable[[np.ndarray], Any]  # a realized input tensor
    zeros: Callable[[int], Any]
    conv2d: Callable[[Any, Any, int], Any]  # (NCHW input, OIHW weight, padding)
    realize: Callable[[Any], Any]
    numpy: Callable[[Any], np.ndarray]
    kernels_run: Callable[[], int] | None = None  # a counter: kernels launched so far
    runtime_stats: Callable[[], dict[str, float]] | None = None  # irtensor's counters
    device: str = ""
    notes: dict[str, Any] = field(default_factory=dict)


def irtensor(device: str) -> Framework:
    """irtensor's `Tensor` on `device` ("llvm", "opencl" or "interp")."""
    import irtensor as irt
    from irtensor import Tensor, runtime

    def stats() -> dict[str, float]:
        return dict(runtime.stats())

    return Framework(
        name=f"irtensor-{device}",
        version=getattr(irt, "__version__", "") or _version("irtensor"),
        tensor=lambda a: Tensor(a, device=device).realize(),
        zeros=lambda n: Tensor.zeros(n, device=device),
        conv2d=lambda x, w, padding: x.conv2d(w, padding=padding),
        realize=lambda t: t.realize(),
        numpy=lambda t: t.numpy(),
        kernels_run=lambda: int(runtime.stats()["kernels_run"]),
        runtime_stats=stats,
        device=device,
    )


def unavailable(device: str) -> str | None:
    """Why irtensor's `device` cannot run on this host (None: it can)."""
    if device != "opencl":
        return None
    try:
        from irtensor.runtime import opencl_device
    except Exception as e:  # pyopencl missing or broken
        return f"{type(e).__name__}: {e}"
    return opencl_device.unavailable()


def torch(threads: int) -> Framework | None:
    """torch on the CPU with `threads` threads, or None when it does not import."""
    try:
        torch_mod: Any = importlib.import_module("torch")
        functional: Any = importlib.import_module("torch.nn.functional")
    except Exception:
        return None
    torch_mod.set_num_threads(threads)

    def zeros(n: int) -> Any:
        return torch_mod.zeros(n)

    return Framework(
        name="torch",
        version=str(torch_mod.__version__),
        tensor=lambda a: torch_mod.from_numpy(a),
        zeros=zeros,
        conv2d=lambda x, w, padding: functional.conv2d(x, w, padding=padding),
        realize=lambda t: t,
        numpy=lambda t: t.numpy(),
        device="cpu",
    )


def tinygrad() -> Framework | None:
    """tinygrad on its default device (set it with tinygrad's `DEV=`), or None when it
    does not import or cannot run a one-element program."""
    try:
        tg: Any = importlib.import_module("tinygrad")
        helpers: Any = importlib.import_module("tinygrad.helpers")
        Tensor = tg.Tensor
        Tensor([1.0, 2.0]).add(1).numpy()  # a device that cannot compile fails here
        device = str(tg.Device.DEFAULT)
    except Exception:
        return None
    counters = helpers.GlobalCounters
    return Framework(
        name="tinygrad",
        version=_version("tinygrad"),
        tensor=lambda a: Tensor(a).realize(),
        zeros=lambda n: Tensor.zeros(n),
        conv2d=lambda x, w, padding: x.conv2d(w, padding=padding),
        realize=lambda t: t.realize(),
        numpy=lambda t: t.numpy(),
        kernels_run=lambda: int(counters.kernel_count),
        device=device,
    )


def _version(package: str) -> str:
    try:
        from importlib.metadata import version

        return version(package)
    except Exception:
        return ""
