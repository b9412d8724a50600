"""Compiled programs as shared objects (DLVM's ``dlc`` output).

The back ends end in an LLVM-dialect module; this module turns it into a
shared object that any process can ``dlopen``, so that the disk cache can keep
machine code (a warm start loads it in milliseconds) and ``dlvm-compile``
can build artifacts ahead of time:

1. :func:`machine_code`: ``_dlvm.codegen`` translates the module to LLVM IR,
   adds the packed wrappers ``_mlir_<f>(void **args)`` of the C-interface
   entry points, runs LLVM's default pipeline of the opt level (tuned for
   code that arrives vectorized: :func:`optimization_pipeline`) and emits
   object files, split into partitions compiled on parallel threads
   (dialect/lib/CAPI/Codegen.cpp);
2. :func:`link_shared`: the system C compiler links them (``cc -shared``)
   against ``libdlvm_runtime.so`` (the caching allocator and the async
   runtime), libm and, for CUDA, ``libmlir_cuda_runtime.so``; undefined
   symbols are link errors (``-z defs``);
3. the object carries its own description: the NUL-terminated JSON global
   ``__dlvm_metadata`` (:class:`ArtifactInfo`: format, target, entry-point
   signatures, bounds checks, threads), so :func:`load` needs nothing else.

Only the entry points (``_mlir_ciface_dlvm_<f>`` and their packed wrappers),
the metadata and the error slot are exported; every other definition is
hidden. The error slot (``runtime.ERROR_GLOBAL``) holds the number of a failed
index check, or -1 after a buffer allocation failed: code generation makes
each allocation's function, and its callers up to the entry point, return at
once when the allocator returns NULL.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

from mlir import ir

from .. import _dlvm
from .options import CodegenOptions, host_machine
from .runtime import CHECKS_ATTR, ENTRY_PREFIX, ERROR_GLOBAL, FORMAT, ArtifactInfo, ExecutionError

__all__ = [
    "ArtifactInfo",
    "CodegenOptions",
    "FORMAT",
    "bounds_checks_of",
    "host_machine",
    "link_shared",
    "machine_code",
    "optimization_pipeline",
    "runtime_library",
    "write_artifact",
    "write_shared_object",
]

#: symbol prefixes a shared object exports
EXPORTED = (
    "_mlir_ciface_" + ENTRY_PREFIX,
    "_mlir__mlir_ciface_" + ENTRY_PREFIX,
    "__dlvm_metadata",
    ERROR_GLOBAL,
)

#: the entry points that bracket their calls for the runtime (``dlvmRuntimeCallBegin`` /
#: ``dlvmRuntimeCallEnd``: a call that failed, from Python or from C through the header,
#: has the buffers it left freed); the packed wrappers call these
BRACKETED = "_mlir_ciface_" + ENTRY_PREFIX

OUTPUTS = ("obj", "asm", "llvm", "bc")


def bounds_checks_of(module: ir.Module) -> tuple[str, ...]:
    """What each run-time index check of a module guards (``dlvm-check-bounds``)."""
    attrs = module.operation.attributes
    if CHECKS_ATTR not in attrs:
        return ()
    return tuple(ir.StringAttr(a).value for a in attrs[CHECKS_ATTR])


def machine_code(
    module: ir.Module, output: str = "obj", options: CodegenOptions | None = None, info: ArtifactInfo | None = None
) -> list[bytes]:
    """LLVM's output for an LLVM-dialect module: object files (one per
    partition), assembly, LLVM IR text or bitcode (``output``); ``info``
    becomes its metadata, and a CPU program compiled for N threads reserves
    N - 1 runtime workers when it is loaded."""
    options = options or CodegenOptions()
    if output not in OUTPUTS:
        raise ValueError(f"output must be one of {', '.join(OUTPUTS)}, got {output!r}")
    workers = info.threads - 1 if info is not None and info.target == "cpu" else 0
    try:
        return _dlvm.codegen(
            module, output, "", options.cpu, options.features, options.opt_level, options.codegen_opt_level,
            max(1, options.partitions) if output == "obj" else 1,
            options.post_ra_scheduling, options.llvm_options, ",".join(EXPORTED), info.to_json() if info else "", workers,
            ERROR_GLOBAL, BRACKETED,
        )
    except RuntimeError as exc:
        raise ExecutionError(f"LLVM code generation failed: {exc}") from exc


def optimization_pipeline(opt_level: int = 3) -> str:
    """The LLVM IR pipeline :func:`machine_code` runs at ``opt_level`` on this machine, in
    ``opt -passes=`` syntax: LLVM's default one with its loop vectorizer off (the schedules
    vectorized already) and without loop load elimination (40% of O3's time on a CNN
    training step, for nothing: the schedules keep loop-carried values in registers)."""
    if not 0 <= opt_level <= 3:
        raise ValueError(f"opt_level must be 0..3, got {opt_level}")
    return _dlvm.optimization_pipeline(opt_level)


def runtime_library() -> Path:
    """``libdlvm_runtime.so``, next to the ``_dlvm`` extension."""
    return Path(_dlvm.__file__).resolve().parent / "libdlvm_runtime.so"


def c_compiler() -> str:
    """The C compiler that links shared objects: ``$CC``, else ``cc``."""
    compiler = os.environ.get("CC") or "cc"
    if shutil.which(compiler.split()[0]) is None:
        raise ExecutionError(f"no C compiler to link with: '{compiler}' is not on PATH (set $CC)")
    return compiler


def link_shared(objects: list[bytes], path: str | os.PathLike[str], libraries: list[Path] = ()) -> None:
    """Link object files into the shared object ``path`` (``cc -shared``).

    ``libraries``: shared libraries to link, each found at run time through
    an rpath to its directory; libm always.
    """
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="dlvm-link-") as scratch:
        names = []
        for index, data in enumerate(objects):
            name = os.path.join(scratch, f"part{index}.o")
            with open(name, "wb") as handle:
                handle.write(data)
            names.append(name)
        command = [*c_compiler().split(), "-shared", "-o", str(path), *names]
        for library in libraries:
            stem = library.name.removeprefix("lib").split(".so")[0]
            command += [f"-L{library.parent}", f"-l{stem}", f"-Wl,-rpath,{library.parent}"]
        command += ["-lm", "-Wl,-z,defs", "-Wl,-O1"]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise ExecutionError(f"linking the shared object failed: {' '.join(command)}\n{done.stderr.strip()}")


EMITS = ("so", "obj", "asm", "llvm")


def write_artifact(
    module: ir.Module,
    info: ArtifactInfo,
    path: str | os.PathLike[str],
    emit: str = "so",
    options: CodegenOptions | None = None,
    libraries: list[Path] | None = None,
) -> None:
    """Machine code for ``module`` (LLVM dialect) with ``info`` as its metadata, written to ``path``.

    ``emit``: "so", a shared object linked against ``libraries`` (default:
    the runtime); "obj", one relocatable object to link yourself; "asm" or
    "llvm", assembly or optimized LLVM IR text.
    """
    if emit not in EMITS:
        raise ValueError(f"emit must be one of {', '.join(EMITS)}, got {emit!r}")
    options = options or CodegenOptions()
    if emit == "so":
        objects = machine_code(module, "obj", options, info)
        link_shared(objects, path, [runtime_library()] if libraries is None else libraries)
        return
    single = replace(options, partitions=1)
    [data] = machine_code(module, emit, single, info)
    Path(path).write_bytes(data)


def write_shared_object(
    module: ir.Module,
    info: ArtifactInfo,
    path: str | os.PathLike[str],
    options: CodegenOptions | None = None,
    libraries: list[Path] | None = None,
) -> None:
    """Machine code for ``module`` (LLVM dialect), linked into ``path`` with ``info`` as its metadata."""
    write_artifact(module, info, path, "so", options, libraries)
