"""Timing in turns, shared by the benchmarks: several callables on one noisy machine.

The callables take turns, in rotating order, so that a change in machine load
hits all alike.  Each turn starts after a ``pause``, runs ``settle``
unrecorded calls, then records ``block`` calls run back to back (as the steps
of a training loop are):

- the pause lets the previous callable's worker threads stop spinning:
  OpenBLAS's spin for about 0.1 s after a call without giving the core up,
  XLA's and dlvm's for milliseconds (dlvm's yield the core while they spin).
  A spinning OpenBLAS thread on the second core made dlvm's caller run both
  halves of a 2-thread matmul itself;
- the settling calls wake this callable's threads and the VM's idle vCPU up
  again: on the 2-vCPU VMs measured (Nov 2026) an idle vCPU takes
  milliseconds to come back (5-13 ms for the first 2.5 ms matmul after a
  pause).  They run for at least ``settle_seconds`` too: two 1 ms calls
  were not enough.  dlvm's caller runs the tasks that its waking worker has
  not taken yet, so a 1 ms matmul (512^3) stays on one core until the worker
  is back, while OpenBLAS's caller waits for its threads once; dlvm / OpenBLAS
  measured 0.56-0.74x with 2 settling calls, 0.81-0.82x with 20 ms of them,
  1.02-1.03x with 50 ms (Nov 28).  Sporadic short calls after an idle spell
  do see that: the turns measure the steady state of back-to-back calls.

``block=1, settle=0, pause=0`` is plain round-robin, one call per turn: each
call then competes with the previous callable's spinning threads.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

__all__ = ["Sample", "Turns", "take_turns"]


@dataclass(frozen=True)
class Sample:
    """Seconds of one call: wall clock, and process CPU time (all threads)."""

    wall: float
    cpu: float


@dataclass(frozen=True)
class Turns:
    """How the callables take turns (see the module doc)."""

    repeats: int = 50
    block: int = 5
    settle: int = 2
    pause: float = 0.2
    #: settling calls (if any) go on until this much time has passed too
    settle_seconds: float = 0.05
    warmup: int = 3

    def describe(self) -> str:
        if self.block == 1 and not self.settle and not self.pause:
            return f"{self.repeats} calls each, round-robin"
        return (
            f"{self.repeats} calls each, in turns of {self.block} after {self.settle} unrecorded "
            f"(at least {self.settle_seconds * 1e3:g} ms of them) and a {self.pause:g} s pause"
        )


def take_turns(
    runners: dict[str, Callable[[], object]],
    turns: Turns = Turns(),
    context: Callable[[str], AbstractContextManager[object]] | None = None,
) -> dict[str, list[Sample]]:
    """Time each runner ``turns.repeats`` times, taking turns; ``context(name)``
    (e.g. a BLAS thread limit) is entered around each of ``name``'s turns."""
    enter = context or (lambda name: contextlib.nullcontext())
    names = list(runners)
    for name in names:
        with enter(name):
            for _ in range(turns.warmup):
                runners[name]()
    samples: dict[str, list[Sample]] = {name: [] for name in names}
    for turn in range(-(-turns.repeats // turns.block)):
        for name in names[turn % len(names) :] + names[: turn % len(names)]:
            fn = runners[name]
            with enter(name):
                time.sleep(turns.pause)
                start, settled = time.perf_counter(), 0
                while settled < turns.settle or (turns.settle and time.perf_counter() - start < turns.settle_seconds):
                    fn()
                    settled += 1
                for _ in range(turns.block):
                    wall, cpu = time.perf_counter(), time.process_time()
                    fn()
                    samples[name].append(Sample(time.perf_counter() - wall, time.process_time() - cpu))
    return samples
