# lit configuration for dlvm-mlir: textual IR through dlvm-opt, the stock
# mlir-opt with the dlvm plugin, and FileCheck from the LLVM wheel.
import os
import subprocess
import sys

import lit.formats

config.name = "dlvm-mlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["python", "Output", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)

python = sys.executable
venv_bin = os.path.dirname(python)


def query(*args: str) -> str:
    return subprocess.check_output([python, "-m", "dlvm_mlir.config", *args], text=True).strip()


plugin = query("--plugin-path")
mlir_opt = query("--mlir-opt")
filecheck = query("--filecheck")
llvm_bin = os.path.dirname(filecheck)

config.environment["PATH"] = os.pathsep.join([venv_bin, llvm_bin, config.environment.get("PATH", os.environ["PATH"])])
for var in ("HOME", "TMPDIR", "CC"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
# the compile cache of the test run, never the user's
config.environment["DLVM_MLIR_CACHE_DIR"] = os.path.join(os.path.dirname(__file__), "Output", "dlvm-cache")

config.substitutions.append(("%python", python))
config.substitutions.append(("%dlvm_plugin", plugin))
config.substitutions.append(("%mlir_opt", f"{mlir_opt} --load-dialect-plugin={plugin}"))
