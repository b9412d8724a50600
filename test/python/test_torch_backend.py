"""The PyTorch back end (``torch.compile(model, backend="dlvm")``): forward values and
gradients against eager PyTorch, per op (in float64, tight) and on whole models
(MLP, CNN with BatchNorm, LSTM, transformer encoder layer; float32), graph breaks,
batch sizes, buffers, zero-copy crossings."""

from __future__ import annotations

import copy
import logging

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from dlvm_mlir.errors import FrontendError  # noqa: E402
from dlvm_mlir.torch import backend, coverage, summary  # noqa: E402
from dlvm_mlir.torch.dynamo import DlvmGraph, _array, _tensor  # noqa: E402

torch._dynamo.config.allow_rnn = True  # nn.LSTM into the graph (it decomposes into its cells)


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _graphs(compiled_fn) -> list[DlvmGraph]:
    """The DlvmGraphs the backend made (recorded by a wrapper backend)."""
    return compiled_fn._dlvm_graphs


def compile_dlvm(fn):
    graphs: list[DlvmGraph] = []

    def recording(gm, example_inputs):
        graph = backend(gm, example_inputs, options={"strict": True})
        graphs.append(graph)
        return graph

    compiled = torch.compile(fn, backend=recording)
    compiled._dlvm_graphs = graphs
    return compiled


# -- one op at a time, float64, forward and gradient -----------------------------------

rng = np.random.default_rng(0)


def _t(*shape, low=-2.0, high=2.0, grad=True):
    return torch.tensor(rng.uniform(low, high, shape), dtype=torch.float64, requires_grad=grad)


