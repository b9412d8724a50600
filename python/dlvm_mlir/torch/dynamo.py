"""``torch.compile(model, backend="dlvm")``: DLVM as a TorchDynamo back end.

What happens to a graph that Dynamo captures, at its first call with each new
list of input shapes and dtypes:

1. **Core ATen.** The graph is traced again with fake tensors (no data is
   touched) through ``functionalize`` and the core ATen decompositions: value
   semantics, mutations of inputs (BatchNorm's running statistics) left as
   ``copy_`` nodes at the end, ``nn.Linear`` as ``addmm``, ``F.cross_entropy``
   as ``_log_softmax`` + ``gather``.
2. **Partition.** Nodes the importer covers (:func:`why_unsupported`) are
   grouped into maximal subgraphs by FX's ``CapabilityBasedPartitioner``; the
   others (random ops such as dropout, ``copy_`` into buffers, fused RNN
   kernels, ops without a rule) stay in PyTorch: a graph break at the op,
   logged once with its reason (logger ``dlvm_mlir.torch``). A model the
   importer covers entirely is one subgraph.
3. **Import and compile.** Each subgraph is staged as an NNKit function
   (:mod:`dlvm_mlir.torch.importer`) and compiled by :func:`dlvm_mlir.compile`
   (cached on disk) when first run.
4. **Autograd.** Each subgraph runs inside a ``torch.autograd.Function``. Its
   backward is the ``dlvm-differentiate`` gradient of the imported forward
   (not AOTAutograd's), with respect to the inputs autograd asks for (the
   parameters whose ``requires_grad`` is set, and activations flowing from
   other subgraphs). When a subgraph ends in a scalar (a loss), its forward
   computes the loss and its gradients in one compiled call and the backward
   only scales them by the incoming gradient; otherwise the backward reruns
   the forward inside the gradient function (DLVM's AD is one function; it
   keeps no tape between two calls).

Tensors cross the boundary as numpy views of the same memory
(``Tensor.numpy()``, ``torch.from_numpy``): no copies except for
non-contiguous inputs.

A new batch size is a new specialization: one compile (then cached in memory
and on disk). Dynamo itself recompiles its graph once, for the second size,
with dynamic shapes; later sizes reuse that graph.
"""

from __future__ import annotations

import logging
import operator
import os
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.fx
from torch._decomp import core_aten_decompositions, get_decompositions
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

import dlvm_mlir.nnkit as dl
from dlvm_mlir.backend.runtime import share_openmp_threads
from dlvm_mlir.errors import DLVMError, FrontendError

from .importer import coverage, import_graph, why_unsupported

__all__ = ["backend", "coverage", "summary"]

log = logging.getLogger("dlvm_mlir.torch")
aten = torch.ops.aten

_DECOMPOSITIONS: dict[Any, Any] | None = None


def decompositions() -> dict[Any, Any]:
    """Core ATen, with BatchNorm in its functional form (running statistics as outputs) and
    recurrent layers (``nn.LSTM``, ``nn.GRU``, ``nn.RNN``) unrolled into their cells."""
    global _DECOMPOSITIONS
    if _DECOMPOSITIONS is None:
        table = dict(core_aten_decompositions())
        table.update(
            get_decompositions([
                aten.native_batch_norm,
                aten._native_batch_norm_legit,
                aten._native_batch_norm_legit_functional,
                aten._native_batch_norm_legit_no_training,
                # Recurrent layers as their cells (not the fused oneDNN kernel).
                aten.lstm.input, aten.gru.input, aten.rnn_tanh.input, aten.rnn_relu.input,
            ])
        )
        _DECOMPOSITIONS = table
    return _DECOMPOSITIONS


# Ops that only move or relabel data: a subgraph made of them alone is not worth a compile.
_LAYOUT_ONLY = [
    "torch.ops.aten.view.default", "torch.ops.aten.view_copy.default", "torch.ops.aten._unsafe_view.default",
    "torch.ops.aten.reshape.default", "torch.ops.aten.squeeze.dims", "torch.ops.aten.squeeze.dim",
    "torch.ops.aten.unsqueeze.default", "torch.ops.aten.permute.default", "torch.ops.aten.clone.default",
    "torch.ops.aten.alias.default", "torch.ops.aten.expand.default", "torch.ops.aten._to_copy.default",
    "torch.ops.aten.select.int", "torch.ops.aten.slice.Tensor", "torch.ops.aten.lift_fresh_copy.default",
    "_operator.getitem",
]

_reported: dict[str, str] = {}
_graphs: list[weakref.ref[DlvmGraph]] = []


