"""CPU back end: linalg on tensors -> vectorized, multi-threaded LLVM -> shared object.

>>> from dlvm_mlir.backend import compile_cpu
>>> exe = compile_cpu(ir_text, threads=2)          # doctest: +SKIP
>>> y = exe("main", x, w)                          # doctest: +SKIP

* :func:`lower_to_llvm_cpu` - the pipeline (one function per stage, see
  :mod:`dlvm_mlir.backend.cpu`), usable on its own to inspect any stage;
* :mod:`dlvm_mlir.backend.artifact` - LLVM code generation and the link into
  a shared object;
* :class:`CpuExecutable` - a loaded shared object + numpy calling glue;
* :func:`compile_cpu` - all three in this process, with in-process and
  on-disk caching (:mod:`dlvm_mlir.cache`);
* :func:`runtime_stats`, :func:`set_worker_spin`, :func:`trim_buffer_cache` -
  the runtime compiled code calls (caching allocator, async runtime).

The names are imported on first use (PEP 562): loading a cached program
must not import the compiler.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the submodule defining it
_EXPORTS = {
    "CPU_STAGES": "cpu",
    "CpuExecutable": "runtime",
    "CpuOptions": "options",
    "CpuTarget": "target",
    "ExecutionError": "runtime",
    "FunctionSignature": "runtime",
    "LoweringResult": "cpu",
    "OutOfMemoryError": "runtime",
    "ScheduleOptions": "options",
    "ValueSpec": "runtime",
    "clear_memory_cache": "cache",
    "compile_cpu": "cache",
    "entry_point_signatures": "cpu",
    "host_target": "target",
    "lower_to_llvm_cpu": "cpu",
    "runtime_stats": "runtime",
    "set_worker_spin": "runtime",
    "trim_buffer_cache": "runtime",
}

__all__ = sorted([*_EXPORTS, "cache_stats", "default_cache_dir"])


def __getattr__(name: str) -> Any:
    if name in ("cache_stats", "default_cache_dir"):
        from .. import cache

        return getattr(cache, name)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dlvm_mlir.backend' has no attribute '{name}'")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
