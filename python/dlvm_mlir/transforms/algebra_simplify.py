"""dlvm-algebra-simplify: DLVM's AlgebraSimplification, plus the rules AD output needs.

Every rule below is a :class:`~dlvm_mlir.rewrites.RewriteRule` of the rule
set ``algebra-simplify`` with a sample program (``test_rewrite_rules.py``
validates each one through the reference interpreter). The dialect's C++
folders, which the greedy driver runs too, already do the exact same-type
identities (``x + -0.0``, ``x - 0``, ``x * 1``, ``x / 1``, ``x ^ 1``,
``neg(neg x)``, ``transpose(transpose A) -> A``) and constant folding, which
covers ``sin/sinh/tan/tanh(0) -> 0`` and ``cos/cosh(0) -> 1``; the rules here
add the broadcasting cases and everything else.

Exactness of each rule (see :class:`~dlvm_mlir.rewrites.Exactness`; the
default applies exact, signed-zero and refining rules, ``strict=true`` only
exact ones, ``fast-math=true`` all):

=======================  ====================================  ===========  ==============================
rule                     rewrite                               exactness    why
=======================  ====================================  ===========  ==============================
add_zero                 x + 0.0, 0.0 + x -> x                 signed-zero  -0.0 + 0.0 is +0.0
add_exact_zero           x + -0.0, x + 0 (int) -> x            exact        (same type: C++ folder)
sub_zero                 x - 0 -> x                            exact        (same type: C++ folder)
zero_sub                 0.0 - x -> -x                         signed-zero  0.0 - 0.0 is +0.0
exact_zero_sub           -0.0 - x, 0 - x (int) -> -x           exact
mul_one                  x * 1, 1 * x -> x                     exact        (same type: C++ folder)
mul_minus_one            x * -1 -> -x                          exact
div_one                  x / 1 -> x                            exact        (same type: C++ folder)
pow_one                  x ^ 1 -> x                            exact        (same type: C++ folder)
pow_zero                 x ^ 0 -> 1                            exact        C99 pow(x, 0) is 1, even NaN
mul_zero                 x * 0.0 -> 0.0                        unsafe       inf*0, NaN*0 are NaN; -x*0
int_mul_zero             x * 0 -> 0 (int)                      exact
sub_self                 x - x -> 0.0                          unsafe       inf - inf is NaN
int_sub_self             x - x -> 0 (int)                      exact
div_self                 x / x -> 1                            unsafe       0/0, inf/inf; integer 0/0
pow_minus_one            x ^ -1 -> 1 / x                       refining     1/x is correctly rounded
pow_two                  x ^ 2 -> x * x                        refining     x*x is correctly rounded
sinh_of_exps             (e^x - e^-x) / 2 -> sinh x            refining     no cancellation, no overflow
cosh_of_exps             (e^x + e^-x) / 2 -> cosh x            refining     no early overflow
pow_of_exp               (e^x)^y -> e^(x*y)                    unsafe       x*y rounds, e^x's error grows
div_of_exps              e^x / e^y -> e^(x-y)                  unsafe       x-y rounds
div_by_exp               x / e^y -> x * e^-y                   unsafe       two roundings; underflow
div_by_pow               x / y^z -> x * y^-z                   unsafe       two roundings
mul_reciprocal           x * (1/y) -> x / y                    refining     one rounding instead of two
div_by_power_of_two      x / 2^k -> x * 2^-k                   exact        2^-k is exact (normal)
div_of_quotients         (x/y) / (z/a) -> (x*a) / (y*z)        unsafe       reassociation
div_of_quotient          (x/y) / z -> x / (y*z)                unsafe       reassociation
div_by_quotient          x / (y/z) -> (x*z) / y                unsafe       reassociation
sub_of_neg               a - (-b) -> a + b                     exact
add_of_neg               a + (-b) -> a - b, (-a) + b -> b - a  exact
mul_of_negs              (-a) * (-b) -> a * b                  exact
div_of_negs              (-a) / (-b) -> a / b (float)          exact
log_of_exp               log(exp x) -> x                       refining     exact in the reals; no overflow
exp_of_log               exp(log x) -> x                       unsafe       NaN for x < 0 becomes x
transpose_of_transpose   transpose(transpose x) -> one         exact        (identity: C++ folder)
broadcast_of_broadcast   broadcast_to(broadcast_to x) -> one   exact
implicit_broadcast       op(x, broadcast_to y) -> op(x, y)     exact        the op broadcasts y the same
reduce_of_broadcast      reduce(broadcast_to x) -> n * red(x)  refining     n*v instead of v+...+v
binary_of_transposes     op(aT, bT) -> transpose(op(a, b))     exact        two transposes become one
transpose_of_dot         transpose(dot(a, b)) -> dot(bT, aT)   exact        matrices: operand transposes
                                                                            are read in place
=======================  ====================================  ===========  ==============================

Transposes of dot operands cost nothing: dlvm-to-linalg reads a matrix
operand transposed through the contraction's indexing maps (and the GPU
kernels read it in place), so ``transpose_of_dot`` fires whenever it removes a
transpose of a product, and the reverse rewrite (``dot(aT, bT) ->
transpose(dot(b, a))``, which would materialize the result transposed) is
not a rule.

Every rule keeps the op's result type: a replacement that the op would have
broadcast is wrapped in ``dlvm.broadcast_to`` by the driver; rules that change
element types or shapes in other ways do not fire.
"""