def _report_once(node: torch.fx.Node, reason: str) -> None:
    target = str(node.target)
    if target not in _reported:
        _reported[target] = reason
        log.warning("dlvm: %s runs in PyTorch (%s)", target, reason)


def summary() -> dict[str, Any]:
    """What the back end did in this process: Dynamo graphs, their specializations, the
    subgraphs imported into dlvm (and how many ATen ops they hold), and the ops kept in
    PyTorch with the reason for each."""
    graphs = [g for g in (ref() for ref in _graphs) if g is not None]
    kernels = [k for g in graphs for k in g.kernels]
    return {
        "graphs": len(graphs),
        "specializations": sum(len(g._compiled) for g in graphs),
        "subgraphs": len(kernels),
        "ops_in_dlvm": sum(k.op_count for k in kernels if k.failed is None),
        "failed_subgraphs": {k.name: k.failed for k in kernels if k.failed is not None},
        "kept_in_pytorch": dict(_reported),
    }


class _Support(OperatorSupportBase):
    def is_node_supported(self, submodules: Any, node: torch.fx.Node) -> bool:
        if node.op != "call_function":
            return False
        if node.target is operator.getitem:
            return True  # joins its producer's subgraph (or stays with an unsupported one)
        if node.target is aten.copy_.default:
            return False  # functionalization's write-back into an input (a BatchNorm buffer): PyTorch's job
        reason = why_unsupported(node)
        if reason is not None:
            _report_once(node, reason)
        return reason is None


def _tensor_key(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return (tuple(value.shape), value.dtype, value.device.type, value.requires_grad)
    return (type(value).__name__, value)


class DlvmGraph:
    """What the backend returns for one Dynamo graph: specializes per input signature."""

    def __init__(self, gm: torch.fx.GraphModule, strict: bool = False) -> None:
        self.gm = gm
        self.strict = strict
        self._compiled: dict[Any, torch.fx.GraphModule] = {}
        self.kernels: list[DlvmKernel] = []
        """The imported subgraphs of every specialization so far (for inspection and tests)."""
        _graphs.append(weakref.ref(self))

    def __call__(self, *args: Any) -> Any:
        key = (tuple(_tensor_key(a) for a in args), torch.is_grad_enabled())
        module = self._compiled.get(key)
        if module is None:
            try:
                module = self._specialize(args)
            except Exception as err:  # noqa: BLE001 - PyTorch's tracing machinery, not the user's code
                if self.strict:
                    raise
                log.warning("dlvm: a graph runs in PyTorch: tracing it to core ATen failed: %s",
                            str(err).splitlines()[0] if str(err) else type(err).__name__)
                module = self.gm
            self._compiled[key] = module
        return module(*args)

    def _specialize(self, args: Sequence[Any]) -> torch.fx.GraphModule:
        detached = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
        # Decompose first, then functionalize: decompositions may write in place (LSTMCell's).
        # Without oneDNN, nn.LSTM decomposes into its cells rather than into oneDNN's layer kernel.
        mkldnn = torch._C._get_mkldnn_enabled()
        torch._C._set_mkldnn_enabled(False)
        try:
            decomposed = make_fx(self.gm, decomposition_table=decompositions(), tracing_mode="fake")(*detached)
        finally:
            torch._C._set_mkldnn_enabled(mkldnn)
        traced = make_fx(
            torch.func.functionalize(decomposed, remove="mutations_and_views"), tracing_mode="fake"
        )(*detached)
        traced.graph.eliminate_dead_code()
        traced.recompile()
        partitioner = CapabilityBasedPartitioner(
            traced, _Support(), allows_single_node_partition=True, non_compute_ops=_LAYOUT_ONLY
        )
        partitions = partitioner.propose_partitions()
        fused = partitioner.fuse_partitions(partitions)
        written = {n.args[0] for n in fused.graph.nodes if n.target is aten.copy_.default}
        for node in list(fused.graph.nodes):
            if node.op == "call_module" and node.target.startswith("fused_"):
                kernel = DlvmKernel(
                    getattr(fused, node.target),
                    name=f"torch_{len(self.kernels)}",
                    state_outputs=_state_outputs(node),
                    written_inputs={i for i, arg in enumerate(node.args) if arg in written},
                    strict=self.strict,
                )
                setattr(fused, node.target, kernel)
                self.kernels.append(kernel)
        fused.recompile()
        return fused


def _state_outputs(call: torch.fx.Node) -> set[int]:
    """Outputs of a subgraph that only feed ``copy_`` into an input (new BatchNorm
    statistics): state updates, never differentiated."""
    if not any(u.target is operator.getitem for u in call.users):
        return {0} if call.users and all(u.target is aten.copy_.default for u in call.users) else set()
    found = set()
    for user in call.users:
        if user.target is operator.getitem and user.users and all(
            u.target is aten.copy_.default and u.args[1] is user for u in user.users
        ):
            found.add(user.args[1])
    return found


_threads_shared: bool | None = None


def _share_threads() -> None:
    """Once per process: compiled code's parallel loops on PyTorch's OpenMP team
    (``dlvm_mlir.backend.runtime.share_openmp_threads``), unless
    ``DLVM_TORCH_SHARE_THREADS=0``. Two thread pools that spin after their parallel
    regions (a dlvm call right after a PyTorch op ran about 2x slower) would share the cores."""
    global _threads_shared
    if _threads_shared is None:
        wanted = os.environ.get("DLVM_TORCH_SHARE_THREADS", "1") != "0"
        openmp = "OpenMP" in torch.__config__.parallel_info()
        _threads_shared = wanted and openmp and share_openmp_threads(True)


def backend(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], options: dict[str, Any] | None = None,
            **kwargs: Any) -> DlvmGraph:
    """The TorchDynamo back end (``torch.compile(model, backend="dlvm")``).

    ``torch.compile(..., options={"strict": True})`` raises an error of dlvm's
    (an importer or compiler failure on a subgraph) instead of running that
    subgraph in PyTorch.
    """
    given = {**(options or {}), **kwargs}
    unknown = sorted(set(given) - {"strict"})
    if unknown:
        raise FrontendError(f"the dlvm torch backend has no option {', '.join(map(repr, unknown))} (it takes 'strict')")
    _share_threads()
    return DlvmGraph(gm, strict=bool(given.get("strict", False)))


