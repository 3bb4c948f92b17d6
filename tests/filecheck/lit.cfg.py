# lit configuration of irtensor's FileCheck tests (the MLIR/xDSL convention).
#
#     lit -v tests/filecheck            (the `lit` of the environment)
#     pytest tests/test_filecheck.py    (runs the same suite)
#
# Tests are the .mlir files below this folder, except those in `Inputs`
# folders (helper files of the tests). `irtensor-opt`, `filecheck` and `%python`
# come from the environment of the Python that runs lit, so a virtualenv works
# without being activated.
# ruff: noqa: F821 (lit defines `config`)

import os
import sys

import lit.formats

config.name = "irtensor"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.excludes = ["Inputs", "lit.cfg.py"]

# The tools of the running interpreter's environment come first on PATH.
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(sys.executable), config.environment.get("PATH", os.environ.get("PATH", ""))]
)
for var in ("HOME", "TMPDIR", "TMP", "TEMP", "SYSTEMROOT"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"
config.environment["NO_COLOR"] = "1"
# Schedules follow the host's vector width (irtensor.host); the CHECK lines are written for
# 64-byte vectors, on every machine.
config.environment["IRTENSOR_VECTOR_BYTES"] = "64"
config.environment["IRTENSOR_L2_BYTES"] = str(2 << 20)
config.environment["IRTENSOR_STREAM_BYTES"] = str(8 << 20)
# bf16 register blocks on `vdpbf16ps` follow the host too: off unless a RUN line asks.
config.environment["IRTENSOR_BF16_DOT"] = "0"
# and bf16 matmuls on AMX's tiles (hosts with AMX): off unless a RUN line asks.
config.environment["IRTENSOR_AMX"] = "0"

# %python: the interpreter running lit (it has numpy and irtensor).
config.substitutions.append(("%python", f'"{sys.executable}"'))

# `REQUIRES: opencl`: tests that build and run OpenCL C need a device that builds
# programs; under IRTENSOR_REQUIRE_OPENCL=1 (CI) its absence is an error, not a skip.
from irtensor.runtime import opencl_device  # noqa: E402

_why = opencl_device.unavailable()
if _why is None:
    config.available_features.add("opencl")
elif os.environ.get("IRTENSOR_REQUIRE_OPENCL") == "1":
    lit_config.fatal(f"IRTENSOR_REQUIRE_OPENCL=1 but OpenCL cannot run here: {_why}")
for var in ("OCL_ICD_VENDORS", "IRTENSOR_OPENCL_DEVICE", "PYOPENCL_CTX", "IRTENSOR_CACHE_DIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# `REQUIRES: mlir-opt`: tests that hand irtensor's stages to upstream MLIR (Debian's
# mlir-19-tools: mlir-opt, mlir-translate); under IRTENSOR_REQUIRE_MLIR=1 (CI) their
# absence is an error, not a skip. `%mlir-opt` and `%mlir-translate` name the tools.
from irtensor.tools.upstream import upstream_mlir_tool  # noqa: E402

_mlir_opt, _mlir_translate = upstream_mlir_tool("mlir-opt"), upstream_mlir_tool("mlir-translate")
if _mlir_opt and _mlir_translate:
    config.available_features.add("mlir-opt")
    config.substitutions.append(("%mlir-opt", f'"{_mlir_opt}"'))
    config.substitutions.append(("%mlir-translate", f'"{_mlir_translate}"'))
elif os.environ.get("IRTENSOR_REQUIRE_MLIR") == "1":
    lit_config.fatal("IRTENSOR_REQUIRE_MLIR=1 but mlir-opt/mlir-translate are not installed")
