"""Generates the reference docs under docs/ from ODS and the pass registry.

``python -m dlvm_mlir.tools.gendocs docs`` writes ``docs/DLVMDialect.md`` (from
``mlir-tblgen -gen-dialect-doc``), ``docs/Passes.md`` (from the registry,
the same text as ``dlvm-opt --help``) and, where PyTorch and JAX are installed,
``docs/FrameworkOps.md`` (the importers' rule tables). ``--check`` exits 1 if
they are stale.
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


def _option_rows(options) -> list[str]:
    if not options:
        return []
    rows = ["", "| option | type | default | meaning |", "| --- | --- | --- | --- |"]
    for option in options:
        default = option.default_doc or option.format(option.default) or ("empty" if option.is_list else '""')
        rows.append(f"| `{option.name}` | {option.describe_type()} | {default} | {option.help} |")
    return rows


def passes_doc() -> str:
    """docs/Passes.md: every registered pass and pipeline (summary, options, its module's documentation)."""
    import sys as _sys

    from ..passes import registry
    from .opt import CPP_PASSES

    lines = [
        "<!-- Generated from the pass registry by `make docs`; do not edit. -->",
        "# Passes",
        "",
        "Every pass `dlvm-opt` runs besides MLIR's own: `--NAME` on the command line, or `NAME{opt=value}`",
        "in `--pass-pipeline`; from Python, `dlvm_mlir.passes.run_pipeline(module, \"builtin.module(NAME)\")`.",
        "Each section gives the pass's summary, its options and the documentation of its module.",
    ]
    # the project's own (a plugin's or a test's registrations are not documented here)
    own = [p for p in registry.registered_passes() if p.__module__.startswith("dlvm_mlir.")]
    for pass_cls in own:
        doc = (_sys.modules[pass_cls.__module__].__doc__ or "").strip()
        lines += ["", f"## `{pass_cls.name}`", "", pass_cls.summary + ".", *_option_rows(pass_cls.options)]
        if doc:
            lines += ["", f"From `{pass_cls.__module__}`:", "", "```text", doc, "```"]
    lines += ["", "## C++ passes (`dialect/include/dlvm/Passes.td`)"]
    for name, summary in CPP_PASSES:
        lines += ["", f"### `{name}`", "", summary + "."]
    lines += ["", "## Pipelines"]
    for spec in registry.registered_pipelines():
        if not getattr(spec.build, "__module__", "dlvm_mlir.").startswith("dlvm_mlir."):
            continue
        lines += ["", f"### `{spec.name}`", "", spec.summary + ".", *_option_rows(spec.options)]
    return "\n".join(lines) + "\n"


def _coverage_rows(table: dict[str, list[str]]) -> list[str]:
    rows = ["| family | count | ops |", "| --- | --- | --- |"]
    for family, ops in table.items():
        rows.append(f"| {family} | {len(ops)} | {', '.join(f'`{op}`' for op in ops)} |")
    return rows


def framework_ops_doc() -> str | None:
    """docs/FrameworkOps.md: the ATen overloads and JAX primitives the importers cover."""
    try:
        from dlvm_mlir.jax import coverage as jax_coverage
        from dlvm_mlir.torch import coverage as torch_coverage
    except ImportError:  # the frameworks extra is not installed
        return None
    torch_table, jax_table = torch_coverage(), jax_coverage()
    lines = [
        "<!-- Generated from the importers' rule tables by `make docs`; do not edit. -->",
        "# Framework ops dlvm imports",
        "",
        "What `torch.compile(backend=\"dlvm\")` and `dlvm_mlir.jax.jit` bring into the `dlvm` dialect",
        "(docs/frameworks.md explains both paths). A PyTorch op outside this list stays in PyTorch (a",
        "graph break at the op, logged once); a JAX primitive outside it is a located error.",
        "",
        f"## PyTorch: core ATen overloads ({sum(map(len, torch_table.values()))}, `dlvm_mlir/torch/importer/`)",
        "",
        *_coverage_rows(torch_table),
        "",
        f"## JAX: primitives ({sum(map(len, jax_table.values()))}, `dlvm_mlir/jax/`)",
        "",
        *_coverage_rows(jax_table),
    ]
    return "\n".join(lines) + "\n"


def generated() -> dict[str, str]:
    docs = {"DLVMDialect.md": dialect_doc(), "Passes.md": passes_doc()}
    frameworks = framework_ops_doc()
    if frameworks is not None:
        docs["FrameworkOps.md"] = frameworks
    return docs


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
