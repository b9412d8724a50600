"""Where reproducers of failed pipelines and compiler crashes are written, and how many stay.

A failing pass pipeline (``dlvm-repro-*``: its input and the ``dlvm-opt`` command that
reruns it) and a crash of the compiler process (``dlvm-crash-*``: the input and how it was
compiled) each get a directory under ``$DLVM_MLIR_REPRO_DIR``, else ``reproducers/`` in the
disk cache's directory (``$DLVM_MLIR_CACHE_DIR``, ``$XDG_CACHE_HOME/dlvm-mlir``, ...), else
the system's temporary directory. Only the newest :data:`KEEP` are kept: a test suite or a
fuzzer that fails thousands of pipelines on purpose does not fill the disk (they used to
pile up in ``/tmp``), and the reproducer an error message names is still there afterwards.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["KEEP", "new_directory", "root"]

#: reproducer directories kept (the newest)
KEEP = 32


def root() -> Path:
    configured = os.environ.get("DLVM_MLIR_REPRO_DIR")
    if configured:
        return Path(configured)
    from .cache import default_cache_dir

    cache = default_cache_dir()
    return (cache if cache is not None else Path(tempfile.gettempdir()) / "dlvm-mlir") / "reproducers"


def new_directory(kind: str) -> Path:
    """A fresh directory ``<root>/<kind>-XXXX`` for one reproducer; older ones beyond KEEP go."""
    where = root()
    try:
        where.mkdir(parents=True, exist_ok=True)
        directory = Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=where))
    except OSError:  # an unwritable cache directory: the system's temporary directory
        return Path(tempfile.mkdtemp(prefix=f"{kind}-"))
    _prune(where, keep=directory)
    return directory


def _prune(where: Path, keep: Path) -> None:
    try:
        entries = [p for p in where.iterdir() if p.is_dir() and p != keep]
        entries.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in entries[KEEP - 1:]:
        shutil.rmtree(old, ignore_errors=True)
