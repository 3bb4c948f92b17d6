"""The kernel -> OpenCL rung: each kernel as an `ocl.kernel`, then OpenCL C text.

In: a module of `kernel.kernel`s with schedules. Out: `ocl` dialect kernels (one work item
per output point, work-group reductions, register blocks), then OpenCL C 1.2 source that
`runtime.opencl_device` builds and runs with pyopencl.

- `lower_to_opencl`: lower-to-opencl, the pass (NDRange, work groups, blocks);
- `c_printer`: `ocl` IR -> OpenCL C 1.2.
"""
