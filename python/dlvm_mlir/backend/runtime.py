"""Calling compiled CPU code with numpy arrays.

A compiled program is a shared object (:mod:`dlvm_mlir.backend.artifact`)
whose every public function ``f`` is an entry point with the C interface
(``llvm.emit_c_interface``); its results are out-parameters: the caller
passes one memref per input and one per result, all with identity layout.
:class:`CpuExecutable` loads the object (``dlopen``), reads its metadata
(:class:`ArtifactInfo`: signatures, bounds checks, threads), allocates the
result arrays, fills the memref descriptors and calls the packed
``_mlir__mlir_ciface_dlvm_<f>`` wrapper through ``_dlvm.invoke`` (no GIL, no
ctypes call per invocation).

Compiled code calls, besides libc and libm, ``libdlvm_runtime.so``
(dialect/runtime, linked by every object, shared by the whole process):

- ``memref.alloc``/``dealloc`` -> a caching allocator;
- parallel loops (``async-parallel-for`` -> ``mlirAsyncRuntime*``) -> an
  implementation of MLIR's async runtime ABI on a thread pool whose idle
  workers spin before they sleep.  It replaces ``libmlir_async_runtime.so``,
  whose workers sleep between tasks (a wake-up per parallel loop).
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from mlir import ir

from .. import _dlvm
from ..cache import format_bytes
from ..errors import DLVMError, SourceLocation

__all__ = [
    "ArtifactInfo",
    "ExecutionError",
    "OutOfMemoryError",
    "ValueSpec",
    "FunctionSignature",
    "CpuExecutable",
    "read_info",
    "runtime_library_dir",
    "runtime_stats",
    "set_worker_spin",
    "spec_from_type",
    "trim_buffer_cache",
]

_ALIGNMENT = 64


#: Compiled code keeps the user's function names out of the C namespace, so a
#: function named ``powf``, ``free`` or ``mlirAsyncRuntimeCreateToken`` can
#: neither capture the libm / libc / runtime calls the lowering emits nor clash
#: with them: entry point ``f`` is exported as ``dlvm_f`` (C interface
#: ``_mlir_ciface_dlvm_f``), every function defined in the module becomes
#: private ``__dlvm_fn_f`` (other generated helpers are ``__dlvm_<kind>_...``).
#: The two prefixes differ in their first character, so
#: no two names can collide.
ENTRY_PREFIX = "dlvm_"
DEFINITION_PREFIX = "__dlvm_fn_"


def entry_symbol(name: str) -> str:
    """The exported C-interface symbol of entry point ``name``."""
    return "_mlir_ciface_" + ENTRY_PREFIX + name


class ExecutionError(DLVMError):
    """A compiled function was called with arguments that do not fit its type,
    or a compiled module could not be turned into executable code.

    ``location``: the source position the error is about, when there is one
    (it then prefixes the message).
    """

    def __init__(self, message: str, location: SourceLocation | None = None) -> None:
        self.message = message
        self.location = location
        super().__init__(f"{location}: error: {message}" if location else message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.location))


class OutOfMemoryError(ExecutionError, MemoryError):
    """Compiled code could not allocate a buffer (the system refused it) and the
    call was abandoned; the process, the executable and its next calls are unaffected."""


# element type name (as printed by MLIR) -> numpy dtype
_DTYPES: dict[str, np.dtype] = {
    "f16": np.dtype(np.float16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "ui8": np.dtype(np.uint8),
    "ui16": np.dtype(np.uint16),
    "ui32": np.dtype(np.uint32),
    "ui64": np.dtype(np.uint64),
    "index": np.dtype(np.int64),
}

_SCALAR_CTYPES: dict[str, Any] = {
    "f16": ctypes.c_uint16,
    "f32": ctypes.c_float,
    "f64": ctypes.c_double,
    "i1": ctypes.c_bool,
    "i8": ctypes.c_int8,
    "i16": ctypes.c_int16,
    "i32": ctypes.c_int32,
    "i64": ctypes.c_int64,
    "ui8": ctypes.c_uint8,
    "ui16": ctypes.c_uint16,
    "ui32": ctypes.c_uint32,
    "ui64": ctypes.c_uint64,
    "index": ctypes.c_int64,
}


@dataclass(frozen=True)
class ValueSpec:
    """Type of one argument or result: a ranked tensor, or a scalar (``shape is None``)."""

    element: str
    shape: tuple[int, ...] | None

    @property
    def dtype(self) -> np.dtype:
        return _DTYPES[self.element]

    @property
    def is_scalar(self) -> bool:
        return self.shape is None

    def describe(self) -> str:
        if self.shape is None:
            return self.element
        dims = "x".join(str(d) for d in self.shape)
        return f"tensor<{dims + 'x' if dims else ''}{self.element}>"

    def to_json(self) -> dict[str, Any]:
        return {"element": self.element, "shape": None if self.shape is None else list(self.shape)}

    @staticmethod
    def from_json(data: dict[str, Any]) -> "ValueSpec":
        shape = data["shape"]
        return ValueSpec(element=data["element"], shape=None if shape is None else tuple(shape))


@dataclass(frozen=True)
class FunctionSignature:
    """Inputs and results of one entry point, as the caller sees them."""

    name: str
    inputs: tuple[ValueSpec, ...]
    results: tuple[ValueSpec, ...]

    def describe(self) -> str:
        ins = ", ".join(s.describe() for s in self.inputs)
        outs = ", ".join(s.describe() for s in self.results)
        return f"@{self.name}({ins}) -> ({outs})"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "inputs": [s.to_json() for s in self.inputs],
            "results": [s.to_json() for s in self.results],
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> "FunctionSignature":
        return FunctionSignature(
            name=data["name"],
            inputs=tuple(ValueSpec.from_json(s) for s in data["inputs"]),
            results=tuple(ValueSpec.from_json(s) for s in data["results"]),
        )


def spec_from_type(value_type: ir.Type) -> ValueSpec:
    """The :class:`ValueSpec` of an MLIR type; raises ``ExecutionError`` if unsupported."""
    if isinstance(value_type, ir.RankedTensorType):
        tensor = ir.RankedTensorType(value_type)
        if not tensor.has_static_shape:
            raise ExecutionError(f"dynamic shapes are not supported at entry points: {value_type}")
        element = str(tensor.element_type)
        shape: tuple[int, ...] | None = tuple(tensor.shape)
    else:
        element, shape = str(value_type), None
    if element not in _DTYPES:
        raise ExecutionError(f"unsupported element type at an entry point: {value_type}")
    return ValueSpec(element=element, shape=shape)


#: what compiled code is linked against besides libdlvm_runtime.so
SYSTEM_LIBRARIES = ("libc.so.6", "libm.so.6")


def symbol_is_loaded(name: str) -> bool:
    """Whether compiled code can call an external function ``name``: the
    runtime (``libdlvm_runtime.so``), libc or libm defines it."""
    if name in _dlvm.runtime_symbols():
        return True
    for library in SYSTEM_LIBRARIES:
        try:
            getattr(ctypes.CDLL(library), name)
            return True
        except (AttributeError, OSError):
            continue
    return False


def runtime_library_dir() -> Path:
    """Directory of the MLIR runtime libraries shipped with the ``mlir`` wheel."""
    return Path(ir.__file__).resolve().parent / "lib"


_DESCRIPTOR_CLASSES: dict[int, type] = {}


def _descriptor_class(rank: int) -> type:
    """ctypes struct of a ranked memref descriptor (pointer fields untyped)."""
    cls = _DESCRIPTOR_CLASSES.get(rank)
    if cls is None:
        fields: list[tuple[str, Any]] = [
            ("allocated", ctypes.c_void_p),
            ("aligned", ctypes.c_void_p),
            ("offset", ctypes.c_int64),
        ]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
        cls = type(f"MemRefDescriptor{rank}", (ctypes.Structure,), {"_fields_": fields})
        _DESCRIPTOR_CLASSES[rank] = cls
    return cls


def _static_descriptor(spec: ValueSpec) -> ctypes.Structure:
    """Descriptor of a C-contiguous array of ``spec``'s shape; pointers filled per call."""
    shape = spec.shape or ()
    desc = _descriptor_class(len(shape))()
    desc.offset = 0
    if shape:
        strides, running = [], 1
        for size in reversed(shape):
            strides.append(running)
            running *= size
        desc.sizes[:] = list(shape)
        desc.strides[:] = strides[::-1]
    return desc


