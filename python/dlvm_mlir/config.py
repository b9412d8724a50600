"""Paths of the installed dlvm-mlir artifacts.

``python -m dlvm_mlir.config --plugin-path`` prints the dialect plugin for the
stock ``mlir-opt --load-dialect-plugin=...``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def package_dir() -> Path:
    """The directory holding the compiled extension and the plugin."""
    from . import _dlvm

    return Path(_dlvm.__file__).resolve().parent


def plugin_path() -> Path:
    return package_dir() / "libDLVMPlugin.so"


def mlir_root() -> Path:
    import mlir

    return Path(list(mlir.__path__)[0])


def llvm_root() -> Path:
    import llvm

    return Path(list(llvm.__path__)[0])


def mlir_opt_path() -> Path:
    return mlir_root() / "bin" / "mlir-opt"


def filecheck_path() -> Path:
    return llvm_root() / "bin" / "FileCheck"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dlvm_mlir.config")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--plugin-path", action="store_true", help="dialect plugin for mlir-opt")
    group.add_argument("--mlir-opt", action="store_true", help="the wheel's mlir-opt")
    group.add_argument("--filecheck", action="store_true", help="the wheel's FileCheck")
    group.add_argument("--mlir-lib-dir", action="store_true", help="the wheel's MLIR runtime libraries")
    args = parser.parse_args(argv)
    if args.plugin_path:
        path = plugin_path()
    elif args.mlir_opt:
        path = mlir_opt_path()
    elif args.filecheck:
        path = filecheck_path()
    else:
        path = mlir_root() / "lib"
    print(os.fspath(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
