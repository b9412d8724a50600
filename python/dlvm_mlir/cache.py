"""The compile cache: compiled programs (shared objects) by key, on disk and in process.

``dlvm_mlir.compile`` hashes what it was given (IR text, options, the
target machine and :func:`build_id`, a hash of the compiler itself) into a
key before it parses anything; a hit loads the shared object and skips the
compiler altogether (a warm start takes milliseconds).

Location: ``$DLVM_MLIR_CACHE_DIR``, else ``$XDG_CACHE_HOME/dlvm-mlir``, else
``~/.cache/dlvm-mlir``; ``DLVM_MLIR_DISK_CACHE=0`` turns it off. Size:
``$DLVM_MLIR_CACHE_SIZE`` (e.g. ``500MiB``, default 2 GiB); beyond it, the
least recently used objects are deleted. Several processes may compile at
once: an object is written under a temporary name and renamed into place,
and a process that has an object loaded keeps it even if another one deletes
the file.

The in-process cache keeps the last :data:`MEMORY_ENTRIES` executables.

    python -m dlvm_mlir.cache info     # where, how many objects, how big
    python -m dlvm_mlir.cache clear    # delete them
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Generic, TypeVar

__all__ = [
    "CacheStats",
    "DiskCache",
    "MemoryCache",
    "build_id",
    "cache_key",
    "cache_stats",
    "default_cache_dir",
    "disk_cache",
    "format_bytes",
    "parse_size",
]

DEFAULT_SIZE = 2 << 30
MEMORY_ENTRIES = 256
SUFFIX = ".so"

T = TypeVar("T")


@dataclass
class CacheStats:
    """Counters of this process's lookups."""

    memory_hits: int = 0
    disk_hits: int = 0
    compiles: int = 0
    last_compile_seconds: float = 0.0
    last_load_seconds: float = 0.0


_STATS = CacheStats()


def cache_stats() -> CacheStats:
    """Counters of the caches in this process."""
    return _STATS


def _env_off(name: str) -> bool:
    return os.environ.get(name, "1").lower() in ("0", "false", "off", "no")


def default_cache_dir() -> Path | None:
    """The on-disk cache directory, or ``None`` when disabled."""
    if _env_off("DLVM_MLIR_DISK_CACHE"):
        return None
    configured = os.environ.get("DLVM_MLIR_CACHE_DIR")
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "dlvm-mlir"


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes in ``"2GiB"``, ``"500M"``, ``"1048576"`` (powers of 1024)."""
    found = _SIZE.match(text)
    if not found:
        raise ValueError(f"not a size: {text!r} (expected e.g. 2GiB, 500MiB or a number of bytes)")
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[found.group(2).lower()]
    return int(float(found.group(1)) * scale)


@lru_cache(maxsize=1)
def build_id() -> str:
    """A hash of the compiler: the package's Python sources, and the size and
    modification time of its native libraries and of the MLIR/LLVM libraries
    of the wheels (a rebuild or another wheel changes them).

    Part of every cache key, so code made by another version of the
    compiler (an edited pass, a rebuilt extension, another wheel) is never
    reused. Derived, never bumped by hand; cheap enough for a warm start
    (stat, not a hash, of the large binaries).
    """
    from mlir import ir

    from . import _dlvm

    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.glob("**/*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    native = Path(_dlvm.__file__).resolve()
    wheel = Path(ir.__file__).resolve().parent
    for library in (native, native.parent / "libdlvm_runtime.so", wheel / "_mlir_libs" / "libMLIRPythonCAPI.so",
                    wheel.parent / "llvm" / "lib" / "libLLVM.so"):
        try:
            stat = library.stat()
        except OSError:
            continue
        digest.update(f"{library.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def cache_key(*parts: str) -> str:
    """SHA-256 of the compiler's :func:`build_id` and ``parts``."""
    digest = hashlib.sha256()
    for part in (build_id(), *parts):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


class DiskCache:
    """Shared objects by key in a directory, least recently used evicted past ``max_bytes``."""

    def __init__(self, directory: str | os.PathLike[str], max_bytes: int = DEFAULT_SIZE) -> None:
        self.directory = Path(directory)
        self.max_bytes = max_bytes

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}{SUFFIX}"

    def lookup(self, key: str) -> Path | None:
        """The object stored under ``key`` (marked as just used), or None."""
        path = self.path(key)
        try:
            os.utime(path)
        except OSError:
            return None
        return path

    def scratch(self, key: str) -> Path:
        """A fresh path to build ``key``'s object at, in the cache's file system (see :meth:`commit`)."""
        final = self.path(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=final.parent, prefix=f".{key[:16]}-", suffix=".tmp")
        os.close(fd)
        return Path(name)

    def commit(self, scratch: Path, key: str) -> Path:
        """Move a built object into place (atomically), then evict past the size bound."""
        final = self.path(key)
        os.replace(scratch, final)
        self.evict()
        return final

    def entries(self) -> list[tuple[float, int, Path]]:
        """(last use, bytes, path) of every stored object."""
        found = []
        for path in self.directory.glob(f"*/*{SUFFIX}"):
            try:
                stat = path.stat()
            except OSError:
                continue
            found.append((stat.st_mtime, stat.st_size, path))
        return found

    def evict(self) -> int:
        """Delete least recently used objects until the cache fits; how many were deleted."""
        entries = self.entries()
        total = sum(size for _, size, _ in entries)
        removed = 0
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            try:
                path.unlink()
            except OSError:
                continue
            total -= size
            removed += 1
        return removed

    def clear(self) -> int:
        """Delete every stored object (and stale scratch files); how many objects."""
        entries = self.entries()
        for _, _, path in entries:
            path.unlink(missing_ok=True)
        for stale in self.directory.glob("*/.*.tmp"):
            stale.unlink(missing_ok=True)
        return len(entries)

    def info(self) -> dict[str, Any]:
        entries = self.entries()
        return {
            "directory": str(self.directory),
            "objects": len(entries),
            "bytes": sum(size for _, size, _ in entries),
            "max_bytes": self.max_bytes,
        }


def disk_cache() -> DiskCache | None:
    """The process's disk cache as the environment configures it (None when off)."""
    directory = default_cache_dir()
    if directory is None:
        return None
    size = os.environ.get("DLVM_MLIR_CACHE_SIZE")
    return DiskCache(directory, parse_size(size) if size else DEFAULT_SIZE)


class MemoryCache(Generic[T]):
    """A bounded least-recently-used map (thread-safe)."""

    def __init__(self, capacity: int = MEMORY_ENTRIES) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> T | None:
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
            return item

    def put(self, key: str, item: T) -> None:
        with self._lock:
            self._items[key] = item
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


def format_bytes(count: int) -> str:
    """``count`` bytes for people: ``"512 B"``, ``"8.0 GiB"``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return str(count)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dlvm_mlir.cache", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("info", "clear"))
    args = parser.parse_args(argv)
    try:
        cache = disk_cache()
    except ValueError as exc:
        print(f"error: $DLVM_MLIR_CACHE_SIZE: {exc}", file=sys.stderr)
        return 1
    if cache is None:
        print("the disk cache is off (DLVM_MLIR_DISK_CACHE=0)")
        return 0
    if args.command == "clear":
        print(f"removed {cache.clear()} object(s) from {cache.directory}")
        return 0
    info = cache.info()
    print(f"directory: {info['directory']}")
    print(f"objects:   {info['objects']}")
    print(f"size:      {format_bytes(info['bytes'])} of at most {format_bytes(info['max_bytes'])}")
    print(f"compiler:  {build_id()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
