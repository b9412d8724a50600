"""Schedule search and the tuning database (CPU, optional).

The schedules of :mod:`.schedule` come from fixed heuristics: a register
tile of 4 output channels by 4 vectors for a direct convolution, 256 row
vectors per kernel-gradient step, two tasks per thread.  They are good on
the shapes they were measured on, and a few percent off on others.  Where
they are, a short search finds a better schedule for the one kernel, in
the spirit of XFC's bottom-up tuning and TVM's tuners, and a database on
disk keeps the result for every later compile, in every process.

**What is searched.**  Each scheduled kernel (:mod:`.kernels`: one linalg op
with its fused init and epilogue) whose plan is a contraction, a direct
convolution or a kernel gradient, with at least :data:`MIN_MULTIPLY_ADDS`.
Its knobs are fields of :class:`ScheduleOptions` (:data:`KNOBS`); the search
is coordinate descent from the defaults: for each knob in turn, the current
best and each value of the knob that changes the plan are compiled (the
kernel alone, from its schedule on, allocating its result as the program
does, see :func:`measure_candidates` and :func:`kernel_module`) and
timed in turns on random inputs, and a value replaces the current best only
if its median is :data:`MIN_GAIN` faster (these machines are noisy); the
winner must beat the defaults again, head to head, or the defaults stay.  About
a second per candidate, a few seconds per kernel; :data:`BUDGET_SECONDS`
caps it.

**The database.**  A JSON file, ``tuning.json`` in the compile cache's
directory (:func:`dlvm_mlir.cache.default_cache_dir`), or
``$DLVM_MLIR_TUNING_DB``.  An entry is keyed by a hash of the kernel's text
(without its name), the schedule options it started from, the thread count
and the target machine, and holds the knob values that differ from the
defaults, with what was measured (for ``python -m
dlvm_mlir.backend.tuning info``).  Writers take a lock, merge and rename
into place; a damaged file is reported once and read as empty.

**Modes** (:attr:`ScheduleOptions.tuning`, ``$DLVM_MLIR_TUNE``,
``dlvm_mlir.compile(tuning=...)``, ``dlvm-compile --tuning``,
``dlvm-cpu-pipeline{tuning=...}``):

* ``use`` (the default): kernels in the database get its schedule, the
  others the heuristics' (nothing is measured);
* ``search``: the same, but a kernel missing from the database is searched
  first, and the result recorded;
* ``off``: the heuristics only.

The compile cache's key includes the database's size and modification time
(:func:`database_stamp`), so a program compiled before a search is compiled
again after it.  Tests stay deterministic: their cache directory is private
(no database unless a test makes one), and the search takes its timer as an
argument (:func:`search`).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .options import ScheduleOptions

if TYPE_CHECKING:
    from mlir import ir

    from .analysis import LoopNest
    from .target import CpuTarget

__all__ = [
    "KNOBS",
    "Knob",
    "TuningDatabase",
    "database_path",
    "database_stamp",
    "kernel_key",
    "measure_candidates",
    "search",
    "summary",
    "tuned_options",
]

#: bump when the meaning of an entry changes (entries of other formats are ignored; 2: a
#: direct convolution's rows are multiplied by up to 4, not 2, for narrow tiles; a knob
#: added does not change the format)
FORMAT = 2
#: a candidate must be this much faster (median) than the current best to replace it
MIN_GAIN = 0.03
#: seconds one kernel's search may take (it stops after the knob that passes this; the
#: first knob is always searched)
BUDGET_SECONDS = 20.0
#: kernels with fewer multiply-adds (iterations) are not searched: too short to gain much
MIN_MULTIPLY_ADDS = 1 << 24
#: timed rounds per candidate (taking turns), and the least time one round takes
ROUNDS = 7
ROUND_SECONDS = 0.004


@dataclass(frozen=True)
class Knob:
    """A :class:`ScheduleOptions` field the search may change, and the values it tries: one
    tuple, or tuples by the target's vector registers (see :func:`.schedule.by_registers`)."""

    field: str
    values: tuple[Any, ...] | dict[int, tuple[Any, ...]]

    def choices(self, target: CpuTarget) -> tuple[Any, ...]:
        """The values tried on ``target``."""
        from .schedule import by_registers

        return by_registers(self.values, target) if isinstance(self.values, dict) else self.values

    def all_values(self) -> set[Any]:
        """The values tried on any target."""
        groups = self.values.values() if isinstance(self.values, dict) else [self.values]
        return {value for group in groups for value in group}