OPS = {
    # pointwise
    "relu": (lambda x: torch.relu(x), [(5, 7)]),
    "exp_log": (lambda x: torch.log(torch.exp(x) + 1.5), [(3, 17)]),
    "tanh_sigmoid": (lambda x: torch.tanh(x) * torch.sigmoid(x), [(33,)]),
    "gelu": (lambda x: F.gelu(x), [(4, 9)]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), [(4, 9)]),
    "silu_softplus": (lambda x: F.silu(x) + F.softplus(x), [(6, 5)]),
    "leaky_elu": (lambda x: F.leaky_relu(x, 0.1) + F.elu(x), [(8, 3)]),
    "hardtanh_clamp": (lambda x: F.hardtanh(x, -0.5, 0.7) + x.clamp(min=-1.0), [(9, 4)]),
    "pow_sqrt_rsqrt": (lambda x: (x * x + 1).pow(1.5) + (x * x + 1).sqrt() + (x * x + 0.5).rsqrt(), [(5, 5)]),
    "trig": (lambda x: torch.sin(x) * torch.cos(x) + torch.atan2(x, x * x + 1), [(7, 2)]),
    "div_where": (lambda x, y: torch.where(x > y, x / (y * y + 1), y - 2 * x), [(6, 4), (6, 4)]),
    "broadcast_binary": (lambda x, y: x * y + x - y, [(3, 1, 5), (4, 1)]),
    "minimum_maximum": (lambda x, y: torch.maximum(x, y) - torch.minimum(x, y * 0.5), [(10,), (10,)]),
    "abs_sign_mix": (lambda x: x.abs() * 2 + torch.erf(x), [(4, 6)]),
    # linear algebra
    "linear": (lambda x, w, b: F.linear(x, w, b), [(9, 13), (5, 13), (5,)]),
    "matmul_batched": (lambda a, b: a @ b, [(3, 4, 7), (3, 7, 5)]),
    "matmul_broadcast": (lambda a, b: a @ b, [(2, 3, 4, 6), (6, 5)]),
    "einsum": (lambda a, b: torch.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 3)]),
    # convolution and pooling
    "conv2d": (lambda x, k, b: F.conv2d(x, k, b, padding=1), [(2, 3, 9, 8), (4, 3, 3, 3), (4,)]),
    "conv2d_stride_dilation": (lambda x, k: F.conv2d(x, k, stride=2, dilation=2), [(2, 2, 11, 10), (3, 2, 3, 3)]),
    "conv2d_groups": (lambda x, k: F.conv2d(x, k, groups=2, padding=(1, 0)), [(1, 4, 7, 7), (6, 2, 3, 2)]),
    "conv1d": (lambda x, k: F.conv1d(x, k, padding=2), [(2, 3, 10), (4, 3, 5)]),
    "conv_transpose2d": (lambda x, k: F.conv_transpose2d(x, k, stride=2, padding=1, output_padding=1),
                         [(2, 3, 5, 4), (3, 2, 3, 3)]),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), [(2, 3, 8, 6)]),
    "max_pool2d_pad_ceil": (lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True), [(1, 2, 9, 8)]),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 3, stride=2, padding=1), [(2, 2, 9, 7)]),
    "avg_pool2d_exclude_pad": (lambda x: F.avg_pool2d(x, 2, padding=1, count_include_pad=False), [(1, 2, 5, 6)]),
    "adaptive_avg_pool": (lambda x: F.adaptive_avg_pool2d(x, 1) + F.adaptive_avg_pool2d(x, (2, 3)).mean(), [(2, 3, 4, 6)]),
    # reductions and normalizations
    "sum_mean_dims": (lambda x: x.sum(dim=(0, 2), keepdim=True) * x.mean(dim=1, keepdim=True), [(3, 4, 5)]),
    "amax_amin": (lambda x: x.amax(dim=1) - x.amin(dim=0).sum(), [(6, 7)]),
    "max_dim": (lambda x: x.max(dim=1).values + x.min(dim=1)[0], [(5, 9)]),
    "var_std": (lambda x: x.var(dim=1) + x.std(dim=0).sum() + x.var(unbiased=False), [(4, 8)]),
    "softmax": (lambda x: F.softmax(x, dim=-1) * F.log_softmax(x, dim=0), [(5, 11)]),
    "logsumexp": (lambda x: torch.logsumexp(x, dim=1), [(4, 7)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (6,), w, b), [(3, 4, 6), (6,), (6,)]),
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b), [(2, 4, 3, 5), (4,), (4,)]),
    "batch_norm_eval": (lambda x, w, b: F.batch_norm(x, BN_MEAN, BN_VAR, w, b), [(4, 3, 5, 5), (3,), (3,)]),
    "cumsum_cumprod": (lambda x: x.cumsum(1) + (x * 0.3).cumprod(0), [(4, 5)]),
    # shape and indexing
    "view_permute": (lambda x: x.reshape(4, 15).t().reshape(3, 5, 4).permute(2, 0, 1), [(3, 4, 5)]),
    "cat_split": (lambda x, y: sum(p.sum() * (i + 1) for i, p in enumerate(torch.cat([x, y], 1).split([2, 5, 1], 1))),
                  [(3, 4), (3, 4)]),
    "chunk_stack": (lambda x: torch.stack(x.chunk(3, dim=0), dim=2).sum(0), [(6, 5)]),
    "slice_select": (lambda x: x[1:, ::2] * x[0, 1] + x[1:, -1:], [(5, 7)]),
    "unbind": (lambda x: sum(r * (i + 1) for i, r in enumerate(x.unbind(1))), [(4, 3)]),
    "pad_flip_repeat": (lambda x: F.pad(x, (1, 2, 0, 1)).flip(0) + 0 * x.repeat(1, 2)[:, :1].sum(), [(3, 4)]),
    "expand": (lambda x: x.expand(4, 3, 5) * torch.arange(5.0, dtype=torch.float64), [(3, 1)]),
    "index_put_slice": (lambda x: _slice_assign(x), [(6, 5)]),
    "gather": (lambda x: x.gather(1, torch.tensor([[0, 2], [1, 1], [3, 0]])), [(3, 4)]),
    "index_select": (lambda x: x.index_select(0, torch.tensor([2, 0, 2])), [(4, 3)]),
    "embedding": (lambda w: F.embedding(torch.tensor([[1, 3], [0, 1]]), w), [(5, 4)]),
    "advanced_index": (lambda x: x[torch.tensor([0, 2]), :, torch.tensor([1, 3])], [(3, 2, 5)]),
    "cross_entropy": (lambda x: F.cross_entropy(x, torch.tensor([1, 0, 4, 2])), [(4, 5)]),
    "mse_nll": (lambda x, y: F.mse_loss(x, y) + F.nll_loss(F.log_softmax(x, 1), torch.tensor([1, 2, 0])),
                [(3, 4), (3, 4)]),
    "bce_with_logits": (lambda x, y: F.binary_cross_entropy_with_logits(x, torch.sigmoid(y)), [(5, 3), (5, 3)]),
    "masked_fill_triu": (lambda x: x.masked_fill(torch.ones(4, 4, dtype=torch.bool).triu(1), -1e9).softmax(-1),
                         [(4, 4)]),
    "rank0": (lambda x, y: (x * y).exp() + x, [(), ()]),
    "size1_dims": (lambda x: x.squeeze(1).unsqueeze(0).sum(-1), [(3, 1, 4)]),
}


BN_MEAN = torch.tensor([0.5, -0.2, 0.1], dtype=torch.float64)
BN_VAR = torch.tensor([1.5, 0.7, 2.0], dtype=torch.float64)


