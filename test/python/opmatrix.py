"""The op matrix's machinery: cases, modules, references and comparisons.

A :class:`Case` is one function ``@name(args) -> result`` whose body applies
one ``dlvm`` op (sometimes with casts around it), plus a float64 numpy
reference written independently of the interpreter and of the lowering.
Cases that share a ``module`` key are compiled together (one function per
case, with its gradient and tangent declarations), so a whole (family,
dtype, shape) costs one compilation.  Modes:

``fwd``  compiled vs reference, interpreter vs reference, compiled vs interpreter
``vjp``  compiled seedable gradient vs the interpreter's (float64) gradient of the
         same synthesized function
``jvp``  the same for a tangent (forward-mode) declaration
``fd``   synthesized gradient and tangent vs central finite differences
         (:func:`dlvm_mlir.testing.check_gradients` / ``check_tangents``, float64)

Cases whose module may kill the process (a C++ assertion) are ``isolate``\\ d:
their module runs in a child process (``python opmatrix.py MODULE``), which
reports one line per (case, mode).
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import traceback
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import dlvm_mlir
from dlvm_mlir.compiler import lower
from dlvm_mlir.interpreter import Interpreter

NUMPY = {
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
}
FLOATS = ("f16", "bf16", "f32", "f64")
INTS = ("i1", "i8", "i16", "i32", "i64")

#: per-element relative tolerance of correctly rounded-ish elementwise results
RTOL = {"f16": 2e-3, "bf16": 1.6e-2, "f32": 5e-7, "f64": 1e-14}
#: unit roundoff, for error bounds of sums and products
EPS = {"f16": 2.0**-11, "bf16": 2.0**-8, "f32": 2.0**-24, "f64": 2.0**-53}
#: derivative comparisons (compiled vs interpreted float64): per element rtol, and atol relative to max |ref|
#: the atol is relative to the largest of max |ref| and max |seed or tangent|
GRAD_TOL = {"f16": (1e-2, 1e-2), "bf16": (5e-2, 5e-2), "f32": (2e-5, 1e-5), "f64": (1e-11, 1e-13)}


def ttype(shape: tuple[int, ...], dtype: str) -> str:
    dims = "x".join(str(d) for d in shape)
    return f"tensor<{dims}{'x' if dims else ''}{dtype}>"


def shape_id(shape: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in shape) if shape else "s"


def storage(dtype: str) -> str:
    """The element type a function argument of this case family carries (bf16 travels as f32)."""
    return "f32" if dtype == "bf16" else dtype


# --------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------

Sampler = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]


def uniform(lo: float, hi: float) -> Sampler:
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def normal(scale: float = 1.0) -> Sampler:
    return lambda rng, shape: rng.standard_normal(shape) * scale


def away_from_zero(lo: float = 0.1, hi: float = 3.0) -> Sampler:
    """|x| in [lo, hi), random signs (kinks of abs/relu/sign avoided)."""
    return lambda rng, shape: rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)


def away_from_int(lo: float, hi: float, gap: float = 0.05) -> Sampler:
    """Uniform in [lo, hi) but at least ``gap`` from integers and half-integers (floor/round/poles)."""

    def sample(rng, shape):
        x = rng.uniform(lo, hi, shape)
        frac = x - np.floor(x)
        frac = np.clip(frac, gap, 1 - gap)
        frac = np.where(np.abs(frac - 0.5) < gap, 0.5 + gap * np.sign(frac - 0.5 + 1e-12), frac)
        return np.floor(x) + frac

    return sample


def distinct(scale: float = 0.7) -> Sampler:
    """Well separated values (no ties: max/min/sort-like ops away from their kinks)."""

    def sample(rng, shape):
        n = math.prod(shape)
        values = rng.permutation(n).astype(np.float64) * scale - 0.5 * scale * n + rng.uniform(0.05, 0.3)
        return values.reshape(shape) / max(1.0, n * scale / 8)

    return sample


def ints(lo: int, hi: int, nonzero: bool = False) -> Sampler:
    def sample(rng, shape):
        x = rng.integers(lo, hi + 1, shape)
        if nonzero:
            x = np.where(x == 0, 1, x)
        return x

    return sample


def bools(p: float = 0.5) -> Sampler:
    return lambda rng, shape: rng.uniform(size=shape) < p


def tiled(values) -> Sampler:
    """The given values repeated (after a random permutation) to fill the shape."""

    def sample(rng, shape):
        v = np.asarray(values)
        n = math.prod(shape)
        out = np.resize(v, n) if n >= v.size else v[rng.permutation(v.size)[:n]]
        return out.reshape(shape)

    return sample


def special_floats(dtype: str) -> np.ndarray:
    info = np.finfo(NUMPY[storage(dtype)])
    return np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, -7.25, np.inf, -np.inf, np.nan, float(info.max), float(-info.max), float(info.tiny)])


def special_ints(dtype: str) -> np.ndarray:
    if dtype == "i1":
        return np.array([False, True])
    info = np.iinfo(NUMPY[dtype])
    return np.array([0, 1, -1, 2, -2, 7, -7, info.max, info.min, info.max - 1, info.min + 1])


@dataclass(frozen=True)
class Arg:
    shape: tuple[int, ...]
    dtype: str  # element type in the function signature
    sample: Sampler

    @property
    def type(self) -> str:
        return ttype(self.shape, self.dtype)

    def make(self, rng: np.random.Generator) -> np.ndarray:
        value = np.asarray(self.sample(rng, self.shape))
        np_type = NUMPY[self.dtype]
        if self.dtype in INTS and self.dtype != "i1":
            info = np.iinfo(np_type)
            value = np.clip(value, info.min, info.max)
        return np.asarray(value.astype(np_type)).reshape(self.shape)


# --------------------------------------------------------------------------
# cases
# --------------------------------------------------------------------------


@dataclass
class Case:
    """One op application, its reference and what to check."""

    op: str  # readable op id (first part of the test id)
    dtype: str  # second part of the id
    args: list[Arg]
    #: body lines with the arguments as %a0, %a1, ...; the value returned is %r
    body: str
    result_shape: tuple[int, ...]
    result_dtype: str
    #: float64 numpy reference: arrays (floats as float64) -> array, or (array, absolute error bound)
    ref: Callable[..., Any] | None
    shape: str = ""  # third part of the id (default: the argument shapes)
    module: str = ""  # cases with one key share a module (default: op family / dtype / shape)
    family: str = ""
    modes: tuple[str, ...] = ("fwd",)
    wrt: tuple[int, ...] | None = None  # differentiated arguments (default: all float arguments)
    rtol: float | None = None  # forward per-element tolerance (default RTOL[dtype])
    atol: float = 0.0
    grad_tol: tuple[float, float] | None = None
    fd_tol: float = 1e-6
    isolate: bool = False
    #: run after the other in-process cases (it has aborted the process before)
    last: bool = False
    #: a known issue this case exercises (reported in failures)
    known: str = ""
    #: compare compiled vs interpreter exactly (bit-identical results expected)
    exact_interp: bool = False
    #: skip the interpreter-vs-reference check (the interpreter is checked elsewhere)
    check_interp: bool = True
    #: an extra check of the compiled result (e.g. statistics of dlvm.random)
    check: Callable[[np.ndarray], None] | None = None
    #: zeros must also have the reference's sign
    signed_zeros: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.shape:
            self.shape = "_".join(shape_id(a.shape) for a in self.args) or "none"
        if not self.family:
            self.family = self.op.split(".")[0]
        if not self.module:
            self.module = f"{self.family}-{self.dtype}-{self.shape}"
        if self.wrt is None:
            self.wrt = tuple(i for i, a in enumerate(self.args) if a.dtype in FLOATS)
        self.seed = zlib.crc32(f"{self.op}-{self.dtype}-{self.shape}".encode())

    @property
    def id(self) -> str:
        return f"{self.op}-{self.dtype}-{self.shape}"

    @property
    def name(self) -> str:
        return "t_" + re.sub(r"[^A-Za-z0-9]", "_", f"{self.op}_{self.dtype}_{self.shape}")

    @property
    def result_type(self) -> str:
        return ttype(self.result_shape, self.result_dtype)

    def inputs(self) -> list[np.ndarray]:
        rng = np.random.default_rng(self.seed)
        return [a.make(rng) for a in self.args]

    def function(self) -> str:
        params = ", ".join(f"%a{i}: {a.type}" for i, a in enumerate(self.args))
        body = "\n".join("    " + line.strip() for line in self.body.strip().splitlines())
        return (
            f"func.func @{self.name}({params}) -> {self.result_type} {{\n{body}\n"
            f"    return %r : {self.result_type}\n}}\n"
        )

    def declarations(self) -> str:
        wrt = list(self.wrt or ())
        arg_types = [a.type for a in self.args]
        wrt_text = ", ".join(map(str, wrt))
        text = ""
        if "vjp" in self.modes and wrt:
            ins = ", ".join(arg_types + [self.result_type])
            outs = ", ".join(arg_types[i] for i in wrt)
            text += (
                f"func.func private @{self.name}__vjp({ins}) -> ({outs})\n"
                f"    attributes {{dlvm.gradient = #dlvm.gradient<of @{self.name} wrt [{wrt_text}] seedable>}}\n"
            )
        if "jvp" in self.modes and wrt:
            ins = ", ".join(arg_types + [arg_types[i] for i in wrt])
            text += (
                f"func.func private @{self.name}__jvp({ins}) -> {self.result_type}\n"
                f"    attributes {{dlvm.tangent = #dlvm.tangent<of @{self.name} wrt [{wrt_text}]>}}\n"
            )
        return text


def module_text(cases: list[Case]) -> str:
    return "\n".join(c.function() + c.declarations() for c in cases)


# --------------------------------------------------------------------------
# compiled and interpreted modules (one per module key, built on first use)
# --------------------------------------------------------------------------


@dataclass
class Built:
    text: str
    executable: Any = None
    error: str = ""
    interp: Any = None  # Interpreter over the differentiated module, float64
    interp_native: Any = None  # the same in the program's own element types
    interp_error: str = ""


_BUILT: dict[str, Built] = {}


def _build(key: str, cases: list[Case]) -> Built:
    if key in _BUILT:
        return _BUILT[key]
    built = Built(module_text(cases))
    try:
        built.executable = dlvm_mlir.compile(built.text)
    except Exception as e:  # noqa: BLE001 - reported by the tests that need it
        built.error = f"{type(e).__name__}: {e}"
    try:
        module = lower(built.text, until="ad")
        built.interp = Interpreter(module, dtype=np.float64)
        built.interp_native = Interpreter(module)
    except Exception as e:  # noqa: BLE001
        built.interp_error = f"{type(e).__name__}: {e}"
    _BUILT[key] = built
    return built


def built_for(case: Case, registry: dict[str, list[Case]] | None) -> Built:
    """The module holding ``case``; if that module fails to compile, or without a
    registry, the case's own module."""
    if registry is None:
        return _build(case.module + "/" + case.id, [case])
    built = _build(case.module, registry[case.module])
    if (built.executable is None or built.interp is None) and len(registry[case.module]) > 1:
        return _build(case.module + "/" + case.id, [case])
    return built


