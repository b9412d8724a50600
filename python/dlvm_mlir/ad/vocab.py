"""The shared vocabulary of derivative rules: small builders over values.

Every helper inserts at the current ``InsertionPoint`` with the current
``Location``. A tensor value gets ``dlvm`` ops (with DLVM broadcasting: a
rank-0 operand broadcasts to anything); a scalar float gets ``arith``/``math``
ops. Python numbers are accepted where a value is expected and become
constants of the other operand's element type (rank-0 for tensors), so a rule
reads like its formula::

    mul(g, sub(1.0, square(y)))      # d tanh: g * (1 - y^2)

Every op emitted here has a derivative rule itself, so generated code can be
differentiated again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mlir import ir
from mlir.dialects import arith
from mlir.dialects import math as math_d
from mlir.dialects import tensor

from dlvm_mlir.dialects import dlvm

Operand = ir.Value | float | int

# --------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------


def is_tensor(t: ir.Type | ir.Value) -> bool:
    return isinstance(_type(t), ir.RankedTensorType)


def element_type(t: ir.Type | ir.Value) -> ir.Type:
    t = _type(t)
    return ir.RankedTensorType(t).element_type if is_tensor(t) else t


def is_float(t: ir.Type | ir.Value) -> bool:
    """A float scalar or a ranked tensor of floats: the types that carry derivatives."""
    t = _type(t)
    if isinstance(t, ir.RankedTensorType):
        t = t.element_type
    return isinstance(t, ir.FloatType)


def shape(t: ir.Type | ir.Value) -> list[int]:
    t = _type(t)
    return list(ir.RankedTensorType(t).shape) if is_tensor(t) else []


def rank(t: ir.Type | ir.Value) -> int:
    return len(shape(t))


def tensor_type(dims: Sequence[int], elt: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(dims), elt)


def _type(t: ir.Type | ir.Value) -> ir.Type:
    return t.type if isinstance(t, ir.Value) else t


# --------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------


def const(t: ir.Type, value: float) -> ir.Value:
    """A splat constant of type ``t`` (tensor: dlvm.constant; scalar: arith.constant)."""
    t = _type(t)
    elt = element_type(t)
    attr = ir.FloatAttr.get(elt, float(value)) if isinstance(elt, ir.FloatType) else ir.IntegerAttr.get(elt, int(value))
    if is_tensor(t):
        return dlvm.ConstantOp(ir.DenseElementsAttr.get_splat(t, attr)).result
    return arith.ConstantOp(t, attr).result


def zeros(t: ir.Type) -> ir.Value:
    return const(t, 0.0)


def ones(t: ir.Type) -> ir.Value:
    return const(t, 1.0)


def full_like(like: ir.Value, value: float) -> ir.Value:
    """A splat of ``value`` with ``like``'s type; dynamic sizes are read from ``like``."""
    t = _type(like.type)
    if not is_tensor(t) or ir.RankedTensorType(t).has_static_shape:
        return const(t, value)
    sizes = [
        tensor.DimOp(like, index(d)).result
        for d, n in enumerate(shape(t))
        if n == ir.ShapedType.get_dynamic_size()
    ]
    return tensor.SplatOp(t, scalar_const(element_type(t), value), sizes).result


def zeros_like(like: ir.Value) -> ir.Value:
    return full_like(like, 0.0)


def scalar_const(elt: ir.Type, value: float) -> ir.Value:
    """An ``arith.constant`` scalar of element type ``elt``."""
    return const(elt, value)


def scalar_like(like: ir.Value | ir.Type, value: float) -> ir.Value:
    """A constant that broadcasts against ``like``: rank 0 for tensors, else ``like``'s type."""
    t = _type(like)
    if is_tensor(t):
        return const(tensor_type([], element_type(t)), value)
    return const(t, value)


def _val(x: Operand, like: ir.Value) -> ir.Value:
    return x if isinstance(x, ir.Value) else scalar_like(like, x)


def _pair(a: Operand, b: Operand) -> tuple[ir.Value, ir.Value]:
    if isinstance(a, ir.Value):
        return a, _val(b, a)
    if isinstance(b, ir.Value):
        return _val(a, b), b
    raise TypeError("at least one operand must be an MLIR value")