# -- one imported subgraph ----------------------------------------------------------


def _array(tensor: torch.Tensor) -> np.ndarray:
    """The tensor's memory as a C-contiguous numpy array (a copy only when it is not contiguous)."""
    return tensor.detach().contiguous().numpy()


def _tensor(array: Any) -> torch.Tensor:
    array = np.asarray(array)  # (np.ascontiguousarray would make rank 0 rank 1)
    return torch.from_numpy(array if array.flags.c_contiguous else array.copy())


@dataclass
class _Plan:
    """What one call signature of a kernel runs: compiled specializations, fetched once."""

    wrt: tuple[int, ...]
    forward: Any
    """The forward; with ``fused``, the loss gradient that also returns every output."""
    fused: bool
    vjp: Any = None
    """The seeded gradient (outputs with gradients, then seeds), for a backward of a non-loss."""


class DlvmKernel(torch.nn.Module):
    """An imported subgraph: runs its compiled forward; its backward is DLVM's gradient.

    If importing or compiling it fails (a bug of ours, not the user's), the
    subgraph runs in PyTorch instead and the error is logged once; with
    ``strict`` the error is raised.
    """

    def __init__(self, gm: torch.fx.GraphModule, name: str, state_outputs: set[int] = frozenset(),
                 written_inputs: set[int] = frozenset(), strict: bool = False) -> None:
        super().__init__()
        self.graph_module = gm
        self.name = name
        self.strict = strict
        output = next(n for n in gm.graph.nodes if n.op == "output").args[0]
        self.single = not isinstance(output, (tuple, list))
        outputs = [output] if self.single else list(output)
        self.float_outputs = tuple(
            i for i, o in enumerate(outputs)
            if isinstance(o, torch.fx.Node) and o.meta["val"].dtype.is_floating_point and i not in state_outputs
        )
        """The outputs that can carry gradients: float, and not a state update."""
        self.written_inputs = written_inputs
        """Inputs that PyTorch overwrites after the call (buffers): the backward keeps copies."""
        self.output_count = len(outputs)
        self.op_count = sum(1 for n in gm.graph.nodes if n.op == "call_function" and n.target is not operator.getitem)
        self.staged = import_graph(gm, name)
        self.failed: str | None = None
        """Why this subgraph runs in PyTorch, if it does."""
        self._differentiable: dl.Function | None = None
        self._plans: dict[Any, _Plan] = {}

    @property
    def loss_like(self) -> bool:
        """One differentiable output, a scalar: the forward can compute the gradients as well."""
        return len(self.float_outputs) == 1 and _output_meta(self, self.float_outputs[0]).ndim == 0

    def _plan(self, inputs: Sequence[torch.Tensor], arrays: Sequence[np.ndarray]) -> _Plan:
        grad = torch.is_grad_enabled()
        key = (grad, tuple((a.shape, a.dtype, t.requires_grad) for t, a in zip(inputs, arrays)))
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        wrt = tuple(i for i, t in enumerate(inputs) if grad and t.requires_grad and t.is_floating_point())
        if wrt and self.loss_like:
            gradient = dl.gradient(self.staged, wrt=wrt, from_=self.float_outputs[0],
                                   keeping=tuple(range(self.output_count)), name=f"{self.name}_grad")
            plan = _Plan(wrt, _compiled(gradient, arrays), fused=True)
        else:
            plan = _Plan(wrt, _compiled(self.staged, arrays), fused=False)
            if wrt:
                if self._differentiable is None:
                    self._differentiable = import_graph(self.graph_module, f"{self.name}_f", self.float_outputs)
                vjp = dl.gradient(self._differentiable, wrt=wrt, seedable=True, name=f"{self.name}_vjp")
                seeds = [_zeros(_output_meta(self, i)) for i in self.float_outputs]
                plan.vjp = _compiled(vjp, [*arrays, *seeds])
        self._plans[key] = plan
        return plan

    def forward(self, *inputs: torch.Tensor) -> Any:
        if self.failed is None:
            arrays = [_array(t) for t in inputs]
            try:
                plan = self._plan(inputs, arrays)
            except DLVMError as err:
                if self.strict:
                    raise
                self.failed = str(err)
                log.warning("dlvm: subgraph %s runs in PyTorch: dlvm could not compile it: %s", self.name, err)
            else:
                outputs = _Apply.apply(self, plan, arrays, *inputs)
                return outputs[0] if self.single else outputs
        return self.graph_module(*inputs)