from __future__ import annotations

import math

from mlir import ir

from dlvm_mlir.dialects import dlvm
from dlvm_mlir.passes import ModulePass, Option, PassError, register_pass
from dlvm_mlir.rewrites import Exactness, allowed_exactness, apply_rules, rewrite_rule, rule_set
from dlvm_mlir.transforms._patterns import (
    BINARY_OPS,
    BROADCASTING_OPS,
    commuted,
    element_type,
    is_float,
    is_matrix_transpose,
    is_splat,
    keeps_result_shape,
    producer,
    rebuilt,
    reduction_kind,
    shape,
    single_use,
    splat_like,
    splat_value,
    tensor_type,
    transpose,
    transpose_perm,
    with_operands,
)

RULE_SET = "algebra-simplify"

EXACT = Exactness.EXACT
SIGNED_ZERO = Exactness.SIGNED_ZERO
REFINING = Exactness.REFINING
UNSAFE = Exactness.UNSAFE


def _rule(*roots, exactness: Exactness, sample: str, sample_range=(-2.0, 2.0), benefit: int = 1):
    return rewrite_rule(
        *roots, set=RULE_SET, exactness=exactness, sample=sample, sample_range=sample_range, benefit=benefit
    )


def _binary_sample(op: str, lhs: str, rhs: str, result: str, constant: str, constant_type: str,
                   constant_is_lhs: bool = False) -> str:
    """A sample applying ``op`` to the argument %x and a constant."""
    operands = "%c, %x" if constant_is_lhs else "%x, %c"
    types = f"{rhs}, {lhs}" if constant_is_lhs else f"{lhs}, {rhs}"
    return f"""
func.func @sample(%x: {lhs}) -> {result} {{
  %c = dlvm.constant dense<{constant}> : {constant_type}
  %r = dlvm.{op} {operands} : {types}
  return %r : {result}
}}"""


# --------------------------------------------------------------------------
# Identities (broadcast-aware)
# --------------------------------------------------------------------------


@_rule(
    dlvm.AddOp,
    exactness=SIGNED_ZERO,
    sample=_binary_sample("add", "tensor<1x4xf32>", "tensor<3x4xf32>", "tensor<3x4xf32>", "0.0", "tensor<3x4xf32>"),
)
def add_zero(op: dlvm.AddOp) -> ir.Value | None:
    """x + 0.0 -> x and 0.0 + x -> x, for a +0.0 literal of any shape."""
    for x, zero in commuted(op):
        if is_float(zero) and is_splat(zero, 0.0, negative_zero=False):
            return x
    return None


@_rule(
    dlvm.AddOp,
    exactness=EXACT,
    sample=_binary_sample("add", "tensor<1x4xi32>", "tensor<3x1xi32>", "tensor<3x4xi32>", "0", "tensor<3x1xi32>",
                          constant_is_lhs=True),
)
def add_exact_zero(op: dlvm.AddOp) -> ir.Value | None:
    """x + -0.0 -> x and x + 0 -> x (integers): the exact additive identities, broadcast."""
    for x, zero in commuted(op):
        if is_splat(zero, 0.0, negative_zero=True):
            return x
    return None


@_rule(
    dlvm.SubOp,
    exactness=EXACT,
    sample=_binary_sample("sub", "tensor<f32>", "tensor<2x3xf32>", "tensor<2x3xf32>", "0.0", "tensor<2x3xf32>"),
)
def sub_zero(op: dlvm.SubOp) -> ir.Value | None:
    """x - 0 -> x (0.0 or integer 0), x broadcast to the result."""
    if not is_splat(op.rhs, 0.0, negative_zero=False):
        return None
    return op.lhs


@_rule(
    dlvm.SubOp,
    exactness=SIGNED_ZERO,
    sample=_binary_sample("sub", "tensor<4xf32>", "tensor<f32>", "tensor<4xf32>", "0.0", "tensor<f32>",
                          constant_is_lhs=True),
)
def zero_sub(op: dlvm.SubOp) -> ir.Value | None:
    """0.0 - x -> -x."""
    if not (is_float(op.lhs) and is_splat(op.lhs, 0.0, negative_zero=False)):
        return None
    return dlvm.neg(op.rhs)


@_rule(
    dlvm.SubOp,
    exactness=EXACT,
    sample=_binary_sample("sub", "tensor<4xf32>", "tensor<4xf32>", "tensor<4xf32>", "-0.0", "tensor<4xf32>",
                          constant_is_lhs=True),
)
def exact_zero_sub(op: dlvm.SubOp) -> ir.Value | None:
    """-0.0 - x -> -x and 0 - x -> -x (integers)."""
    if not is_splat(op.lhs, 0.0, negative_zero=True):
        return None
    return dlvm.neg(op.rhs)


