"""The loops -> LLVM rung: loop functions into the llvm dialect, then machine code.

In: the loop functions of `lower-kernels-to-loops` (func, scf, arith, math, memref).
Out: `llvm.func`s on bare pointers (the llvm dialect), then LLVM IR text and host machine
code through llvmlite (`jit`), called on numpy arrays.

- `convert_to_llvm`: convert-to-llvm, the pass (functions, control flow);
- `patterns_arith`, `patterns_math`, `patterns_memref`: its rewrite patterns per dialect,
  built with the `lowering` emitter; `vector_math`: vectorisable exp2/log2/sin/cos;
- `jit`: llvm dialect -> LLVM IR -> optimised object code -> ctypes calls.
"""