#: the knobs of each plan kind, searched in this order (the most effective first)
KNOBS: dict[str, tuple[Knob, ...]] = {
    "direct-convolution": (
        Knob("direct_convolution_rows", (2, 4, 6)),
        Knob("direct_convolution_vectors", (1, 2, 4)),
        Knob("tasks_per_thread", (1, 2, 4)),
    ),
    "contraction": (
        Knob("register_rows", (4, 6, 8)),
        Knob("cache_tile", ((256, 128, 256), (96, 128, 128), (128, 128, 256), (192, 64, 128))),
        Knob("tasks_per_thread", (1, 2, 4)),
    ),
    "kernel-gradient": (
        Knob("kernel_gradient_span", (32, 64, 128, 256, 512)),  # 32: one image of 16x16 a step
        Knob("kernel_gradient_images", (1, 2, 4, 8)),
        # AVX-512 tiles of 16-24 accumulators, AVX2 ones of 6-12 (along the filters, 3 x 3 and
        # 4 x 3 are 3 vectors wide: 14x slower on the Zen 2)
        Knob("kernel_gradient_tile", {32: ((6, 4), (4, 4), (8, 2), (12, 2)), 16: ((6, 2), (4, 2), (3, 2), (12, 1))}),
        Knob("tasks_per_thread", (1, 2, 4)),
    ),
}

#: the values each knob may take, over all kinds
_KNOB_VALUES: dict[str, set[Any]] = {}
for _knobs in KNOBS.values():
    for _knob in _knobs:
        _KNOB_VALUES.setdefault(_knob.field, set()).update(_knob.all_values())


# --------------------------------------------------------------------------
# the database
# --------------------------------------------------------------------------


def database_path() -> Path | None:
    """``$DLVM_MLIR_TUNING_DB``, else ``tuning.json`` in the compile cache's directory (None
    when the disk cache is off)."""
    configured = os.environ.get("DLVM_MLIR_TUNING_DB")
    if configured:
        return Path(configured)
    from ..cache import default_cache_dir

    directory = default_cache_dir()
    return None if directory is None else directory / "tuning.json"


def database_stamp() -> str:
    """The database's size and modification time ("" if there is none), for cache keys."""
    path = database_path()
    try:
        stat = path.stat() if path is not None else None
    except OSError:
        stat = None
    return "" if stat is None else f"{path}:{stat.st_size}:{stat.st_mtime_ns}"


_REPORTED: set[str] = set()
#: parsed databases by path: ((size, mtime, inode), entries)
_PARSED: dict[str, tuple[tuple[int, int, int], dict[str, dict[str, Any]]]] = {}