@_rule(
    dlvm.MulOp,
    exactness=EXACT,
    sample=_binary_sample("mul", "tensor<4x1xf32>", "tensor<4x3xf32>", "tensor<4x3xf32>", "1.0", "tensor<4x3xf32>",
                          constant_is_lhs=True),
)
def mul_one(op: dlvm.MulOp) -> ir.Value | None:
    """x * 1 -> x and 1 * x -> x, for a literal one of any shape."""
    for x, one in commuted(op):
        if is_splat(one, 1.0):
            return x
    return None


@_rule(
    dlvm.MulOp,
    exactness=EXACT,
    sample=_binary_sample("mul", "tensor<4xf32>", "tensor<f32>", "tensor<4xf32>", "-1.0", "tensor<f32>"),
)
def mul_minus_one(op: dlvm.MulOp) -> ir.Value | None:
    """x * -1 -> -x and -1 * x -> -x."""
    for x, minus_one in commuted(op):
        if is_splat(minus_one, -1.0):
            return dlvm.neg(x)
    return None


@_rule(
    dlvm.DivOp,
    exactness=EXACT,
    sample=_binary_sample("div", "tensor<1x4xf32>", "tensor<2x4xf32>", "tensor<2x4xf32>", "1.0", "tensor<2x4xf32>"),
)
def div_one(op: dlvm.DivOp) -> ir.Value | None:
    """x / 1 -> x."""
    if not is_splat(op.rhs, 1.0):
        return None
    return op.lhs


@_rule(
    dlvm.PowOp,
    exactness=EXACT,
    sample=_binary_sample("pow", "tensor<f32>", "tensor<3xf32>", "tensor<3xf32>", "1.0", "tensor<3xf32>"),
)
def pow_one(op: dlvm.PowOp) -> ir.Value | None:
    """x ^ 1 -> x."""
    if not is_splat(op.rhs, 1.0):
        return None
    return op.lhs


@_rule(
    dlvm.PowOp,
    exactness=EXACT,
    sample=_binary_sample("pow", "tensor<4xf32>", "tensor<f32>", "tensor<4xf32>", "0.0", "tensor<f32>"),
)
def pow_zero(op: dlvm.PowOp) -> ir.Value | None:
    """x ^ 0 -> 1 (C99 pow: even for NaN)."""
    if not is_splat(op.rhs, 0.0):
        return None
    return splat_like(op.result, 1.0)


@_rule(
    dlvm.MulOp,
    exactness=UNSAFE,
    sample=_binary_sample("mul", "tensor<4xf32>", "tensor<f32>", "tensor<4xf32>", "0.0", "tensor<f32>"),
)
def mul_zero(op: dlvm.MulOp) -> ir.Value | None:
    """x * 0.0 -> 0.0 (floats: wrong for inf and NaN, and for the sign of zero)."""
    for _, zero in commuted(op):
        if is_float(zero) and is_splat(zero, 0.0):
            return splat_like(op.result, 0.0)
    return None


@_rule(
    dlvm.MulOp,
    exactness=EXACT,
    sample=_binary_sample("mul", "tensor<4xi32>", "tensor<4xi32>", "tensor<4xi32>", "0", "tensor<4xi32>",
                          constant_is_lhs=True),
)
def int_mul_zero(op: dlvm.MulOp) -> ir.Value | None:
    """x * 0 -> 0 for integers."""
    for _, zero in commuted(op):
        if not is_float(zero) and is_splat(zero, 0):
            return splat_like(op.result, 0)
    return None


_SELF_SAMPLE = """
func.func @sample(%x: tensor<4x{t}>) -> tensor<4x{t}> {{
  %r = dlvm.{op} %x, %x : tensor<4x{t}>, tensor<4x{t}>
  return %r : tensor<4x{t}>
}}"""


@_rule(dlvm.SubOp, exactness=UNSAFE, sample=_SELF_SAMPLE.format(op="sub", t="f32"))
def sub_self(op: dlvm.SubOp) -> ir.Value | None:
    """x - x -> 0.0 (floats: wrong for inf and NaN)."""
    if op.lhs != op.rhs or not is_float(op.lhs):
        return None
    return splat_like(op.result, 0.0)


@_rule(dlvm.SubOp, exactness=EXACT, sample=_SELF_SAMPLE.format(op="sub", t="i32"))
def int_sub_self(op: dlvm.SubOp) -> ir.Value | None:
    """x - x -> 0 for integers."""
    if op.lhs != op.rhs or is_float(op.lhs):
        return None
    return splat_like(op.result, 0)


@_rule(dlvm.DivOp, exactness=UNSAFE, sample=_SELF_SAMPLE.format(op="div", t="f32"))
def div_self(op: dlvm.DivOp) -> ir.Value | None:
    """x / x -> 1 (wrong for 0, inf and NaN)."""
    if op.lhs != op.rhs:
        return None
    return splat_like(op.result, 1.0)


# --------------------------------------------------------------------------
# Powers, exponentials, hyperbolic functions (floats)
# --------------------------------------------------------------------------


