"""No input may kill the caller: compiler work runs in the compiler process.

MLIR and LLVM come as wheels built with assertions: an upstream assertion
(or a segfault) reached from user input aborts the whole process.  The
compiler's entry points (:func:`dlvm_mlir.compile`, :func:`dlvm_mlir.lower`,
NNKit, ``dlvm-opt``, ``dlvm-compile``) therefore run parsing, passes and code
generation through :func:`isolated`: the work goes to the compiler process
(:mod:`dlvm_mlir.compiler_process`), which runs it in a child of its own.
When the child dies or runs past its timeout, the caller gets an
:class:`InternalCompilerError` carrying the assertion text, the stage the
child had reached, a reproducer file and, for a crash while parsing, the
input line that triggers it (found by bisection over prefixes of the input).

``DLVM_MLIR_CRASH_GUARD=0`` runs everything in process (for a debugger).
"""

from __future__ import annotations

import functools
import os
import pickle
import re
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .compiler_process import compiler_process, in_child, report_stage
from .errors import InternalCompilerError, SourceLocation
from .reproducers import new_directory as new_reproducer_directory

__all__ = ["InternalCompilerError", "enabled", "isolated", "locate_parse_crash", "prestart", "report_stage"]

T = TypeVar("T")


def enabled() -> bool:
    """Whether compiler work goes to the compiler process (not when already inside it)."""
    if in_child() or not hasattr(os, "fork"):
        return False
    return os.environ.get("DLVM_MLIR_CRASH_GUARD", "1").lower() not in ("0", "false", "off", "no")


def prestart() -> None:
    """Start the compiler process now, if compiler work will go there."""
    if enabled():
        compiler_process().prestart()


_ASSERTION = re.compile(r"Assertion `(.*)' failed\.")
_LLVM_ERROR = re.compile(r"LLVM ERROR: (.*)")


def assertion_text(stderr: str, status: int | None, timed_out: bool, timeout: float | None) -> str:
    """The failed check's text from a dead child's stderr (or what killed it)."""
    if timed_out:
        return f"the compiler did not finish within {timeout:g} s"
    for pattern in (_ASSERTION, _LLVM_ERROR):
        found = pattern.search(stderr)
        if found:
            return found.group(1).strip()
    if status is not None and os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"the compiler process died ({name})"
    return f"the compiler process exited unexpectedly (status {status})"


def _user_stderr(stderr: str) -> str:
    """What the child printed before its crash report (LLVM's stack dump and the assertion dropped)."""
    for marker in ("PLEASE submit a bug report", "Stack dump:", "LLVM ERROR:"):
        stderr = stderr.split(marker, 1)[0]
    return "\n".join(line for line in stderr.splitlines() if not _ASSERTION.search(line))


def write_reproducer(text: str, filename: str, note: str) -> Path | None:
    """Save the input that crashed the compiler (plus how it was compiled); its path."""
    try:
        directory = new_reproducer_directory("dlvm-crash")
        stem = Path(filename).name if filename and not filename.startswith("<") else "input.mlir"
        path = directory / (stem if stem.endswith(".mlir") else stem + ".mlir")
        path.write_text(text)
        (directory / "README").write_text(note + "\n")
        return path
    except OSError:
        return None


def isolated(
    work: Callable[[], T],
    *,
    source: str | None = None,
    filename: str = "<input>",
    parse: Callable[[str], object] | None = None,
    reproduce: str = "",
    timeout: float | None = None,
    quiet: bool = False,
) -> T:
    """``work()`` run in the compiler process: its result, or its exception re-raised here.

    ``work`` must be picklable (a module-level function or a
    ``functools.partial`` of one).  If the child running it dies (assertion,
    signal) or runs past ``timeout`` seconds, raises
    :class:`InternalCompilerError`; ``source`` is saved as a reproducer (with
    ``reproduce``, how it was compiled) and, when the child died while
    parsing, ``parse`` (a picklable function that parses a text) locates the
    first line of ``source`` that crashes it.  What the child writes to
    stderr is passed on (unless ``quiet``).  Without the guard
    (:func:`enabled`), ``work()`` runs here.
    """
    if not enabled():
        return work()
    outcome = compiler_process().run(work, timeout)
    if outcome.result is not None:
        if outcome.stderr and not quiet:
            sys.stderr.write(outcome.stderr)
            sys.stderr.flush()
        ok, value = pickle.loads(outcome.result)
        if ok:
            return value
        raise value
    before = _user_stderr(outcome.stderr)
    if before.strip() and not quiet:
        sys.stderr.write(before.rstrip("\n") + "\n")
    stage = outcome.stages[-1] if outcome.stages else ""
    location = None
    if stage == "parse" and source is not None and parse is not None:
        location = locate_parse_crash(source, parse, filename)
    reproducer = write_reproducer(source, filename, reproduce) if source is not None else None
    raise InternalCompilerError(
        assertion_text(outcome.stderr, outcome.status, outcome.timed_out, timeout), stage, reproducer, location, filename
    )


def _attempt(parse: Callable[[str], object], text: str) -> None:
    try:
        parse(text)
    except Exception:  # noqa: BLE001 - a parse error is not a crash
        pass


def _crashes(parse: Callable[[str], object], text: str) -> bool:
    try:
        isolated(functools.partial(_attempt, parse, text), quiet=True)
    except InternalCompilerError:
        return True
    return False


def locate_parse_crash(text: str, parse: Callable[[str], object], filename: str) -> SourceLocation | None:
    """The first line whose inclusion makes parsing ``text`` crash (bisection over prefixes).

    A crash in the verifier (which runs once the module is parsed) shows
    only when a whole top-level op is in the prefix: then the op's first
    line is reported.
    """
    lines = text.split("\n")
    if not _crashes(parse, text):
        return None
    low, high = 0, len(lines)  # the prefix of `low` lines does not crash, of `high` lines does
    while high - low > 1:
        middle = (low + high) // 2
        if _crashes(parse, "\n".join(lines[:middle])):
            high = middle
        else:
            low = middle
    found = high
    if lines[found - 1].strip() == "}" and not lines[found - 1].startswith(" "):
        while found > 1 and not (lines[found - 1][:1].isalpha() or lines[found - 1][:1] in "%\"^"):
            found -= 1
    line = lines[found - 1]
    return SourceLocation(filename, found, len(line) - len(line.lstrip()) + 1)
