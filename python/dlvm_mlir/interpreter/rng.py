"""The counter-based random number generator of ``dlvm.random`` (the spec).

``dlvm.random [d0, ..., dk] from LOW upto HIGH seed SEED : T`` is a pure
function of its attributes: uniform values in ``[LOW, HIGH)``. The compiler's
lowering (``RandomLowering`` in dialect/lib/Conversion/DLVMToLinalg) and this
interpreter implement exactly the following, bit for bit. All integer
arithmetic is on unsigned 64-bit values, i.e. modulo 2^64; ``>>`` is a logical
shift::

    GOLDEN = 0x9e3779b97f4a7c15

    mix(z):                             # the SplitMix64 output function
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
        z = (z ^ (z >> 27)) * 0x94d049bb133111eb
        return z ^ (z >> 31)

    # once per op (a compile-time constant); SEED is the i64 attribute taken
    # as its 64-bit two's complement bit pattern
    key = mix(SEED + GOLDEN)

    # per element, i = the element's row-major linear index in the result
    # (i = sum_k idx_k * prod_{j>k} d_j): the (i+1)-th SplitMix64 output of the
    # stream whose state starts at key
    z = mix(key + (i + 1) * GOLDEN)

    # C = f64 if T is f64, else f32 (f16 and bf16 are computed in f32);
    # B = 53 if C is f64, else 24
    u  = C(z >> (64 - B)) * 2^-B        # top B bits, u in [0, 1 - 2^-B], exact
    v  = C(LOW) * (1 - u) + C(HIGH) * u # 1 - u is exact; the two products and
                                        # the sum are each rounded to C (no FMA)
    v  = T(v)                           # f32 -> f16 / bf16: round to nearest even

    # clamp to [LOW, HIGH) in T: lo = T(LOW), hi = T(HIGH) (each rounded once,
    # from the f64 attribute), below = the largest T value < hi, or lo if
    # that is less than lo
    v = maximumf(v, lo)                 # IEEE maximum: NaN propagates, -0 < +0
    element = below if v >= hi else v

``C(LOW)`` rounds the f64 attribute to nearest even (to +-inf if out of
range). ``low*(1-u) + high*u`` (rather than ``low + (high-low)*u``) cannot
overflow for ranges wider than the largest finite value. The f32 stream's ``u``
is the f64 stream's ``u`` truncated to 24 bits (same ``z``), so an op's f32
and f64 values differ by less than ``2^-24 * (HIGH - LOW)`` plus rounding.

Known values (pinned, with the compiled code's outputs, in
``test/python/test_interpreter.py``): ``random_key(0) == 0xe220a8397b1dcdaf``
(the first SplitMix64 output for state 0); the words ``z`` of elements 0..2
are ``0xa706dd2f4d197e6f, 0xb382a305f4414f5e, 0x631a9154fbabf717`` for seed 0
and ``0xb8b4c2977eabce45, 0xa65305fd338ec8fe, 0x8ca3cbb6ca63129b`` for seed 7.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["GOLDEN", "random_bits", "random_key", "random_uniform", "splitmix64_mix"]

GOLDEN = 0x9E3779B97F4A7C15
_M64 = 0xFFFFFFFFFFFFFFFF
_MUL1 = 0xBF58476D1CE4E5B9
_MUL2 = 0x94D049BB133111EB


def splitmix64_mix(z):
    """The SplitMix64 output function of uint64 values (a numpy uint64 array or a Python int)."""
    if isinstance(z, (int, np.integer)) and not isinstance(z, np.ndarray):
        z = int(z) & _M64
        z = ((z ^ (z >> 30)) * _MUL1) & _M64
        z = ((z ^ (z >> 27)) * _MUL2) & _M64
        return z ^ (z >> 31)
    z = np.asarray(z, dtype=np.uint64)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_MUL1)  # uint64 multiplication wraps
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_MUL2)
    return z ^ (z >> np.uint64(31))


def random_key(seed: int) -> int:
    """The per-op 64-bit key ``mix(seed + GOLDEN)`` of the i64 seed."""
    return splitmix64_mix((int(seed) + GOLDEN) & _M64)


def random_bits(count: int, seed: int) -> np.ndarray:
    """The uint64 words ``z`` of elements ``0 .. count-1``."""
    key = np.uint64(random_key(seed))
    counter = np.arange(1, count + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return splitmix64_mix(key + counter * np.uint64(GOLDEN))


def _element_type(dtype) -> str:
    if isinstance(dtype, str):
        if dtype not in ("f16", "bf16", "f32", "f64"):
            raise ValueError(f"unsupported element type {dtype!r}")
        return dtype
    names = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}
    try:
        return names[np.dtype(dtype)]
    except KeyError:
        raise ValueError(f"unsupported dtype {dtype!r}") from None


def _round_bf16(a) -> np.ndarray:
    """float32 -> nearest bf16 (ties to even), kept as float32 (NaN kept)."""
    a = np.asarray(a, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return np.where(np.isnan(a), a, rounded.view(np.float32))


def _to_bf16(x: float) -> np.float32:
    """The f64 value ``x`` rounded once (to nearest even) to bf16, as a float32."""
    t = np.float32(x)  # may round; redo with round-to-odd so the second rounding is exact
    if math.isfinite(x) and float(t) != x:
        if abs(float(t)) > abs(x):
            t = np.nextafter(t, np.float32(0))
        t = np.array(t).view(np.uint32) | np.uint32(1)
        t = t.view(np.float32)
    return np.float32(_round_bf16(t))


def _bounds(low: float, high: float, elt: str):
    """``(lo, hi, below)`` in the storage dtype of ``elt`` (bf16: float32 holding bf16)."""
    if elt == "bf16":
        lo, hi = _to_bf16(low), _to_bf16(high)
        # next bf16 down from hi (finite or infinite, not NaN): step the upper 16 bits
        bits = int(np.array(hi).view(np.uint32)) >> 16
        if hi == 0:
            below_bits = 0x8001  # -smallest subnormal
        elif bits & 0x8000:
            below_bits = bits + 1
        else:
            below_bits = bits - 1
        below = np.array(below_bits << 16, dtype=np.uint32).view(np.float32)[()]
        if math.isnan(hi) or math.isinf(hi) and hi < 0:
            below = hi
    else:
        t = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[elt]
        lo, hi = t(low), t(high)
        below = hi if np.isnan(hi) or np.isneginf(hi) else np.nextafter(hi, t(-np.inf))
    if below < lo:
        below = lo
    return lo, hi, below


def random_uniform(shape, low: float, high: float, seed: int = 0, dtype=np.float32) -> np.ndarray:
    """The value of ``dlvm.random shape from low upto high seed seed : T``.

    ``dtype`` names ``T``: numpy float16 / float32 / float64, or one of
    ``"f16"``, ``"bf16"``, ``"f32"``, ``"f64"``. bf16 values are returned as
    float32 (the interpreter's storage of bf16).
    """
    elt = _element_type(dtype)
    shape = tuple(int(d) for d in shape)
    low, high = float(low), float(high)
    z = random_bits(math.prod(shape), seed)
    with np.errstate(over="ignore", invalid="ignore"):
        if elt == "f64":
            c = np.float64
            u = (z >> np.uint64(11)).astype(np.float64) * c(2.0**-53)
        else:
            c = np.float32
            u = (z >> np.uint64(40)).astype(np.float32) * c(2.0**-24)
        v = c(low) * (c(1.0) - u) + c(high) * u
        if elt == "f16":
            v = v.astype(np.float16)
        elif elt == "bf16":
            v = _round_bf16(v)
        lo, hi, below = _bounds(low, high, elt)
        # arith.maximumf: NaN if either is NaN, and -0 < +0
        take_lo = (v < lo) | ((v == lo) & np.signbit(v) & ~np.signbit(lo)) | np.isnan(lo)
        v = np.where(take_lo, lo, v)
        v = np.where(v >= hi, below, v)
    storage = {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64}[elt]
    return np.asarray(v, dtype=storage).reshape(shape)
