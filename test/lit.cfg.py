# lit configuration of the gacc test suite.
import os
import shutil
import sys

import lit.formats
from lit.llvm import llvm_config

config.name = "GACC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gacc_obj_root, "test")

config.substitutions.append(("%gacc_src", config.gacc_src_root))
config.substitutions.append(("%gacc_lib", config.gacc_lib_dir))
config.substitutions.append(("%python", sys.executable))
llvm_config.with_system_environment(["HOME", "PATH"])
llvm_config.use_default_substitutions()
llvm_config.add_tool_substitutions(
    ["gacc-opt", "gacc-run", "gacc-unittests", "gacc-bench-arena", "gacc-bench-gemm"], [config.gacc_tools_dir])
llvm_config.add_tool_substitutions(
    ["mlir-runner", "mlir-translate", "llc", "FileCheck", "not", "split-file"], [config.llvm_tools_dir])

# ptxas assembles cubins; without the CUDA toolkit those tests are
# UNSUPPORTED, never failed or silently passed.
ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    llvm_config.with_environment("PATH", os.path.dirname(ptxas), append_path=True)

# Execution against Debian's PyTorch reference.
try:
    import subprocess
    subprocess.run([sys.executable, "-c", "import torch"], check=True,
                   capture_output=True)
    config.available_features.add("torch")
except Exception:
    pass

if os.path.exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"):
    config.available_features.add("fashion-mnist")

config.substitutions.append(
    ("%llvm_lib_dir", os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")))

if shutil.which("bible"):
    config.available_features.add("bible")

# Data-parallel tests launch OpenMPI's mpirun (as root in CI, where it
# needs --allow-run-as-root; --oversubscribe lets 2 ranks share fewer cores;
# no single-copy mechanism, which containers often forbid; the isolated
# launcher starts local ranks without ssh). A job that hangs (ranks that
# wait in a collective another never joins) is killed after 5 minutes
# instead of holding the test run.
mpirun = shutil.which("mpirun")
if mpirun:
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun", "timeout 300 " + mpirun + " --allow-run-as-root --oversubscribe "
         "--mca btl_vader_single_copy_mechanism none --mca plm isolated"))

# A CUDA device (driver and at least one GPU): gates test/integration/gpu.
def _cuda_device():
    try:
        import ctypes
        cuda = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    except OSError:
        return False


if _cuda_device():
    config.available_features.add("cuda-device")


def _cuda_device_count():
    try:
        import ctypes
        cuda = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        if cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0:
            return count.value
    except OSError:
        pass
    return 0


# NCCL needs one GPU per rank: the 2-rank GPU test needs 2 devices.
if _cuda_device_count() >= 2:
    config.available_features.add("cuda-devices-2")
