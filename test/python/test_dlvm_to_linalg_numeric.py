"""Numerical checks of dlvm-to-linalg: every dlvm op is lowered through
dlvm-to-linalg and a naive CPU pipeline, JIT-compiled with the
ExecutionEngine, and compared with a float64 numpy reference.

The runner is local to this test on purpose (scalar loops, no tiling): it
checks the conversion's semantics, not the speed of the CPU backend.
Two workarounds for the MLIR 22 wheels live in it:
- `memref.copy` between non-contiguous buffers lowers to a call of
  `memrefCopy` from libmlir_c_runner_utils.so, which must not be loaded into
  the Python process: such copies are rewritten to `linalg.copy` (loops).
- memref loads/stores of i1 assert in MemRefToLLVM, so no test function takes,
  returns or materializes an i1 buffer: masks are consumed by `select` and
  elementwise producers/consumers are fused first.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np
import pytest

import dlvm_mlir
from mlir import ir, passmanager
from mlir import runtime as rt
from mlir.dialects import linalg
from mlir.execution_engine import ExecutionEngine

TO_BUFFERS = (
    "builtin.module(dlvm-to-linalg,linalg-fuse-elementwise-ops,canonicalize,cse,"
    "eliminate-empty-tensors,empty-tensor-to-alloc-tensor,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "buffer-results-to-out-params{hoist-static-allocs modify-public-functions},"
    "canonicalize,cse)"
)
# math ops go to libm (rsqrt, which libm lacks, is expanded first): the
# convert-math-to-llvm forms of log1p/expm1 are log(1+x)/exp(x)-1, which lose
# the precision these ops exist for; erf/erfc have no LLVM lowering at all.
TO_LLVM = (
    "builtin.module(buffer-deallocation-pipeline,convert-bufferization-to-memref,"
    "convert-linalg-to-loops,convert-scf-to-cf,math-expand-ops{ops=rsqrt},"
    "convert-math-to-libm,expand-strided-metadata,lower-affine,convert-to-llvm,"
    "reconcile-unrealized-casts)"
)

DTYPES = {
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "i8": np.int8,
    "i32": np.int32,
    "i64": np.int64,
}


def _np_type(t: ir.RankedTensorType):
    return tuple(t.shape), np.dtype(DTYPES[str(t.element_type)])


def _rewrite_strided_copies(module: ir.Module) -> None:
    copies = []

    def visit(op):
        if op.name == "memref.copy":
            copies.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    with ir.Location.unknown():
        for op in copies:
            with ir.InsertionPoint(op):
                linalg.copy(op.operands[0], outs=[op.operands[1]])
            op.erase()


class Compiled:
    """A dlvm module lowered to LLVM and JIT-compiled."""

    def __init__(self, source: str):
        self.ctx = dlvm_mlir.make_context()
        with self.ctx:
            module = ir.Module.parse(source)
            self.signatures = {}
            for op in module.body.operations:
                if op.operation.name != "func.func":
                    continue
                ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
                name = ir.StringAttr(op.attributes["sym_name"]).value
                self.signatures[name] = (
                    [_np_type(ir.RankedTensorType(t)) for t in ftype.inputs],
                    [_np_type(ir.RankedTensorType(t)) for t in ftype.results],
                )
                op.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            passmanager.PassManager.parse(TO_BUFFERS).run(module.operation)
            _rewrite_strided_copies(module)
            passmanager.PassManager.parse(TO_LLVM).run(module.operation)
            self.engine = ExecutionEngine(module, opt_level=2)
            self.module = module

    def __call__(self, name: str, *args):
        ins, outs = self.signatures[name]
        arrays = []
        for (shape, dtype), a in zip(ins, args, strict=True):
            a = np.ascontiguousarray(np.asarray(a, dtype=dtype).reshape(shape))
            arrays.append(a)
        results = [np.zeros(shape, dtype) for shape, dtype in outs]
        pointers = [
            ctypes.pointer(ctypes.pointer(rt.get_ranked_memref_descriptor(a)))
            for a in arrays + results
        ]
        self.engine.invoke(name, *pointers)
        return results[0] if len(results) == 1 else results


# --------------------------------------------------------------------------
# Building test functions
# --------------------------------------------------------------------------

ELEMENT = {np.dtype(v): k for k, v in DTYPES.items()}


def tensor_type(shape, dtype) -> str:
    el = ELEMENT[np.dtype(dtype)]
    return f"tensor<{'x'.join(map(str, shape))}x{el}>" if len(shape) else f"tensor<{el}>"


class Case:
    """One test function @t_<name> (the prefix keeps clear of libm names):
    `body` is dlvm IR over %a0, %a1, ... that defines %r; {t0}, {t1}, ... are
    the argument types, {tr} the result type."""

    def __init__(self, name, args, body, expected, check=None):
        self.name = name
        self.args = [np.asarray(a) for a in args]
        self.expected = np.asarray(expected)
        self.body = body
        self.check = check or exact

    def source(self) -> str:
        types = {f"t{i}": tensor_type(a.shape, a.dtype) for i, a in enumerate(self.args)}
        types["tr"] = tensor_type(self.expected.shape, self.expected.dtype)
        params = ", ".join(f"%a{i}: {types[f't{i}']}" for i in range(len(self.args)))
        body = self.body.format(**types)
        return (
            f"func.func @t_{self.name}({params}) -> {types['tr']} {{\n{body}\n"
            f"  return %r : {types['tr']}\n}}\n"
        )


def exact(actual, expected):
    np.testing.assert_array_equal(actual, expected)


def close(rtol, atol=0.0):
    def check(actual, expected):
        np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True)

    return check


def max_error(actual, expected):
    """Max of |a - e| / max(1, |e|) over finite references (NaN/inf must match)."""
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    finite = np.isfinite(e)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
    np.testing.assert_array_equal(a[np.isinf(e)], e[np.isinf(e)])
    return float(np.max(np.abs(a[finite] - e[finite]) / np.maximum(1.0, np.abs(e[finite]))))


def within(tol):
    def check(actual, expected):
        err = max_error(actual, expected)
        assert err <= tol, f"max error {err:.3g} > {tol:.3g}"

    return check


class BackendCompiled:
    """The same module through dlvm-to-linalg and the project's CPU back end
    (dlvm_mlir.backend: tiling, vectorization, fast math approximations)."""

    def __init__(self, source: str):
        from dlvm_mlir.backend import CpuOptions, compile_cpu

        with dlvm_mlir.make_context():
            module = ir.Module.parse(source)
            passmanager.PassManager.parse("builtin.module(dlvm-to-linalg)").run(module.operation)
            text = str(module)
        self.exe = compile_cpu(text, options=CpuOptions(threads=1), use_cache=False)

    def __call__(self, name: str, *args):
        results = self.exe(name, *args)
        if isinstance(results, tuple):
            return [np.asarray(r) for r in results]
        return np.asarray(results)


RUNNERS = {"naive": Compiled, "cpu_backend": BackendCompiled}
_COMPILED: dict[tuple[str, str], object] = {}


def run_case(group: str, cases: list[Case], case: Case, runner: str = "naive") -> None:
    key = (group, runner)
    if key not in _COMPILED:
        _COMPILED[key] = RUNNERS[runner]("".join(c.source() for c in cases))
    actual = _COMPILED[key]("t_" + case.name, *case.args)
    assert actual.shape == case.expected.shape and actual.dtype == case.expected.dtype
    case.check(actual, case.expected)


def parametrize(cases):
    return pytest.mark.parametrize("case", cases, ids=[c.name for c in cases])


# --------------------------------------------------------------------------
# Reference special functions
# --------------------------------------------------------------------------

EULER = 0.57721566490153286061


def digamma_ref(x: float) -> float:
    """Reflection, recurrence to x >= 20, asymptotic series through B14."""
    if x <= 0 and x == math.floor(x):
        return math.nan
    if math.isinf(x):
        return math.inf if x > 0 else math.nan
    if x < 0.5:
        return digamma_ref(1.0 - x) - math.pi / math.tan(math.pi * (x - round(x)))
    r = 0.0
    while x < 20:
        r -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f * (1 / 132 - f * (691 / 32760 - f / 12))))))
    return r + math.log(x) - 0.5 / x - series


def lgamma_ref(x: float) -> float:
    if math.isinf(x) or (x <= 0 and x == math.floor(x)):
        return math.inf
    return math.lgamma(x)


vdigamma = np.vectorize(digamma_ref, otypes=[np.float64])
vlgamma = np.vectorize(lgamma_ref, otypes=[np.float64])
verf = np.vectorize(math.erf, otypes=[np.float64])
verfc = np.vectorize(math.erfc, otypes=[np.float64])


def round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


# --------------------------------------------------------------------------
# Elementwise unary ops (float)
# --------------------------------------------------------------------------

RNG = np.random.default_rng(1234)
GENERAL = np.concatenate([np.linspace(-3, 3, 25), [0.0, -0.0, 1e-3, -1e-3]])
POSITIVE = np.concatenate([np.linspace(0.01, 20, 25), [1e-6, 1.0, 4.0]])
UNIT = np.linspace(-1, 1, 21)
HALVES = np.array([-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999, -0.49999, 2.51, -2.49, 0.0, 7.0])
TINY = np.array([1e-12, -1e-12, 1e-8, -3e-8, 1e-4, 0.5, -0.5, 2.0, -0.9])
GAMMA_ARGS = np.concatenate([
    np.linspace(0.05, 12, 40), [0.5, 1.0, 2.0, 3.0, 1.4616321449683622, 1e-8, 30.0, 171.5, 1e5, 1e15],
    -np.linspace(0.05, 9.95, 23) - 0.013, [-0.5, -1.5, -2.5, -1e-8, 0.0, -1.0, -3.0, np.inf],
])

UNARY_FLOAT = {
    "neg": (np.negative, GENERAL),
    "exp": (np.exp, GENERAL),
    "log": (np.log, POSITIVE),
    "tanh": (np.tanh, GENERAL),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), np.concatenate([GENERAL, [-800.0, 800.0]])),
    "relu": (lambda x: np.maximum(x, 0.0), GENERAL),
    "sqrt": (np.sqrt, POSITIVE),
    "rsqrt": (lambda x: 1 / np.sqrt(x), POSITIVE),
    "square": (np.square, GENERAL),
    "sign": (np.sign, np.concatenate([GENERAL, [np.nan]])),
    "abs": (np.abs, GENERAL),
    "sin": (np.sin, GENERAL),
    "cos": (np.cos, GENERAL),
    "tan": (np.tan, np.linspace(-1.4, 1.4, 21)),
    "asin": (np.arcsin, UNIT),
    "acos": (np.arccos, UNIT),
    "atan": (np.arctan, GENERAL),
    "sinh": (np.sinh, GENERAL),
    "cosh": (np.cosh, GENERAL),
    "floor": (np.floor, HALVES),
    "ceil": (np.ceil, HALVES),
    "round": (round_half_away, HALVES),
    "rint": (np.rint, HALVES),
    "erf": (verf, GENERAL),
    "erfc": (verfc, np.concatenate([GENERAL, [5.0, 10.0, 26.0]])),
    "lgamma": (vlgamma, GAMMA_ARGS),
    "digamma": (vdigamma, GAMMA_ARGS),
    "log1p": (np.log1p, TINY),
    "expm1": (np.expm1, TINY),
}

# Accuracy bounds (max |a - e| / max(1, |e|)), see dlvm-to-linalg's docs.
SPECIAL_TOL = {
    ("lgamma", "f64"): 1e-13, ("digamma", "f64"): 1e-13,
    ("lgamma", "f32"): 1e-5, ("digamma", "f32"): 1e-5,
}


def unary_float_cases(dtype) -> list[Case]:
    el = ELEMENT[np.dtype(dtype)]
    cases = []
    for op, (ref, xs) in UNARY_FLOAT.items():
        x = xs.astype(dtype)
        with np.errstate(all="ignore"):
            expected = ref(x.astype(np.float64))
        if (op, el) in SPECIAL_TOL:
            check = within(SPECIAL_TOL[(op, el)])
        elif dtype == np.float64:
            check = close(2e-15 if op not in ("tan", "erfc", "expm1", "log1p") else 1e-14)
        else:
            check = close(2e-6, 1e-7)
        cases.append(Case(f"{op}_{el}", [x], f"  %r = dlvm.{op} %a0 : {{t0}}",
                          expected.astype(dtype), check))
    return cases


UNARY_F64 = unary_float_cases(np.float64)
UNARY_F32 = unary_float_cases(np.float32)


@parametrize(UNARY_F64)
def test_unary_f64(case):
    run_case("unary_f64", UNARY_F64, case)


@parametrize(UNARY_F32)
def test_unary_f32(case):
    run_case("unary_f32", UNARY_F32, case)


UNARY_F16 = [
    Case(f"{op}_f16", [x.astype(np.float16)], f"  %r = dlvm.{op} %a0 : {{t0}}",
         ref(x.astype(np.float16).astype(np.float64)).astype(np.float16), within(tol))
    for op, ref, x, tol in [
        ("lgamma", vlgamma, GAMMA_ARGS[GAMMA_ARGS < 60], 2e-3),
        ("digamma", vdigamma, np.linspace(0.1, 8, 20), 2e-3),
        ("exp", np.exp, GENERAL, 1e-3),
        ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), GENERAL, 1e-3),
    ]
]


@parametrize(UNARY_F16)
def test_unary_f16(case):
    run_case("unary_f16", UNARY_F16, case)


def test_special_values():
    """Known values of digamma and lgamma (f64)."""
    x = np.array([1.0, 0.5, 2.0, 1.4616321449683622, 3.0])
    f = _COMPILED.setdefault("unary_f64", Compiled("".join(c.source() for c in UNARY_F64)))
    psi = f("t_digamma_f64", np.concatenate([x, np.zeros(len(GAMMA_ARGS) - len(x))]))[: len(x)]
    np.testing.assert_allclose(psi, [-EULER, -EULER - 2 * math.log(2), 1 - EULER, 0.0, 1.5 - EULER],
                               rtol=1e-14, atol=2e-15)
    lg = f("t_lgamma_f64", np.concatenate([x, np.ones(len(GAMMA_ARGS) - len(x))]))[: len(x)]
    np.testing.assert_allclose(lg, [0.0, 0.5 * math.log(math.pi), 0.0, -0.12148629053584961, math.log(2)],
                               rtol=1e-14, atol=1e-15)


# --------------------------------------------------------------------------
# Integer unary ops
# --------------------------------------------------------------------------

INTS = np.array([-7, -1, 0, 1, 2, 5, 100, -2**31, 2**31 - 1, 46341], dtype=np.int32)
with np.errstate(all="ignore"):
    UNARY_INT = [
        Case(f"{op}_i32", [INTS], f"  %r = dlvm.{op} %a0 : {{t0}}", ref(INTS))
        for op, ref in [
            ("neg", np.negative), ("abs", np.abs), ("sign", np.sign),
            ("relu", lambda x: np.maximum(x, 0)), ("square", lambda x: x * x),
            ("not", np.invert),
        ]
    ]


@parametrize(UNARY_INT)
def test_unary_int(case):
    run_case("unary_int", UNARY_INT, case)


# --------------------------------------------------------------------------
# Binary ops with broadcasting
# --------------------------------------------------------------------------

X45 = RNG.uniform(-5, 5, (4, 5))
Y15 = np.array([[1.5, -2.0, 0.75, -0.3, 3.0]])
S = np.array(2.5)
POS45 = RNG.uniform(0.1, 4, (4, 5))
NAN45 = X45.copy()
NAN45[1, 2] = np.nan
NAN45[3, 0] = np.nan

BINARY_F64 = []
for op, ref in [
    ("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide),
    ("min", np.minimum), ("max", np.maximum), ("mod", np.mod),
    ("floor_div", lambda x, y: np.floor(x / y)), ("trunc_div", lambda x, y: np.trunc(x / y)),
]:
    BINARY_F64.append(Case(f"{op}_row", [X45, Y15], f"  %r = dlvm.{op} %a0, %a1 : {{t0}}, {{t1}}",
                           ref(X45, Y15), close(1e-15)))
    BINARY_F64.append(Case(f"{op}_scalar_lhs", [S, X45], f"  %r = dlvm.{op} %a0, %a1 : {{t0}}, {{t1}}",
                           ref(S, X45), close(1e-15)))
BINARY_F64 += [
    Case("pow", [POS45, Y15], "  %r = dlvm.pow %a0, %a1 : {t0}, {t1}", np.power(POS45, Y15), close(1e-14)),
    Case("pow_int_exponent", [X45, np.array(3.0)], "  %r = dlvm.pow %a0, %a1 : {t0}, {t1}", X45**3, close(1e-14)),
    Case("min_nan", [NAN45, X45.T[:1, :].T[:, :1] * 0 + 0.5], "  %r = dlvm.min %a0, %a1 : {t0}, {t1}",
         np.minimum(NAN45, 0.5)),
    Case("max_nan", [NAN45, S], "  %r = dlvm.max %a0, %a1 : {t0}, {t1}", np.maximum(NAN45, S)),
    Case("mod_signs", [np.array([5.5, -5.5, 5.5, -5.5, 6.0, -6.0]), np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0])],
         "  %r = dlvm.mod %a0, %a1 : {t0}, {t1}", np.array([1.5, 0.5, -0.5, -1.5, 0.0, 0.0])),
    Case("add_both_broadcast", [X45[:, :1], Y15], "  %r = dlvm.add %a0, %a1 : {t0}, {t1}", X45[:, :1] + Y15),
]


@parametrize(BINARY_F64)
def test_binary_f64(case):
    run_case("binary_f64", BINARY_F64, case)


IA = np.array([7, -7, 7, -7, 0, 5, -2**31, -2**31, 9, -9, 1], dtype=np.int32)
IB = np.array([2, 2, -2, -2, 3, 0, -1, 1, 0, 4, -1], dtype=np.int32)


def trunc_div_ref(a, b):
    with np.errstate(all="ignore"):
        q = np.abs(a.astype(np.int64)) // np.where(b == 0, 1, np.abs(b.astype(np.int64)))
        q = np.where((a < 0) != (b < 0), -q, q)
        return np.where(b == 0, -1, q).astype(np.int32)  # x / 0 = -1 (XLA)


with np.errstate(all="ignore"):
    BINARY_INT = [
        Case(f"{op}_i32", [IA, IB], f"  %r = dlvm.{op} %a0, %a1 : {{t0}}, {{t1}}", ref(IA, IB))
        for op, ref in [
            ("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
            ("div", trunc_div_ref), ("trunc_div", trunc_div_ref),
            ("floor_div", lambda a, b: np.where(b == 0, -1, np.floor_divide(a, np.where(b == 0, 1, b)))),
            ("mod", lambda a, b: np.where(b == 0, a, np.mod(a, np.where(b == 0, 1, b)))),
            ("min", np.minimum), ("max", np.maximum), ("and", np.bitwise_and), ("or", np.bitwise_or),
        ]
    ]
    BINARY_INT.append(Case("add_i32_scalar", [IA, np.array(3, np.int32)], "  %r = dlvm.add %a0, %a1 : {t0}, {t1}",
                           IA + np.int32(3)))


@parametrize(BINARY_INT)
def test_binary_int(case):
    run_case("binary_int", BINARY_INT, case)


# --------------------------------------------------------------------------
# cmp and select (masks never leave a fused generic: see the module docstring)
# --------------------------------------------------------------------------

CA = np.array([1.0, 2.0, 3.0, np.nan, 2.0, -0.0, np.inf, np.nan])
CB = np.array([2.0, 2.0, 1.0, 1.0, np.nan, 0.0, np.inf, np.nan])
SELECT_BODY = """  %m = dlvm.cmp {pred}, %a0, %a1 : {{t0}}, {{t1}}
  %one = dlvm.constant dense<1.0> : tensor<f64>
  %zero = dlvm.constant dense<0.0> : tensor<f64>
  %r = dlvm.select %m, %one, %zero : {mask}, tensor<f64>, tensor<f64>"""
CMP_REF = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
           "eq": np.equal, "ne": np.not_equal}
ICA = np.array([1, 2, 3, -5, 7, -2**31], dtype=np.int32)
ICB = np.array([2, 2, 1, 4, -7, 2**31 - 1], dtype=np.int32)

CMP = []
with np.errstate(all="ignore"):
    for pred, ref in CMP_REF.items():
        CMP.append(Case(f"cmp_{pred}_f64", [CA, CB], SELECT_BODY.format(pred=pred, mask="tensor<8xi1>"),
                        ref(CA, CB).astype(np.float64)))
        CMP.append(Case(f"cmp_{pred}_i32", [ICA, ICB], SELECT_BODY.format(pred=pred, mask="tensor<6xi1>"),
                        ref(ICA, ICB).astype(np.float64)))
CMP += [
    Case("cmp_broadcast", [X45, Y15], SELECT_BODY.format(pred="lt", mask="tensor<4x5xi1>"),
         (X45 < Y15).astype(np.float64)),
    Case("select_broadcast", [X45, Y15, S], """  %m = dlvm.cmp gt, %a0, %a1 : {t0}, {t1}
  %r = dlvm.select %m, %a0, %a2 : tensor<4x5xi1>, {t0}, {t2}""", np.where(X45 > Y15, X45, S)),
    Case("cmp_bool", [np.array([0, 0, 1, 1], np.int32), np.array([0, 1, 0, 1], np.int32)],
         """  %x = dlvm.cast %a0 to i1 : {t0}
  %y = dlvm.cast %a1 to i1 : {t1}
  %m = dlvm.cmp lt, %x, %y : tensor<4xi1>, tensor<4xi1>
  %one = dlvm.constant dense<1.0> : tensor<f64>
  %zero = dlvm.constant dense<0.0> : tensor<f64>
  %r = dlvm.select %m, %one, %zero : tensor<4xi1>, tensor<f64>, tensor<f64>""",
         np.array([0.0, 1.0, 0.0, 0.0])),
]


@parametrize(CMP)
def test_cmp_select(case):
    run_case("cmp", CMP, case)


# --------------------------------------------------------------------------
# cast, bitcast
# --------------------------------------------------------------------------

FC = np.array([1.7, -1.7, 0.0, 2.5, -2.5, 1e5, -3.99, np.nan])
FC_FINITE = FC[:-1]
I32C = np.array([0, 1, -1, 200, -200, 70000, 2**31 - 1, -2**31], dtype=np.int32)
with np.errstate(over="ignore"):
    FC_F16 = FC.astype(np.float16)
CAST = [
    Case("f64_to_i32", [FC_FINITE], "  %r = dlvm.cast %a0 to i32 : {t0}", np.trunc(FC_FINITE).astype(np.int32)),
    Case("i32_to_f64", [I32C], "  %r = dlvm.cast %a0 to f64 : {t0}", I32C.astype(np.float64)),
    Case("f64_to_f32", [FC], "  %r = dlvm.cast %a0 to f32 : {t0}", FC.astype(np.float32)),
    Case("f32_to_f64", [FC.astype(np.float32)], "  %r = dlvm.cast %a0 to f64 : {t0}",
         FC.astype(np.float32).astype(np.float64)),
    Case("f32_to_f16", [FC.astype(np.float32)], "  %r = dlvm.cast %a0 to f16 : {t0}", FC_F16),
    Case("i32_to_i8", [I32C], "  %r = dlvm.cast %a0 to i8 : {t0}", I32C.astype(np.int8)),
    Case("i8_to_i64", [I32C.astype(np.int8)], "  %r = dlvm.cast %a0 to i64 : {t0}",
         I32C.astype(np.int8).astype(np.int64)),
    Case("f64_to_bool_to_f64", [FC], """  %b = dlvm.cast %a0 to i1 : {t0}
  %r = dlvm.cast %b to f64 : tensor<8xi1>""", (FC != 0).astype(np.float64)),
    Case("i32_to_bool_to_i32", [I32C], """  %b = dlvm.cast %a0 to i1 : {t0}
  %r = dlvm.cast %b to i32 : tensor<8xi1>""", (I32C != 0).astype(np.int32)),
    Case("bitcast_f32_i32", [FC.astype(np.float32)], "  %r = dlvm.bitcast %a0 to i32 : {t0}",
         FC.astype(np.float32).view(np.int32)),
    Case("bitcast_i64_f64", [np.array([0, 4607182418800017408, -4616189618054758400], np.int64)],
         "  %r = dlvm.bitcast %a0 to f64 : {t0}", np.array([0.0, 1.0, -1.0])),
]


@parametrize(CAST)
def test_cast(case):
    run_case("cast", CAST, case)


# --------------------------------------------------------------------------
# dot
# --------------------------------------------------------------------------

A34, B45, V4 = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5)), RNG.standard_normal(4)
BA, BB = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 5))
BA4, BB4 = RNG.standard_normal((2, 2, 3, 4)), RNG.standard_normal((2, 2, 4, 5))
IM1 = RNG.integers(-5, 5, (3, 4)).astype(np.int32)
IM2 = RNG.integers(-5, 5, (4, 2)).astype(np.int32)
DOT_BODY = "  %r = dlvm.dot %a0, %a1 : {t0}, {t1}"
DOT = [
    Case("matmul", [A34, B45], DOT_BODY, A34 @ B45, close(1e-13, 1e-14)),
    Case("matvec", [A34, V4], DOT_BODY, A34 @ V4, close(1e-13, 1e-14)),
    Case("vecmat", [V4, B45], DOT_BODY, V4 @ B45, close(1e-13, 1e-14)),
    Case("inner", [V4, V4], DOT_BODY, np.array(V4 @ V4), close(1e-13, 1e-14)),
    Case("batch_matmul", [BA, BB], DOT_BODY, BA @ BB, close(1e-13, 1e-14)),
    Case("batch2_matmul", [BA4, BB4], DOT_BODY, BA4 @ BB4, close(1e-13, 1e-14)),
    Case("matmul_i32", [IM1, IM2], DOT_BODY, IM1 @ IM2),
    Case("matmul_f32", [A34.astype(np.float32), B45.astype(np.float32)], DOT_BODY,
         (A34.astype(np.float32).astype(np.float64) @ B45.astype(np.float32)).astype(np.float32), close(1e-5, 1e-6)),
]


# Transposed matrix operands, read in place by the lowering (transposed
# indexing maps; transpose(A) . v -> v . A, v . transpose(A) -> A . v).
DOT_T_BODY = {
    "a": "  %t = dlvm.transpose %a0 : {t0}\n  %r = dlvm.dot %t, %a1 : {ta}, {t1}",
    "b": "  %t = dlvm.transpose %a1 : {t1}\n  %r = dlvm.dot %a0, %t : {t0}, {tb}",
    "ab": "  %t = dlvm.transpose %a0 : {t0}\n  %u = dlvm.transpose %a1 : {t1}\n  %r = dlvm.dot %t, %u : {ta}, {tb}",
}


def transposed_dot_case(name, a, b, which, check=close(1e-13, 1e-14), perm=None):
    """dot(op(a), op(b)) with op = transpose of the last two dims where ``which`` says."""
    a, b = np.asarray(a), np.asarray(b)

    def t(x):
        return np.swapaxes(x, -1, -2) if x.ndim >= 2 else x

    at = t(a) if "a" in which else a
    bt = t(b) if "b" in which else b
    wide = np.result_type(a.dtype, np.float64) if a.dtype.kind == "f" else np.int64
    expected = np.matmul(at.astype(wide), bt.astype(wide)).astype(a.dtype)
    body = DOT_T_BODY[which].replace("{ta}", tensor_type(at.shape, a.dtype)).replace(
        "{tb}", tensor_type(bt.shape, b.dtype))
    if perm is not None:  # an explicit permutation for batched operands
        for arg in ("%a0", "%a1"):
            body = body.replace(f"dlvm.transpose {arg} :", f"dlvm.transpose {arg} perm {perm} :")
    return Case(name, [a, b], body, expected, check)


def small_ints(shape, dtype, low=-4, high=4):
    return RNG.integers(low, high, shape).astype(dtype)


F32C = close(1e-5, 1e-6)
DOT_T = [
    transposed_dot_case("mm_bt_f64", A34, RNG.standard_normal((5, 4)), "b"),
    transposed_dot_case("mm_at_f64", RNG.standard_normal((4, 3)), B45, "a"),
    transposed_dot_case("mm_abt_f64", RNG.standard_normal((4, 3)), RNG.standard_normal((5, 4)), "ab"),
    transposed_dot_case("mm_bt_f32", A34.astype(np.float32), RNG.standard_normal((5, 4)).astype(np.float32), "b", F32C),
    transposed_dot_case("mm_at_f32", RNG.standard_normal((4, 3)).astype(np.float32), B45.astype(np.float32), "a", F32C),
    # f16: small integers, so every product and sum is exact
    transposed_dot_case("mm_at_f16", small_ints((4, 3), np.float16), small_ints((4, 5), np.float16), "a"),
    transposed_dot_case("mm_bt_f16", small_ints((3, 4), np.float16), small_ints((5, 4), np.float16), "b"),
    transposed_dot_case("mm_abt_i8", small_ints((4, 3), np.int8), small_ints((5, 4), np.int8), "ab"),
    transposed_dot_case("mm_bt_i32", IM1, small_ints((2, 4), np.int32, -50, 50), "b"),
    transposed_dot_case("mm_at_i64", small_ints((4, 3), np.int64, -1000, 1000), small_ints((4, 5), np.int64), "a"),
    # size-1 dimensions: m = 1, n = 1, k = 1
    transposed_dot_case("mm_at_m1", RNG.standard_normal((4, 1)), B45, "a"),
    transposed_dot_case("mm_bt_n1", A34, RNG.standard_normal((1, 4)), "b"),
    transposed_dot_case("mm_abt_k1", RNG.standard_normal((1, 3)), RNG.standard_normal((5, 1)), "ab"),
    transposed_dot_case("mv_at", RNG.standard_normal((4, 3)), V4, "a"),
    transposed_dot_case("vm_bt", V4, RNG.standard_normal((5, 4)), "b"),
    transposed_dot_case("bmm_abt", RNG.standard_normal((2, 4, 3)), RNG.standard_normal((2, 5, 4)), "ab",
                        perm="[0, 2, 1]"),
    transposed_dot_case("bmm_bt_f32", BA.astype(np.float32), RNG.standard_normal((2, 5, 4)).astype(np.float32), "b",
                        F32C, perm="[0, 2, 1]"),
    transposed_dot_case("bmm2_at", RNG.standard_normal((2, 2, 4, 3)), BB4, "a", perm="[0, 1, 3, 2]"),
]


@parametrize(DOT)
def test_dot(case):
    run_case("dot", DOT, case)


@parametrize(DOT_T)
def test_dot_transposed(case):
    run_case("dot_t", DOT_T, case)


def test_dot_transposes_are_read_in_place():
    """No transpose of a dot operand survives the lowering (the cases above check the values)."""
    with dlvm_mlir.make_context():
        module = ir.Module.parse("".join(c.source() for c in DOT_T))
        passmanager.PassManager.parse("builtin.module(dlvm-to-linalg)").run(module.operation)
    assert "linalg.transpose" not in str(module)


# --------------------------------------------------------------------------
# Shape ops and literals
# --------------------------------------------------------------------------

T345 = np.arange(60.0).reshape(3, 4, 5)
SHAPE = [
    Case("transpose_default", [A34], "  %r = dlvm.transpose %a0 : {t0}", A34.T),
    Case("transpose_perm", [T345], "  %r = dlvm.transpose %a0 perm [1, 2, 0] : {t0}", T345.transpose(1, 2, 0)),
    Case("reverse", [T345], "  %r = dlvm.reverse %a0 dims [0, 2] : {t0}", T345[::-1, :, ::-1]),
    Case("concatenate", [A34, A34[:, :2], A34[:, :1]],
         "  %r = dlvm.concatenate %a0, %a1, %a2 axis 1 : {t0}, {t1}, {t2}",
         np.concatenate([A34, A34[:, :2], A34[:, :1]], axis=1)),
    Case("concatenate_axis0", [A34, A34[:1]], "  %r = dlvm.concatenate %a0, %a1 axis 0 : {t0}, {t1}",
         np.concatenate([A34, A34[:1]], axis=0)),
    Case("slice", [T345], "  %r = dlvm.slice %a0 offsets [1, 0, 1] sizes [2, 2, 2] strides [1, 3, 2] : {t0}",
         T345[1:3, 0:4:3, 1:5:2]),
    Case("reshape_merge", [T345], "  %r = dlvm.reshape %a0 to [12, 5] : {t0}", T345.reshape(12, 5)),
    Case("reshape_split", [T345], "  %r = dlvm.reshape %a0 to [3, 2, 2, 5] : {t0}", T345.reshape(3, 2, 2, 5)),
    Case("reshape_general", [T345], "  %r = dlvm.reshape %a0 to [6, 10] : {t0}", T345.reshape(6, 10)),
    Case("reshape_perm_shape", [A34], "  %r = dlvm.reshape %a0 to [4, 3] : {t0}", A34.reshape(4, 3)),
    Case("reshape_to_scalar", [np.array([[3.5]])], "  %r = dlvm.reshape %a0 to [] : {t0}", np.array(3.5)),
    Case("reshape_from_scalar", [np.array(3.5)], "  %r = dlvm.reshape %a0 to [1, 1, 1] : {t0}",
         np.full((1, 1, 1), 3.5)),
    Case("pad_shape_front", [A34], "  %r = dlvm.pad_shape %a0 at 0 : {t0}", A34[None]),
    Case("pad_shape_middle", [A34], "  %r = dlvm.pad_shape %a0 at 1 : {t0}", A34[:, None]),
    Case("pad_shape_back", [A34], "  %r = dlvm.pad_shape %a0 at 2 : {t0}", A34[:, :, None]),
    Case("pad_shape_scalar", [S], "  %r = dlvm.pad_shape %a0 at 0 : {t0}", S[None]),
    Case("squeeze_shape", [A34[:, None]], "  %r = dlvm.squeeze_shape %a0 at 1 : {t0}", A34),
    Case("squeeze_to_scalar", [np.array([4.0])], "  %r = dlvm.squeeze_shape %a0 at 0 : {t0}", np.array(4.0)),
    Case("broadcast_row", [Y15], "  %r = dlvm.broadcast_to %a0 to [3, 5] : {t0}", np.broadcast_to(Y15, (3, 5))),
    Case("broadcast_scalar", [S], "  %r = dlvm.broadcast_to %a0 to [2, 3] : {t0}", np.full((2, 3), 2.5)),
    Case("broadcast_inner", [np.arange(3.0).reshape(3, 1, 1)], "  %r = dlvm.broadcast_to %a0 to [3, 2, 4] : {t0}",
         np.broadcast_to(np.arange(3.0).reshape(3, 1, 1), (3, 2, 4))),
    Case("broadcast_all_ones", [np.ones((1, 1)) * 7], "  %r = dlvm.broadcast_to %a0 to [2, 3] : {t0}",
         np.full((2, 3), 7.0)),
    Case("constant_dense", [S], """  %c = dlvm.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf64>
  %r = dlvm.add %c, %a0 : tensor<2x2xf64>, {t0}""", np.array([[3.5, 4.5], [5.5, 6.5]])),
    Case("constant_splat", [S], """  %c = dlvm.constant dense<-1.25> : tensor<3x2xf64>
  %r = dlvm.mul %c, %a0 : tensor<3x2xf64>, {t0}""", np.full((3, 2), -3.125)),
    Case("constant_i32", [np.array(1, np.int32)], """  %c = dlvm.constant dense<[5, -6]> : tensor<2xi32>
  %r = dlvm.add %c, %a0 : tensor<2xi32>, {t0}""", np.array([6, -5], np.int32)),
]


@parametrize(SHAPE)
def test_shape(case):
    run_case("shape", SHAPE, case)


# --------------------------------------------------------------------------
# Reductions, scans, windows, softmax
# --------------------------------------------------------------------------

R345 = RNG.uniform(-2, 2, (3, 4, 5))
RI = RNG.integers(-100, 100, (3, 4)).astype(np.int32)
INIT = np.array(1.5)
REDUCE_NP = {"add": np.sum, "mul": np.prod, "max": np.max, "min": np.min, "mean": np.mean}
REDUCE = []
for kind, ref in REDUCE_NP.items():
    for dims in ([1], [0, 2], [0, 1, 2]):
        d = ", ".join(map(str, dims))
        REDUCE.append(Case(f"reduce_{kind}_{'_'.join(map(str, dims))}", [R345],
                           f"  %r = dlvm.reduce {kind} %a0 dims [{d}] : {{t0}}",
                           np.asarray(ref(R345, axis=tuple(dims))), close(1e-14)))
    combine = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum, "mean": np.add}[kind]
    REDUCE.append(Case(f"reduce_{kind}_init", [R345, INIT],
                       f"  %r = dlvm.reduce {kind} %a0 init %a1 dims [2, 0] : {{t0}}, {{t1}}",
                       combine(ref(R345, axis=(0, 2)), INIT), close(1e-14)))
    REDUCE.append(Case(f"reduce_{kind}_nodims_init", [R345, INIT],
                       f"  %r = dlvm.reduce {kind} %a0 init %a1 dims [] : {{t0}}, {{t1}}",
                       combine(R345, INIT), close(1e-14)))
for kind, ref in [("and", np.bitwise_and.reduce), ("or", np.bitwise_or.reduce),
                  ("max", np.max), ("min", np.min), ("add", np.sum)]:
    REDUCE.append(Case(f"reduce_{kind}_i32", [RI], f"  %r = dlvm.reduce {kind} %a0 dims [1] : {{t0}}",
                       np.asarray(ref(RI, axis=1)).astype(np.int32)))
REDUCE.append(Case("reduce_max_i32_init", [RI, np.array(90, np.int32)],
                   "  %r = dlvm.reduce max %a0 init %a1 dims [0] : {t0}, {t1}", np.maximum(RI.max(axis=0), 90)))

SCAN_NP = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}
for kind, ufunc in SCAN_NP.items():
    for dim in range(3):
        REDUCE.append(Case(f"scan_{kind}_{dim}", [R345], f"  %r = dlvm.scan {kind} %a0 dim {dim} : {{t0}}",
                           ufunc.accumulate(R345, axis=dim), close(1e-14)))
for kind, ufunc in [("and", np.bitwise_and), ("or", np.bitwise_or), ("add", np.add)]:
    REDUCE.append(Case(f"scan_{kind}_i32", [RI], f"  %r = dlvm.scan {kind} %a0 dim 1 : {{t0}}",
                       ufunc.accumulate(RI, axis=1).astype(np.int32)))


def softmax_ref(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax_ref(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


BIG = R345 * 500.0  # exp would overflow without the max subtraction
for axis in range(3):
    REDUCE.append(Case(f"softmax_{axis}", [BIG], f"  %r = dlvm.softmax %a0 axis {axis} : {{t0}}",
                       softmax_ref(BIG, axis), close(1e-13, 1e-300)))
    REDUCE.append(Case(f"log_softmax_{axis}", [BIG], f"  %r = dlvm.log_softmax %a0 axis {axis} : {{t0}}",
                       log_softmax_ref(BIG, axis), close(1e-13)))
REDUCE.append(Case("softmax_f32", [BIG.astype(np.float32)], "  %r = dlvm.softmax %a0 axis 2 : {t0}",
                   softmax_ref(BIG.astype(np.float32).astype(np.float64), 2).astype(np.float32), close(1e-5, 1e-30)))


def reduce_window_ref(x, kind, window, strides, padding):
    ident = {"add": 0.0, "mean": 0.0, "mul": 1.0, "max": -np.inf, "min": np.inf}[kind]
    n, w, s = np.array(x.shape), np.array(window), np.array(strides)
    if padding == "none":
        out = (n - w) // s + 1
        low = np.zeros_like(n)
    elif padding == "half":
        out = (n + s - 1) // s
        low = np.maximum((out - 1) * s + w - n, 0) // 2
    else:
        out = (n + w - 2) // s + 1
        low = w - 1
    high = np.maximum((out - 1) * s + w - n - low, 0)
    pads = list(zip(low, high))
    xp = np.pad(x, pads, constant_values=ident)
    ones = np.pad(np.ones_like(x), pads, constant_values=0.0)
    result = np.empty(tuple(out))
    for o in np.ndindex(*out):
        sl = tuple(slice(oi * si, oi * si + wi) for oi, si, wi in zip(o, s, w))
        block = xp[sl]
        if kind == "mean":
            result[o] = block.sum() / ones[sl].sum()
        else:
            result[o] = {"add": np.sum, "mul": np.prod, "max": np.max, "min": np.min}[kind](block)
    return result


W = RNG.uniform(-2, 2, (2, 7, 9))
for kind in ["add", "mul", "max", "min", "mean"]:
    for padding in ["none", "half", "full"]:
        for window, strides in [([1, 3, 2], [1, 2, 2]), ([2, 2, 4], [1, 1, 3])]:
            tag = f"{kind}_{padding}_{''.join(map(str, window))}_{''.join(map(str, strides))}"
            REDUCE.append(Case(
                f"reduce_window_{tag}", [W],
                f"  %r = dlvm.reduce_window {kind} %a0 window {window} strides {strides} padding {padding} : {{t0}}",
                reduce_window_ref(W, kind, window, strides, padding), close(1e-14)))
REDUCE.append(Case("reduce_window_max_i32", [RI],
                   "  %r = dlvm.reduce_window max %a0 window [2, 2] strides [1, 1] padding half : {t0}",
                   reduce_window_ref(RI.astype(np.float64), "max", [2, 2], [1, 1], "half").astype(np.int32)))


@parametrize(REDUCE)
def test_reductions(case):
    run_case("reduce", REDUCE, case)


# --------------------------------------------------------------------------
# convolve
# --------------------------------------------------------------------------


def conv_ref(x, k, strides, padding, lhs_dilation, rhs_dilation, groups):
    ns = x.ndim - 2
    strides = strides or [1] * ns
    padding = padding or [0] * (2 * ns)
    lhs_dilation = lhs_dilation or [1] * ns
    rhs_dilation = rhs_dilation or [1] * ns
    n, c = x.shape[:2]
    dil = np.zeros((n, c) + tuple((d - 1) * f + 1 for d, f in zip(x.shape[2:], lhs_dilation)), x.dtype)
    dil[(slice(None), slice(None)) + tuple(slice(None, None, f) for f in lhs_dilation)] = x
    pos = [(0, 0), (0, 0)] + [(max(padding[2 * i], 0), max(padding[2 * i + 1], 0)) for i in range(ns)]
    xp = np.pad(dil, pos)
    crop = tuple(slice(max(-padding[2 * i], 0), xp.shape[i + 2] - max(-padding[2 * i + 1], 0)) for i in range(ns))
    xp = xp[(slice(None), slice(None)) + crop]
    o = k.shape[0]
    kd = np.zeros(k.shape[:2] + tuple((d - 1) * f + 1 for d, f in zip(k.shape[2:], rhs_dilation)), k.dtype)
    kd[(slice(None), slice(None)) + tuple(slice(None, None, f) for f in rhs_dilation)] = k
    out_sp = [(xp.shape[i + 2] - kd.shape[i + 2]) // strides[i] + 1 for i in range(ns)]
    out = np.zeros((n, o) + tuple(out_sp), np.result_type(x, k))
    cg, og = c // groups, o // groups
    for g in range(groups):
        kg = kd[g * og:(g + 1) * og]
        for pos_ in np.ndindex(*out_sp):
            sl = tuple(slice(p * s, p * s + kw) for p, s, kw in zip(pos_, strides, kd.shape[2:]))
            window = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            out[(slice(None), slice(g * og, (g + 1) * og)) + pos_] = np.tensordot(
                window, kg, axes=(list(range(1, ns + 2)), list(range(1, ns + 2))))
    return out


def conv_case(name, x, k, strides=None, padding=None, lhs=None, rhs=None, groups=1, check=close(1e-12, 1e-13)):
    attrs = ""
    for key, value in [("strides", strides), ("padding", padding), ("lhs_dilation", lhs), ("rhs_dilation", rhs)]:
        if value is not None:
            attrs += f" {key} {value}"
    if groups != 1:
        attrs += f" groups {groups}"
    return Case(name, [x, k], f"  %r = dlvm.convolve %a0, %a1{attrs} : {{t0}}, {{t1}}",
                conv_ref(x, k, strides, padding, lhs, rhs, groups), check)


X2 = RNG.standard_normal((2, 3, 7, 8))
K2 = RNG.standard_normal((4, 3, 3, 2))
X2G = RNG.standard_normal((2, 6, 6, 5))
K2G = RNG.standard_normal((9, 2, 2, 3))
X1 = RNG.standard_normal((2, 4, 11))
K1 = RNG.standard_normal((6, 2, 3))
X3 = RNG.standard_normal((1, 2, 5, 4, 6))
K3 = RNG.standard_normal((3, 2, 2, 3, 2))
X3G = RNG.standard_normal((1, 4, 4, 4, 5))
K3G = RNG.standard_normal((4, 2, 2, 2, 2))
XI = RNG.integers(-3, 4, (1, 2, 5, 5)).astype(np.int32)
KI = RNG.integers(-3, 4, (2, 2, 2, 2)).astype(np.int32)
CONV = [
    conv_case("conv2d", X2, K2),
    conv_case("conv2d_pad", X2, K2, padding=[1, 1, 0, 1]),
    conv_case("conv2d_strides", X2, K2, strides=[2, 3]),
    conv_case("conv2d_rhs_dilation", X2, K2, rhs=[2, 3]),
    conv_case("conv2d_lhs_dilation", X2, K2, lhs=[2, 3], padding=[1, 2, 0, 1]),
    conv_case("conv2d_negative_padding", X2, K2, padding=[-1, 0, 1, -2]),
    conv_case("conv2d_everything", X2, K2, strides=[2, 1], padding=[2, -1, 1, 1], lhs=[2, 1], rhs=[1, 2]),
    conv_case("conv2d_groups", X2G, K2G, groups=3),
    conv_case("conv2d_groups_strided", X2G, K2G, strides=[2, 1], padding=[1, 0, 0, 2], rhs=[2, 1], groups=3),
    conv_case("conv2d_depthwise", X2G, RNG.standard_normal((6, 1, 3, 3)), padding=[1, 1, 1, 1], groups=6),
    conv_case("conv1d", X1, RNG.standard_normal((5, 4, 3)), strides=[2], padding=[1, 1]),
    conv_case("conv1d_groups", X1, K1, rhs=[2], lhs=[2], groups=2),
    conv_case("conv3d", X3, K3, padding=[1, 0, 0, 1, 1, 1]),
    conv_case("conv3d_groups", X3G, K3G, strides=[1, 2, 1], groups=2),
    conv_case("conv2d_i32", XI, KI, padding=[1, 0, 0, 1], check=exact),
    conv_case("conv2d_f32", X2.astype(np.float32), K2.astype(np.float32), strides=[1, 2], check=close(1e-5, 1e-6)),
]


@parametrize(CONV)
def test_convolve(case):
    run_case("conv", CONV, case)


# --------------------------------------------------------------------------
# random
# --------------------------------------------------------------------------

RANDOM_SRC = """
func.func @t_f32_seed7() -> tensor<100x100xf32> {
  %r = dlvm.random [100, 100] from -2.0 upto 3.0 seed 7 : f32
  return %r : tensor<100x100xf32>
}
func.func @t_f32_seed7_again() -> tensor<100x100xf32> {
  %r = dlvm.random [100, 100] from -2.0 upto 3.0 seed 7 : f32
  return %r : tensor<100x100xf32>
}
func.func @t_f32_seed8() -> tensor<100x100xf32> {
  %r = dlvm.random [100, 100] from -2.0 upto 3.0 seed 8 : f32
  return %r : tensor<100x100xf32>
}
func.func @t_f64() -> tensor<10000xf64> {
  %r = dlvm.random [10000] from 0.0 upto 1.0 seed 0 : f64
  return %r : tensor<10000xf64>
}
func.func @t_f16_narrow() -> tensor<1000xf16> {
  %r = dlvm.random [1000] from 1.0 upto 1.001 seed 3 : f16
  return %r : tensor<1000xf16>
}
func.func @t_f16_huge() -> tensor<1000xf16> {
  %r = dlvm.random [1000] from -60000.0 upto 60000.0 seed 3 : f16
  return %r : tensor<1000xf16>
}
func.func @t_scalar() -> tensor<f32> {
  %r = dlvm.random [] from 5.0 upto 6.0 seed 1 : f32
  return %r : tensor<f32>
}
"""


@pytest.fixture(scope="module")
def random_fns():
    return Compiled(RANDOM_SRC)


def test_random_uniform(random_fns):
    a = random_fns("t_f32_seed7").astype(np.float64)
    assert a.min() >= -2.0 and a.max() < 3.0
    assert abs(a.mean() - 0.5) < 0.05
    assert abs(a.std() - 5 / math.sqrt(12)) < 0.03
    # Every tenth of the range gets about a tenth of the samples.
    counts = np.histogram(a, bins=10, range=(-2, 3))[0]
    assert counts.min() > 850 and counts.max() < 1150
    # Neighbouring elements are uncorrelated.
    flat = a.ravel()
    assert abs(np.corrcoef(flat[:-1], flat[1:])[0, 1]) < 0.03
    b = random_fns("t_f64")
    assert b.min() >= 0.0 and b.max() < 1.0 and abs(b.mean() - 0.5) < 0.01
    assert len(np.unique(b)) == b.size


def test_random_deterministic(random_fns):
    a, b, c = random_fns("t_f32_seed7"), random_fns("t_f32_seed7_again"), random_fns("t_f32_seed8")
    np.testing.assert_array_equal(a, b)
    assert np.mean(a == c) < 0.01


def test_random_bounds_after_rounding(random_fns):
    narrow = random_fns("t_f16_narrow")
    # [1.0, 1.001) holds a single f16 value: the upper bound is never produced.
    assert np.all(narrow == np.float16(1.0))
    huge = random_fns("t_f16_huge").astype(np.float64)
    assert np.all(np.isfinite(huge)) and huge.min() >= -60000.0 and huge.max() < 60000.0
    s = random_fns("t_scalar")
    assert s.shape == () and 5.0 <= float(s) < 6.0


# --------------------------------------------------------------------------
# Zero-sized tensors
# --------------------------------------------------------------------------

E04 = np.zeros((0, 4))
with np.errstate(all="ignore"):
    EMPTY = [
        Case("sum_of_empty", [E04], "  %r = dlvm.reduce add %a0 dims [0] : {t0}", np.zeros(4)),
        Case("max_of_empty", [E04], "  %r = dlvm.reduce max %a0 dims [0] : {t0}", np.full(4, -np.inf)),
        Case("mean_of_empty", [E04], "  %r = dlvm.reduce mean %a0 dims [0] : {t0}", np.full(4, np.nan)),
        Case("dot_k0", [np.zeros((3, 0)), np.zeros((0, 5))], DOT_BODY, np.zeros((3, 5))),
        Case("concat_empty_last", [A34, np.zeros((3, 0))], "  %r = dlvm.concatenate %a0, %a1 axis 1 : {t0}, {t1}", A34),
        Case("concat_empty_first", [np.zeros((0, 4)), A34], "  %r = dlvm.concatenate %a0, %a1 axis 0 : {t0}, {t1}", A34),
        Case("conv_no_channels", [np.zeros((1, 0, 5, 5)), np.zeros((2, 0, 2, 2))],
             "  %r = dlvm.convolve %a0, %a1 padding [-1, 0, 0, 0] : {t0}, {t1}", np.zeros((1, 2, 3, 4))),
        Case("window_mean_of_empty", [np.zeros((0, 3))],
             "  %r = dlvm.reduce_window mean %a0 window [3, 1] strides [1, 1] padding full : {t0}",
             np.full((2, 3), np.nan)),
        Case("empty_result", [E04], "  %r = dlvm.exp %a0 : {t0}", E04),
    ]


@parametrize(EMPTY)
def test_zero_sized(case):
    run_case("empty", EMPTY, case)


# --------------------------------------------------------------------------
# The same cases through the project's CPU back end (dlvm_mlir.backend)
# --------------------------------------------------------------------------
# The groups below pass through compile_cpu. Not yet included (back-end
# issues, reported): rank-4 batched dot (collapse_shape + batch_matmul +
# expand_shape) hangs in the vector lowering; the shape, reduction and
# convolution groups hang in LLVM lowering or fail to create the engine.

BACKEND_GROUPS = {
    "unary_f64": UNARY_F64,
    "unary_f32": UNARY_F32,
    "unary_f16": UNARY_F16,
    "unary_int": UNARY_INT,
    "binary_f64": BINARY_F64,
    "binary_int": BINARY_INT,
    "cmp": CMP,
    "cast": CAST,
    "dot": [c for c in DOT if c.name != "batch2_matmul"],
    "dot_t": [c for c in DOT_T if not c.name.startswith("bmm2")],
}
BACKEND_CASES = [(group, case) for group, cases in BACKEND_GROUPS.items() for case in cases]


@pytest.mark.parametrize("group,case", BACKEND_CASES, ids=[f"{g}-{c.name}" for g, c in BACKEND_CASES])
def test_cpu_backend(group, case):
    run_case(group, BACKEND_GROUPS[group], case, runner="cpu_backend")
