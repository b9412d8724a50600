"""Gradients of whole programs: an MLP, an RNN, loops, branches, a CFG, recursion.

Every check compares the synthesized gradient (reverse mode) and JVP
(forward mode) with central finite differences in float64.
"""

from __future__ import annotations

import numpy as np
import pytest

from dlvm_mlir.testing import check_gradients, check_tangents

TOLERANCE = 1e-6

MLP = """
func.func @loss(%x: tensor<4x5xf64>, %y: tensor<4x3xf64>, %w1: tensor<5x6xf64>, %b1: tensor<1x6xf64>,
                %w2: tensor<6x3xf64>, %b2: tensor<1x3xf64>) -> tensor<f64> {
  %0 = dlvm.dot %x, %w1 : tensor<4x5xf64>, tensor<5x6xf64>
  %1 = dlvm.add %0, %b1 : tensor<4x6xf64>, tensor<1x6xf64>
  %h = dlvm.tanh %1 : tensor<4x6xf64>
  %2 = dlvm.dot %h, %w2 : tensor<4x6xf64>, tensor<6x3xf64>
  %logits = dlvm.add %2, %b2 : tensor<4x3xf64>, tensor<1x3xf64>
  %p = dlvm.softmax %logits axis 1 : tensor<4x3xf64>
  %lp = dlvm.log %p : tensor<4x3xf64>
  %t = dlvm.mul %y, %lp : tensor<4x3xf64>, tensor<4x3xf64>
  %s = dlvm.reduce mean %t dims [0] : tensor<4x3xf64>
  %total = dlvm.reduce add %s dims [0] : tensor<3xf64>
  %l = dlvm.neg %total : tensor<f64>
  return %l : tensor<f64>
}
"""

RNN = """
func.func @rnn(%xs: tensor<5x3xf64>, %w: tensor<4x4xf64>, %u: tensor<3x4xf64>, %b: tensor<1x4xf64>,
               %h0: tensor<1x4xf64>) -> tensor<f64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %h = scf.for %t = %c0 to %c5 step %c1 iter_args(%hc = %h0) -> (tensor<1x4xf64>) {
    %x = tensor.extract_slice %xs[%t, 0] [1, 3] [1, 1] : tensor<5x3xf64> to tensor<1x3xf64>
    %a = dlvm.dot %hc, %w : tensor<1x4xf64>, tensor<4x4xf64>
    %i = dlvm.dot %x, %u : tensor<1x3xf64>, tensor<3x4xf64>
    %s = dlvm.add %a, %i : tensor<1x4xf64>, tensor<1x4xf64>
    %s2 = dlvm.add %s, %b : tensor<1x4xf64>, tensor<1x4xf64>
    %hn = dlvm.tanh %s2 : tensor<1x4xf64>
    scf.yield %hn : tensor<1x4xf64>
  }
  %l = dlvm.reduce add %h dims [0, 1] : tensor<1x4xf64>
  return %l : tensor<f64>
}
"""

WHILE = """
func.func @grow(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %limit = dlvm.constant dense<20.0> : tensor<f64>
  %r = scf.while (%v = %x) : (tensor<3xf64>) -> tensor<3xf64> {
    %s = dlvm.reduce add %v dims [0] : tensor<3xf64>
    %c = dlvm.cmp lt, %s, %limit : tensor<f64>, tensor<f64>
    %cc = tensor.extract %c[] : tensor<i1>
    scf.condition(%cc) %v : tensor<3xf64>
  } do {
  ^bb0(%v: tensor<3xf64>):
    %m = dlvm.mul %v, %w : tensor<3xf64>, tensor<3xf64>
    %n = dlvm.sin %v : tensor<3xf64>
    %o = dlvm.add %m, %n : tensor<3xf64>, tensor<3xf64>
    scf.yield %o : tensor<3xf64>
  }
  return %r : tensor<3xf64>
}
"""

RECURSIVE = """
func.func @power_tower(%x: tensor<f64>, %n: i32) -> tensor<f64> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %done = arith.cmpi eq, %n, %c0 : i32
  %r = scf.if %done -> (tensor<f64>) {
    scf.yield %x : tensor<f64>
  } else {
    %m = arith.subi %n, %c1 : i32
    %s = dlvm.sin %x : tensor<f64>
    %t = func.call @power_tower(%s, %m) : (tensor<f64>, i32) -> tensor<f64>
    %u = dlvm.mul %t, %x : tensor<f64>, tensor<f64>
    scf.yield %u : tensor<f64>
  }
  return %r : tensor<f64>
}
"""

