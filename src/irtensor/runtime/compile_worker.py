"""A compile worker: a process that lowers and compiles kernels for the one that started it.

    python -m irtensor.runtime.compile_worker      # started by runtime.compile_pool

It reads requests from stdin and writes answers to stdout, each a pickle after its
8-byte length (`compile_pool.write_message`; the two processes are the same program,
nothing here reads a file).
A request is `(unit text, device pipeline spec, environment)`: the kernel's compile
unit as `ir.to_text` printed it, the pipeline's text and the variables that steer
the lowering (`IRTENSOR_VECTOR_BYTES`). The answer is `("ok", function name,
object code, signatures, LLVM IR, optimised IR, seconds)` or `("error", message)`:
the asking process then compiles the kernel itself, so a failure is reported
there, in context. End of input ends the worker.
"""

from __future__ import annotations

import os
import sys
import time

from irtensor.runtime.compile_pool import STEERING, read_message, write_message


def compile_request(text: str, spec: str, env: dict[str, str]) -> tuple[object, ...]:
    from irtensor import ir
    from irtensor.passes.llvm import jit as llvm_jit
    from irtensor.runtime import llvm_device

    for name in STEERING:
        if name in env:
            os.environ[name] = env[name]
        else:
            os.environ.pop(name, None)
    start = time.perf_counter()
    unit = ir.parse(text)
    name = llvm_device.lower_unit(unit, spec)
    jit = llvm_jit.compile_module(unit)
    code = jit.object_code()
    if code is None:
        return ("error", "LLVM made no object code")
    return ("ok", name, code, jit.signatures, jit.llvm_ir, jit.optimized_ir,
            time.perf_counter() - start)


def main() -> int:
    requests = sys.stdin.buffer
    # The answers get a descriptor of their own: a stray print, or LLVM writing to
    # standard output, must not corrupt them.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    while True:
        try:
            text, spec, env = read_message(requests)
        except EOFError:
            return 0
        try:
            answer = compile_request(text, spec, env)
        except Exception as e:  # reported by the asking process, which compiles it again
            answer = ("error", f"{type(e).__name__}: {e}")
        write_message(answers, answer)


if __name__ == "__main__":
    sys.exit(main())
