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
"""

from ..cache import cache_stats, default_cache_dir
from .cache import clear_memory_cache, compile_cpu
from .cpu import CPU_STAGES, CpuOptions, LoweringResult, entry_point_signatures, lower_to_llvm_cpu
from .runtime import (
    CpuExecutable,
    ExecutionError,
    FunctionSignature,
    ValueSpec,
    runtime_stats,
    set_worker_spin,
    trim_buffer_cache,
)
from .schedule import ScheduleOptions
from .target import CpuTarget, host_target

__all__ = [
    "CPU_STAGES",
    "CpuExecutable",
    "CpuOptions",
    "CpuTarget",
    "ExecutionError",
    "FunctionSignature",
    "LoweringResult",
    "ScheduleOptions",
    "ValueSpec",
    "cache_stats",
    "clear_memory_cache",
    "compile_cpu",
    "default_cache_dir",
    "entry_point_signatures",
    "host_target",
    "lower_to_llvm_cpu",
    "runtime_stats",
    "set_worker_spin",
    "trim_buffer_cache",
]
