"""Training programs written twice, in NNKit and in JAX, for the benchmarks.

Each model is a :class:`Model`: ``inputs(seed)`` makes its arrays (float32),
``dlvm()`` and ``jax()`` define the step (a staged NNKit function or a
``jax.jit``-ed one) that both frameworks run on the same arrays:

- ``mlp``: the MLP 784-512-512-10 SGD step of benchmarks/mlp_step.py, batch 128;
- ``lstm``: the gradient of an LSTM (T=64 steps, batch 32, input 64, hidden
  128) with respect to its weights, the loss a squared error of the last state;
- ``transformer``: an SGD step of one pre-norm transformer block (batch 8,
  sequence 64, width 128, one attention head, MLP 4x), mean-squared-error loss;
- ``cnn``: an SGD step of a small CNN on 28x28 digits, batch 32 (conv 3x3
  1->8, relu, 2x2 max pool, conv 3x3 8->16, relu, 2x2 max pool, dense 10,
  softmax cross-entropy).

Python loops unroll in both tracers (the LSTM's 64 steps, the batch of the
attention), so both compile the same straight-line program.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

LR = 0.01


@dataclass(frozen=True)
class Model:
    name: str
    inputs: Callable[[int], list[np.ndarray]]
    dlvm: Callable[[], Any]
    jax: Callable[[], Any]


def _uniform(rng: np.random.Generator, shape: tuple[int, ...], fan_in: int) -> np.ndarray:
    bound = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, shape).astype(np.float32)


# -- MLP -------------------------------------------------------------------------

def mlp_inputs(seed: int = 0, batch: int = 128) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = (784, 512, 512, 10)
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    params = []
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        params += [_uniform(rng, (fan_in, fan_out), fan_in), np.zeros((1, fan_out), np.float32)]
    return [x, y, *params]


def mlp_dlvm() -> Any:
    import dlvm_mlir.nnkit as dl

    @dl.function
    def loss(x, y, w1, b1, w2, b2, w3, b3):
        h1 = dl.tanh(x @ w1 + b1)
        h2 = dl.tanh(h1 @ w2 + b2)
        log_p = dl.log_softmax(h2 @ w3 + b3, axis=1)
        return -dl.reduce_sum(y * log_p) / x.shape[0]

    grads = dl.gradient(loss, wrt=(2, 3, 4, 5, 6, 7), keeping=(0,))

    @dl.function
    def step(x, y, w1, b1, w2, b2, w3, b3):
        params = (w1, b1, w2, b2, w3, b3)
        *g, value = grads(x, y, *params)
        return (*(p - LR * d for p, d in zip(params, g)), value)

    return step


def mlp_jax() -> Any:
    import jax
    import jax.numpy as jnp

    def loss(params, x, y):
        w1, b1, w2, b2, w3, b3 = params
        h1 = jnp.tanh(x @ w1 + b1)
        h2 = jnp.tanh(h1 @ w2 + b2)
        log_p = jax.nn.log_softmax(h2 @ w3 + b3, axis=1)
        return -jnp.sum(y * log_p) / x.shape[0]

    @jax.jit
    def step(x, y, *params):
        value, g = jax.value_and_grad(loss)(params, x, y)
        return (*(p - LR * d for p, d in zip(params, g)), value)

    return step


# -- LSTM ------------------------------------------------------------------------

T, B, D, H = 64, 32, 64, 128


def lstm_inputs(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    xs = rng.standard_normal((T, B, D)).astype(np.float32)
    target = rng.standard_normal((B, H)).astype(np.float32)
    wx = _uniform(rng, (D, 4 * H), D)
    wh = _uniform(rng, (H, 4 * H), H)
    b = np.zeros((1, 4 * H), np.float32)
    return [xs, target, wx, wh, b]


def lstm_dlvm() -> Any:
    import dlvm_mlir.nnkit as dl

    @dl.function
    def loss(xs, target, wx, wh, b):
        h = dl.zeros((B, H))
        c = dl.zeros((B, H))
        for t in range(T):
            z = xs[t] @ wx + h @ wh + b
            i = dl.sigmoid(z[:, 0:H])
            f = dl.sigmoid(z[:, H:2 * H])
            g = dl.tanh(z[:, 2 * H:3 * H])
            o = dl.sigmoid(z[:, 3 * H:4 * H])
            c = f * c + i * g
            h = o * dl.tanh(c)
        e = h - target
        return dl.reduce_sum(e * e) / B

    return dl.gradient(loss, wrt=(2, 3, 4), keeping=(0,))


def lstm_jax() -> Any:
    import jax
    import jax.numpy as jnp

    def loss(params, xs, target):
        wx, wh, b = params
        h = jnp.zeros((B, H), jnp.float32)
        c = jnp.zeros((B, H), jnp.float32)
        for t in range(T):
            z = xs[t] @ wx + h @ wh + b
            i = jax.nn.sigmoid(z[:, 0:H])
            f = jax.nn.sigmoid(z[:, H:2 * H])
            g = jnp.tanh(z[:, 2 * H:3 * H])
            o = jax.nn.sigmoid(z[:, 3 * H:4 * H])
            c = f * c + i * g
            h = o * jnp.tanh(c)
        e = h - target
        return jnp.sum(e * e) / B

    @jax.jit
    def grads(xs, target, wx, wh, b):
        value, g = jax.value_and_grad(loss)((wx, wh, b), xs, target)
        return (*g, value)

    return grads


# -- transformer block --------------------------------------------------------------

N, S, E = 8, 64, 128


def transformer_inputs(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N * S, E)).astype(np.float32)
    target = rng.standard_normal((N * S, E)).astype(np.float32)
    params = [
        np.ones((1, E), np.float32), np.zeros((1, E), np.float32),          # layer norm 1
        _uniform(rng, (E, E), E), _uniform(rng, (E, E), E), _uniform(rng, (E, E), E), _uniform(rng, (E, E), E),
        np.ones((1, E), np.float32), np.zeros((1, E), np.float32),          # layer norm 2
        _uniform(rng, (E, 4 * E), E), np.zeros((1, 4 * E), np.float32),
        _uniform(rng, (4 * E, E), 4 * E), np.zeros((1, E), np.float32),
    ]
    return [x, target, *params]


def _block(ops: Any, x: Any, params: tuple[Any, ...]) -> Any:
    """The block on (N*S, E) rows, written once against a small op table."""
    g1, b1, wq, wk, wv, wo, g2, b2, w1, c1, w2, c2 = params

    def norm(v: Any, gain: Any, bias: Any) -> Any:
        mean = ops.mean(v)
        centered = v - mean
        variance = ops.mean(centered * centered)
        return centered * ops.rsqrt(variance + 1e-5) * gain + bias

    h = norm(x, g1, b1)
    q, k, v = h @ wq, h @ wk, h @ wv
    heads = []
    for n in range(N):
        rows = slice(n * S, (n + 1) * S)
        scores = (q[rows] @ ops.transpose(k[rows])) * float(1.0 / np.sqrt(E))
        heads.append(ops.softmax(scores) @ v[rows])
    x = x + ops.concatenate(heads) @ wo
    h = norm(x, g2, b2)
    return x + ops.gelu(h @ w1 + c1) @ w2 + c2


def transformer_dlvm() -> Any:
    import dlvm_mlir.nnkit as dl

    class Ops:
        mean = staticmethod(lambda v: dl.reduce_mean(v, axis=1, keepdims=True))
        rsqrt = staticmethod(dl.rsqrt)
        transpose = staticmethod(dl.transpose)
        softmax = staticmethod(lambda v: dl.softmax(v, axis=1))
        concatenate = staticmethod(lambda vs: dl.concatenate(vs, axis=0))
        gelu = staticmethod(lambda v: 0.5 * v * (1.0 + dl.tanh(0.7978845608 * (v + 0.044715 * v * v * v))))

    @dl.function
    def loss(x, target, g1, b1, wq, wk, wv, wo, g2, b2, w1, c1, w2, c2):
        e = _block(Ops, x, (g1, b1, wq, wk, wv, wo, g2, b2, w1, c1, w2, c2)) - target
        return dl.reduce_sum(e * e) / (N * S * E)

    grads = dl.gradient(loss, wrt=tuple(range(2, 14)), keeping=(0,))

    @dl.function
    def step(x, target, g1, b1, wq, wk, wv, wo, g2, b2, w1, c1, w2, c2):
        params = (g1, b1, wq, wk, wv, wo, g2, b2, w1, c1, w2, c2)
        *g, value = grads(x, target, *params)
        return (*(p - LR * d for p, d in zip(params, g)), value)

    return step


def transformer_jax() -> Any:
    import jax
    import jax.numpy as jnp

    class Ops:
        mean = staticmethod(lambda v: jnp.mean(v, axis=1, keepdims=True))
        rsqrt = staticmethod(jax.lax.rsqrt)
        transpose = staticmethod(jnp.transpose)
        softmax = staticmethod(lambda v: jax.nn.softmax(v, axis=1))
        concatenate = staticmethod(lambda vs: jnp.concatenate(vs, axis=0))
        gelu = staticmethod(lambda v: 0.5 * v * (1.0 + jnp.tanh(0.7978845608 * (v + 0.044715 * v * v * v))))

    def loss(params, x, target):
        e = _block(Ops, x, params) - target
        return jnp.sum(e * e) / (N * S * E)

    @jax.jit
    def step(x, target, *params):
        value, g = jax.value_and_grad(loss)(params, x, target)
        return (*(p - LR * d for p, d in zip(params, g)), value)

    return step


# -- CNN -------------------------------------------------------------------------

CB = 32


def cnn_inputs(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((CB, 1, 28, 28)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, CB)]
    k1 = _uniform(rng, (8, 1, 3, 3), 9)
    k2 = _uniform(rng, (16, 8, 3, 3), 72)
    w = _uniform(rng, (16 * 7 * 7, 10), 16 * 7 * 7)
    b = np.zeros((1, 10), np.float32)
    return [x, y, k1, k2, w, b]


def cnn_dlvm() -> Any:
    import dlvm_mlir.nnkit as dl

    @dl.function
    def loss(x, y, k1, k2, w, b):
        h = dl.relu(dl.convolve(x, k1, padding=1))
        h = dl.reduce_window("max", h, (1, 1, 2, 2), (1, 1, 2, 2))
        h = dl.relu(dl.convolve(h, k2, padding=1))
        h = dl.reduce_window("max", h, (1, 1, 2, 2), (1, 1, 2, 2))
        log_p = dl.log_softmax(dl.reshape(h, (CB, 16 * 7 * 7)) @ w + b, axis=1)
        return -dl.reduce_sum(y * log_p) / CB

    grads = dl.gradient(loss, wrt=(2, 3, 4, 5), keeping=(0,))

    @dl.function
    def step(x, y, k1, k2, w, b):
        params = (k1, k2, w, b)
        *g, value = grads(x, y, *params)
        return (*(p - LR * d for p, d in zip(params, g)), value)

    return step


def cnn_jax() -> Any:
    import jax
    import jax.numpy as jnp

    def conv(x, k):
        return jax.lax.conv_general_dilated(x, k, (1, 1), ((1, 1), (1, 1)))

    def pool(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def loss(params, x, y):
        k1, k2, w, b = params
        h = pool(jax.nn.relu(conv(x, k1)))
        h = pool(jax.nn.relu(conv(h, k2)))
        log_p = jax.nn.log_softmax(h.reshape(CB, -1) @ w + b, axis=1)
        return -jnp.sum(y * log_p) / CB

    @jax.jit
    def step(x, y, *params):
        value, g = jax.value_and_grad(loss)(params, x, y)
        return (*(p - LR * d for p, d in zip(params, g)), value)

    return step


MODELS = {
    "mlp": Model("mlp", mlp_inputs, mlp_dlvm, mlp_jax),
    "lstm": Model("lstm", lstm_inputs, lstm_dlvm, lstm_jax),
    "transformer": Model("transformer", transformer_inputs, transformer_dlvm, transformer_jax),
    "cnn": Model("cnn", cnn_inputs, cnn_dlvm, cnn_jax),
}