# --------------------------------------------------------------------------
# Elementwise arithmetic
# --------------------------------------------------------------------------

_BINARY = {
    # name: (dlvm builder, scalar op name)
    "add": (dlvm.add, "arith.addf"),
    "sub": (dlvm.sub, "arith.subf"),
    "mul": (dlvm.mul, "arith.mulf"),
    "div": (dlvm.div, "arith.divf"),
    "pow": (dlvm.pow, "math.powf"),
}


def _binary(name: str, a: Operand, b: Operand) -> ir.Value:
    a, b = _pair(a, b)
    tensor_builder, scalar_name = _BINARY[name]
    if is_tensor(a):
        return tensor_builder(a, b)
    return create(scalar_name, [a.type], [a, b])


def add(a: Operand, b: Operand) -> ir.Value:
    return _binary("add", a, b)


def sub(a: Operand, b: Operand) -> ir.Value:
    return _binary("sub", a, b)


def mul(a: Operand, b: Operand) -> ir.Value:
    return _binary("mul", a, b)


def div(a: Operand, b: Operand) -> ir.Value:
    return _binary("div", a, b)


def pow_(a: Operand, b: Operand) -> ir.Value:
    return _binary("pow", a, b)




def add_all(values: Sequence[ir.Value]) -> ir.Value:
    total = values[0]
    for v in values[1:]:
        total = add(total, v)
    return total


def mul_all(values: Sequence[ir.Value]) -> ir.Value:
    total = values[0]
    for v in values[1:]:
        total = mul(total, v)
    return total


_UNARY = {
    # name: (dlvm builder, scalar op name or None when composed)
    "neg": (dlvm.neg, "arith.negf"),
    "exp": (dlvm.exp, "math.exp"),
    "log": (dlvm.log, "math.log"),
    "sqrt": (dlvm.sqrt, "math.sqrt"),
    "rsqrt": (dlvm.rsqrt, "math.rsqrt"),
    "sin": (dlvm.sin, "math.sin"),
    "cos": (dlvm.cos, "math.cos"),
    "sinh": (dlvm.sinh, "math.sinh"),
    "cosh": (dlvm.cosh, "math.cosh"),
    "abs": (dlvm.abs, "math.absf"),
    "erf": (dlvm.erf, "math.erf"),
    "digamma": (dlvm.digamma, None),
    "sign": (dlvm.sign, None),
}


def _unary(name: str, x: ir.Value) -> ir.Value:
    tensor_builder, scalar_name = _UNARY[name]
    if is_tensor(x):
        return tensor_builder(x)
    if scalar_name is None:
        raise TypeError(f"'{name}' has no scalar form in the vocabulary")
    return create(scalar_name, [x.type], [x])


def neg(x: ir.Value) -> ir.Value:
    return _unary("neg", x)


def exp(x: ir.Value) -> ir.Value:
    return _unary("exp", x)


def log(x: ir.Value) -> ir.Value:
    return _unary("log", x)


def sqrt(x: ir.Value) -> ir.Value:
    return _unary("sqrt", x)


def rsqrt(x: ir.Value) -> ir.Value:
    return _unary("rsqrt", x)


def sin(x: ir.Value) -> ir.Value:
    return _unary("sin", x)


def cos(x: ir.Value) -> ir.Value:
    return _unary("cos", x)


def sinh(x: ir.Value) -> ir.Value:
    return _unary("sinh", x)


def cosh(x: ir.Value) -> ir.Value:
    return _unary("cosh", x)


def erf(x: ir.Value) -> ir.Value:
    return _unary("erf", x)


def digamma(x: ir.Value) -> ir.Value:
    return _unary("digamma", x)


def abs_(x: ir.Value) -> ir.Value:
    return _unary("abs", x)


def square(x: ir.Value) -> ir.Value:
    return dlvm.square(x) if is_tensor(x) else mul(x, x)


