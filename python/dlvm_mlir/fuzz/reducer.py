"""Line-deletion test-case reduction (delta debugging, ddmin over complements).

:func:`reduce_lines` first tries to delete whole blocks (a top-level op with
the lines up to the next one; an op whose line opens a region, up to the
line that closes it), then removes chunks of lines while ``still_fails``
holds, halving the chunk size when no chunk can go, down to single lines; it
stops at a time or test budget and returns the smallest failing text found. The
fuzzer's ``still_fails`` runs the candidate in the worker and compares the
outcome's signature (class, stage and the gist of the message) with the
original's.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["reduce_lines"]


def reduce_lines(
    text: str,
    still_fails: Callable[[str], bool],
    *,
    max_tests: int = 400,
    max_seconds: float = 120.0,
) -> tuple[str, int]:
    """The smallest variant of ``text`` (lines deleted) for which ``still_fails`` holds; and the tests run."""
    start = time.monotonic()
    tried: dict[str, bool] = {}
    tests = 0

    def check(lines: list[str]) -> bool:
        nonlocal tests
        candidate = "\n".join(lines)
        if candidate in tried:
            return tried[candidate]
        if tests >= max_tests or time.monotonic() - start > max_seconds:
            return False
        tests += 1
        tried[candidate] = result = bool(still_fails(candidate))
        return result

    lines = text.split("\n")
    # blank lines first: they never matter
    without_blank = [line for line in lines if line.strip()]
    if without_blank != lines and check(without_blank):
        lines = without_blank
    changed = True
    while changed:
        changed = False
        for begin, end in sorted(blocks(lines), key=lambda r: r[0] - r[1]):
            candidate = lines[:begin] + lines[end:]
            if candidate and check(candidate):
                lines = candidate
                changed = True
                break
    granularity = 2
    while len(lines) >= 2:
        chunk = max(1, -(-len(lines) // granularity))
        removed = False
        for begin in range(0, len(lines), chunk):
            candidate = lines[:begin] + lines[begin + chunk:]
            if candidate and check(candidate):
                lines = candidate
                granularity = max(granularity - 1, 2)
                removed = True
                break
        if tests >= max_tests or time.monotonic() - start > max_seconds:
            break
        if not removed:
            if chunk == 1:
                break
            granularity = min(len(lines), granularity * 2)
    result = "\n".join(lines)
    if not result.endswith("\n"):
        result += "\n"
    return result, tests


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def blocks(lines: list[str]) -> list[tuple[int, int]]:
    """Line ranges ``[begin, end)`` worth deleting as a whole (see the module docstring)."""
    ranges = []
    tops = [i for i, line in enumerate(lines) if line.strip() and _indent(line) == 0 and not line.startswith("}")]
    for k, begin in enumerate(tops):
        end = tops[k + 1] if k + 1 < len(tops) else len(lines)
        ranges.append((begin, end))
    for i, line in enumerate(lines):
        if not line.rstrip().endswith("{") or line.lstrip().startswith("}"):
            continue
        depth = _indent(line)
        for j in range(i + 1, len(lines)):
            other = lines[j]
            if other.strip() and _indent(other) <= depth:
                if other.strip().startswith("}"):
                    # "} else {" continues the op: extend to its own closing line
                    if other.rstrip().endswith("{"):
                        continue
                    ranges.append((i, j + 1))
                break
    return [r for r in ranges if r[1] - r[0] >= 2]