CFG_LOOP = """
func.func @cfg(%x: tensor<f64>, %n: i32) -> tensor<f64> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  cf.br ^head(%x, %c0 : tensor<f64>, i32)
^head(%v: tensor<f64>, %i: i32):
  %c = arith.cmpi slt, %i, %n : i32
  cf.cond_br %c, ^body, ^exit
^body:
  %w = dlvm.sin %v : tensor<f64>
  %w2 = dlvm.mul %w, %x : tensor<f64>, tensor<f64>
  %i2 = arith.addi %i, %c1 : i32
  cf.br ^head(%w2, %i2 : tensor<f64>, i32)
^exit:
  return %v : tensor<f64>
}
"""

CFG_BRANCHES = """
func.func @cfg_branches(%x: tensor<2xf64>, %y: tensor<2xf64>, %k: i32) -> tensor<2xf64> {
  cf.switch %k : i32, [
    default: ^other,
    0: ^first,
    1: ^second
  ]
^first:
  %a = dlvm.mul %x, %y : tensor<2xf64>, tensor<2xf64>
  cf.br ^join(%a : tensor<2xf64>)
^second:
  %b = dlvm.exp %x : tensor<2xf64>
  cf.br ^join(%b : tensor<2xf64>)
^other:
  %c = dlvm.sin %y : tensor<2xf64>
  cf.br ^join(%c : tensor<2xf64>)
^join(%r: tensor<2xf64>):
  %s = dlvm.tanh %r : tensor<2xf64>
  return %s : tensor<2xf64>
}
"""

SCALAR_LOOP = """
func.func @scalar(%x: f64, %y: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x) -> (f64) {
    %m = arith.mulf %a, %y : f64
    %e = math.sin %m : f64
    %q = arith.addf %e, %a : f64
    scf.yield %q : f64
  }
  return %r : f64
}
"""

NESTED = """
func.func @nested(%x: tensor<2xf64>, %w: tensor<2xf64>, %n: index) -> tensor<2xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %half = dlvm.constant dense<0.5> : tensor<f64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (tensor<2xf64>) {
    %inner = scf.for %j = %c0 to %c2 step %c1 iter_args(%b = %a) -> (tensor<2xf64>) {
      %m = dlvm.mul %b, %w : tensor<2xf64>, tensor<2xf64>
      %s = dlvm.sin %m : tensor<2xf64>
      scf.yield %s : tensor<2xf64>
    }
    %odd = arith.remui %i, %c2 : index
    %is_odd = arith.cmpi eq, %odd, %c1 : index
    %next = scf.if %is_odd -> (tensor<2xf64>) {
      %t = dlvm.mul %inner, %x : tensor<2xf64>, tensor<2xf64>
      scf.yield %t : tensor<2xf64>
    } else {
      %t = dlvm.add %inner, %half : tensor<2xf64>, tensor<f64>
      scf.yield %t : tensor<2xf64>
    }
    scf.yield %next : tensor<2xf64>
  }
  return %r : tensor<2xf64>
}
"""

MULTI_CARRIED = """
func.func @swap(%x: tensor<2xf64>, %y: tensor<2xf64>, %w: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %r:3 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %x, %b = %y, %k = %x) -> (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) : i32 {
    %m = dlvm.mul %a, %w : tensor<2xf64>, tensor<2xf64>
    %t = dlvm.tanh %m : tensor<2xf64>
    %s = dlvm.add %t, %b : tensor<2xf64>, tensor<2xf64>
    scf.yield %b, %s, %x : tensor<2xf64>, tensor<2xf64>, tensor<2xf64>
  }
  %o = dlvm.mul %r#0, %r#2 : tensor<2xf64>, tensor<2xf64>
  return %o, %r#1 : tensor<2xf64>, tensor<2xf64>
}
"""


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


