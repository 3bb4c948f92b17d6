"""The kernel -> loops rung: each kernel as a loop function of upstream MLIR dialects.

In: a module of `kernel.kernel`s with schedules. Out: `func.func`s on memrefs built of
`scf.for`, `arith`, `math`, `memref` and `vector` ops (one per kernel, over `[start, stop)` of its
outermost loop so threads can split it), and a caller that runs them in order.

- `lower_kernels_to_loops`: lower-kernels-to-loops, the pass and the calling function;
- `loop_builder`: one kernel's loop nest, tiles and accumulators (`loop_parts`: its pieces);
- `register_block`: the register-blocked reduction of matmul- and conv-like kernels;
- `vector_block`: a register block's rows as vectors, where the kernel allows;
- `blocked`: how every reduction accumulates, in blocks of at most 128 values.
"""