def sign(x: ir.Value) -> ir.Value:
    """-1, 0 or 1 (for scalars: two selects, as math has no sign op)."""
    if is_tensor(x):
        return dlvm.sign(x)
    positive = select(cmp("gt", x, 0.0), scalar_like(x, 1.0), scalar_like(x, 0.0))
    return select(cmp("lt", x, 0.0), scalar_like(x, -1.0), positive)


def abs_derivative(x: ir.Value, g: ir.Value) -> ir.Value:
    """``g * d|x|/dx`` with JAX's choice at the kink: ``g`` where x >= 0 (also at
    -0.0), ``-g`` elsewhere (also for NaN)."""
    return select(cmp("ge", x, 0.0), g, neg(g))


def extremum_derivative(x: ir.Value, other: ir.Value, z: ir.Value, g: ir.Value) -> ir.Value:
    """``g * dz/dx`` for ``z = max(x, other)`` or ``min(x, other)``, JAX's lax.max
    rule: ``g`` where x alone equals z, ``g / 2`` where both do (a tie), 0 where
    x does not (including a NaN result)."""
    return select(cmp("eq", x, z), select(cmp("eq", other, z), mul(g, 0.5), g), 0.0)


def reciprocal(x: ir.Value) -> ir.Value:
    return div(1.0, x)


def floor(x: ir.Value) -> ir.Value:
    return dlvm.floor(x) if is_tensor(x) else create("math.floor", [x.type], [x])


def trigamma(x: ir.Value) -> ir.Value:
    """psi'(x) from differentiable elementary ops (about 1e-10 relative error).

    For x >= 1/2: psi'(x) = sum_{k<6} 1/(x+k)^2 + the asymptotic series at
    x + 6. For x < 1/2 the reflection psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x).
    """
    reflect = cmp("lt", x, 0.5)
    z = select(reflect, sub(1.0, x), x)
    total = add_all([reciprocal(square(add(z, float(k)))) for k in range(6)])
    w = add(z, 6.0)
    inv = reciprocal(w)
    inv2 = square(inv)
    # 1/w + 1/(2w^2) + 1/(6w^3) - 1/(30w^5) + 1/(42w^7) - 1/(30w^9)
    series = mul(inv2, add(1.0 / 6.0, mul(inv2, add(-1.0 / 30.0, mul(inv2, add(1.0 / 42.0, mul(inv2, -1.0 / 30.0)))))))
    tail = add(add(inv, mul(inv2, 0.5)), mul(inv, series))
    positive = add(total, tail)
    pi = math.pi
    reflected = sub(div(pi * pi, square(sin(mul(x, pi)))), positive)
    return select(reflect, reflected, positive)


# --------------------------------------------------------------------------
# Comparison and selection
# --------------------------------------------------------------------------

_SCALAR_PREDICATES = {"lt": 4, "le": 5, "gt": 2, "ge": 3, "eq": 1, "ne": 13}
"""arith.cmpf predicates: olt, ole, ogt, oge, oeq, une (dlvm.cmp's semantics)."""


def cmp(predicate: str, a: Operand, b: Operand) -> ir.Value:
    """An i1 mask (tensor or scalar) comparing ``a`` and ``b`` (lt, le, gt, ge, eq, ne)."""
    a, b = _pair(a, b)
    if is_tensor(a):
        return dlvm.cmp(getattr(dlvm.CmpPredicate, predicate), a, b)
    i64 = ir.IntegerType.get_signless(64)
    attr = ir.IntegerAttr.get(i64, _SCALAR_PREDICATES[predicate])
    return create("arith.cmpf", [ir.IntegerType.get_signless(1)], [a, b], {"predicate": attr})


def select(mask: ir.Value, a: Operand, b: Operand) -> ir.Value:
    a, b = _pair(a, b)
    if is_tensor(a) or is_tensor(mask):
        return dlvm.select(mask, a, b)
    return create("arith.select", [a.type], [mask, a, b])


def mask_to_float(mask: ir.Value, like: ir.Value) -> ir.Value:
    """1.0 where ``mask`` holds, else 0.0, in ``like``'s element type."""
    return select(mask, scalar_like(like, 1.0), scalar_like(like, 0.0))