def _slice_assign(x):
    y = x.clone()
    y[1:3] = y[1:3] * 2
    y[:, 0] = 0.5
    return y


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_forward_and_gradient_match_eager_float64(name):
    fn, shapes = OPS[name]
    inputs = [_t(*s) for s in shapes]
    weights = None

    def loss(*xs):
        out = fn(*xs)
        return (out * weights).sum() if out.ndim else out * 1.5

    want_out = fn(*inputs)
    weights = torch.tensor(rng.uniform(-1, 1, tuple(want_out.shape)), dtype=torch.float64)
    want = loss(*inputs)
    want_grads = torch.autograd.grad(want, inputs)

    compiled = compile_dlvm(loss)
    got = compiled(*inputs)
    got_grads = torch.autograd.grad(got, inputs)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-10)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-9, atol=1e-9)
    kernels = [k for graph in _graphs(compiled) for k in graph.kernels]
    assert kernels, "nothing was compiled by dlvm"
    # The op itself ran through dlvm: the whole graph is one imported subgraph.
    assert len(kernels) == 1, [k.graph_module.code for k in kernels]


def test_non_scalar_outputs_take_the_vjp_path():
    """Two outputs, a seed for each: the backward reruns the forward in the gradient function."""

    def f(x, w):
        h = torch.tanh(x @ w)
        return h, h.sum(0) * 2

    x, w = _t(6, 5), _t(5, 4)
    compiled = compile_dlvm(f)
    (a, b), (ea, eb) = compiled(x, w), f(x, w)
    seeds = torch.randn(6, 4, dtype=torch.float64), torch.randn(4, dtype=torch.float64)
    got = torch.autograd.grad((a, b), (x, w), seeds)
    want = torch.autograd.grad((ea, eb), (x, w), seeds)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-10)
    # Only one output used: the other's seed is zeros.
    (a, _b) = compiled(x, w)
    got = torch.autograd.grad(a.sum(), (x, w))
    want = torch.autograd.grad(f(x, w)[0].sum(), (x, w))
    for g, e in zip(got, want):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-10)


def test_requires_grad_decides_the_wrt_set():
    x, w = _t(4, 3, grad=False), _t(3, 2)
    compiled = compile_dlvm(lambda x, w: (x @ w).relu().sum())
    loss = compiled(x, w)
    loss.backward()
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), ((x @ w > 0).double().T @ x).T.numpy(), rtol=1e-12)
    (kernel,) = _graphs(compiled)[0].kernels
    (plan,) = kernel._plans.values()
    assert plan.wrt == (1,) and plan.fused


def test_integer_and_bool_outputs_are_not_differentiable():
    def f(x):
        return x.argmax(1), x > 0, (x * x).sum()

    x = _t(4, 5)
    idx, mask, s = compile_dlvm(f)(x)
    assert idx.dtype == torch.int64 and mask.dtype == torch.bool
    np.testing.assert_array_equal(idx.numpy(), x.detach().argmax(1).numpy())
    np.testing.assert_array_equal(mask.numpy(), (x > 0).numpy())
    (g,) = torch.autograd.grad(s, x)
    np.testing.assert_allclose(g.numpy(), 2 * x.detach().numpy())


# -- whole models, float32 --------------------------------------------------------------


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 16, 3, stride=2)
        self.bn = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16 * 6 * 6, 10)

    def forward(self, x):
        x = F.max_pool2d(torch.relu(self.c1(x)), 2)
        x = torch.relu(self.bn(self.c2(x)))
        return self.fc(x.flatten(1))


class LSTMClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(10, 24, batch_first=True)
        self.head = nn.Linear(24, 5)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, dropout=0.0)
        self.head = nn.Linear(32, 7)

    def forward(self, x):
        return self.head(self.layer(x).mean(1))


