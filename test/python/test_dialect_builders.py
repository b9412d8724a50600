"""Every dlvm op built from Python with inferred result types."""

from __future__ import annotations

import pytest
from mlir import ir
from mlir.dialects import func

import dlvm_mlir
from dlvm_mlir.dialects import dlvm
from dlvm_mlir.dialects.dlvm import DerivativeDecl


def tensor(shape, elt="f32"):
    return ir.RankedTensorType.get(shape, ir.Type.parse(elt))


@pytest.fixture
def builder():
    """Yields `make(arg_types) -> block arguments` inside a fresh function."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()

        def make(*types):
            with ir.InsertionPoint(module.body):
                f = func.FuncOp(f"f{len(module.body.operations)}", (list(types), []))
                block = f.add_entry_block()
            make.ip = ir.InsertionPoint(block)
            make.ip.__enter__()
            make.block = block
            return block.arguments

        yield make
        make.ip.__exit__(None, None, None)
        with ir.InsertionPoint(make.block):
            func.ReturnOp([])
        assert module.operation.verify()


UNARY = [
    "neg", "exp", "log", "tanh", "sigmoid", "relu", "sqrt", "rsqrt", "square", "sign", "abs",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "floor", "ceil", "round",
    "rint", "erf", "erfc", "lgamma", "digamma", "log1p", "expm1",
]
BINARY = ["add", "sub", "mul", "div", "pow", "min", "max", "mod", "floor_div", "trunc_div"]


@pytest.mark.parametrize("name", UNARY)
def test_unary(builder, name):
    (x,) = builder(tensor([4, 8]))
    op = getattr(dlvm, name)(x)
    assert str(op.type) == "tensor<4x8xf32>"


@pytest.mark.parametrize("name", BINARY)
def test_binary_broadcast(builder, name):
    x, row, s = builder(tensor([4, 8]), tensor([1, 8]), tensor([]))
    assert str(getattr(dlvm, name)(x, row).type) == "tensor<4x8xf32>"
    assert str(getattr(dlvm, name)(s, x).type) == "tensor<4x8xf32>"


def test_logical_cmp_select(builder):
    b, i, x = builder(tensor([4], "i1"), tensor([4], "i32"), tensor([3, 4]))
    assert str(dlvm.and_(b, b).type) == "tensor<4xi1>"
    assert str(dlvm.or_(i, i).type) == "tensor<4xi32>"
    assert str(dlvm.not_(b).type) == "tensor<4xi1>"
    m = dlvm.cmp(dlvm.CmpPredicate.ge, x, x)
    assert str(m.type) == "tensor<3x4xi1>"
    assert str(dlvm.select(m, x, x).type) == "tensor<3x4xf32>"


@pytest.mark.parametrize(
    "lhs,rhs,expected",
    [
        ([2, 3], [3, 4], [2, 4]),
        ([5, 2, 3], [5, 3, 4], [5, 2, 4]),
        ([2, 3], [3], [2]),
        ([3], [3, 4], [4]),
        ([3], [3], []),
    ],
)
def test_dot(builder, lhs, rhs, expected):
    a, b = builder(tensor(lhs), tensor(rhs))
    assert dlvm.dot(a, b).type == tensor(expected)


def test_shape_ops(builder):
    x, v = builder(tensor([2, 3]), tensor([3]))
    assert dlvm.transpose(x).type == tensor([3, 2])
    assert dlvm.transpose(x, perm=[0, 1]).type == tensor([2, 3])
    assert dlvm.reverse(x, [1]).type == tensor([2, 3])
    assert dlvm.concatenate([x, x], 1).type == tensor([2, 6])
    assert dlvm.slice(x, [0, 1], [2, 2]).type == tensor([2, 2])
    assert dlvm.slice(x, [0, 0], [1, 2], strides=[1, 2]).type == tensor([1, 2])
    assert dlvm.reshape(x, [6]).type == tensor([6])
    assert dlvm.pad_shape(v, 1).type == tensor([3, 1])
    p = dlvm.pad_shape(v, 0)
    assert dlvm.squeeze_shape(p, 0).type == tensor([3])
    assert dlvm.broadcast_to(p, [5, 3]).type == tensor([5, 3])


def test_reductions(builder):
    x, init, img = builder(tensor([4, 8]), tensor([]), tensor([2, 3, 8, 8]))
    kinds = dlvm.ReductionKind
    assert dlvm.reduce(kinds.add, x, [1]).type == tensor([4])
    assert dlvm.reduce(kinds.max, x, [0, 1], init=init).type == tensor([])
    assert dlvm.reduce(kinds.mean, x, [0]).type == tensor([8])
    assert dlvm.scan(kinds.mul, x, 1).type == tensor([4, 8])
    pooled = dlvm.reduce_window(kinds.max, img, [1, 1, 2, 2], [1, 1, 2, 2], dlvm.Padding.none)
    assert pooled.type == tensor([2, 3, 4, 4])
    same = dlvm.reduce_window(kinds.mean, img, [1, 1, 3, 3], [1, 1, 2, 2], dlvm.Padding.half)
    assert same.type == tensor([2, 3, 4, 4])
    full = dlvm.reduce_window(kinds.add, img, [1, 1, 3, 3], [1, 1, 1, 1], dlvm.Padding.full)
    assert full.type == tensor([2, 3, 10, 10])
    assert dlvm.softmax(x, 1).type == tensor([4, 8])
    assert dlvm.log_softmax(x, 0).type == tensor([4, 8])


def test_convolve(builder):
    x, k = builder(tensor([2, 4, 8, 8]), tensor([6, 2, 3, 3]))
    y = dlvm.convolve(x, k, strides=[2, 2], padding=[1, 1, 1, 1], groups=2)
    assert y.type == tensor([2, 6, 4, 4])
    d = dlvm.convolve(x, k, lhs_dilation=[2, 2], rhs_dilation=[2, 2], groups=2)
    assert d.type == tensor([2, 6, 11, 11])


def test_literals_and_casts(builder):
    (x,) = builder(tensor([4]))
    attr = ir.DenseElementsAttr.get_splat(tensor([2, 2]), ir.FloatAttr.get_f32(1.5))
    assert dlvm.constant(attr).type == tensor([2, 2])
    assert dlvm.cast(x, ir.TypeAttr.get(ir.F16Type.get())).type == tensor([4], "f16")
    assert dlvm.bitcast(x, ir.TypeAttr.get(ir.IntegerType.get_signless(32))).type == tensor([4], "i32")
    r = dlvm.random([3, 5], 0.0, 1.0, ir.TypeAttr.get(ir.F64Type.get()), seed=9)
    assert r.type == tensor([3, 5], "f64")


def test_inference_errors_are_exceptions(builder):
    a, b = builder(tensor([4, 8]), tensor([4, 3]))
    with pytest.raises(ir.MLIRError, match="not broadcast-compatible"):
        dlvm.add(a, b)
    with pytest.raises(ir.MLIRError, match="contraction dimensions do not match"):
        dlvm.dot(a, a)


def test_parsed_ops_are_generated_classes():
    with ir.Context():
        m = ir.Module.parse(
            "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %0 = dlvm.exp %x : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}"
        )
        op = m.body.operations[0].regions[0].blocks[0].operations[0]
        assert isinstance(op, dlvm.ExpOp)


def test_make_context_loads_dialect():
    ctx = dlvm_mlir.make_context()
    assert ctx.is_registered_operation("dlvm.add")
    assert ctx.is_registered_operation("dlvm.convolve")


def test_derivative_decl_round_trip():
    with ir.Context():
        m = ir.Module.parse(
            "func.func @foo(%x: tensor<1x4xf32>, %w: tensor<4x2xf32>) -> tensor<1x2xf32> {\n"
            "  %0 = dlvm.dot %x, %w : tensor<1x4xf32>, tensor<4x2xf32>\n"
            "  return %0 : tensor<1x2xf32>\n}"
        )
        primal = m.body.operations[0]
        decl = DerivativeDecl("gradient", "foo", wrt=(1,), keeping=(0,), seedable=True)
        assert str(decl.to_attr()) == "#dlvm.gradient<of @foo wrt [1] keeping [0] seedable>"
        assert DerivativeDecl.from_attr(decl.to_attr()) == decl
        expected = decl.expected_type(primal.type)
        assert str(expected) == (
            "(tensor<1x4xf32>, tensor<4x2xf32>, tensor<1x2xf32>) -> (tensor<4x2xf32>, tensor<1x2xf32>)"
        )
        tangent = DerivativeDecl("tangent", "foo", wrt=(0,))
        assert str(tangent.expected_type(primal.type)) == (
            "(tensor<1x4xf32>, tensor<4x2xf32>, tensor<1x4xf32>) -> tensor<1x2xf32>"
        )
        with pytest.raises(ValueError, match="invalid derivative declaration"):
            DerivativeDecl("gradient", "foo", wrt=(0, 0)).to_attr()