@_rule(
    dlvm.PowOp,
    exactness=REFINING,
    sample=_binary_sample("pow", "tensor<4xf32>", "tensor<f32>", "tensor<4xf32>", "-1.0", "tensor<f32>"),
    sample_range=(0.5, 2.0),
)
def pow_minus_one(op: dlvm.PowOp) -> ir.Value | None:
    """x ^ -1 -> 1 / x."""
    if not is_splat(op.rhs, -1.0):
        return None
    return dlvm.div(splat_like(op.lhs, 1.0, dims=()), op.lhs)


@_rule(
    dlvm.PowOp,
    exactness=REFINING,
    sample=_binary_sample("pow", "tensor<1x4xf32>", "tensor<3x4xf32>", "tensor<3x4xf32>", "2.0", "tensor<3x4xf32>"),
)
def pow_two(op: dlvm.PowOp) -> ir.Value | None:
    """x ^ 2 -> x * x."""
    if not is_splat(op.rhs, 2.0):
        return None
    return dlvm.mul(op.lhs, op.lhs)


def _exp_of_negation_pair(value: ir.Value, combine: type[ir.OpView]) -> ir.Value | None:
    """x when ``value`` is ``combine(e^x, e^-x)`` (either order for a commutative add)."""
    pair = producer(value, combine)
    if pair is None:
        return None
    orders = commuted(pair) if combine is dlvm.AddOp else ((pair.lhs, pair.rhs),)
    for positive, negative in orders:
        exp_x = producer(positive, dlvm.ExpOp)
        exp_neg = producer(negative, dlvm.ExpOp)
        neg = producer(exp_neg.operand, dlvm.NegOp) if exp_neg is not None else None
        if exp_x is not None and neg is not None and neg.operand == exp_x.operand:
            return exp_x.operand
    return None


def _halved(op: ir.OpView) -> ir.Value | None:
    """y when ``op`` is ``y / 2`` or ``y * 0.5`` / ``0.5 * y``."""
    if isinstance(op, dlvm.DivOp):
        return op.lhs if is_splat(op.rhs, 2.0) else None
    for y, half in commuted(op):
        if is_splat(half, 0.5):
            return y
    return None


_HYPERBOLIC_SAMPLE = """
func.func @sample(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %e = dlvm.exp %x : tensor<4xf32>
  %n = dlvm.neg %x : tensor<4xf32>
  %en = dlvm.exp %n : tensor<4xf32>
  %s = dlvm.{combine} {operands} : tensor<4xf32>, tensor<4xf32>
  %c = dlvm.constant dense<{half}> : tensor<f32>
  %r = dlvm.{halve} %s, %c : tensor<4xf32>, tensor<f32>
  return %r : tensor<4xf32>
}}"""


@_rule(
    dlvm.DivOp,
    dlvm.MulOp,
    exactness=REFINING,
    sample=_HYPERBOLIC_SAMPLE.format(combine="sub", operands="%e, %en", half="2.0", halve="div"),
)
def sinh_of_exps(op: ir.OpView) -> ir.Value | None:
    """(e^x - e^-x) / 2 -> sinh x (also written * 0.5)."""
    if not is_float(op.result):
        return None
    numerator = _halved(op)
    x = _exp_of_negation_pair(numerator, dlvm.SubOp) if numerator is not None else None
    if x is None:
        return None
    return dlvm.sinh(x)


@_rule(
    dlvm.DivOp,
    dlvm.MulOp,
    exactness=REFINING,
    sample=_HYPERBOLIC_SAMPLE.format(combine="add", operands="%en, %e", half="0.5", halve="mul"),
)
def cosh_of_exps(op: ir.OpView) -> ir.Value | None:
    """(e^x + e^-x) / 2 -> cosh x (also written * 0.5)."""
    if not is_float(op.result):
        return None
    numerator = _halved(op)
    x = _exp_of_negation_pair(numerator, dlvm.AddOp) if numerator is not None else None
    if x is None:
        return None
    return dlvm.cosh(x)


_TWO_ARG_SAMPLE = """
func.func @sample(%x: tensor<4xf32>, %y: tensor<{y_shape}xf32>) -> tensor<4xf32> {{
{body}
  return %r : tensor<4xf32>
}}"""


@_rule(
    dlvm.PowOp,
    exactness=UNSAFE,
    sample=_TWO_ARG_SAMPLE.format(y_shape="4", body="""
  %e = dlvm.exp %x : tensor<4xf32>
  %r = dlvm.pow %e, %y : tensor<4xf32>, tensor<4xf32>"""),
)
def pow_of_exp(op: dlvm.PowOp) -> ir.Value | None:
    """(e^x)^y -> e^(x*y)."""
    e = producer(op.lhs, dlvm.ExpOp)
    if e is None:
        return None
    return dlvm.exp(dlvm.mul(e.operand, op.rhs))