MODELS = {
    "mlp": (lambda: nn.Sequential(nn.Linear(20, 48), nn.ReLU(), nn.Linear(48, 48), nn.Tanh(), nn.Linear(48, 5)),
            (16, 20), 5),
    "cnn": (CNN, (8, 1, 28, 28), 10),
    "lstm": (LSTMClassifier, (6, 7, 10), 5),
    "transformer": (Encoder, (4, 9, 32), 7),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_training_step_matches_eager(name):
    make, shape, classes = MODELS[name]
    torch.manual_seed(0)
    model = make()
    reference = copy.deepcopy(model)
    x = torch.randn(*shape)
    y = torch.randint(0, classes, (shape[0],))

    def step(m):
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        return loss.detach()

    compiled = compile_dlvm(lambda x, y: F.cross_entropy(model(x), y))
    loss = compiled(x, y)
    loss.backward()
    want = step(reference)
    np.testing.assert_allclose(loss.detach().numpy(), want.numpy(), rtol=1e-5)
    for (pname, p), q in zip(model.named_parameters(), reference.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=2e-4, atol=2e-6, err_msg=pname)
    for b, c in zip(model.buffers(), reference.buffers()):  # BatchNorm's running statistics
        np.testing.assert_allclose(b.numpy(), c.numpy(), rtol=1e-5, atol=1e-7)
    kernels = [k for graph in _graphs(compiled) for k in graph.kernels]
    assert len(kernels) == 1 and kernels[0].loss_like


def test_training_loop_with_optimizer_follows_eager():
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3))
    reference = copy.deepcopy(model)
    opt, ref_opt = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, reference))
    compiled = compile_dlvm(model)
    x, y = torch.randn(40, 12), torch.randint(0, 3, (40,))
    for _ in range(5):
        for m, o, f in ((compiled, opt, compiled), (reference, ref_opt, reference)):
            o.zero_grad()
            F.cross_entropy(f(x), y).backward()
            o.step()
    for p, q in zip(model.parameters(), reference.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-4, atol=1e-6)


def test_inference_under_no_grad():
    model = CNN().eval()
    x = torch.randn(3, 1, 28, 28)
    with torch.no_grad():
        got, want = compile_dlvm(model)(x), model(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


def test_new_batch_sizes_specialize_once_each():
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
    compiled = compile_dlvm(model)
    for batch in (8, 5, 3, 5, 8, 3):
        x = torch.randn(batch, 6)
        np.testing.assert_allclose(compiled(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    graphs = _graphs(compiled)
    assert len(graphs) <= 2  # Dynamo's static graph, then at most one with a dynamic batch
    # Each graph specializes each batch size it sees once (the first size can reach both
    # graphs; the second time its code comes from dlvm_mlir.compile's cache).
    assert [len(g._compiled) for g in graphs] in ([3], [1, 3])
    compiled(torch.randn(5, 6))
    assert sum(len(g._compiled) for g in graphs) in (3, 4)


# -- graph breaks, errors, the boundary ------------------------------------------------


def test_unsupported_op_stays_in_pytorch_with_one_logged_reason(caplog):
    def f(x, w):
        h = torch.relu(x @ w)
        h = torch.special.i0(h)  # no dlvm rule: a graph break at the op
        return (h @ w.t()).sum()

    x, w = _t(5, 4), _t(4, 4)
    with caplog.at_level(logging.WARNING, logger="dlvm_mlir.torch"):
        compiled = compile_dlvm(f)
        got = compiled(x, w)
        compiled(x, w)
    want = f(x, w)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    got_grads = torch.autograd.grad(got, (x, w))
    want_grads = torch.autograd.grad(want, (x, w))
    for g, e in zip(got_grads, want_grads):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-10)
    messages = [r.getMessage() for r in caplog.records if "i0" in r.getMessage()]
    assert messages == ["dlvm: aten.i0.default runs in PyTorch (aten.i0.default has no dlvm import rule)"]
    assert len(_graphs(compiled)[0].kernels) == 2  # the parts before and after it


def test_dropout_runs_in_pytorch_and_keeps_its_random_stream():
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 3))
    x = torch.randn(8, 10)
    torch.manual_seed(5)
    want = model(x)
    torch.manual_seed(5)
    got = compile_dlvm(model)(x)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_unsupported_dtype_is_a_graph_break_not_a_crash():
    def f(x):
        return (x.to(torch.float8_e4m3fn).float() + 1).sum() + x.sum()

    x = _t(3, 4)
    got = compile_dlvm(f)(x)
    np.testing.assert_allclose(got.detach().numpy(), f(x).detach().numpy())


def test_a_subgraph_dlvm_cannot_compile_runs_in_pytorch(monkeypatch, caplog):
    """An importer failure (here a rule made to fail) is logged; the model still trains."""
    from dlvm_mlir.nnkit.errors import ShapeError
    from dlvm_mlir.torch import importer

    def broken(node, *args, **kwargs):
        raise ShapeError("simulated importer bug")

    rule = importer.RULES[torch.ops.aten.tanh.default]
    monkeypatch.setitem(importer.RULES, torch.ops.aten.tanh.default, importer.Rule(broken, None, rule.family))
    x, w = _t(4, 3), _t(3, 3)
    with caplog.at_level(logging.WARNING, logger="dlvm_mlir.torch"):
        got = torch.compile(lambda x, w: torch.tanh(x @ w).sum(), backend=backend)(x, w)
    np.testing.assert_allclose(got.detach().numpy(), torch.tanh(x @ w).sum().detach().numpy())
    (gx,) = torch.autograd.grad(got, x)
    assert gx.shape == x.shape
    assert any("could not compile it" in r.getMessage() and "simulated importer bug" in r.getMessage()
               for r in caplog.records)
    with pytest.raises(FrontendError, match="simulated importer bug"):
        torch._dynamo.reset()
        compile_dlvm(lambda x, w: torch.tanh(x @ w).sum())(x, w)


