"""irtensor's passes, one folder per rung of the ladder, and the registry that names them.

- `rewrite/`: hl -> ll (decompose-hlops, conv-to-mul-sum, fold-constants, ll canonicalization);
- `autodiff/`: ll -> ll with the gradient beside each function (grad);
- `kernel/`: ll -> scheduled `kernel.kernel`s (fuse, split-reductions, pack-operands,
  reorder-loops);
- `loops/`: kernel -> scf/arith/math/memref loop functions (lower-kernels-to-loops);
- `llvm/`: loops -> the llvm dialect -> machine code (convert-to-llvm, the JIT);
- `opencl/`: kernel -> the `ocl` dialect -> OpenCL C (lower-to-opencl, the C printer).

The registry (`registry.py`) is re-exported here: `register_pass`, `register_pipeline`,
`get_pass`, `all_passes`, `all_pipelines`, `load_pass_plugin`. Importing this package
registers every pass and the named pipelines below.
"""

from irtensor.passes.autodiff import grad
from irtensor.passes.kernel import fuse, pack_operands, reorder_loops, split_reductions
from irtensor.passes.llvm import convert_to_llvm
from irtensor.passes.loops import lower_kernels_to_loops
from irtensor.passes.opencl import lower_to_opencl
from irtensor.passes.registry import (
    PassInputError,
    PassRegistryError,
    all_passes,
    all_pipelines,
    describe,
    get_pass,
    load_pass_plugin,
    pass_options,
    register_pass,
    register_pipeline,
)
from irtensor.passes.rewrite import conv_to_mul_sum, decompose_hlops, fold_constants

register_pipeline(
    "hl-to-ll", "decompose-hlops,conv-to-mul-sum,fold-constants,cse,dce",
    "hl ops into the ll op types, folded and cleaned up",
)
register_pipeline(
    "hl-to-kernel", "hl-to-ll,fuse,split-reductions,pack-operands,cse,reorder-loops",
    "hl programs into scheduled, fused kernels",
)
# Realizing a tensor on a device runs `default-<device>`. On the interpreter a program runs
# as the kernels a compiled device would run, so every realized tensor checks the compiler.
register_pipeline("default-interp", "hl-to-kernel", "what realizing on device interp runs")
register_pipeline("default-llvm", "hl-to-kernel", "what realizing on device llvm runs")
register_pipeline("default-opencl", "hl-to-kernel", "what realizing on device opencl runs")
# The one-pass moments sum in f64: an OpenCL device without fp64 takes f32's two passes.
register_pipeline(
    "default-opencl-no-fp64",
    "decompose-hlops{one-pass-moments=false},conv-to-mul-sum,fold-constants,cse,dce,fuse,"
    "split-reductions,pack-operands,cse,reorder-loops",
    "what realizing on device opencl runs where the OpenCL device has no fp64",
)
# What a compiled device runs on each kernel, alone in a module, before generating its code
# (LLVM IR for llvm, OpenCL C for opencl); `Context(device_pipeline=...)` replaces it.
register_pipeline("device-llvm", "lower-kernels-to-loops,convert-to-llvm",
                  "what device llvm runs on each kernel before LLVM compiles it")
register_pipeline("device-opencl", "",
                  "what device opencl runs on each kernel before printing its OpenCL C")

__all__ = [
    "PassInputError",
    "PassRegistryError",
    "all_passes",
    "all_pipelines",
    "conv_to_mul_sum",
    "convert_to_llvm",
    "decompose_hlops",
    "describe",
    "fold_constants",
    "fuse",
    "get_pass",
    "grad",
    "load_pass_plugin",
    "lower_kernels_to_loops",
    "lower_to_opencl",
    "pack_operands",
    "pass_options",
    "register_pass",
    "register_pipeline",
    "reorder_loops",
    "split_reductions",
]