PROGRAMS = {
    "mlp": (
        MLP,
        "loss",
        lambda r: [
            r.standard_normal((4, 5)),
            np.eye(3)[r.integers(0, 3, 4)],
            r.standard_normal((5, 6)) * 0.5,
            r.standard_normal((1, 6)),
            r.standard_normal((6, 3)) * 0.5,
            r.standard_normal((1, 3)),
        ],
        [2, 3, 4, 5],
    ),
    "rnn_scf_for": (
        RNN,
        "rnn",
        lambda r: [
            r.standard_normal((5, 3)),
            r.standard_normal((4, 4)),
            r.standard_normal((3, 4)),
            r.standard_normal((1, 4)),
            r.standard_normal((1, 4)),
        ],
        None,
    ),
    "while_data_dependent": (WHILE, "grow", lambda r: [np.array([1.0, 2.0, 0.5]), np.array([1.5, 1.3, 1.7])], None),
    "recursion": (RECURSIVE, "power_tower", lambda r: [np.array(0.7), np.int32(3)], [0]),
    "cfg_loop": (CFG_LOOP, "cfg", lambda r: [np.array(1.2), np.int32(4)], [0]),
    "cfg_switch_0": (CFG_BRANCHES, "cfg_branches", lambda r: [r.standard_normal(2), r.standard_normal(2), np.int32(0)], [0, 1]),
    "cfg_switch_1": (CFG_BRANCHES, "cfg_branches", lambda r: [r.standard_normal(2), r.standard_normal(2), np.int32(1)], [0, 1]),
    "cfg_switch_default": (CFG_BRANCHES, "cfg_branches", lambda r: [r.standard_normal(2), r.standard_normal(2), np.int32(7)], [0, 1]),
    "scalar_arith_math_loop": (SCALAR_LOOP, "scalar", lambda r: [0.3, 1.4], None),
    "nested_for_if": (NESTED, "nested", lambda r: [r.standard_normal(2), r.standard_normal(2), 5], [0, 1]),
    "nested_zero_trips": (NESTED, "nested", lambda r: [r.standard_normal(2), r.standard_normal(2), np.int32(0)], [0, 1]),
    "multiple_carried_values": (MULTI_CARRIED, "swap", lambda r: [r.standard_normal(2) for _ in range(3)], None),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_gradient(name: str) -> None:
    text, function, make_args, wrt = PROGRAMS[name]
    report = check_gradients(text, function, *make_args(_rng()), wrt=wrt)
    report.assert_close(TOLERANCE)


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_tangent(name: str) -> None:
    text, function, make_args, wrt = PROGRAMS[name]
    report = check_tangents(text, function, *make_args(_rng()), wrt=wrt)
    report.assert_close(TOLERANCE)


def test_while_trip_count_follows_the_data() -> None:
    """Inputs that take 2 and 5 iterations both differentiate correctly."""
    for start in (np.array([5.0, 6.0, 4.0]), np.array([0.2, 0.1, 0.3])):
        report = check_gradients(WHILE, "grow", start, np.array([1.5, 1.3, 1.7]))
        report.assert_close(TOLERANCE)


def test_rnn_gradient_lowers_and_runs_on_the_cpu_backend() -> None:
    """The synthesized code (tapes included) goes through dlvm-to-linalg and the CPU JIT."""
    from mlir import ir
    from mlir.passmanager import PassManager

    import dlvm_mlir
    from dlvm_mlir.ad.synthesis import differentiate
    from dlvm_mlir.backend import compile_cpu
    from dlvm_mlir.interpreter import run

    declaration = """
func.func private @rnn_grad(tensor<5x3xf32>, tensor<4x4xf32>, tensor<3x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>)
    -> (tensor<4x4xf32>, tensor<3x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>)
    attributes {dlvm.gradient = #dlvm.gradient<of @rnn wrt [1, 2, 3, 4]>}
"""
    with dlvm_mlir.make_context():
        module = ir.Module.parse(RNN.replace("f64", "f32") + declaration)
        differentiate(module)
        reference = str(module)
        PassManager.parse("builtin.module(canonicalize,cse,dlvm-to-linalg)").run(module.operation)
        lowered = str(module)
    rng = _rng(2)
    shapes = [(5, 3), (4, 4), (3, 4), (1, 4), (1, 4)]
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    compiled = compile_cpu(lowered)("rnn_grad", *args)
    expected = run(reference, "rnn_grad", *args, dtype=np.float64)
    for got, want in zip(compiled, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