# --------------------------------------------------------------------------
# comparisons
# --------------------------------------------------------------------------


def _describe(a: np.ndarray, limit: int = 6) -> str:
    flat = np.asarray(a).reshape(-1)
    text = np.array2string(flat[:limit], precision=9, separator=", ")
    return text + (" ..." if flat.size > limit else "")


def _np_result_dtype(dtype: str) -> np.dtype:
    return np.dtype(NUMPY[storage(dtype)])


def compare(
    got: Any,
    want: Any,
    *,
    dtype: str,
    what: str,
    rtol: float = 0.0,
    atol: float = 0.0,
    bound: Any = None,
    check_dtype: bool = True,
    signed_zeros: bool = False,
) -> None:
    """``got`` (a result) against ``want`` (a reference) with a per-element error allowance."""
    got_a = np.asarray(got)
    want_a = np.asarray(want)
    if got_a.shape != want_a.shape:
        raise AssertionError(f"{what}: shape {got_a.shape}, expected {want_a.shape}")
    if check_dtype and got_a.dtype != _np_result_dtype(dtype):
        raise AssertionError(f"{what}: dtype {got_a.dtype}, expected {_np_result_dtype(dtype)}")
    if storage(dtype) not in FLOATS:
        if not np.array_equal(got_a, want_a.astype(got_a.dtype)):
            bad = np.argwhere(got_a != want_a.astype(got_a.dtype))
            idx = tuple(bad[0])
            raise AssertionError(
                f"{what}: {len(bad)} of {got_a.size} elements differ; first at {idx}: "
                f"got {got_a[idx]!r}, expected {want_a[idx]!r}"
            )
        return
    with np.errstate(over="ignore", invalid="ignore"):  # NaN payloads (bitcasts) and overflow
        g = got_a.astype(np.float64)
        # the reference rounded to the result type (overflow to infinity included)
        w = want_a.astype(np.float64).astype(_np_result_dtype(dtype)).astype(np.float64)
        allowed = rtol * np.abs(w) + atol
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    if bound is not None:
        allowed = allowed + np.asarray(bound, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(g - w)
        same_inf = np.isinf(w) & (g == w)
        ok = (nan_g & nan_w) | same_inf | (~nan_g & ~nan_w & (diff <= allowed))
        if signed_zeros:
            ok &= ~((w == 0) & (np.signbit(g) != np.signbit(w)))
    if np.all(ok):
        return
    bad = np.argwhere(~ok) if ok.ndim else np.zeros((1, 0), dtype=int)
    idx = tuple(bad[0])
    with np.errstate(invalid="ignore"):
        excess = np.where(ok, 0.0, np.nan_to_num(diff / np.maximum(allowed, 1e-300), nan=np.inf, posinf=np.inf))
    worst = np.unravel_index(np.argmax(excess), excess.shape) if excess.ndim else ()
    raise AssertionError(
        f"{what}: {len(bad)} of {g.size} elements off (rtol {rtol:.1e}, atol {atol:.1e}"
        f"{', with an error bound' if bound is not None else ''}); first at {idx}: got {g[idx]!r}, "
        f"expected {w[idx]!r}; worst at {worst}: got {g[worst]!r}, expected {w[worst]!r} "
        f"({excess[worst]:.3g}x the allowance)\n    got: {_describe(g)}\n    exp: {_describe(w)}"
    )


def _as_list(out: Any) -> list:
    return list(out) if isinstance(out, tuple) else [out]


def _ref_inputs(case: Case, inputs: list[np.ndarray]) -> list[np.ndarray]:
    return [x.astype(np.float64) if a.dtype in FLOATS else x for a, x in zip(case.args, inputs)]


def check_forward(case: Case, built: Built) -> None:
    inputs = case.inputs()
    got = built.executable[case.name](*inputs)
    rtol = case.rtol
    if rtol is None:
        rtol = RTOL.get(case.dtype, RTOL.get(case.result_dtype, 0.0))
    failures = []
    if case.ref is not None:
        ref = case.ref(*_ref_inputs(case, inputs))
        want, bound = ref if isinstance(ref, tuple) else (ref, None)
        try:
            compare(got, want, dtype=case.result_dtype, what="compiled vs reference", rtol=rtol, atol=case.atol,
                    bound=bound, signed_zeros=case.signed_zeros)
        except AssertionError as e:
            failures.append(str(e))
        if case.check_interp:
            try:
                interp = built.interp_native.run(case.name, *inputs)
                compare(interp, want, dtype=case.result_dtype, what="interpreter vs reference", rtol=rtol, atol=case.atol,
                        bound=bound, signed_zeros=case.signed_zeros)
            except Exception as e:  # noqa: BLE001
                failures.append(f"{e}" if isinstance(e, AssertionError) else f"interpreter: {type(e).__name__}: {e}")
    if case.exact_interp or case.ref is None:
        try:
            interp = built.interp_native.run(case.name, *inputs)
            compare(got, interp, dtype=case.result_dtype, what="compiled vs interpreter", rtol=0.0 if case.exact_interp else rtol)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{e}" if isinstance(e, AssertionError) else f"interpreter: {type(e).__name__}: {e}")
    if case.check is not None:
        try:
            case.check(np.asarray(got))
        except AssertionError as e:
            failures.append(f"compiled result: {e}")
    if failures:
        raise AssertionError("\n".join(failures))


def _grad_tol(case: Case) -> tuple[float, float]:
    return case.grad_tol or GRAD_TOL[case.dtype if case.dtype in FLOATS else "f64"]


def _compare_derivative(case: Case, got: list, want: list, types: list[str], what: str, direction: list) -> None:
    rtol, atol_rel = _grad_tol(case)
    failures = []
    along = max((float(np.max(np.abs(np.asarray(d, dtype=np.float64)), initial=0.0)) for d in direction), default=0.0)
    for i, (g, w, t) in enumerate(zip(got, want, types)):
        w = np.asarray(w, dtype=np.float64)
        scale = max(float(np.max(np.abs(w[np.isfinite(w)]), initial=0.0)), along)
        try:
            compare(g, w, dtype=t, what=f"{what} #{i}", rtol=rtol, atol=atol_rel * max(scale, 1e-30))
        except AssertionError as e:
            failures.append(str(e))
    if failures:
        raise AssertionError("\n".join(failures))


def _random_like(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return np.asarray(rng.standard_normal(shape).astype(NUMPY[storage(dtype)])).reshape(shape)


def check_vjp(case: Case, built: Built) -> None:
    inputs = case.inputs()
    rng = np.random.default_rng(case.seed + 1)
    seed = _random_like(rng, case.result_shape, case.result_dtype)
    got = _as_list(built.executable[case.name + "__vjp"](*inputs, seed))
    want = _as_list(built.interp.run(case.name + "__vjp", *inputs, seed))
    types = [case.args[i].dtype for i in case.wrt]
    _compare_derivative(case, got, want, types, "compiled vs interpreted gradient", [seed])


def check_jvp(case: Case, built: Built) -> None:
    inputs = case.inputs()
    rng = np.random.default_rng(case.seed + 2)
    tangents = [_random_like(rng, case.args[i].shape, case.args[i].dtype) for i in case.wrt]
    got = _as_list(built.executable[case.name + "__jvp"](*inputs, *tangents))
    want = _as_list(built.interp.run(case.name + "__jvp", *inputs, *tangents))
    _compare_derivative(case, got, want, [case.result_dtype], "compiled vs interpreted tangent", tangents)


def check_fd(case: Case) -> None:
    from dlvm_mlir.testing import check_gradients, check_tangents

    text = case.function()
    inputs = case.inputs()
    wrt = list(case.wrt)
    failures = []
    for check in (check_gradients, check_tangents):
        try:
            report = check(text, case.name, *inputs, wrt=wrt, rng=case.seed % 1000)
            report.assert_close(case.fd_tol)
        except AssertionError as e:
            failures.append(str(e))
    if failures:
        raise AssertionError("\n".join(failures))


def run_mode(case: Case, mode: str, registry: dict[str, list[Case]] | None) -> None:
    """Runs one (case, mode) in this process; raises AssertionError on a mismatch."""
    prefix = f"[known issue: {case.known}] " if case.known else ""
    if mode == "fd":
        try:
            check_fd(case)
        except Exception as e:  # noqa: BLE001 - an AD error is a failure of this case
            text = str(e) if isinstance(e, AssertionError) else f"{type(e).__name__}: {e}"
            raise AssertionError(prefix + text) from None
        return
    built = built_for(case, registry)
    if built.executable is None:
        raise AssertionError(f"{prefix}compile failed: {built.error}")
    if built.interp is None:
        raise AssertionError(f"{prefix}interpreter/AD failed: {built.interp_error}")
    try:
        {"fwd": check_forward, "vjp": check_vjp, "jvp": check_jvp}[mode](case, built)
    except AssertionError as e:
        raise AssertionError(prefix + str(e)) from None


# --------------------------------------------------------------------------
# isolated modules: run in a child process
# --------------------------------------------------------------------------

_CHILD: dict[str, dict[str, str]] = {}


def _run_child(key: str, skip: int, timeout: float, alone: bool) -> tuple[dict[str, str], str | None, str]:
    """Runs the cases of module ``key`` from the ``skip``-th (case, mode) on in a child process
    (``alone``: each case compiled by itself, else the whole module at once).

    Returns the results it printed, the (case, mode) that was running when it
    died (or None) and the tail of its stderr.
    """
    try:
        proc = subprocess.run(
            [sys.executable, os.path.abspath(__file__), key, str(skip), "alone" if alone else "module"],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=os.path.dirname(os.path.abspath(__file__)),
        )
        stdout, stderr, code = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        stderr, code = f"timed out after {timeout} s", "timeout"
    results: dict[str, str] = {}
    running = None
    for line in stdout.splitlines():
        if line.startswith("@@ "):
            entry = json.loads(line[3:])
            if "start" in entry:
                running = entry["start"]
            else:
                results[entry["id"]] = entry["result"]
                running = None
    if code == 0:
        return results, None, ""
    lines = (stderr or "").strip().splitlines()
    keep = [ln for ln in lines if "Assertion" in ln or "error" in ln.lower()][-3:] or lines[-4:]
    return results, running, f"exit status {code}: " + "\n".join(keep)


def run_isolated(case: Case, mode: str, registry: dict[str, list[Case]], timeout: float = 300) -> None:
    """Runs every (case, mode) of ``case``'s module in child processes (once), then reports this one.

    The first child compiles the whole module; if it dies, the cases it did
    not finish are compiled one by one: a child that dies then takes the
    running (case, mode) with it, and a new child goes on with the next one.
    """
    key = case.module
    if key not in _CHILD:
        total = sum(len(c.modes) for c in registry[key])
        results, _, why = _run_child(key, 0, timeout, alone=False)
        skip = total if not why else len(results)
        while skip < total:
            part, running, why = _run_child(key, skip, timeout, alone=True)
            results.update(part)
            if running is None:
                if not why:
                    break
                running = "?"
            results[running] = f"the process died: {why}"
            skip += len(part) + 1
        _CHILD[key] = results
    result = _CHILD[key].get(f"{case.id}-{mode}", "no result from the child process")
    if result != "ok":
        prefix = f"[known issue: {case.known}] " if case.known else ""
        raise AssertionError(result if result.startswith(prefix) else prefix + result)


def _child_main(key: str, skip: int, alone: bool) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from test_op_matrix import registry  # noqa: PLC0415

    reg = registry()
    items = [(case, mode) for case in reg[key] for mode in case.modes][skip:]
    for case, mode in items:
        test_id = f"{case.id}-{mode}"
        print("@@ " + json.dumps({"start": test_id}), flush=True)
        try:
            run_mode(case, mode, None if alone else reg)
            result = "ok"
        except AssertionError as e:
            result = str(e)
        except Exception:  # noqa: BLE001
            result = traceback.format_exc()
        print("@@ " + json.dumps({"id": test_id, "result": result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0,
                         len(sys.argv) > 3 and sys.argv[3] == "alone"))