# --------------------------------------------------------------------------
# Shapes and broadcasting
# --------------------------------------------------------------------------


class DynamicShapeError(ValueError):
    """A rule needs a static size where the tensor has a dynamic one."""


def _static_dims(dims: Sequence[int], what: str) -> list[int]:
    dims = list(dims)
    if any(d == ir.ShapedType.get_dynamic_size() for d in dims):
        raise DynamicShapeError(f"{what} needs static sizes")
    return dims


def reshape(x: ir.Value, dims: Sequence[int]) -> ir.Value:
    if shape(x) == list(dims):
        return x
    return dlvm.reshape(x, _static_dims(dims, "reshape"))


def transpose(x: ir.Value, perm: Sequence[int]) -> ir.Value:
    """dlvm.transpose; ``perm`` is left implicit when it is the default (reversal)."""
    perm = list(perm)
    if perm == list(range(len(perm))):
        return x
    if perm == list(reversed(range(len(perm)))):
        return dlvm.TransposeOp(x).result
    return dlvm.TransposeOp(x, perm=perm).result


def inverse_permutation(perm: Sequence[int]) -> list[int]:
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return inverse


def broadcast_to(x: ir.Value, dims: Sequence[int]) -> ir.Value:
    if shape(x) == list(dims):
        return x
    return dlvm.broadcast_to(x, _static_dims(dims, "broadcast_to"))


def reduce(kind: str, x: ir.Value, dims: Sequence[int], init: ir.Value | None = None) -> ir.Value:
    return dlvm.ReduceOp(getattr(dlvm.ReductionKind, kind), x, list(dims), init=init).result


def reduce_sum(x: ir.Value, dims: Sequence[int]) -> ir.Value:
    if not dims:
        return x
    return reduce("add", x, sorted(dims))


def sum_all(x: ir.Value) -> ir.Value:
    """The sum of every element as a rank-0 tensor (a scalar stays as is)."""
    return reduce_sum(x, range(rank(x))) if is_tensor(x) else x


def sum_to(g: ir.Value, t: ir.Type) -> ir.Value:
    """Undo broadcasting: sum ``g`` over the dimensions that broadcasting expanded to reach ``t``."""
    target = shape(t)
    if shape(g) == target:
        return g
    if not target:
        return sum_all(g)
    dims = [d for d, (have, want) in enumerate(zip(shape(g), target, strict=True)) if have != want]
    return reshape(reduce_sum(g, dims), target)


def keep_dims(g: ir.Value, full: Sequence[int], dims: Sequence[int]) -> ir.Value:
    """Reshape a reduction's result ``g`` to ``full`` with the reduced ``dims`` as size 1."""
    kept = [1 if d in dims else n for d, n in enumerate(full)]
    return reshape(g, kept)


def expand_reduced(g: ir.Value, full: Sequence[int], dims: Sequence[int]) -> ir.Value:
    """Broadcast a reduction's result ``g`` back over the reduced ``dims`` of ``full``."""
    return broadcast_to(keep_dims(g, full, dims), full)


def slice_(x: ir.Value, offsets: Sequence[int], sizes: Sequence[int], strides: Sequence[int] | None = None) -> ir.Value:
    if list(offsets) == [0] * len(offsets) and list(sizes) == shape(x) and not _strided(strides):
        return x
    strides_attr = list(strides) if _strided(strides) else None
    return dlvm.SliceOp(x, list(offsets), list(sizes), strides=strides_attr).result


def _strided(strides: Sequence[int] | None) -> bool:
    return strides is not None and any(s != 1 for s in strides)


def concat(values: Sequence[ir.Value], axis: int) -> ir.Value:
    if len(values) == 1:
        return values[0]
    return dlvm.concatenate(list(values), axis)


def reverse(x: ir.Value, dims: Sequence[int]) -> ir.Value:
    if not dims:
        return x
    return dlvm.reverse(x, list(dims))


def pad_shape(x: ir.Value, dim: int) -> ir.Value:
    return dlvm.pad_shape(x, dim)


