"""Description of the host CPU, as far as the CPU schedules need it.

The ExecutionEngine compiles for the host CPU (LLVM detects its name and
features), so the schedules read the same facts from the OS: the SIMD width,
the number of vector registers and the cache sizes.  Tile sizes are derived
from these numbers in :mod:`dlvm_mlir.backend.schedule`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = ["CpuTarget", "host_target"]


@dataclass(frozen=True)
class CpuTarget:
    """SIMD and cache parameters used to choose tile sizes."""

    vector_bits: int = 256
    vector_registers: int = 16
    l1_bytes: int = 32 * 1024
    l2_bytes: int = 512 * 1024
    has_fma: bool = True

    def lanes(self, element_bytes: int) -> int:
        """Number of elements of ``element_bytes`` bytes in one vector register."""
        return max(1, self.vector_bits // (8 * max(1, element_bytes)))

    def key(self) -> str:
        """A short string identifying the target (part of cache keys)."""
        return (
            f"v{self.vector_bits}r{self.vector_registers}"
            f"l1_{self.l1_bytes}l2_{self.l2_bytes}fma{int(self.has_fma)}"
        )


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def _parse_size(text: str) -> int:
    text = text.strip().upper()
    scale = 1
    if text.endswith("K"):
        scale, text = 1024, text[:-1]
    elif text.endswith("M"):
        scale, text = 1024 * 1024, text[:-1]
    return int(text) * scale


def _cache_sizes() -> dict[int, int]:
    """Data/unified cache size per level for CPU 0, from sysfs."""
    sizes: dict[int, int] = {}
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(root.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            size = _parse_size((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind in ("Data", "Unified"):
            sizes.setdefault(level, size)
    return sizes


@lru_cache(maxsize=1)
def host_target() -> CpuTarget:
    """The :class:`CpuTarget` of the machine this process runs on.

    ``DLVM_MLIR_VECTOR_BITS`` (128, 256 or 512) overrides the detected SIMD
    width, e.g. to try AVX2-sized tiles on an AVX-512 machine.
    """
    flags = _cpu_flags()
    if "avx512f" in flags:
        bits, registers = 512, 32
    elif "avx2" in flags or "avx" in flags:
        bits, registers = 256, 16
    else:
        bits, registers = 128, 16
    override = os.environ.get("DLVM_MLIR_VECTOR_BITS")
    if override:
        bits = int(override)
        registers = 32 if bits == 512 else 16
    caches = _cache_sizes()
    return CpuTarget(
        vector_bits=bits,
        vector_registers=registers,
        l1_bytes=caches.get(1, 32 * 1024),
        l2_bytes=caches.get(2, 512 * 1024),
        has_fma="fma" in flags or not flags,
    )