def _empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised C-contiguous array; large ones are 64-byte aligned."""
    nbytes = dtype.itemsize
    for size in shape:
        nbytes *= size
    if nbytes < 4096:
        return np.empty(shape, dtype)
    raw = np.empty(nbytes + _ALIGNMENT, dtype=np.uint8)
    start = (-_dlvm.data_address(raw)) % _ALIGNMENT
    return raw[start : start + nbytes].view(dtype).reshape(shape)


def _scalar_value(spec: ValueSpec, value: Any, position: str) -> Any:
    """ctypes value for a scalar argument, with a type check."""
    dtype = spec.dtype
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise ExecutionError(f"{position}: expected a scalar {spec.element}, got an array of shape {value.shape}")
        value = value[()]
    if isinstance(value, np.generic):
        if value.dtype != dtype and not (dtype.kind == "b" and value.dtype.kind == "b"):
            raise ExecutionError(f"{position}: expected {spec.element} ({dtype}), got {value.dtype}")
    elif dtype.kind == "f":
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ExecutionError(f"{position}: expected a float ({spec.element}), got {type(value).__name__}")
    elif dtype.kind == "b":
        if not isinstance(value, (bool, np.bool_)):
            raise ExecutionError(f"{position}: expected a bool (i1), got {type(value).__name__}")
    elif not isinstance(value, int) or isinstance(value, bool):
        raise ExecutionError(f"{position}: expected an int ({spec.element}), got {type(value).__name__}")
    if spec.element == "f16":
        return _SCALAR_CTYPES["f16"](int(np.array(value, dtype=np.float16).view(np.uint16)))
    try:
        converted = np.array(value, dtype=dtype)
    except OverflowError as exc:
        raise ExecutionError(f"{position}: {value!r} does not fit in {spec.element}") from exc
    return _SCALAR_CTYPES[spec.element](converted.item())


def _tensor_array(spec: ValueSpec, value: Any, position: str) -> np.ndarray:
    """C-contiguous array for a tensor argument, with shape and dtype checks."""
    assert spec.shape is not None
    if not isinstance(value, np.ndarray):
        if spec.shape == () and isinstance(value, (int, float, bool, np.generic)):
            value = np.asarray(_python_scalar_as(spec, value, position))
        else:
            raise ExecutionError(
                f"{position}: expected a numpy array for {spec.describe()}, got {type(value).__name__}"
            )
    if value.dtype != spec.dtype:
        raise ExecutionError(
            f"{position}: dtype mismatch: expected {spec.dtype} for {spec.describe()}, got {value.dtype}"
        )
    if tuple(value.shape) != spec.shape:
        raise ExecutionError(
            f"{position}: shape mismatch: expected {spec.shape} for {spec.describe()}, got {tuple(value.shape)}"
        )
    if not value.flags.c_contiguous or not value.dtype.isnative:
        value = np.ascontiguousarray(value, dtype=spec.dtype)
    return value


def _python_scalar_as(spec: ValueSpec, value: Any, position: str) -> np.generic:
    if isinstance(value, np.generic):
        if value.dtype != spec.dtype:
            raise ExecutionError(f"{position}: dtype mismatch: expected {spec.dtype}, got {value.dtype}")
        return value
    _scalar_value(spec, value, position)  # type check only
    return spec.dtype.type(value)


class _CallState:
    """Reusable ctypes argument block of one entry point (one per thread).

    Shapes are static, so the memref descriptors, the cells holding their
    addresses and the packed ``void*`` argument array are built once; a call
    only stores the data pointers (``_dlvm.invoke``) and scalar values.
    """

    def __init__(self, signature: FunctionSignature) -> None:
        specs = list(signature.inputs) + list(signature.results)
        self.cells: list[Any] = []
        self.slots = (ctypes.c_void_p * len(specs))()
        descriptors: list[int] = []
        for i, spec in enumerate(specs):
            if spec.is_scalar and i < len(signature.inputs):
                cell = _SCALAR_CTYPES[spec.element]()
                self.slots[i] = ctypes.addressof(cell)
                self.cells.append(cell)
            else:
                desc = _static_descriptor(spec if not spec.is_scalar else ValueSpec(spec.element, ()))
                pointer = ctypes.c_void_p(ctypes.addressof(desc))
                self.slots[i] = ctypes.addressof(pointer)
                self.cells.append((desc, pointer))
                descriptors.append(ctypes.addressof(desc))
        self.address = ctypes.addressof(self.slots)
        #: descriptor addresses of the tensor inputs, then of the results
        self.descriptors = tuple(descriptors)


#: the error slot of compiled code: a global that a failed run-time index
#: check (``dlvm-check-bounds``) stores its number n > 0 in, and a failed buffer
#: allocation -1 (the function then returns at once); the module attribute
#: lists the checks (check n is entry n - 1; the list travels in ArtifactInfo).
ERROR_GLOBAL = "_mlir___dlvm_error"
CHECKS_ATTR = "dlvm.bounds_checks"
#: the slot's value after a failed allocation
OUT_OF_MEMORY = -1


FORMAT = 2
"""Version of the artifact metadata layout and calling convention."""


@dataclass(frozen=True)
class ArtifactInfo:
    """What a compiled shared object says about itself (its ``__dlvm_metadata``)."""

    target: str
    signatures: tuple[FunctionSignature, ...]
    bounds_checks: tuple[str, ...] = ()
    threads: int = 1
    format: int = FORMAT

    def to_json(self) -> str:
        return json.dumps({
            "format": self.format,
            "target": self.target,
            "threads": self.threads,
            "signatures": [s.to_json() for s in self.signatures],
            "bounds_checks": list(self.bounds_checks),
        })

    @staticmethod
    def from_json(text: str) -> "ArtifactInfo":
        data = json.loads(text)
        if data.get("format") != FORMAT:
            raise ExecutionError(f"unsupported artifact format {data.get('format')!r} (expected {FORMAT})")
        return ArtifactInfo(
            target=data["target"],
            signatures=tuple(FunctionSignature.from_json(s) for s in data["signatures"]),
            bounds_checks=tuple(data.get("bounds_checks", ())),
            threads=int(data.get("threads", 1)),
        )


def load_library(path: str | os.PathLike[str]) -> ctypes.CDLL:
    """``dlopen`` a shared object (symbols resolved now, kept out of the global namespace)."""
    try:
        return ctypes.CDLL(os.fspath(path), mode=os.RTLD_NOW | os.RTLD_LOCAL)
    except OSError as exc:
        raise ExecutionError(f"cannot load {os.fspath(path)}: {exc}") from exc


def read_info(library: ctypes.CDLL) -> ArtifactInfo:
    """The :class:`ArtifactInfo` of a loaded shared object."""
    try:
        address = ctypes.addressof(ctypes.c_char.in_dll(library, "__dlvm_metadata"))
    except ValueError as exc:
        raise ExecutionError(f"{library._name}: not a dlvm-mlir artifact (no __dlvm_metadata)") from exc
    try:
        return ArtifactInfo.from_json(ctypes.string_at(address).decode())
    except (ValueError, KeyError, TypeError) as exc:
        raise ExecutionError(f"{library._name}: unreadable dlvm-mlir metadata ({exc})") from exc


class _ErrorSlot:
    """The error slot of a program (:data:`ERROR_GLOBAL`) and what each of its run-time index checks guards."""

    def __init__(self, library: ctypes.CDLL, checks: tuple[str, ...]) -> None:
        self.checks = checks
        try:
            self.slot = ctypes.c_int64.in_dll(library, ERROR_GLOBAL)
        except ValueError as exc:
            raise ExecutionError(f"{library._name}: no error slot {ERROR_GLOBAL}") from exc

    def failed(self) -> bool:
        return self.slot.value != 0

    def raise_if_failed(self, function: str) -> None:
        failed = self.slot.value
        if not failed:
            return
        self.slot.value = 0
        if failed == OUT_OF_MEMORY:
            refused = _dlvm.take_failed_allocation()
            what = f"a buffer of {format_bytes(refused)}" if refused else "a buffer"
            raise OutOfMemoryError(f"@{function}: out of memory: the system refused {what}; the call was abandoned")
        if 0 < failed <= len(self.checks):
            raise ExecutionError(f"@{function}: index out of bounds in {self.checks[failed - 1]}")
        raise ExecutionError(f"@{function}: failed with unknown error code {failed}")


class _EntryPoint:
    """One callable entry point of a :class:`CpuExecutable`."""

    def __init__(self, signature: FunctionSignature, address: int, errors: _ErrorSlot) -> None:
        self.signature = signature
        self._address = address
        self._local = threading.local()
        self._n_inputs = len(signature.inputs)
        self._errors = errors

    def _state(self) -> _CallState:
        state = getattr(self._local, "state", None)
        if state is None:
            state = self._local.state = _CallState(self.signature)
        return state

    def __call__(self, *args: Any) -> Any:
        sig = self.signature
        if len(args) != self._n_inputs:
            raise ExecutionError(
                f"@{sig.name} takes {len(sig.inputs)} argument(s), got {len(args)}: {sig.describe()}"
            )
        state = self._state()
        arrays: list[np.ndarray] = []
        for i, (spec, value) in enumerate(zip(sig.inputs, args)):
            if spec.is_scalar:
                state.cells[i].value = _scalar_value(spec, value, f"@{sig.name} argument #{i}").value
            else:
                arrays.append(_tensor_array(spec, value, f"@{sig.name} argument #{i}"))
        first_output = len(arrays)
        outputs = [_empty(spec.shape or (), spec.dtype) for spec in sig.results]
        arrays += outputs
        # (a call that fails returns early, leaving the buffers it allocated: the entry point
        # brackets itself for the runtime, which frees them; artifact.BRACKETED)
        _dlvm.invoke(self._address, state.address, state.descriptors, arrays, first_output)
        self._errors.raise_if_failed(sig.name)
        if not outputs:
            return None
        if len(outputs) == 1:
            return outputs[0][()] if sig.results[0].is_scalar else outputs[0]
        return tuple(out[()] if spec.is_scalar else out for spec, out in zip(sig.results, outputs))


def runtime_stats() -> dict[str, dict[str, int]]:
    """Counters of the runtime of compiled code, shared by every executable of the process.

    ``buffers``: the caching allocator (``cached_bytes``, ``hits``, ``misses``,
    ``capacity``, ``live_bytes`` and ``live_blocks`` handed out and not freed,
    ``released_after_failures``: blocks a failed call left, freed after it);
    ``async``: the async runtime (``live_objects`` - tokens,
    values and groups not yet freed -, ``workers``, ``tasks_by_workers``,
    ``tasks_by_waiters``, ``sleeps``, ``spin_us``, ``moves``: times a worker moved off
    the CPU of the thread that queued its task, ``openmp_regions``: parallel
    regions run on a shared OpenMP team, see :func:`share_openmp_threads`).
    """
    stats = dict(_dlvm.async_runtime_stats())
    stats["openmp_regions"] = _dlvm.openmp_regions()
    return {"buffers": dict(_dlvm.buffer_cache_stats()), "async": stats}


def set_worker_spin(microseconds: int) -> None:
    """How long idle workers of parallel loops, and callers waiting for them,
    poll before they sleep (default 5000, or ``$DLVM_ASYNC_SPIN_US``; 0: sleep
    at once, as ``libmlir_async_runtime.so`` does)."""
    if isinstance(microseconds, bool) or not isinstance(microseconds, int) or microseconds < 0:
        raise ValueError(f"the spin time must be a non-negative number of microseconds, got {microseconds!r}")
    _dlvm.set_async_runtime_spin(microseconds)


def loaded_libgomp() -> str | None:
    """The path of a GNU OpenMP runtime (libgomp) already loaded into this process, if any
    (PyTorch's CPU builds load their own)."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rstrip("\n").split(maxsplit=5)[-1]
                if os.path.basename(path).startswith("libgomp") and ".so" in path:
                    return path
    except OSError:
        return None
    return None


def share_openmp_threads(library: str | None | bool = True) -> bool:
    """Run compiled code's parallel loops on the OpenMP team of ``library`` (a libgomp path;
    ``True``: the libgomp already loaded in this process, as PyTorch's) instead of the
    runtime's own workers; ``False`` or ``None`` goes back to them. Returns whether an
    OpenMP team is used now.

    In a process where another library runs parallel regions on libgomp (PyTorch's
    operators), its threads spin for milliseconds after each region; dlvm's own workers,
    spinning too, then share the cores with them, and a dlvm call right after a PyTorch
    op ran about twice as slowly on 2 vCPUs. On libgomp's team the two take turns."""
    if library is None or library is False:
        _dlvm.use_openmp(0)
        return False
    path = loaded_libgomp() if library is True else os.fspath(library)
    if path is None:
        return False
    try:
        gomp = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        address = ctypes.cast(gomp.GOMP_parallel, ctypes.c_void_p).value
    except (OSError, AttributeError):
        return False
    _share_keepalive.append(gomp)
    _dlvm.use_openmp(address or 0)
    return bool(address)


_share_keepalive: list[ctypes.CDLL] = []


def trim_buffer_cache() -> None:
    """Free every buffer the caching allocator keeps for reuse."""
    _dlvm.trim_buffer_cache()


class CpuExecutable:
    """A compiled program (a loaded shared object): call its entry points with numpy arrays.

    ``exe("f", a, b)`` or ``exe.f(a, b)`` returns one array, or a tuple for
    several results; scalar (non-tensor) results come back as numpy scalars.
    Arguments are checked against the function type and a mismatch raises
    :class:`ExecutionError`.  The async runtime keeps ``threads - 1`` workers
    for a program compiled for ``threads``.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._library = load_library(path)
        self.info = read_info(self._library)
        self.signatures = {sig.name: sig for sig in self.info.signatures}
        self._errors = _ErrorSlot(self._library, self.info.bounds_checks)
        # (loading reserved threads - 1 workers of the async runtime: the
        # caller runs one task of each parallel loop, the pool the others)
        self._entries: dict[str, _EntryPoint] = {}
        #: the pipeline's LoweringResult when this process compiled the program
        #: in process (``None`` when it was loaded or built by the compiler process)
        self.lowering: Any = None

    def entry(self, name: str) -> Callable[..., Any]:
        """The callable for entry point ``name``."""
        entry = self._entries.get(name)
        if entry is None:
            signature = self.signatures.get(name)
            if signature is None:
                known = ", ".join(sorted(self.signatures)) or "none"
                raise ExecutionError(f"no entry point @{name} (entry points: {known})")
            try:
                address = ctypes.cast(self._library["_mlir_" + entry_symbol(name)], ctypes.c_void_p).value
            except AttributeError:
                raise ExecutionError(f"entry point @{name} is missing from {self.path}") from None
            entry = _EntryPoint(signature, address, self._errors)
            self._entries[name] = entry
        return entry

    def __call__(self, name: str, *args: Any) -> Any:
        return self.entry(name)(*args)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_") or name not in self.__dict__.get("signatures", {}):
            raise AttributeError(name)
        return self.entry(name)

    def __repr__(self) -> str:
        names = ", ".join(sig.describe() for sig in self.signatures.values())
        return f"CpuExecutable({names})"