def _compiled(staged: dl.StagedFunction, arrays: Sequence[np.ndarray]) -> Any:
    """The specialization of ``staged`` for ``arrays``, compiled now (so that failures surface here)."""
    specialization = staged.specialize(*arrays)
    specialization.executable  # noqa: B018 - compile
    return specialization


def _zeros(val: torch.Tensor) -> np.ndarray:
    return np.zeros(tuple(val.shape), dtype=torch.empty((), dtype=val.dtype).numpy().dtype)


def _results(out: Any) -> tuple[Any, ...]:
    return out if isinstance(out, tuple) else (out,)


class _Apply(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, kernel: DlvmKernel, plan: _Plan, arrays: list[np.ndarray],  # type: ignore[override]
                *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        ctx.kernel, ctx.plan, ctx.fused_grads = kernel, plan, None
        result = _results(plan.forward(*arrays))
        if plan.fused:
            ctx.fused_grads = [_tensor(g) for g in result[: len(plan.wrt)]]
            result = result[len(plan.wrt):]
        elif plan.wrt:
            ctx.save_for_backward(*(t for i, t in enumerate(inputs) if i not in kernel.written_inputs))
            ctx.written = {i: t.detach().clone() for i, t in enumerate(inputs) if i in kernel.written_inputs}
        outputs = [_tensor(r) for r in result]
        ctx.mark_non_differentiable(*(o for i, o in enumerate(outputs) if i not in kernel.float_outputs))
        return tuple(outputs)

    @staticmethod
    def backward(ctx: Any, *grad_outputs: torch.Tensor | None) -> tuple[torch.Tensor | None, ...]:
        kernel: DlvmKernel = ctx.kernel
        plan: _Plan = ctx.plan
        count = len(ctx.needs_input_grad) - 3
        grads: list[torch.Tensor | None] = [None] * count
        if ctx.fused_grads is not None:
            seed = grad_outputs[kernel.float_outputs[0]]
            scale = None if seed is None else seed.detach()
            for position, g in zip(plan.wrt, ctx.fused_grads):
                grads[position] = g if scale is None or bool(scale == 1) else g * scale
        elif plan.wrt:
            saved = iter(ctx.saved_tensors)
            inputs = [ctx.written[i] if i in ctx.written else next(saved) for i in range(count)]
            seeds = [
                _zeros(_output_meta(kernel, i)) if grad_outputs[i] is None else _array(grad_outputs[i])
                for i in kernel.float_outputs
            ]
            for position, g in zip(plan.wrt, _results(plan.vjp(*[_array(t) for t in inputs], *seeds))):
                grads[position] = _tensor(g)
        return (None, None, None, *grads)


def _output_meta(kernel: DlvmKernel, index: int) -> torch.Tensor:
    output = next(n for n in kernel.graph_module.graph.nodes if n.op == "output").args[0]
    node = output if kernel.single else output[index]
    return node.meta["val"]
