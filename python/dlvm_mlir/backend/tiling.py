"""Pure-Python tile-size arithmetic for the CPU schedules.

Everything here works on static loop extents (Python ints) and knows nothing
about MLIR, so it is easy to test and to reason about.  Conventions:

* a tile size of ``0`` means "this loop is not tiled at this level";
* tile sizes chosen with :func:`best_divisor` divide the extent exactly;
  register-level tiles may not, and the schedule peels those loops.
"""

from __future__ import annotations

import math
from functools import lru_cache

__all__ = [
    "divisors",
    "best_divisor",
    "thread_chunk",
    "pick_thread_dim",
]


@lru_cache(maxsize=4096)
def divisors(n: int) -> tuple[int, ...]:
    """All positive divisors of ``n`` in increasing order."""
    if n <= 0:
        return (1,)
    small: list[int] = []
    large: list[int] = []
    for d in range(1, math.isqrt(n) + 1):
        if n % d == 0:
            small.append(d)
            if d != n // d:
                large.append(n // d)
    return tuple(small + large[::-1])


def best_divisor(n: int, target: int, multiple_of: int = 1) -> int:
    """Largest divisor of ``n`` that is ``<= target``.

    Divisors that are multiples of ``multiple_of`` are preferred; if there is
    none, any divisor ``<= target`` is taken (at worst 1).
    """
    target = max(1, min(n, target))
    fitting = [d for d in divisors(n) if d <= target]
    aligned = [d for d in fitting if d % multiple_of == 0]
    return (aligned or fitting)[-1]


def _padded(size: int, quantum: int) -> int:
    return -(-size // quantum) * quantum


def _makespan(extent: int, chunk: int, threads: int, quantum: int) -> int:
    """Work units of the busiest thread; a chunk costs whole register tiles."""
    tasks = extent // chunk
    return -(-tasks // threads) * _padded(chunk, quantum)


def thread_chunk(extent: int, threads: int, quantum: int = 1) -> int | None:
    """Chunk size splitting ``extent`` iterations into tasks for ``threads``.

    The chunk divides ``extent`` (so every task has the same static shape).
    Among the divisors, the one with the smallest makespan wins, counting a
    chunk as whole ``quantum``-sized register tiles; ties go to fewer, larger
    tasks.  Returns ``None`` when no split gives any speed-up.
    """
    if threads <= 1 or extent < 2:
        return None
    serial = _padded(extent, quantum)
    best: tuple[int, int] | None = None
    chosen = None
    for chunk in divisors(extent):
        tasks = extent // chunk
        if tasks < 2:
            continue
        key = (_makespan(extent, chunk, threads, quantum), tasks)
        if best is None or key < best:
            best, chosen = key, chunk
    if chosen is None or best is None or best[0] >= serial:
        return None
    return chosen


def pick_thread_dim(
    extents: dict[int, int], threads: int, quanta: dict[int, int] | None = None
) -> tuple[int, int] | None:
    """Choose the loop (by position) and chunk size to spread over threads.

    ``extents`` maps candidate loop positions (in preference order) to their
    extents.  The first candidate whose split is within 20% of a perfect
    balance is chosen; otherwise the best-balanced one.
    """
    quanta = quanta or {}
    best: tuple[float, int, int] | None = None
    for dim, extent in extents.items():
        quantum = quanta.get(dim, 1)
        chunk = thread_chunk(extent, threads, quantum)
        if chunk is None:
            continue
        ideal = _padded(extent, quantum) / threads
        efficiency = ideal / _makespan(extent, chunk, threads, quantum)
        if efficiency >= 0.8:
            return dim, chunk
        if best is None or efficiency > best[0]:
            best = (efficiency, dim, chunk)
    if best is None:
        return None
    return best[1], best[2]
