"""dlvm-layout-assignment (backend/layout_assignment.py) on a network written in NHWC: the
JAX importer puts transposes around every NCHW convolution; the bias, activation, residual
add, pooling and reductions between them take the convolutions' layout and the transposes
cancel. Value and gradients agree with JAX in float64."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

import dlvm_mlir.jax as dj  # noqa: E402
from dlvm_mlir import make_context  # noqa: E402
from dlvm_mlir.backend.kernel_fusion import generalize_for_fusion  # noqa: E402
from dlvm_mlir.backend.layout_assignment import assign_layouts  # noqa: E402
from mlir import ir  # noqa: E402

NHWC = ("NHWC", "HWIO", "NHWC")


def conv(x, k, stride=1):
    return lax.conv_general_dilated(x, k, (stride, stride), "SAME", dimension_numbers=NHWC)


def nhwc_resnet(p, x, labels):
    """conv-bias-relu, a residual block, 2x2 max pooling, a strided convolution, the mean
    over the pixels, a dense layer and softmax cross-entropy, all in NHWC."""
    h = jax.nn.relu(conv(x, p["k1"]) + p["b1"])
    r = jax.nn.relu(conv(h, p["k2"]) + p["b2"])
    h = jax.nn.relu(conv(r, p["k3"]) + p["b3"] + h)
    h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = jnp.tanh(conv(h, p["k4"], stride=2))
    h = jnp.mean(h, axis=(1, 2))
    logp = jax.nn.log_softmax(h @ p["w"] + p["c"])
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


def _data(seed: int = 0, batch: int = 3, pixels: tuple[int, int] = (11, 9), f: int = 7):
    """Odd channel counts (3 in, ``f`` filters); 11 x 9 pixels: pooling drops a row, the
    stride-2 SAME convolution pads."""
    rng = np.random.default_rng(seed)
    c = 3
    shapes = {"k1": (3, 3, c, f), "b1": (f,), "k2": (3, 3, f, f), "b2": (f,), "k3": (1, 1, f, f), "b3": (f,),
              "k4": (3, 3, f, 5), "w": (5, 4), "c": (4,)}
    params = {name: rng.standard_normal(shape) * 0.4 for name, shape in shapes.items()}
    x = rng.standard_normal((batch, *pixels, c))
    labels = rng.integers(0, 4, batch).astype(np.int32)
    return params, x, labels


@pytest.mark.parametrize("batch,pixels,f", [
    (3, (11, 9), 7),     # below the thread split, rows narrower than two f64 vectors
    (8, (18, 17), 20),   # above it (8 x 18 x 17 x 20 activations); 20 filters = 12 + 8; 17 = 2 x 8 + 1
])
def test_nhwc_network_value_and_gradient_match_jax_in_float64(batch, pixels, f) -> None:
    params, x, labels = _data(batch=batch, pixels=pixels, f=f)
    with jax.enable_x64(True):
        value, grads = jax.value_and_grad(dj.jit(nhwc_resnet))(params, x, labels)
        want_value, want_grads = jax.value_and_grad(nhwc_resnet)(params, x, labels)
        assert np.asarray(value).dtype == np.float64
    np.testing.assert_allclose(value, want_value, rtol=1e-10)
    for name in params:
        np.testing.assert_allclose(grads[name], want_grads[name], rtol=1e-9, atol=1e-12, err_msg=name)


def _transposed_activations(module: ir.Module) -> list[str]:
    """The result types of the rank-4 copies with a permuted read of a batch of 3 (the
    activations' transposes, not the filters')."""
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.generic" and len(op.operands) == 2:
            read, write = (ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"]))
            body = list(op.regions[0].blocks[0].operations)
            kind = ir.RankedTensorType(op.results[0].type)
            if len(body) == 1 and str(read) != str(write) and kind.rank == 4 and 3 in kind.shape[:1]:
                found.append(str(kind))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def test_the_transposes_between_convolutions_cancel() -> None:
    """The forward program at the linalg stage: without layout assignment every convolution
    has a transpose of its input and of its output; with it, only the input's transpose is
    left (the max pooling's window read is tied to its output's pixel loops)."""
    params, x, labels = _data()
    text = dj.jit(nhwc_resnet).ir(params, x, labels, stage="linalg")
    with make_context():
        module = ir.Module.parse(text)
        generalize_for_fusion(module)
        before = _transposed_activations(module)
        groups = assign_layouts(module)
        assert module.operation.verify()
        after = _transposed_activations(module)
    assert len(before) == 8, before
    assert groups and sum(g.after for g in groups) < sum(g.before for g in groups)
    assert after == ["tensor<3x3x11x9xf32>"], after


INIT_READ = """
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%x: tensor<4x6xf32>, %acc: tensor<6x4xf32>) -> tensor<4x6xf32> {
  %e = tensor.empty() : tensor<6x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x6xf32>) outs(%e : tensor<6x4xf32>) permutation = [1, 0]
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<6x4xf32>) outs(%acc : tensor<6x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<6x4xf32>
  %f = tensor.empty() : tensor<4x6xf32>
  %u = linalg.transpose ins(%r : tensor<6x4xf32>) outs(%f : tensor<4x6xf32>) permutation = [1, 0]
  return %u : tensor<4x6xf32>
}
"""


def test_an_init_the_body_reads_is_converted_not_rebuilt() -> None:
    """A generic accumulating into an argument (its body reads the init) between two
    transposes: the group takes the argument's transpose instead of the two, and the init
    keeps its values (converted into the layout, not replaced by an empty). Compiled, it
    agrees with numpy."""
    from dlvm_mlir.backend import CpuOptions, compile_cpu

    with make_context():
        module = ir.Module.parse(INIT_READ)
        generalize_for_fusion(module)
        (group,) = assign_layouts(module)
        assert module.operation.verify()
        assert (group.before, group.after) == (48, 24)
    exe = compile_cpu(INIT_READ, options=CpuOptions(threads=1), use_cache=False)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    acc = rng.standard_normal((6, 4)).astype(np.float32)
    np.testing.assert_array_equal(exe.entry("f")(x, acc), x + acc.T)