@_rule(
    dlvm.DivOp,
    exactness=UNSAFE,
    benefit=2,
    sample=_TWO_ARG_SAMPLE.format(y_shape="1", body="""
  %ex = dlvm.exp %x : tensor<4xf32>
  %ey = dlvm.exp %y : tensor<1xf32>
  %r = dlvm.div %ex, %ey : tensor<4xf32>, tensor<1xf32>"""),
)
def div_of_exps(op: dlvm.DivOp) -> ir.Value | None:
    """e^x / e^y -> e^(x-y)."""
    ex, ey = producer(op.lhs, dlvm.ExpOp), producer(op.rhs, dlvm.ExpOp)
    if ex is None or ey is None:
        return None
    return dlvm.exp(dlvm.sub(ex.operand, ey.operand))


@_rule(
    dlvm.DivOp,
    exactness=UNSAFE,
    sample=_TWO_ARG_SAMPLE.format(y_shape="4", body="""
  %ey = dlvm.exp %y : tensor<4xf32>
  %r = dlvm.div %x, %ey : tensor<4xf32>, tensor<4xf32>"""),
)
def div_by_exp(op: dlvm.DivOp) -> ir.Value | None:
    """x / e^y -> x * e^(-y)."""
    ey = producer(op.rhs, dlvm.ExpOp)
    if ey is None:
        return None
    return dlvm.mul(op.lhs, dlvm.exp(dlvm.neg(ey.operand)))


@_rule(
    dlvm.DivOp,
    exactness=UNSAFE,
    sample_range=(0.5, 2.0),
    sample=_TWO_ARG_SAMPLE.format(y_shape="4", body="""
  %z = dlvm.constant dense<1.5> : tensor<f32>
  %p = dlvm.pow %y, %z : tensor<4xf32>, tensor<f32>
  %r = dlvm.div %x, %p : tensor<4xf32>, tensor<4xf32>"""),
)
def div_by_pow(op: dlvm.DivOp) -> ir.Value | None:
    """x / y^z -> x * y^(-z)."""
    p = producer(op.rhs, dlvm.PowOp)
    if p is None:
        return None
    return dlvm.mul(op.lhs, dlvm.pow(p.lhs, dlvm.neg(p.rhs)))


@_rule(
    dlvm.MulOp,
    exactness=REFINING,
    sample_range=(0.5, 2.0),
    sample=_TWO_ARG_SAMPLE.format(y_shape="4", body="""
  %one = dlvm.constant dense<1.0> : tensor<f32>
  %q = dlvm.div %one, %y : tensor<f32>, tensor<4xf32>
  %r = dlvm.mul %q, %x : tensor<4xf32>, tensor<4xf32>"""),
)
def mul_reciprocal(op: dlvm.MulOp) -> ir.Value | None:
    """x * (1/y) -> x / y (floats)."""
    if not is_float(op.result):
        return None
    for x, reciprocal in commuted(op):
        q = producer(reciprocal, dlvm.DivOp)
        if q is not None and is_splat(q.lhs, 1.0):
            return dlvm.div(x, q.rhs)
    return None


@_rule(
    dlvm.DivOp,
    exactness=EXACT,
    sample=_binary_sample("div", "tensor<4xf32>", "tensor<f32>", "tensor<4xf32>", "-32.0", "tensor<f32>"),
)
def div_by_power_of_two(op: dlvm.DivOp) -> ir.Value | None:
    """x / 2^k -> x * 2^-k (floats): the reciprocal is exact, so both round the same value."""
    c = splat_value(op.rhs)
    if c is None or not is_float(op.rhs) or c == 0 or not math.isfinite(c):
        return None
    if math.frexp(abs(c))[0] != 0.5 or not _is_normal(1.0 / c, element_type(op.rhs)):
        return None
    return dlvm.mul(op.lhs, splat_like(op.rhs, 1.0 / c, dims=shape(op.rhs)))


_EXPONENT_BITS = {"f16": 5, "bf16": 8, "f32": 8, "f64": 11}


def _is_normal(x: float, element: ir.Type) -> bool:
    """Whether the power of two ``x`` is a normal number of float type ``element``."""
    bias = 2 ** (_EXPONENT_BITS[str(element)] - 1) - 1
    exponent = math.frexp(abs(x))[1] - 1
    return 1 - bias <= exponent <= bias


# --------------------------------------------------------------------------
# Quotients (floats; reassociation)
# --------------------------------------------------------------------------

_QUOTIENT_SAMPLE = """
func.func @sample(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>, %a: tensor<4xf32>) -> tensor<4xf32> {{
{body}
  return %r : tensor<4xf32>
}}"""


def _float_quotient(value: ir.Value) -> dlvm.DivOp | None:
    q = producer(value, dlvm.DivOp)
    return q if q is not None and is_float(value) else None


@_rule(
    dlvm.DivOp,
    exactness=UNSAFE,
    benefit=3,
    sample_range=(0.5, 2.0),
    sample=_QUOTIENT_SAMPLE.format(body="""
  %n = dlvm.div %x, %y : tensor<4xf32>, tensor<4xf32>
  %d = dlvm.div %z, %a : tensor<4xf32>, tensor<4xf32>
  %r = dlvm.div %n, %d : tensor<4xf32>, tensor<4xf32>"""),
)
def div_of_quotients(op: dlvm.DivOp) -> ir.Value | None:
    """(x/y) / (z/a) -> (x*a) / (y*z)."""
    n, d = _float_quotient(op.lhs), _float_quotient(op.rhs)
    if n is None or d is None:
        return None
    return dlvm.div(dlvm.mul(n.lhs, d.rhs), dlvm.mul(n.rhs, d.lhs))


