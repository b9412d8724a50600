"""The compiler process: compiler work runs outside the user's process.

MLIR and LLVM come as wheels built with assertions, and a C++ assertion (or
a segfault, or a hang) aborts whatever process it happens in. Parsing,
passes and code generation of :func:`dlvm_mlir.compile`, NNKit's compile
step and the command-line tools therefore run in a separate process:

* a **server**, a fresh interpreter (``python -m dlvm_mlir.compiler_process``)
  started once per user process, when NNKit stages its first function or
  compiler work is first needed; its start-up (about 0.3-0.5 s, mostly
  imports) is paid once. It is not a fork of the user's process: forking a
  process with running threads (OpenBLAS', JAX's, PyTorch's, the async
  runtime's) can deadlock the child on a lock another thread held;
* the server stays single-threaded and runs each request in a ``fork()``-ed
  child of its own, so a crash or a leak never outlives the request and the
  server survives whatever the input does;
* a request is a picklable callable (a module-level function or a
  ``functools.partial`` of one) plus a timeout, sent with the client's
  environment, working directory and module search path (the child unpickles
  the callable and the client the result, never the server); the answer is an
  :class:`Outcome`: the child's result or exception, the stages it reported,
  its stderr and, if it
  died, its wait status. :mod:`dlvm_mlir.crash_guard` turns a death into an
  :class:`~dlvm_mlir.errors.InternalCompilerError`.

The server exits when its client does (end of file on its request pipe).
The command-line tools (short-lived, nothing of theirs runs beside the
compiler) skip the server: ``direct`` mode forks each request from the tool's
own process, which costs no start-up.
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import gc
import os
import pickle
import selectors
import signal
import struct
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

__all__ = [
    "CompilerProcess",
    "Outcome",
    "compiler_process",
    "in_child",
    "direct_mode",
    "progress",
    "report_stage",
    "run_forked",
]

_HEADER = struct.Struct("<Q")

#: the status pipe of the forked child running a request (None elsewhere)
_status_fd: int | None = None
#: in a request's child: its stderr as it was before it was captured (:func:`progress`)
_progress_fd: int | None = None


@dataclass
class Outcome:
    """What became of one request."""

    #: the pickled (ok, value or exception), when the child sent a result; the
    #: server passes it on as bytes (it never imports what a request refers to)
    result: bytes | None = None
    #: the stages the child reported, in order
    stages: list[str] = field(default_factory=list)
    stderr: str = ""
    #: the child's wait status when it did not send a result
    status: int | None = None
    timed_out: bool = False


def in_child() -> bool:
    """Whether this process is the child running a compiler request."""
    return _status_fd is not None


def progress(text: str) -> None:
    """A line for the user to see now, while the compiler works (the schedule search's):
    a request's child writes it to the stderr it was started with, which its captured
    stderr would hold back until the request ends."""
    if _progress_fd is None:
        print(text, file=sys.stderr, flush=True)
        return
    with contextlib.suppress(OSError):
        os.write(_progress_fd, (text + "\n").encode())


def report_stage(name: str) -> None:
    """Record what the compiler is doing now (in a request's child; a no-op elsewhere)."""
    if _status_fd is not None:
        _write_frame(_status_fd, ("stage", name))


# -- frames: 8-byte length + pickle ----------------------------------------------


def _write_frame(fd: int, message: Any) -> None:
    data = pickle.dumps(message)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _read_exact(stream: BinaryIO, size: int) -> bytes | None:
    data = bytearray()
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            return None
        data += chunk
    return bytes(data)


def _read_frame(stream: BinaryIO) -> Any:
    header = _read_exact(stream, _HEADER.size)
    if header is None:
        raise EOFError
    (size,) = _HEADER.unpack(header)
    data = _read_exact(stream, size)
    if data is None:
        raise EOFError
    return pickle.loads(data)


def _frames(data: bytes) -> list[Any]:
    out, pos = [], 0
    while pos + _HEADER.size <= len(data):
        (size,) = _HEADER.unpack_from(data, pos)
        pos += _HEADER.size
        if pos + size > len(data):
            break
        out.append(pickle.loads(data[pos : pos + size]))
        pos += size
    return out


# -- one request in a forked child -------------------------------------------------


def _picklable(exc: BaseException) -> BaseException:
    """``exc`` if it survives a pickle round trip, else a DLVMError/RuntimeError with its text."""
    from .errors import DLVMError

    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        base = DLVMError if isinstance(exc, DLVMError) else RuntimeError
        return base(f"{type(exc).__name__}: {exc}")


def _child(work: Callable[[], Any], status_w: int, err_w: int) -> None:
    global _status_fd, _progress_fd
    code = 0
    faulthandler.disable()  # its report of a crash would bypass the captured stderr
    try:
        _progress_fd = os.dup(2)
        os.dup2(err_w, 2)
        os.environ["LLVM_DISABLE_SYMBOLIZATION"] = "1"
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _status_fd = status_w
        try:
            result: Any = (True, work())
        except BaseException as exc:  # noqa: BLE001 - every outcome goes back to the parent
            result = (False, _picklable(exc))
        try:
            payload = pickle.dumps(result)
        except Exception as exc:  # an unpicklable result
            payload = pickle.dumps((False, RuntimeError(f"cannot return the result: {exc}")))
        _write_frame(status_w, ("result", payload))
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


def _fork() -> int:
    """``os.fork()`` with the cyclic GC off in the child.

    The interpreter's own after-fork handlers already collect, and destroying
    an inherited MLIR object (a context whose thread pool had threads in the
    parent) crashes or hangs; the children are short-lived or never collect.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    collecting = gc.isenabled()
    gc.disable()
    pid = -1
    try:
        with warnings.catch_warnings():
            # Python >= 3.12 warns when a process with threads forks: the
            # server is single-threaded; the tools' other threads (OpenBLAS')
            # are idle, and the child runs only the compiler
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    finally:
        if collecting and pid != 0:
            gc.enable()
    return pid


def run_forked(work: Callable[[], Any], timeout: float | None = None) -> Outcome:
    """``work()`` in a forked child of this process: what became of it."""
    status_r, status_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = _fork()
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
    outcome = Outcome(stderr=err_bytes.decode(errors="replace"), status=status, timed_out=timed_out)
    for kind, payload in _frames(status_bytes):
        if kind == "stage":
            outcome.stages.append(payload)
        elif kind == "result" and not timed_out:
            outcome.result = payload
    return outcome


# -- the server ------------------------------------------------------------------------


def _apply(work: bytes, environment: dict[str, str], cwd: str, path: list[str]) -> Any:
    """Run the pickled ``work`` with the client's environment, working directory
    and module search path (in the request's child: the server itself never
    imports what a request refers to)."""
    os.environ.clear()
    os.environ.update(environment)
    try:
        os.chdir(cwd)
    except OSError:
        pass
    sys.path[:] = path
    return pickle.loads(work)()


def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    """Answer requests until the client goes away (end of file)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the client decides what Ctrl-C does
    while True:
        try:
            work, timeout, environment, cwd, path = _read_frame(requests)
        except EOFError:
            return
        except Exception as exc:  # noqa: BLE001 - an unreadable request fails alone
            error = RuntimeError(f"the compiler process cannot read the request: {exc}")
            outcome = Outcome(result=pickle.dumps((False, error)))
        else:
            outcome = run_forked(lambda: _apply(work, environment, cwd, path), timeout)
        data = pickle.dumps(outcome)
        try:
            answers.write(_HEADER.pack(len(data)) + data)
            answers.flush()
        except OSError:  # the client is gone
            return


class CompilerProcess:
    """The client's handle on its server (started on first use, restarted if it dies)."""

    def __init__(self) -> None:
        #: run each request in a fork of this process instead (the command-line
        #: tools: short-lived, and their own process is what a fork would copy)
        self.direct = False
        self._lock = threading.Lock()
        self._server: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def running(self) -> bool:
        return self._server is not None

    def prestart(self) -> None:
        """Start the server now (it imports while the caller goes on), unless running in process."""
        with self._lock:
            if not self.running and not self.direct:
                self._start()

    def _start(self) -> None:
        self.starts += 1
        package_root = str(Path(__file__).resolve().parents[1])
        environment = dict(os.environ)
        environment["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, environment.get("PYTHONPATH")) if p)
        self._server = subprocess.Popen(
            [sys.executable, "-m", "dlvm_mlir.compiler_process"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment,
            start_new_session=True,  # no terminal signals: the client's Ctrl-C is the client's
        )

    def stop(self) -> None:
        """End the server (it is started again on the next request)."""
        server, self._server = self._server, None
        if server is None:
            return
        for stream in (server.stdin, server.stdout):
            try:
                stream.close()
            except OSError:
                pass
        server.kill()
        server.wait()

    def run(self, work: Callable[[], Any], timeout: float | None = None) -> Outcome:
        """Send one request and wait for its :class:`Outcome`."""
        if self.direct:
            return run_forked(work, timeout)
        data = pickle.dumps((pickle.dumps(work), timeout, dict(os.environ), os.getcwd(), list(sys.path)))
        with self._lock:
            for attempt in (1, 2):
                if not self.running:
                    self._start()
                try:
                    self._server.stdin.write(_HEADER.pack(len(data)) + data)
                    self._server.stdin.flush()
                    return _read_frame(self._server.stdout)
                except (EOFError, OSError) as exc:
                    # the server itself died (it never runs compiler work): start it again once
                    self.stop()
                    if attempt == 2:
                        return Outcome(result=pickle.dumps((False, RuntimeError(f"the compiler process is gone: {exc}"))))
                except BaseException:
                    # Ctrl-C (or anything else) while waiting: the request is abandoned
                    self.stop()
                    raise
        raise AssertionError("unreachable")


_PROCESS: CompilerProcess | None = None
_PROCESS_LOCK = threading.Lock()


def compiler_process() -> CompilerProcess:
    """This process's compiler process (one per process; a forked child gets its own)."""
    global _PROCESS
    with _PROCESS_LOCK:
        if _PROCESS is None:
            _PROCESS = CompilerProcess()
            atexit.register(_PROCESS.stop)
        return _PROCESS


@contextlib.contextmanager
def direct_mode() -> Iterator[None]:
    """For the command-line tools: within, requests fork the calling process (no server).

    A tool's process is short-lived and does nothing beside the compiler, so
    the fork it would copy is cheap and the server's start-up is not paid.
    """
    process = compiler_process()
    before, process.direct = process.direct, True
    try:
        yield
    finally:
        process.direct = before


def _forget_after_fork() -> None:
    # a child of the user's process must not talk to its parent's server
    global _PROCESS, _PROCESS_LOCK
    _PROCESS = None
    _PROCESS_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def warm_up() -> None:
    """Import what compiler work needs once, in the server, not in every request's child."""
    import importlib

    for name in ("dlvm_mlir.compiler", "dlvm_mlir.backend.cache", "dlvm_mlir.backend.gpu"):
        importlib.import_module(name)
    from dlvm_mlir.passes import registry

    registry._discover()  # every pass module (AD, optimizations, back end)


def main() -> int:
    # through the package, not this __main__ copy of the module: Outcome must
    # pickle as dlvm_mlir.compiler_process.Outcome
    from dlvm_mlir.compiler_process import serve as serve_requests

    warm_up()

    serve_requests(sys.stdin.buffer, sys.stdout.buffer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
