"""The counter-based random number generator of ``dlvm.random`` (the spec).

``dlvm.random [d0, ..., dk] from LOW upto HIGH seed SEED : T`` is a pure
function of its attributes. The compiler's lowering and this interpreter both
implement exactly the following (all integer arithmetic on unsigned 32-bit
values, i.e. modulo 2^32; ``>>`` is a logical shift)::

    lowbias32(x):                       # Chris Wellons' "lowbias32" hash
        x ^= x >> 16
        x *= 0x7feb352d
        x ^= x >> 15
        x *= 0x846ca68b
        x ^= x >> 16
        return x

    # once per op (compile-time constants): mix both halves of the i64 seed,
    # taken as its 64-bit two's complement bit pattern
    seed_lo = SEED & 0xffffffff
    seed_hi = (SEED >> 32) & 0xffffffff
    k1 = lowbias32(seed_lo ^ lowbias32(seed_hi ^ 0x9e3779b9))
    k2 = lowbias32(k1 ^ 0x85ebca6b)

    # per element, i = the element's row-major linear index in the result
    # (i = sum_k idx_k * prod_{j>k} d_j), truncated to its low 32 bits
    x    = lowbias32(lowbias32(i + k1) ^ k2)
    u    = f64(x >> 8) * 2^-24          # 24 random bits, u in [0, 1 - 2^-24], exact
    v    = LOW + (HIGH - LOW) * u        # in f64: a subtraction, a multiplication,
                                         # an addition (each rounded to f64)
    element = T(v)                       # one rounding, to nearest even, f64 -> T

``LOW`` and ``HIGH`` are the op's f64 attributes. The result is in
``[LOW, HIGH)`` up to the final rounding to ``T`` (which may round a value just
below HIGH up to T(HIGH)). Evaluating ``v`` with a fused multiply-add instead
of a multiplication then an addition may change the last f64 bit of ``v``
(and, very rarely, the last bit of ``T(v)``); the reference does not fuse.

Known values (checked by the interpreter's tests, for comparing a lowering):
``random_keys(0) == (0xae6f80f1, 0x90b942ff)``; the hashes ``x`` of elements
0..3 are ``0x1ec78dc8, 0xcbb2acc2, 0x1ade7f00, 0x9692f2e3`` for seed 0 and
``0xe9c5baca, 0xa74805bd, 0xb0f7c335, 0xf85abf49`` for seed 7 (pinned, with
more, in ``test/python/test_interpreter.py``).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["lowbias32", "random_bits", "random_keys", "random_uniform"]

SEED_HI_SALT = 0x9E3779B9
KEY2_SALT = 0x85EBCA6B
_M32 = 0xFFFFFFFF


def lowbias32(x):
    """The lowbias32 hash of uint32 values (a numpy uint32 array or a Python int)."""
    if isinstance(x, int):
        x &= _M32
        x ^= x >> 16
        x = (x * 0x7FEB352D) & _M32
        x ^= x >> 15
        x = (x * 0x846CA68B) & _M32
        x ^= x >> 16
        return x
    x = np.asarray(x, dtype=np.uint32)
    x = x ^ (x >> np.uint32(16))
    x = x * np.uint32(0x7FEB352D)
    x = x ^ (x >> np.uint32(15))
    x = x * np.uint32(0x846CA68B)
    x = x ^ (x >> np.uint32(16))
    return x


def random_keys(seed: int) -> tuple[int, int]:
    """The per-op 32-bit keys ``(k1, k2)`` derived from the i64 seed."""
    s = int(seed) & 0xFFFFFFFFFFFFFFFF
    k1 = lowbias32((s & _M32) ^ lowbias32(((s >> 32) & _M32) ^ SEED_HI_SALT))
    k2 = lowbias32(k1 ^ KEY2_SALT)
    return k1, k2


def random_bits(count: int, seed: int) -> np.ndarray:
    """The uint32 hashes ``x`` of elements ``0 .. count-1``."""
    k1, k2 = random_keys(seed)
    idx = (np.arange(count, dtype=np.uint64) & np.uint64(_M32)).astype(np.uint32)
    return lowbias32(lowbias32(idx + np.uint32(k1)) ^ np.uint32(k2))


def random_uniform(shape, low: float, high: float, seed: int = 0, dtype=np.float32) -> np.ndarray:
    """The value of ``dlvm.random shape from low upto high seed seed : dtype``."""
    shape = tuple(int(d) for d in shape)
    bits = random_bits(math.prod(shape), seed)
    u = (bits >> np.uint32(8)).astype(np.float64) * (2.0**-24)
    low, high = float(low), float(high)
    v = low + (high - low) * u
    return v.astype(dtype).reshape(shape)