@_rule(
    dlvm.DivOp,
    exactness=UNSAFE,
    benefit=2,
    sample_range=(0.5, 2.0),
    sample=_QUOTIENT_SAMPLE.format(body="""
  %n = dlvm.div %x, %y : tensor<4xf32>, tensor<4xf32>
  %r = dlvm.div %n, %z : tensor<4xf32>, tensor<4xf32>"""),
)
def div_of_quotient(op: dlvm.DivOp) -> ir.Value | None:
    """(x/y) / z -> x / (y*z)."""
    n = _float_quotient(op.lhs)
    if n is None:
        return None
    return dlvm.div(n.lhs, dlvm.mul(n.rhs, op.rhs))


@_rule(
    dlvm.DivOp,
    exactness=UNSAFE,
    benefit=2,
    sample_range=(0.5, 2.0),
    sample=_QUOTIENT_SAMPLE.format(body="""
  %d = dlvm.div %y, %z : tensor<4xf32>, tensor<4xf32>
  %r = dlvm.div %x, %d : tensor<4xf32>, tensor<4xf32>"""),
)
def div_by_quotient(op: dlvm.DivOp) -> ir.Value | None:
    """x / (y/z) -> (x*z) / y."""
    d = _float_quotient(op.rhs)
    if d is None:
        return None
    return dlvm.div(dlvm.mul(op.lhs, d.rhs), d.lhs)


# --------------------------------------------------------------------------
# Negation chains
# --------------------------------------------------------------------------

_NEG_SAMPLE = """
func.func @sample(%a: tensor<4x{t}>, %b: tensor<{b_shape}{t}>) -> tensor<4x{t}> {{
{body}
  return %r : tensor<4x{t}>
}}"""


@_rule(
    dlvm.SubOp,
    exactness=EXACT,
    sample=_NEG_SAMPLE.format(t="f32", b_shape="", body="""
  %n = dlvm.neg %b : tensor<f32>
  %r = dlvm.sub %a, %n : tensor<4xf32>, tensor<f32>"""),
)
def sub_of_neg(op: dlvm.SubOp) -> ir.Value | None:
    """a - (-b) -> a + b."""
    neg = producer(op.rhs, dlvm.NegOp)
    if neg is None:
        return None
    return dlvm.add(op.lhs, neg.operand)


@_rule(
    dlvm.AddOp,
    exactness=EXACT,
    sample=_NEG_SAMPLE.format(t="i32", b_shape="4x", body="""
  %n = dlvm.neg %a : tensor<4xi32>
  %r = dlvm.add %n, %b : tensor<4xi32>, tensor<4xi32>"""),
)
def add_of_neg(op: dlvm.AddOp) -> ir.Value | None:
    """a + (-b) -> a - b and (-a) + b -> b - a."""
    for a, negated in commuted(op):
        neg = producer(negated, dlvm.NegOp)
        if neg is not None:
            return dlvm.sub(a, neg.operand)
    return None


@_rule(
    dlvm.MulOp,
    exactness=EXACT,
    sample=_NEG_SAMPLE.format(t="f32", b_shape="4x", body="""
  %na = dlvm.neg %a : tensor<4xf32>
  %nb = dlvm.neg %b : tensor<4xf32>
  %r = dlvm.mul %na, %nb : tensor<4xf32>, tensor<4xf32>"""),
)
def mul_of_negs(op: dlvm.MulOp) -> ir.Value | None:
    """(-a) * (-b) -> a * b."""
    na, nb = producer(op.lhs, dlvm.NegOp), producer(op.rhs, dlvm.NegOp)
    if na is None or nb is None:
        return None
    return dlvm.mul(na.operand, nb.operand)


@_rule(
    dlvm.DivOp,
    exactness=EXACT,
    sample=_NEG_SAMPLE.format(t="f32", b_shape="4x", body="""
  %na = dlvm.neg %a : tensor<4xf32>
  %nb = dlvm.neg %b : tensor<4xf32>
  %r = dlvm.div %na, %nb : tensor<4xf32>, tensor<4xf32>"""),
)
def div_of_negs(op: dlvm.DivOp) -> ir.Value | None:
    """(-a) / (-b) -> a / b (floats; integer division overflows differently)."""
    na, nb = producer(op.lhs, dlvm.NegOp), producer(op.rhs, dlvm.NegOp)
    if na is None or nb is None or not is_float(op.result):
        return None
    return dlvm.div(na.operand, nb.operand)


# --------------------------------------------------------------------------
# exp / log
# --------------------------------------------------------------------------

_UNARY_PAIR_SAMPLE = """
func.func @sample(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %i = dlvm.{inner} %x : tensor<4xf32>
  %r = dlvm.{outer} %i : tensor<4xf32>
  return %r : tensor<4xf32>
}}"""


