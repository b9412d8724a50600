"""Splitting an input file of the tools into parts (``--split-input-file``).

A part of a split file is padded with empty lines so that MLIR's line numbers
are those of the original file; :func:`dlvm_mlir.parsing.parse_module` then
names the locations after the file the user gave.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_SPLIT_MARKER", "SourceChunk", "split_source"]

DEFAULT_SPLIT_MARKER = "// -----"


@dataclass(frozen=True)
class SourceChunk:
    """A piece of an input file, padded so that its line numbers are the file's."""

    name: str
    text: str
    first_line: int = 1

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")


def split_source(name: str, text: str, marker: str | None) -> list[SourceChunk]:
    """The whole file as one chunk, or one chunk per ``marker``-separated part."""
    if marker is None:
        return [SourceChunk(name, text)]
    chunks: list[SourceChunk] = []
    first = 0
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.strip().startswith(marker):
            chunks.append(_chunk(name, lines, first, index))
            first = index + 1
    chunks.append(_chunk(name, lines, first, len(lines)))
    return chunks


def _chunk(name: str, lines: list[str], first: int, end: int) -> SourceChunk:
    padding = "\n" * first
    return SourceChunk(name, padding + "\n".join(lines[first:end]), first + 1)
