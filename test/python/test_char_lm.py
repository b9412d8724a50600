"""examples/char_lm.py: the transformer LM's gradient, its compiled Adam step, and the script itself.

The model uses the ops real models need (embedding gather, batched ``@`` of
head-split tensors, iota causal mask, take_along_axis of log_softmax); its
gradient is checked against central differences in float64 (the reference
interpreter), the compiled float32 step against the interpreter.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
import char_lm  # noqa: E402

import dlvm_mlir.nnkit as dl  # noqa: E402

HEADS, CONTEXT, WIDTH, LAYERS, BATCH = 2, 5, 8, 2, 3


@pytest.fixture(scope="module")
def problem() -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(7)
    data = char_lm.encode(char_lm.load_corpus(limit=5000))
    tokens, labels = char_lm.batch(data, rng.integers(0, len(data) - CONTEXT - 1, BATCH), CONTEXT)
    params = char_lm.init_params(rng, len(char_lm.VOCAB), CONTEXT, WIDTH, LAYERS)
    # larger weights than GPT-2's initialization, so that every path carries gradient
    params = [p + 0.3 * rng.standard_normal(p.shape).astype(np.float32) for p in params]
    return tokens, labels, params


def test_corpus_and_vocabulary() -> None:
    text = char_lm.load_corpus(limit=20000)
    assert len(text) == 20000
    tokens = char_lm.encode(text + "\t\u00e9")
    assert tokens.dtype == np.int32 and tokens.min() >= 0 and tokens.max() < len(char_lm.VOCAB) == 96
    assert char_lm.decode(tokens[:200]) == text[:200]
    assert char_lm.decode(tokens[-2:]) == "??"


def test_gradient_matches_central_differences(problem) -> None:
    tokens, labels, params = problem
    fns = char_lm.nnkit_functions(HEADS)
    grad = dl.gradient(fns["loss"], wrt=tuple(range(2, 2 + len(params))), keeping=(0,))
    params64 = [p.astype(np.float64) for p in params]
    *grads, value = grad.interpret(tokens, labels, *params64, dtype=np.float64)

    def loss(ps: list[np.ndarray]) -> float:
        return float(fns["loss"].interpret(tokens, labels, *ps, dtype=np.float64))

    assert np.isclose(value, loss(params64), rtol=1e-12)
    rng = np.random.default_rng(0)
    eps = 1e-6
    for index, (name, p, g) in enumerate(zip(char_lm.PARAMS, params64, grads)):
        assert g.shape == p.shape, name
        # the embedding rows of the tokens present, and random coordinates elsewhere
        coords = [tuple(rng.integers(0, s) for s in p.shape) for _ in range(4)]
        if name == "emb":
            coords += [(int(tokens[0, 0]), 1), (int(tokens[-1, -1]), WIDTH - 1)]
        for coord in coords:
            plus = [q.copy() for q in params64]
            minus = [q.copy() for q in params64]
            plus[index][coord] += eps
            minus[index][coord] -= eps
            expected = (loss(plus) - loss(minus)) / (2 * eps)
            assert abs(g[coord] - expected) <= 1e-6 + 1e-5 * abs(expected), (name, coord, g[coord], expected)
    unused = sorted(set(range(len(char_lm.VOCAB))) - set(tokens.ravel().tolist()))
    assert not np.any(grads[0][unused]), "rows of tokens not in the batch get no gradient"


def test_compiled_adam_step_matches_the_interpreter(problem) -> None:
    tokens, labels, params = problem
    step = char_lm.nnkit_functions(HEADS)["adam_step"]
    state = [*params, *(0.01 * np.ones_like(p) for p in params), *(0.001 * np.ones_like(p) for p in params)]
    args = (tokens, labels, np.float32(3), np.float32(1e-2), *state)
    got = step(*args)
    want = step.interpret(*args, dtype=np.float64)
    assert len(got) == 3 * len(params) + 1
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5)


def test_script_trains_and_samples(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "char_lm.py"), "--epochs", "2", "--steps", "3", "--layers", "1",
         "--width", "16", "--heads", "2", "--context", "8", "--batch", "4", "--sample", "20", "--target", "7",
         "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr
    assert "epoch   2" in out.stdout and "bits/char" in out.stdout and "sampled after" in out.stdout
    assert (tmp_path / "char_lm.png").stat().st_size > 0
    assert len((tmp_path / "char_lm.txt").read_text()) == 8 + 20 + 1