@_rule(dlvm.LogOp, exactness=REFINING, sample=_UNARY_PAIR_SAMPLE.format(inner="exp", outer="log"))
def log_of_exp(op: dlvm.LogOp) -> ir.Value | None:
    """log(exp x) -> x."""
    e = producer(op.operand, dlvm.ExpOp)
    if e is None:
        return None
    return e.operand


@_rule(
    dlvm.ExpOp,
    exactness=UNSAFE,
    sample=_UNARY_PAIR_SAMPLE.format(inner="log", outer="exp"),
    sample_range=(0.1, 3.0),
)
def exp_of_log(op: dlvm.ExpOp) -> ir.Value | None:
    """exp(log x) -> x (wrong for x < 0, where the original is NaN)."""
    lg = producer(op.operand, dlvm.LogOp)
    if lg is None:
        return None
    return lg.operand


# --------------------------------------------------------------------------
# Shapes: transposes, broadcasts, reductions, dots
# --------------------------------------------------------------------------


@_rule(
    dlvm.TransposeOp,
    exactness=EXACT,
    sample="""
func.func @sample(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %t = dlvm.transpose %x perm [1, 2, 0] : tensor<2x3x4xf32>
  %r = dlvm.transpose %t perm [1, 2, 0] : tensor<3x4x2xf32>
  return %r : tensor<4x2x3xf32>
}""",
)
def transpose_of_transpose(op: dlvm.TransposeOp) -> ir.Value | None:
    """transpose(transpose(x, p), q) -> transpose(x, p o q) (the identity is the folder's)."""
    inner = producer(op.operand, dlvm.TransposeOp)
    if inner is None:
        return None
    p, q = transpose_perm(inner), transpose_perm(op)
    composed = [p[i] for i in q]
    if composed == sorted(composed):
        return None
    return transpose(inner.operand, composed)


@_rule(
    dlvm.BroadcastToOp,
    exactness=EXACT,
    sample="""
func.func @sample(%x: tensor<1x1xf32>) -> tensor<3x4xf32> {
  %b = dlvm.broadcast_to %x to [1, 4] : tensor<1x1xf32>
  %r = dlvm.broadcast_to %b to [3, 4] : tensor<1x4xf32>
  return %r : tensor<3x4xf32>
}""",
)
def broadcast_of_broadcast(op: dlvm.BroadcastToOp) -> ir.Value | None:
    """broadcast_to(broadcast_to(x)) -> broadcast_to(x)."""
    inner = producer(op.operand, dlvm.BroadcastToOp)
    if inner is None:
        return None
    return dlvm.broadcast_to(inner.operand, list(shape(op.result)))


@_rule(
    *BROADCASTING_OPS,
    exactness=EXACT,
    sample="""
func.func @sample(%x: tensor<4x3xf32>, %y: tensor<1x3xf32>, %s: tensor<f32>) -> tensor<4x3xf32> {
  %b = dlvm.broadcast_to %y to [4, 3] : tensor<1x3xf32>
  %t = dlvm.broadcast_to %s to [4, 3] : tensor<f32>
  %m = dlvm.mul %x, %b : tensor<4x3xf32>, tensor<4x3xf32>
  %r = dlvm.sub %t, %m : tensor<4x3xf32>, tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}""",
)
def implicit_broadcast(op: ir.OpView) -> ir.Value | None:
    """op(x, broadcast_to(y)) -> op(x, y) when the op's own broadcasting gives the same result."""
    operands = list(op.operands)
    sources: dict[int, ir.Value] = {}
    for index, operand in enumerate(operands):
        b = producer(operand, dlvm.BroadcastToOp)
        if b is None:
            continue
        shapes = {i: shape(v) for i, v in sources.items()}
        if keeps_result_shape(op, {**shapes, index: shape(b.operand)}):
            sources[index] = b.operand
    if not sources:
        return None
    return with_operands(op, sources)


_SUMMARIZING = (dlvm.ReductionKind.add, dlvm.ReductionKind.mean, dlvm.ReductionKind.max, dlvm.ReductionKind.min)


@_rule(
    dlvm.ReduceOp,
    exactness=REFINING,
    sample="""
func.func @sample(%x: tensor<1x3xf32>, %s: tensor<f32>) -> (tensor<3xf32>, tensor<f32>) {
  %b = dlvm.broadcast_to %x to [4, 3] : tensor<1x3xf32>
  %r = dlvm.reduce add %b dims [0] : tensor<4x3xf32>
  %bs = dlvm.broadcast_to %s to [5, 2] : tensor<f32>
  %rs = dlvm.reduce add %bs dims [0, 1] : tensor<5x2xf32>
  return %r, %rs : tensor<3xf32>, tensor<f32>
}""",
)
def reduce_of_broadcast(op: dlvm.ReduceOp) -> ir.Value | None:
    """reduce(broadcast_to(x)) over dims D -> reduce(x) over D, times the repeat count for add.

    Sums of a broadcast (what AD produces for the gradient of a broadcast
    operand) become a reduction of the small operand, scaled; max, min and
    mean need no scale. The result is broadcast where dimensions outside D
    were broadcast.
    """
    kind = reduction_kind(op)
    broadcast = producer(op.operand, dlvm.BroadcastToOp)
    if broadcast is None or op.init is not None or kind not in _SUMMARIZING or len(op.dims) == 0:
        return None
    x, dims = broadcast.operand, list(op.dims)
    source, target = shape(x), shape(broadcast.result)
    if len(source) == 0:
        repeats, reduced = math.prod(target[d] for d in dims), x
    elif all(source[d] == 1 for d in dims):
        repeats = math.prod(target[d] for d in dims)
        reduced = dlvm.reshape(x, [n for d, n in enumerate(source) if d not in dims])
    else:
        repeats = math.prod(target[d] for d in dims if source[d] == 1)
        reduced = dlvm.reduce(kind, x, dims)
    if kind != dlvm.ReductionKind.add or repeats == 1:
        return reduced
    return dlvm.mul(reduced, splat_like(reduced, repeats, dims=()))


