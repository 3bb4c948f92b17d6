"""Compile workers: a program's new kernels lowered and compiled on every core.

Lowering a kernel is Python, so threads cannot share it out (the GIL); processes
can. `IRTENSOR_COMPILE_WORKERS` (default: one per core but this one, 0 on one
core) `compile_worker` processes are started the first time a program has at
least `MIN_KERNELS` kernels to compile, and kept. A batch is shared out as work is
finished: this process and each worker take the next kernel nobody has taken, so
a worker still starting up (importing irtensor, about a second) delays nobody.
The caller orders the batch longest first (a register-blocked matmul lowers to
thousands of ops, an elementwise kernel to tens), so the long ones start at once
and the short ones fill in at the end.

Workers are started with `python -m irtensor.runtime.compile_worker` and fed
through pipes; nothing of the user's program is imported again in them (no
`multiprocessing`, which would run the user's `__main__` in each). A worker that
fails on a kernel, or dies, hands it back: this process then compiles it itself,
so an error is raised here, in context, as without workers.
"""

from __future__ import annotations

import atexit
import json
import os
import struct
import subprocess
import sys
import threading
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from irtensor.dialects.kernel import KernelOp

MIN_KERNELS = 4  # fewer than this compile faster than a worker starts
ANSWER_TIMEOUT_S = 600.0  # a kernel's compile takes seconds; past this, a worker is stuck


LENGTH = struct.Struct("<Q")
# What the lowering and LLVM read from the environment (`host.lowering_key` and the LLVM
# level), passed on to the workers with each kernel: set after they started, it holds there.
STEERING = ("IRTENSOR_VECTOR_BYTES", "IRTENSOR_LLVM_OPT", "IRTENSOR_L2_BYTES",
            "IRTENSOR_BF16_DOT", "IRTENSOR_AMX", "IRTENSOR_STREAM_BYTES")


Message = tuple[dict[str, Any], bytes]


def write_message(stream: IO[bytes], header: dict[str, Any], payload: bytes = b"") -> None:
    """A JSON header and raw bytes, each after its 8-byte length (plain data: reading a
    message runs no code)."""
    data = json.dumps(header).encode()
    stream.write(LENGTH.pack(len(data)) + data + LENGTH.pack(len(payload)) + payload)
    stream.flush()


def read_message(stream: IO[bytes]) -> Message:
    """The next (header, payload); EOFError at the end of the stream (or a cut-off
    message), ValueError for a header that is not a JSON object."""
    header = json.loads(_read_part(stream))
    if not isinstance(header, dict):
        raise ValueError("a message header is not a JSON object")
    return header, _read_part(stream)


def _read_part(stream: IO[bytes]) -> bytes:
    length = stream.read(LENGTH.size)
    if len(length) < LENGTH.size:
        raise EOFError("the stream ended")
    (size,) = LENGTH.unpack(length)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the stream ended inside a message")
    return data


def compile_cost(kernel: KernelOp) -> int:
    """About how many ops the kernel lowers to: its body's, times the points of a register
    block (its body is cloned once per point)."""
    body = sum(1 for _ in kernel.body.walk())
    if kernel.epilogue_block is not None:
        body += len(kernel.epilogue_block.ops)
    schedule = kernel.schedule
    return body * (schedule.unroll.data * schedule.vector.data if schedule is not None else 1)


def worker_count() -> int:
    """IRTENSOR_COMPILE_WORKERS, else one per core but the one this process uses."""
    value = os.environ.get("IRTENSOR_COMPILE_WORKERS", "").strip()
    if value:
        if not value.isdigit():
            raise ValueError(f"IRTENSOR_COMPILE_WORKERS must be a count of processes "
                             f"(0: none), got {value!r}")
        return int(value)
    return max(0, (os.cpu_count() or 1) - 1)


@dataclass
class Batch:
    """Kernels to compile, each taken once: by this process (`take`) or by a worker."""

    requests: list[dict[str, Any]]
    answers: list[Future[Message]] = field(default_factory=list)
    remote: set[int] = field(default_factory=set)
    _untaken: deque[int] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.answers = [Future() for _ in self.requests]
        self._untaken = deque(range(len(self.requests)))

    def take(self, by_worker: bool = False) -> int | None:
        """The index of the next kernel nobody has taken."""
        with self._lock:
            if not self._untaken:
                return None
            index = self._untaken.popleft()
            if by_worker:
                self.remote.add(index)
            return index


