"""A compile worker: a process that lowers and compiles kernels for the one that started it.

    python -m irtensor.runtime.compile_worker      # started by runtime.compile_pool

It reads requests from stdin and writes answers to stdout, each a JSON header and
raw bytes (`compile_pool.write_message`: plain data, so reading one runs no code).
A request is `{"unit", "pipeline", "env"}`: the kernel's compile unit as
`ir.to_text` printed it, the pipeline's text and the variables that steer the
lowering and LLVM (`IRTENSOR_VECTOR_BYTES`, `IRTENSOR_LLVM_OPT`). The answer is
what the disk cache would hold: `{"status": "ok", "meta": ..., "seconds": ...}`
with the object code as payload
(`llvm_objects.object_entry`; the asking process checks it against its kernel as
it checks a disk entry), or `{"status": "error", "message": ...}`: the asking
process then compiles the kernel itself, so a failure is reported there, in
context. End of input ends the worker.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from irtensor.runtime.compile_pool import STEERING, Message, read_message, write_message


def compile_request(request: dict[str, Any]) -> Message:
    from irtensor import ir
    from irtensor.dialects.kernel import KernelOp
    from irtensor.passes.llvm import jit as llvm_jit
    from irtensor.runtime import llvm_device, llvm_objects

    env = request["env"]
    for name in STEERING:
        if name in env:
            os.environ[name] = env[name]
        else:
            os.environ.pop(name, None)
    start = time.perf_counter()
    unit = ir.parse(request["unit"])
    untouched = ir.parse(request["unit"])  # the kernel the answer is checked against
    kernel = next(op for op in untouched.walk() if isinstance(op, KernelOp))
    name = llvm_device.lower_unit(unit, request["pipeline"])
    jit = llvm_jit.compile_module(unit)
    meta = llvm_objects.object_entry(kernel, jit, name)
    if meta is None:
        return {"status": "error", "message": "the compiled kernel cannot be checked"}, b""
    return {"status": "ok", "meta": meta, "seconds": time.perf_counter() - start}, \
        jit.object_code()


def main() -> int:
    import irtensor.passes  # noqa: F401  the lowering's imports, before the first request
    from irtensor.passes.llvm import jit as llvm_jit

    llvm_jit.host_target()
    requests = sys.stdin.buffer
    # The answers get a descriptor of their own: a stray print, or LLVM writing to
    # standard output, must not corrupt them.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    while True:
        try:
            request, _ = read_message(requests)
        except EOFError:
            return 0
        try:
            answer = compile_request(request)
        except Exception as e:  # reported by the asking process, which compiles it again
            answer = {"status": "error", "message": f"{type(e).__name__}: {e}"}, b""
        write_message(answers, *answer)


if __name__ == "__main__":
    sys.exit(main())