def test_a_graph_that_does_not_trace_runs_in_pytorch(monkeypatch, caplog):
    import dlvm_mlir.torch.dynamo as torch_backend

    def failing(*args, **kwargs):
        raise RuntimeError("simulated tracing failure")

    monkeypatch.setattr(torch_backend, "make_fx", failing)
    x = _t(3, 4)
    with caplog.at_level(logging.WARNING, logger="dlvm_mlir.torch"):
        got = torch.compile(lambda x: torch.tanh(x).sum(), backend=backend)(x)
    np.testing.assert_allclose(got.detach().numpy(), torch.tanh(x).sum().detach().numpy())
    assert any("tracing it to core ATen failed: simulated tracing failure" in r.getMessage() for r in caplog.records)


def test_bad_backend_option_is_an_error():
    with pytest.raises(Exception, match="has no option 'fast'"):
        torch.compile(lambda x: x * 2, backend=backend, options={"fast": True})(torch.ones(2))


def test_importer_error_names_the_op():
    from dlvm_mlir.torch.importer import import_graph

    gm = torch.fx.symbolic_trace(lambda x: x + 1)
    with pytest.raises(FrontendError, match="error: <built-in function add> .*not supported by the dlvm importer"):
        import_graph(gm)(np.ones(3, np.float32))


def test_arrays_share_memory_with_tensors():
    t = torch.randn(4, 5)
    assert np.shares_memory(_array(t), t.numpy())
    a = np.arange(6.0).reshape(2, 3)
    assert np.shares_memory(_tensor(a).numpy(), a)
    assert _tensor(np.float32(2.0)).shape == ()


def test_entry_point_registers_the_backend():
    assert "dlvm" in torch._dynamo.list_backends(exclude_tags=())
    f = torch.compile(lambda x: torch.tanh(x).sum(), backend="dlvm")
    x = _t(3, 3)
    np.testing.assert_allclose(f(x).detach().numpy(), torch.tanh(x).sum().detach().numpy())


def test_coverage_lists_every_family():
    table = coverage()
    assert set(table) == {"convolution", "linalg", "nn", "pointwise", "reductions", "shape"}
    assert "convolution.default" in table["convolution"] and "addmm.default" in table["linalg"]


def test_summary_counts_subgraphs_and_breaks():
    import dlvm_mlir.torch

    compiled = compile_dlvm(lambda x: torch.special.i0(torch.tanh(x)).sum())
    compiled(_t(3, 4))
    done = dlvm_mlir.torch.summary()
    assert done["subgraphs"] >= 1 and done["ops_in_dlvm"] >= 1
    assert "aten.i0.default" in done["kept_in_pytorch"]


def test_ddp_example_two_processes_agree(tmp_path):
    """examples/ddp_train.py under torchrun: 2 gloo processes, gradients all-reduced by DDP,
    parameters equal across ranks and to one process on the combined batches."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    run = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         str(root / "examples" / "ddp_train.py"), "--steps", "12", "--check", "--no-plot"],
        capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "ranks agree: max parameter difference across 2 ranks 0" in run.stdout
    assert "dlvm compiled 1 subgraph(s)" in run.stdout


def test_uint8_images_and_unsigned_arithmetic():
    """uint8 tensors (images, byte data) are dlvm's ui8: unsigned order and division, wrapping
    arithmetic, conversion to float as unsigned."""
    def f(img, w):
        x = img.float() / 255.0 - 0.5
        stats = (img // 3 + img % 5).max(dim=1).values.float() + (img > 128).sum(dim=1).float()
        return (x @ w).sum(dim=1) + stats + (img + 100).float().mean(dim=1)

    img = torch.from_numpy(np.random.default_rng(0).integers(0, 256, (6, 20), dtype=np.uint8))
    w = torch.randn(20, 3, generator=torch.Generator().manual_seed(1))
    got = compile_dlvm(f)(img, w)
    np.testing.assert_allclose(got.detach().numpy(), f(img, w).detach().numpy(), rtol=1e-5, atol=1e-5)
    assert "uint8" not in str(summary())  # no graph break, no failed subgraph
