"""Code generation backends.

`irtensor.backend.llvm_jit` compiles llvm-dialect modules (the output of
`convert-to-llvm`) for the host CPU with llvmlite and calls them on numpy
arrays through ctypes. llvmlite is imported inside its functions, so
`import irtensor` works without it.
"""