class _Worker:
    """One worker process and the thread in this process that feeds it."""

    def __init__(self, pool: CompilePool):
        self.pool = pool
        self.process: subprocess.Popen[bytes] | None = None
        self.thread = threading.Thread(target=self.serve, name="irtensor-compile-worker",
                                       daemon=True)
        self.thread.start()

    def start_process(self) -> subprocess.Popen[bytes]:
        # irtensor as this process found it, even where it is not installed
        package_root = str(Path(__file__).resolve().parents[2])
        search = [package_root, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        env = dict(os.environ, IRTENSOR_COMPILE_WORKERS="0", PYTHONPATH=os.pathsep.join(search))
        return subprocess.Popen([sys.executable, "-m", "irtensor.runtime.compile_worker"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env)

    def serve(self) -> None:
        try:  # at once: its imports overlap with what this process does before the batch
            self.process = self.start_process()
        except OSError:
            self.pool.retire(self)
            return
        while True:
            batch, index = self.pool.next_task()
            try:
                assert self.process.stdin is not None and self.process.stdout is not None
                write_message(self.process.stdin, batch.requests[index])
                answer = read_message(self.process.stdout)
            except Exception as e:  # any failure: the kernel goes back, the worker goes
                batch.answers[index].set_result(({"status": "error",
                                                  "message": f"the worker stopped: {e}"}, b""))
                self.pool.retire(self)
                return
            batch.answers[index].set_result(answer)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class CompilePool:
    """The workers, started on first use, and the batches they take kernels from."""

    def __init__(self, workers: int):
        self.size = workers
        self.workers: list[_Worker] = []
        self.batches: deque[Batch] = deque()
        self.ready = threading.Condition()

    def share(self, requests: list[dict[str, Any]]) -> Batch:
        batch = Batch(requests)
        with self.ready:
            self._staff()
            self.batches.append(batch)
            self.ready.notify_all()
        return batch

    def warm(self) -> None:
        """Start the workers now, ahead of a batch that is likely to come."""
        with self.ready:
            self._staff()

    def _staff(self) -> None:
        while len(self.workers) < self.size:
            self.workers.append(_Worker(self))

    def next_task(self) -> tuple[Batch, int]:
        with self.ready:
            while True:
                while self.batches:
                    batch = self.batches[0]
                    index = batch.take(by_worker=True)
                    if index is not None:
                        return batch, index
                    self.batches.popleft()  # all taken
                self.ready.wait()

    def retire(self, worker: _Worker) -> None:
        with self.ready:
            if worker in self.workers:
                self.workers.remove(worker)
            self.size = min(self.size, len(self.workers))  # no new one: it would fail too
        worker.stop()

    def close(self) -> None:
        """Stop every worker, and start no more."""
        with self.ready:
            self.size = 0
            workers, self.workers = self.workers, []
        for worker in workers:
            worker.stop()


_POOL: list[CompilePool] = []
_POOL_LOCK = threading.Lock()


def pool() -> CompilePool | None:
    """The process's pool of workers (None: IRTENSOR_COMPILE_WORKERS is 0, or one core)."""
    count = worker_count()  # read each time: 0 turns the workers off for a while
    if count <= 0:
        return None
    with _POOL_LOCK:
        if not _POOL:
            _POOL.append(CompilePool(count))
            atexit.register(_POOL[0].close)
        return _POOL[0] if _POOL[0].size > 0 else None


def answer_of(answer: Future[Message]) -> Message:
    """A worker's answer; an error answer when none came within ANSWER_TIMEOUT_S, after
    stopping every worker (one is stuck: the kernels compile in this process from now on)."""
    try:
        return answer.result(timeout=ANSWER_TIMEOUT_S)
    except TimeoutError:
        if (workers := pool()) is not None:
            workers.close()
        return {"status": "error", "message": "no answer"}, b""


def request(text: str, spec: str) -> dict[str, Any]:
    """What a worker needs to compile a unit as this process would."""
    return {"unit": text, "pipeline": spec,
            "env": {name: os.environ[name] for name in STEERING if name in os.environ}}


def _forget_after_fork() -> None:
    _POOL.clear()  # the child has no threads feeding the parent's workers


os.register_at_fork(after_in_child=_forget_after_fork)