def squeeze_shape(x: ir.Value, dim: int) -> ir.Value:
    return dlvm.squeeze_shape(x, dim)


def dot(a: ir.Value, b: ir.Value) -> ir.Value:
    return dlvm.dot(a, b)


def scan(kind: str, x: ir.Value, dim: int, exclusive: bool = False, reverse: bool = False) -> ir.Value:
    return dlvm.scan(
        getattr(dlvm.ReductionKind, kind), x, dim, exclusive=exclusive or None, reverse=reverse or None
    )


def cast(x: ir.Value, elt: ir.Type) -> ir.Value:
    if element_type(x) == elt:
        return x
    if is_tensor(x):
        return dlvm.cast(x, ir.TypeAttr.get(elt))
    wider = ir.FloatType(elt).width > ir.FloatType(element_type(x)).width
    return create("arith.extf" if wider else "arith.truncf", [elt], [x])


def insert_into(
    source: ir.Value,
    dest: ir.Value,
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int] | None = None,
) -> ir.Value:
    """``tensor.insert_slice`` with static offsets, sizes and strides (rank-reducing allowed)."""
    strides = list(strides) if strides is not None else [1] * len(offsets)
    return tensor.InsertSliceOp(source, dest, [], [], [], list(offsets), list(sizes), strides).result


def insert_into_zeros(
    g: ir.Value,
    t: ir.Type,
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int] | None = None,
) -> ir.Value:
    """A tensor of type ``t`` that is ``g`` at the strided window and zero elsewhere."""
    return insert_into(g, zeros(t), offsets, sizes, strides)


def extract_from(
    source: ir.Value,
    result_type: ir.Type,
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int] | None = None,
) -> ir.Value:
    """``tensor.extract_slice`` with static offsets, sizes and strides."""
    strides = list(strides) if strides is not None else [1] * len(offsets)
    return tensor.ExtractSliceOp(result_type, source, [], [], [], list(offsets), list(sizes), strides).result


# --------------------------------------------------------------------------
# Index arithmetic (loop bounds and tape positions)
# --------------------------------------------------------------------------


def index_type() -> ir.Type:
    return ir.IndexType.get()


def index(value: int) -> ir.Value:
    return arith.ConstantOp(index_type(), ir.IntegerAttr.get(index_type(), value)).result


def int_const(t: ir.Type, value: int) -> ir.Value:
    return arith.ConstantOp(t, ir.IntegerAttr.get(t, value)).result


def to_index(v: ir.Value) -> ir.Value:
    if isinstance(v.type, ir.IndexType):
        return v
    return create("arith.index_cast", [index_type()], [v])


def from_index(v: ir.Value, t: ir.Type) -> ir.Value:
    if isinstance(t, ir.IndexType):
        return v
    return create("arith.index_cast", [t], [v])


def iadd(a: ir.Value, b: ir.Value) -> ir.Value:
    return create("arith.addi", [a.type], [a, b])


def isub(a: ir.Value, b: ir.Value) -> ir.Value:
    return create("arith.subi", [a.type], [a, b])


def imul(a: ir.Value, b: ir.Value) -> ir.Value:
    return create("arith.muli", [a.type], [a, b])


def idiv(a: ir.Value, b: ir.Value) -> ir.Value:
    return create("arith.divsi", [a.type], [a, b])


def imax(a: ir.Value, b: ir.Value) -> ir.Value:
    return create("arith.maxsi", [a.type], [a, b])


def constant_int(v: ir.Value) -> int | None:
    """The value of an integer/index ``arith.constant``, else None."""
    owner = v.owner
    if not isinstance(owner, ir.OpView | ir.Operation) or owner.operation.name != "arith.constant":
        return None
    attr = owner.operation.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


# --------------------------------------------------------------------------
# Generic creation
# --------------------------------------------------------------------------


def create(
    name: str,
    results: Sequence[ir.Type],
    operands: Sequence[ir.Value],
    attributes: dict[str, ir.Attribute] | None = None,
) -> ir.Value:
    """Create a single-result op by name and return its result."""
    return ir.Operation.create(name, results=list(results), operands=list(operands), attributes=attributes or {}).result
