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


def thread_chunk(extent: int, threads: int, quantum: int = 1) -> int | None:
    """Chunk size splitting ``extent`` iterations into tasks for ``threads``.

    The chunk divides ``extent`` (so every task has the same static shape).
    Among the divisors, the one with the smallest makespan
    ``ceil(tasks / threads) * chunk`` wins; ties go to chunks that are
    multiples of ``quantum`` and then to fewer, larger tasks.  Returns
    ``None`` when no split gives any speed-up.
    """
    if threads <= 1 or extent < 2:
        return None
    best: tuple[int, int, int] | None = None
    chosen = None
    for chunk in divisors(extent):
        tasks = extent // chunk
        if tasks < 2:
            continue
        makespan = -(-tasks // threads) * chunk
        key = (makespan, 0 if chunk % quantum == 0 else 1, tasks)
        if best is None or key < best:
            best, chosen = key, chunk
    if chosen is None or best is None or best[0] >= extent:
        return None
    return chosen


def pick_thread_dim(
    extents: dict[int, int], threads: int, quanta: dict[int, int] | None = None
) -> tuple[int, int] | None:
    """Choose the loop (by position) and chunk size to spread over threads.

    ``extents`` maps candidate loop positions (in preference order) to their
    extents.  The first candidate whose split is within 25% of a perfect
    ``extent / threads`` balance is chosen; otherwise the best-balanced one.
    """
    quanta = quanta or {}
    best: tuple[float, int, int] | None = None
    for dim, extent in extents.items():
        chunk = thread_chunk(extent, threads, quanta.get(dim, 1))
        if chunk is None:
            continue
        tasks = extent // chunk
        makespan = -(-tasks // threads) * chunk
        efficiency = (extent / threads) / makespan
        if efficiency >= 0.8:
            return dim, chunk
        if best is None or efficiency > best[0]:
            best = (efficiency, dim, chunk)
    if best is None:
        return None
    return best[1], best[2]
