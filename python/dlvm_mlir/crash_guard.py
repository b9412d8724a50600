"""Run compiler work in a forked child, so no input can kill the caller.

MLIR and LLVM come as wheels built with assertions: an upstream assertion
(or a segfault) reached from user input aborts the whole process.  The
compiler's entry points (:func:`dlvm_mlir.compile`, :func:`dlvm_mlir.lower`,
``dlvm-opt``) therefore run parsing and passes through :func:`isolated`: the
work runs in a ``fork()``-ed child whose stderr is captured; its result (or
exception) comes back pickled.  When the child dies, the caller gets an
:class:`InternalCompilerError` carrying the assertion text, the stage the
child had reached, a reproducer file and, for a crash while parsing, the
input line that triggers it (found by bisection over prefixes of the input).

``DLVM_MLIR_CRASH_GUARD=0`` runs everything in process (for a debugger).
The separate compiler process of the compiled-artifacts issue will replace
the fork with a persistent worker; the interface stays.
"""

from __future__ import annotations

import faulthandler
import gc
import os
import pickle
import re
import selectors
import signal
import struct
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .errors import DLVMError, InternalCompilerError, SourceLocation

__all__ = ["InternalCompilerError", "enabled", "isolated", "locate_parse_crash", "report_stage"]

T = TypeVar("T")

#: frames on the status pipe: (kind, payload), kind "stage" or "result"
_HEADER = struct.Struct("<Q")
_status_fd: int | None = None


def enabled() -> bool:
    """Whether compiler work runs in a child process (not when already inside one)."""
    if _status_fd is not None or not hasattr(os, "fork"):
        return False
    return os.environ.get("DLVM_MLIR_CRASH_GUARD", "1").lower() not in ("0", "false", "off", "no")


def report_stage(name: str) -> None:
    """Record what the compiler is doing now (in the guarded child; a no-op elsewhere)."""
    if _status_fd is not None:
        _send(_status_fd, ("stage", name))


def _send(fd: int, message: Any) -> None:
    data = pickle.dumps(message)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _picklable(exc: BaseException) -> BaseException:
    """``exc`` if it survives a pickle round trip, else a DLVMError/RuntimeError with its text."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        base = DLVMError if isinstance(exc, DLVMError) else RuntimeError
        return base(f"{type(exc).__name__}: {exc}")


def _child(work: Callable[[], Any], status_w: int, err_w: int) -> None:
    global _status_fd
    code = 0
    # GC stays off (see isolated): the child is short-lived.
    faulthandler.disable()  # its report of a crash would bypass the captured stderr
    try:
        os.dup2(err_w, 2)
        os.environ["LLVM_DISABLE_SYMBOLIZATION"] = "1"
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _status_fd = status_w
        try:
            message: Any = ("result", (True, work()))
        except BaseException as exc:  # noqa: BLE001 - every outcome goes back to the parent
            message = ("result", (False, _picklable(exc)))
        try:
            _send(status_w, message)
        except Exception as exc:  # an unpicklable result
            _send(status_w, ("result", (False, RuntimeError(f"cannot return the result: {exc}"))))
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001
        code = 3
    finally:
        os._exit(code)


def _collect(pid: int, status_r: int, err_r: int, timeout: float | None) -> tuple[bytes, bytes, int | None, bool]:
    """Read the child's pipes until both close; its status bytes, stderr, wait status, timed out."""
    buffers = {status_r: bytearray(), err_r: bytearray()}
    deadline = None if timeout is None else time.monotonic() + timeout
    timed_out = False
    with selectors.DefaultSelector() as sel:
        for fd in buffers:
            sel.register(fd, selectors.EVENT_READ)
        open_fds = set(buffers)
        while open_fds:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            events = sel.select(wait)
            if not events and deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                os.kill(pid, signal.SIGKILL)
                break
            for key, _ in events:
                chunk = os.read(key.fd, 1 << 16)
                if chunk:
                    buffers[key.fd] += chunk
                else:
                    sel.unregister(key.fd)
                    open_fds.discard(key.fd)
    _, status = os.waitpid(pid, 0)
    return bytes(buffers[status_r]), bytes(buffers[err_r]), status, timed_out


def _messages(data: bytes) -> list[tuple[str, Any]]:
    out, pos = [], 0
    while pos + _HEADER.size <= len(data):
        (size,) = _HEADER.unpack_from(data, pos)
        pos += _HEADER.size
        if pos + size > len(data):
            break
        out.append(pickle.loads(data[pos : pos + size]))
        pos += size
    return out


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
        directory = Path(tempfile.mkdtemp(prefix="dlvm-crash-"))
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
    """``work()`` run in a forked child: its result, or its exception re-raised here.

    If the child dies (assertion, signal) or runs past ``timeout`` seconds,
    raises :class:`InternalCompilerError`; ``source`` is saved as a
    reproducer (with ``reproduce``, how it was compiled) and, when the child
    died while parsing, ``parse`` (a function that parses a text) locates the
    first line of ``source`` that crashes it.  What the child writes to
    stderr is passed on (unless ``quiet``).  Without the guard
    (:func:`enabled`), ``work()`` runs here.
    """
    if not enabled():
        return work()
    status_r, status_w = os.pipe()
    err_r, err_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    # No cyclic GC from here on in the child: the interpreter's own after-fork
    # handlers already collect, and destroying an inherited MLIR object (a
    # context whose thread pool had threads in the parent) crashes or hangs.
    collecting = gc.isenabled()
    gc.disable()
    pid = -1
    try:
        with warnings.catch_warnings():
            # JAX (and Python >= 3.12 with threads) warn at every fork; the
            # child runs only the compiler, never their threads
            warnings.filterwarnings("ignore", message=r".*fork\(\)", category=RuntimeWarning)
            warnings.filterwarnings("ignore", message=r".*fork\(\)", category=DeprecationWarning)
            pid = os.fork()
    finally:
        if collecting and pid != 0:
            gc.enable()
    if pid == 0:
        os.close(status_r)
        os.close(err_r)
        _child(work, status_w, err_w)
    os.close(status_w)
    os.close(err_w)
    try:
        status_bytes, err_bytes, status, timed_out = _collect(pid, status_r, err_r, timeout)
    finally:
        os.close(status_r)
        os.close(err_r)
    messages = _messages(status_bytes)
    stderr = err_bytes.decode(errors="replace")
    results = [payload for kind, payload in messages if kind == "result"]
    if results and not timed_out:
        if stderr and not quiet:
            sys.stderr.write(stderr)
            sys.stderr.flush()
        ok, value = results[0]
        if ok:
            return value
        raise value
    before = _user_stderr(stderr)
    if before.strip():
        sys.stderr.write(before.rstrip("\n") + "\n")
    stages = [payload for kind, payload in messages if kind == "stage"]
    stage = stages[-1] if stages else ""
    location = None
    if stage == "parse" and source is not None and parse is not None:
        location = locate_parse_crash(source, parse, filename)
    reproducer = write_reproducer(source, filename, reproduce) if source is not None else None
    raise InternalCompilerError(
        assertion_text(stderr, status, timed_out, timeout), stage, reproducer, location, filename
    )


def _crashes(parse: Callable[[str], object], text: str) -> bool:
    def attempt() -> None:
        try:
            parse(text)
        except Exception:  # noqa: BLE001 - a parse error is not a crash
            pass

    try:
        isolated(attempt, quiet=True)
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
