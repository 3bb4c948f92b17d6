"""The ll -> kernel rung: ll programs fused into scheduled `kernel.kernel`s.

In: `ll` functions. Out: functions of `kernel.kernel` ops (one output each, masked affine
reads, a reduction with its epilogue) carrying a `schedule` (loop order, tiles, vector
width, unroll, parallel loops, register block).

- `fuse`: fuse, tinygrad-style kernel formation over lazy `nodes`, bodies by `kernel_body`;
- `views`: movement ops as index maps (views never copy);
- `split_reductions`: split-reductions, long reductions as a partial and a final kernel;
- `pack_operands`: pack-operands, a contraction's strided operand copied transposed;
- `reorder_loops`: reorder-loops, each kernel's schedule from the `cost_model`, with
  `schedule_blocks` for matmul- and conv-like kernels;
- `kernel_facts`: what the schedulers and lowerings ask of a kernel.
"""