class TuningDatabase:
    """Entries by kernel key in a JSON file (:func:`database_path`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def read(self) -> dict[str, dict[str, Any]]:
        """Every entry of this format; a missing file is empty, a damaged one is reported
        (once per process) and read as empty.  Parsed once per version of the file."""
        try:
            stat = self.path.stat()
        except OSError:
            return {}
        stamp = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
        cached = _PARSED.get(str(self.path))
        if cached is not None and cached[0] == stamp:
            return dict(cached[1])
        entries = self._parse()
        _PARSED[str(self.path)] = (stamp, entries)
        return dict(entries)

    def _parse(self) -> dict[str, dict[str, Any]]:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            self._report(f"cannot read it ({exc.strerror})")
            return {}
        try:
            data = json.loads(text)
            entries = data["entries"] if isinstance(data, dict) and data.get("format") == FORMAT else {}
            if not isinstance(entries, dict):
                raise ValueError("entries is not an object")
        except (ValueError, KeyError) as exc:
            self._report(f"it is not a tuning database of format {FORMAT} ({exc})")
            return {}
        return {key: value for key, value in entries.items() if isinstance(value, dict)}

    def _report(self, why: str) -> None:
        if str(self.path) not in _REPORTED:
            _REPORTED.add(str(self.path))
            print(f"dlvm-mlir: warning: ignoring the tuning database {self.path}: {why}", file=sys.stderr)

    def lookup(self, key: str) -> dict[str, Any] | None:
        return self.read().get(key)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def store(self, key: str, entry: dict[str, Any]) -> None:
        """Add or replace one entry: under a lock, merged with what other processes wrote,
        written to a temporary file and renamed into place."""
        with self._locked():
            entries = self.read()
            entries[key] = entry
            self._write(entries)

    def clear(self) -> int:
        """Delete every entry; how many there were."""
        with self._locked():
            count = len(self.read())
            self._write({})
        return count

    def _write(self, entries: dict[str, dict[str, Any]]) -> None:
        handle, name = tempfile.mkstemp(dir=self.path.parent, prefix=".tuning-", suffix=".json")
        try:
            with os.fdopen(handle, "w") as out:
                json.dump({"format": FORMAT, "entries": entries}, out, indent=1, sort_keys=True)
            os.replace(name, self.path)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise


def kernel_key(kernel_text: str, options: ScheduleOptions, target: CpuTarget) -> str:
    """The database key of a kernel (its text without its name, see :func:`kernel_module`)
    scheduled from ``options`` on ``target``."""
    from .options import host_machine

    # not cache.cache_key: that one holds the compiler's build id, and an entry (knob values,
    # checked against KNOBS when read) should outlive an edit of the compiler
    base = replace(options, tuning="off")
    digest = hashlib.sha256()
    for part in (str(FORMAT), kernel_text, repr(base), target.key(), repr(host_machine())):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def tuned_options(options: ScheduleOptions, entry: dict[str, Any] | None) -> ScheduleOptions:
    """``options`` with the knobs of a database entry; a knob this version does not search,
    or a value it does not try (:data:`KNOBS`), is ignored: the entry may come from another
    version, or have been edited."""
    if not entry or not isinstance(entry.get("knobs"), dict):
        return options
    changes = {}
    for name, value in entry["knobs"].items():
        value = tuple(value) if isinstance(value, list) else value
        if value in _KNOB_VALUES.get(name, ()):
            changes[name] = value
    return replace(options, **changes)


# --------------------------------------------------------------------------
# measuring
# --------------------------------------------------------------------------


def kernel_module(function: ir.Operation, call: ir.Operation | None = None) -> str:
    """The text of a module holding a copy of the kernel ``function`` as the public
    function ``@kernel``, without schedule tags: what a candidate is compiled from.

    An argument that ``call`` passes a ``tensor.empty`` (the init of the kernel's fill)
    is replaced by one inside: an entry point's arguments are read-only, and writing
    into one would copy it first, which the program does not (1x1 convolution: a 2 MB
    copy per call hid the candidates' differences)."""
    from mlir import ir

    from .schedule import strip_schedule_tags

    with function.context:
        module = ir.Module.create(function.location)
        with ir.InsertionPoint(module.body):
            copy = function.clone()
        copy.attributes["sym_name"] = ir.StringAttr.get("kernel")
        if "sym_visibility" in copy.attributes:
            del copy.attributes["sym_visibility"]
        block = copy.regions[0].blocks[0]
        for index, operand in enumerate(call.operands if call is not None else ()):
            owner = operand.owner
            if isinstance(owner, ir.Block) or owner.name != "tensor.empty" or len(owner.operands):
                continue
            with ir.InsertionPoint.at_block_begin(block), owner.location:
                empty = owner.clone()
            block.arguments[index].replace_all_uses_with(empty.results[0])
        strip_schedule_tags(module)
        return module.operation.get_asm(use_local_scope=True)


def _inputs(signature: Any, seed: int = 0) -> list[Any] | None:
    """Random arguments of the kernel (None if one is not a tensor)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    arrays = []
    for spec in signature.inputs:
        if spec.shape is None:
            return None
        dtype = spec.dtype
        if np.issubdtype(dtype, np.floating):
            arrays.append(rng.standard_normal(spec.shape).astype(dtype))
        else:
            arrays.append(np.zeros(spec.shape, dtype))
    return arrays


Measure = Callable[[Sequence[ScheduleOptions]], list[float]]


def measure_candidates(kernel_text: str, target: CpuTarget, threads: int) -> Measure:
    """A timer of the kernel ``kernel_text`` (:func:`kernel_module`) under candidate
    schedule options: each candidate is compiled (once; from the schedules on, as in a
    whole program) and loaded, then the candidates' calls take turns (each round starting
    at the next candidate), :data:`ROUNDS` rounds of at least :data:`ROUND_SECONDS`; the
    median seconds per call of each."""
    from mlir import ir

    from .cache import build_cpu_object, load_object, private_object_path
    from .cpu import CpuOptions, lower_to_llvm_cpu

    compiled: dict[ScheduleOptions, Callable[[], Any]] = {}

    def load(candidate: ScheduleOptions) -> Callable[[], Any]:
        if candidate not in compiled:
            options = CpuOptions(threads=threads, target=target, schedule=replace(candidate, tuning="off"))
            with ir.Context():
                module = ir.Module.parse(kernel_text)
                result = lower_to_llvm_cpu(module, options=options, skip=KERNEL_SKIPPED_STAGES)
                path = private_object_path()
                build_cpu_object(result, options, path)
            executable = load_object(path, remove=True)
            fn = executable.entry("kernel")
            args = _inputs(executable.signatures["kernel"])
            if args is None:
                raise ValueError("the kernel takes a scalar")
            compiled[candidate] = lambda: fn(*args)
        return compiled[candidate]

    def measure(candidates: Sequence[ScheduleOptions]) -> list[float]:
        calls = [load(candidate) for candidate in candidates]
        repeats = []
        for call in calls:
            call()  # warm: first touch of the outputs, the thread pool
            start = time.perf_counter()
            call()
            repeats.append(max(1, math.ceil(ROUND_SECONDS / max(time.perf_counter() - start, 1e-7))))
        samples: list[list[float]] = [[] for _ in calls]
        for round_index in range(ROUNDS):
            # each round starts at the next candidate: none always runs first (after the
            # previous round's last), or always after the same one
            order = list(range(len(calls)))
            order = order[round_index % len(calls):] + order[:round_index % len(calls)]
            for index in order:
                call = calls[index]
                start = time.perf_counter()
                for _ in range(repeats[index]):
                    call()
                samples[index].append((time.perf_counter() - start) / repeats[index])
        return [sorted(s)[len(s) // 2] for s in samples]

    return measure


#: the stages a kernel has been through before its schedule (a candidate's compile skips them)
KERNEL_SKIPPED_STAGES = ("fuse", "approximate-math", "pack")


# --------------------------------------------------------------------------
# the search
# --------------------------------------------------------------------------


@dataclass
class SearchResult:
    """The outcome of one kernel's search."""

    options: ScheduleOptions
    knobs: dict[str, Any]
    default_seconds: float
    best_seconds: float
    candidates: int
    seconds: float

    def entry(self, nest: LoopNest, kind: str) -> dict[str, Any]:
        return {
            "knobs": {name: list(v) if isinstance(v, tuple) else v for name, v in self.knobs.items()},
            "op": nest.op_name,
            "plan": kind,
            "ranges": list(nest.ranges),
            "default_us": round(self.default_seconds * 1e6, 2),
            "best_us": round(self.best_seconds * 1e6, 2),
            "candidates": self.candidates,
            "search_seconds": round(self.seconds, 2),
            "date": time.strftime("%Y-%m-%d"),
        }


def search(
    nest: LoopNest,
    target: CpuTarget,
    options: ScheduleOptions,
    measure: Measure,
    budget: float = BUDGET_SECONDS,
    clock: Callable[[], float] = time.monotonic,
    report: Callable[[str], None] | None = None,
) -> SearchResult | None:
    """Coordinate descent over the knobs of the kernel's plan kind (:data:`KNOBS`), from
    ``options``; ``measure`` times candidates (:func:`measure_candidates`, or a fake one
    in tests). None if the kind has no knobs."""
    from .schedule import plan_for

    kind = plan_for(nest, target, options).kind
    knobs = KNOBS.get(kind)
    if not knobs:
        return None
    started = clock()
    best = options
    plans = {plan_for(nest, target, best)}
    best_seconds = default_seconds = None
    count = 1
    for knob in knobs:
        candidates = [best]
        for value in knob.choices(target):
            candidate = replace(best, **{knob.field: value})
            plan = plan_for(nest, target, candidate)
            if plan.kind == kind and plan not in plans:
                plans.add(plan)
                candidates.append(candidate)
        if len(candidates) == 1:
            continue
        count += len(candidates) - 1
        times = measure(candidates)
        if report is not None:
            report(f"  {knob.field}: " + ", ".join(
                f"{getattr(c, knob.field)} {t * 1e3:.3f}" for c, t in zip(candidates, times)) + " ms")
        if default_seconds is None:
            default_seconds = times[0]
        best_seconds = times[0]
        fastest = min(range(len(times)), key=times.__getitem__)
        if times[fastest] < (1 - MIN_GAIN) * times[0]:
            best, best_seconds = candidates[fastest], times[fastest]
        if clock() - started > budget:
            break
    if default_seconds is None:
        return None
    if best != options:
        # the steps' gains may be noise that added up: the winner must beat the defaults
        # again, head to head
        default_seconds, best_seconds = measure([options, best])
        if report is not None:
            report(f"  head to head: defaults {default_seconds * 1e3:.3f}, best {best_seconds * 1e3:.3f} ms")
        if best_seconds >= (1 - MIN_GAIN) * default_seconds:
            best, best_seconds = options, default_seconds
    changed = {k.field: getattr(best, k.field) for k in knobs if getattr(best, k.field) != getattr(options, k.field)}
    return SearchResult(best, changed, default_seconds, best_seconds, count, clock() - started)


def _describe(nest: LoopNest, kind: str) -> str:
    return f"{nest.op_name} ({kind}) {'x'.join(str(r) for r in nest.ranges)}"


def _progress(text: str) -> None:
    from ..compiler_process import progress

    progress(f"dlvm-mlir: tuning: {text}")


def options_for_kernel(
    function: ir.Operation, nest: LoopNest, target: CpuTarget, options: ScheduleOptions,
    call: ir.Operation | None = None, tasks: int = 1,
) -> ScheduleOptions:
    """The schedule options of one kernel: the database's, searched first in ``search``
    mode if it has none and the kernel is worth it (timed by :func:`measure_candidates`;
    ``tasks``: the times a parallel loop around it runs it, which its work counts).
    A search that fails (a kernel that takes a scalar) is recorded as the defaults, with
    why, so it is not tried again."""
    if options.tuning == "off":
        return options
    path = database_path()
    if path is None or (options.tuning == "use" and not path.exists()):
        return options
    from .schedule import plan_for

    kind = plan_for(nest, target, options).kind
    if kind not in KNOBS:
        return options
    database = TuningDatabase(path)
    text = kernel_module(function, call)
    key = kernel_key(text, options, target)
    entry = database.lookup(key)
    if entry is not None or options.tuning != "search" or nest.iterations * tasks < MIN_MULTIPLY_ADDS:
        return tuned_options(options, entry)
    _progress(f"{_describe(nest, kind)} ...")
    try:
        result = search(nest, target, options, measure_candidates(text, target, options.threads), report=_progress)
    except Exception as exc:  # noqa: BLE001 - a failed search leaves the heuristics' schedule
        lines = str(exc).strip().splitlines()
        why = f"{type(exc).__name__}: {lines[-1] if lines else ''}"
        _progress(f"  the search failed ({why}); the heuristics' schedule")
        database.store(key, {"knobs": {}, "op": nest.op_name, "plan": kind, "ranges": list(nest.ranges),
                             "error": why, "date": time.strftime("%Y-%m-%d")})
        return options
    if result is None:
        return options
    gain = result.default_seconds / result.best_seconds
    chosen = ", ".join(f"{k}={v}" for k, v in sorted(result.knobs.items())) or "the defaults"
    _progress(f"  {result.default_seconds * 1e3:.3f} -> {result.best_seconds * 1e3:.3f} ms ({gain:.2f}x, "
              f"{chosen}; {result.candidates} candidates in {result.seconds:.1f} s)")
    database.store(key, result.entry(nest, kind))
    return result.options


def summary() -> str:
    """One line: the tuning mode and the database (for benchmark reports)."""
    from .options import default_tuning

    path = database_path()
    where = "no database (disk cache off)" if path is None else (
        f"{len(TuningDatabase(path).read())} entries in {path}" if path.exists() else f"no database yet ({path})")
    return f"tuning: {default_tuning()}; {where}"


# --------------------------------------------------------------------------
# python -m dlvm_mlir.backend.tuning
# --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dlvm_mlir.backend.tuning",
                                     description="Show or clear the tuning database.")
    parser.add_argument("command", choices=("info", "clear"))
    args = parser.parse_args(argv)
    path = database_path()
    if path is None:
        print("no tuning database: the disk cache is off and $DLVM_MLIR_TUNING_DB is not set")
        return 0
    database = TuningDatabase(path)
    if args.command == "clear":
        print(f"{path}: removed {database.clear()} entries")
        return 0
    entries = database.read()
    print(f"{path}: {len(entries)} entries")
    for key, entry in sorted(entries.items(), key=lambda item: str(item[1].get("op"))):
        knobs = ", ".join(f"{k}={v}" for k, v in sorted(entry.get("knobs", {}).items())) or "defaults"
        ranges = "x".join(str(r) for r in entry.get("ranges", []))
        outcome = (f"search failed: {entry['error']}" if "error" in entry
                   else f"{entry.get('default_us')} -> {entry.get('best_us')} us")
        print(f"  {key[:12]} {entry.get('plan')} {ranges}: {outcome} ({knobs})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
