"""The fuzzer's device runs, in a child process: a hang or a crash costs one program.

A compiler that loops (LLVM's vectorizer on some kernel), a kernel that
segfaults or a runtime that grows without bound would end an in-process run
of hours. `Worker` keeps one child process (started fresh, not forked, so it
holds no threads or OpenCL context of its parent) that runs programs on the
device and sends their results back; a program that takes longer than the
timeout, or kills its process, becomes an error outcome and the next program
gets a new child. The child is also replaced every `RECYCLE` programs, which
bounds what its caches hold. Pass plugins are loaded in the child too, so a
pipeline changed by a plugin is the one fuzzed.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from irtensor import ir
from irtensor.testing import Program

RECYCLE = 2000
STARTUP_SECONDS = 300


class DeviceFailure(Exception):
    """The device raised, hung or died; `outcome` (a `fuzz.Outcome`) says how."""

    def __init__(self, outcome: Any):
        super().__init__(outcome.detail)
        self.outcome = outcome


def serve(conn: Connection, device: str, plugins: Sequence[str]) -> None:
    """The child: run each (IR text, inputs) it is sent; answer ("ok", results) or
    ("error", outcome)."""
    from irtensor import passes

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    for plugin in plugins:
        passes.load_pass_plugin(plugin)
    try:
        conn.send(("ready", None))
        while True:
            text, inputs = conn.recv()
            conn.send(answer(text, inputs, device))
    except (EOFError, ConnectionError):  # the parent is gone
        return


def answer(text: str, inputs: list[np.ndarray], device: str) -> tuple[str, Any]:
    from irtensor.pipeline import PipelineError
    from irtensor.tools.fuzz_core import error_outcome, run_device

    try:
        return "ok", run_device(Program(ir.parse(text), inputs), device)
    except Exception as e:
        stage = "pipeline" if isinstance(e, PipelineError) else "device"
        return "error", error_outcome(stage, e)


class Worker:
    """Runs programs on `device` in a child process, each within `timeout` seconds."""

    def __init__(self, device: str, timeout: float, plugins: Sequence[str] = ()):
        self.device, self.timeout, self.plugins = device, timeout, tuple(plugins)
        self.process: Any = None
        self.conn: Connection | None = None
        self.served = 0

    def start(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=serve, args=(child, self.device, self.plugins),
                                       daemon=True)
        self.process.start()
        child.close()
        self.served = 0
        # a fresh process imports irtensor first: that is not the program's time
        if not self.conn.poll(STARTUP_SECONDS) or self.conn.recv()[0] != "ready":
            self.stop()
            raise RuntimeError(f"the device process did not start in {STARTUP_SECONDS} s")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.join()
        if self.conn is not None:
            self.conn.close()
        self.process, self.conn = None, None

    def __call__(self, program: Program) -> list[np.ndarray]:
        """The device's results, or DeviceFailure."""
        from irtensor.tools.fuzz_core import Outcome

        if self.process is None or self.served >= RECYCLE or not self.process.is_alive():
            self.stop()
            self.start()
        assert self.conn is not None
        self.served += 1
        self.conn.send((ir.to_text(program.module), list(program.inputs)))
        if not self.conn.poll(self.timeout):
            self.stop()
            raise DeviceFailure(Outcome("error", ("error", "device", "timeout", ""),
                                        f"no result after {self.timeout:g} s"))
        try:
            status, payload = self.conn.recv()
        except (EOFError, ConnectionError):
            self.process.join()
            code = self.process.exitcode
            self.stop()
            how = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
            raise DeviceFailure(Outcome("error", ("error", "device", "crash", how),
                                        f"the device's process died ({how})")) from None
        if status == "error":
            raise DeviceFailure(payload)
        return payload
