"""A forked worker process that runs programs, so that a crash kills only it.

The fuzzer's own process never touches MLIR (it only mutates text); it forks
a :class:`Worker` that imports nothing new and serves requests over a pipe:
``annotate`` (corpus pieces) and ``run`` (one program through the stages of
:mod:`dlvm_mlir.fuzz.oracle`). The worker reports each stage it enters, so
when it dies (a signal: an assertion, a segfault) or runs past the time
limit, the parent knows the stage; the assertion text comes from the
worker's stderr, which goes to a log file. A fresh worker is started after
every ``recycle`` programs and after each crash or timeout.
"""

from __future__ import annotations

import faulthandler
import gc
import multiprocessing
import os
import re
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .oracle import GUARDED_STAGES

__all__ = ["Worker"]

_MEMORY_LIMIT = 12 << 30
"""Address-space limit of a worker (bytes): a runaway program fails instead of exhausting the machine."""


def _serve(conn: Any, log_path: str, tmp_dir: str, handlers: dict[str, Callable[[Any], Any]]) -> None:
    """The worker's loop (in the child)."""
    # Objects inherited from the parent are never collected here (gc.freeze): when the
    # parent had used MLIR (a test process), destroying its contexts in the child
    # crashes or hangs. The fuzzer's own parent process never touches MLIR.
    gc.freeze()
    faulthandler.disable()
    try:
        fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        os.environ["LLVM_DISABLE_SYMBOLIZATION"] = "1"
        os.environ["TMPDIR"] = tmp_dir
        tempfile.tempdir = tmp_dir
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            import resource

            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            limit = _MEMORY_LIMIT if hard == resource.RLIM_INFINITY else min(_MEMORY_LIMIT, hard)
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        except (ImportError, ValueError, OSError):
            pass
        from .corpus import annotate
        from .oracle import run_program

        while True:
            try:
                kind, payload = conn.recv()
            except EOFError:
                break
            if kind == "stop":
                break
            try:
                if kind == "annotate":
                    conn.send(("stage", "annotate"))
                    result = annotate(payload)
                elif kind == "run":
                    text, options = payload
                    result = run_program(
                        text,
                        on_stage=lambda s: conn.send(("stage", s)),
                        on_text=lambda t: conn.send(("text", t)),
                        **options,
                    )
                elif kind in handlers:
                    result = handlers[kind](payload)
                else:
                    result = {"error": f"unknown request {kind!r}"}
            except Exception:  # noqa: BLE001 - the harness's own failure, reported as such
                # (it used to end the worker: "the process exited with status 0", an 'ice')
                detail = traceback.format_exc().rstrip()
                if kind != "run":
                    result = {"error": detail}
                else:
                    result = {"cls": "traceback", "stage": "harness", "text": payload[0], "calls": 0, "notes": [],
                              "message": f"the fuzzer's own code raised:\n{detail}"}
            sys.stdout.flush()
            sys.stderr.flush()
            conn.send(("done", result))
    finally:
        os._exit(0)


def _crash_message(log_tail: str, exitcode: int | None) -> str:
    """What killed the worker: the assertion / LLVM error text, and the signal."""
    lines = []
    for pattern in (r"Assertion `.*' failed\.", r"LLVM ERROR: .*", r"Fatal Python error: .*", r"terminate called .*"):
        match = re.search(pattern, log_tail)
        if match:
            lines.append(match.group(0))
            break
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        lines.append(f"the process died of {name}")
    else:
        lines.append(f"the process exited with status {exitcode}")
    tail = "\n".join(log_tail.strip().split("\n")[-30:])
    return "\n".join(lines) + ("\n--- stderr tail:\n" + tail if tail else "")


class Worker:
    """One forked worker; :meth:`request` restarts it when needed."""

    def __init__(self, directory: str | Path, *, recycle: int = 25,
                 handlers: dict[str, Callable[[Any], Any]] | None = None):
        """``handlers`` adds request kinds: name -> function of the payload, run in the worker."""
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.tmp = self.directory / "tmp"
        self.tmp.mkdir(exist_ok=True)
        self.log = self.directory / "worker.log"
        self.recycle = recycle
        self.handlers = dict(handlers or {})
        self.process: Any = None
        self.conn: Any = None
        self.served = 0
        self.starts = 0
        self.last_text: str | None = None

    def _start(self) -> None:
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        self.process = ctx.Process(target=_serve, args=(child, str(self.log), str(self.tmp), self.handlers),
                                   daemon=True)
        self.process.start()
        child.close()
        self.conn = parent
        self.served = 0
        self.starts += 1

    def stop(self) -> None:
        """End the worker (politely, then by force)."""
        if self.process is None:
            return
        try:
            self.conn.send(("stop", None))
        except (OSError, ValueError):
            pass
        self.process.join(2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()
        self.process = None
        self.conn = None

    def _kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.join()
            self.conn.close()
        self.process = None
        self.conn = None

    def request(self, kind: str, payload: Any, timeout: float) -> tuple[str, Any, str]:
        """Send one request; returns (status, result, stage): status "done", "crash" or "timeout".

        For "crash" the result is the crash message; for "timeout" it is None.
        ``self.last_text`` is the program text the worker last reported.
        """
        self.last_text = None
        if self.process is None or not self.process.is_alive() or self.served >= self.recycle:
            self.stop()
            self._start()
        self.served += 1
        offset = self.log.stat().st_size if self.log.exists() else 0
        stage = ""
        deadline = time.monotonic() + timeout
        try:
            self.conn.send((kind, payload))
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self.conn.poll(remaining):
                    self._kill()
                    return "timeout", None, stage
                tag, value = self.conn.recv()
                if tag == "stage":
                    stage = value
                    continue
                if tag == "text":
                    self.last_text = value
                    continue
                return "done", value, stage
        except (EOFError, OSError, ConnectionError):
            self.process.join(5)
            exitcode = self.process.exitcode
            self._kill()
            tail = ""
            try:
                with open(self.log, "rb") as f:
                    f.seek(offset)
                    tail = f.read()[-20000:].decode(errors="replace")
            except OSError:
                pass
            return "crash", _crash_message(tail, exitcode), stage

    def run(self, text: str, timeout: float, **options: Any) -> dict[str, Any]:
        """The outcome of one program (``crash`` and ``timeout`` outcomes included)."""
        status, result, stage = self.request("run", (text, options), timeout)
        if status == "done":
            return result
        text = self.last_text or text
        if status == "crash":
            stage = stage or "parse"
            # dlvm-opt and compile() run these stages under the crash guard: a user
            # gets an internal compiler error, not a dead process
            cls = "ice" if stage in GUARDED_STAGES else "crash"
            return {"cls": cls, "stage": stage, "message": result, "text": text, "calls": 0, "notes": []}
        return {
            "cls": "timeout",
            "stage": stage or "parse",
            "message": f"no result within {timeout:g} s (in stage '{stage}')",
            "text": text,
            "calls": 0,
            "notes": [],
        }