@_rule(
    *BINARY_OPS,
    exactness=EXACT,
    sample="""
func.func @sample(%a: tensor<2x3x4xf32>, %b: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<4x2x3xi1>) {
  %at = dlvm.transpose %a perm [2, 0, 1] : tensor<2x3x4xf32>
  %bt = dlvm.transpose %b perm [2, 0, 1] : tensor<2x3x4xf32>
  %r = dlvm.sub %at, %bt : tensor<4x2x3xf32>, tensor<4x2x3xf32>
  %at2 = dlvm.transpose %a perm [2, 0, 1] : tensor<2x3x4xf32>
  %bt2 = dlvm.transpose %b perm [2, 0, 1] : tensor<2x3x4xf32>
  %c = dlvm.cmp lt, %at2, %bt2 : tensor<4x2x3xf32>, tensor<4x2x3xf32>
  return %r, %c : tensor<4x2x3xf32>, tensor<4x2x3xi1>
}""",
)
def binary_of_transposes(op: ir.OpView) -> ir.Value | None:
    """op(transpose(a, p), transpose(b, p)) -> transpose(op(a, b), p) (two transposes become one)."""
    ta, tb = producer(op.lhs, dlvm.TransposeOp), producer(op.rhs, dlvm.TransposeOp)
    if ta is None or tb is None or ta.operand.type != tb.operand.type:
        return None
    if not (single_use(op.lhs) and single_use(op.rhs)) or transpose_perm(ta) != transpose_perm(tb):
        return None
    element = tensor_type(op.result).element_type
    inner = rebuilt(op, [ta.operand, tb.operand], ir.RankedTensorType.get(shape(ta.operand), element))
    return transpose(inner, transpose_perm(ta))


def _transposed(value: ir.Value) -> ir.Value:
    """The transpose of a matrix, reusing the operand of a transpose that made it."""
    t = is_matrix_transpose(value)
    return t.operand if t is not None else dlvm.transpose(value)


@_rule(
    dlvm.TransposeOp,
    exactness=EXACT,
    sample="""
func.func @sample(%a: tensor<3x2xf32>, %b: tensor<3x4xf32>) -> tensor<4x2xf32> {
  %at = dlvm.transpose %a : tensor<3x2xf32>
  %d = dlvm.dot %at, %b : tensor<2x3xf32>, tensor<3x4xf32>
  %r = dlvm.transpose %d : tensor<2x4xf32>
  return %r : tensor<4x2xf32>
}""",
)
def transpose_of_dot(op: dlvm.TransposeOp) -> ir.Value | None:
    """transpose(dot(a, b)) -> dot(transpose(b), transpose(a)) on matrices.

    The transposes of the new dot's operands are read in place by the
    lowering (and a transpose of a transpose folds), so this removes the
    transpose of the product and adds none that gets materialized.
    """
    d = producer(op.operand, dlvm.DotOp)
    if d is None or transpose_perm(op) != [1, 0] or not single_use(d.result):
        return None
    if len(shape(d.lhs)) != 2 or len(shape(d.rhs)) != 2:
        return None
    return dlvm.dot(_transposed(d.rhs), _transposed(d.lhs))


# --------------------------------------------------------------------------
# The pass
# --------------------------------------------------------------------------


@register_pass
class AlgebraSimplify(ModulePass):
    """Applies the ``algebra-simplify`` rules (and the dialect's folders) to a fixed point."""

    name = "dlvm-algebra-simplify"
    summary = "Algebraic simplification (DLVM AlgebraSimplification, plus AD cleanup rules)"
    options = (
        Option("fast-math", bool, False, "also apply rules that change results (reassociation, x*0, x/x, ...)"),
        Option("strict", bool, False, "apply bit-exact rules only (keep signed zeros, no refining rules)"),
    )

    def run(self, module: ir.Operation) -> None:
        if self.strict and self.fast_math:
            raise PassError("options 'strict' and 'fast-math' exclude each other")
        allowed = allowed_exactness(strict=self.strict, fast_math=self.fast_math)
        apply_rules(module, rule_set(RULE_SET).select(allowed))
