"""Core ATen FX graphs into the ``dlvm`` dialect, through NNKit.

An FX graph (after functionalization and decomposition to core ATen, see
:mod:`dlvm_mlir.torch.dynamo`) is staged as an NNKit function whose body
interprets the graph node by node: each ATen overload has a *rule* that builds
the node's value from NNKit ops (so broadcasting, shape checking and locations
are NNKit's). Rules live in one module per op family (:mod:`.pointwise`,
:mod:`.linalg`, :mod:`.convolution`, :mod:`.reductions`, :mod:`.shape`,
:mod:`.nn`); :func:`coverage` lists them for the docs.

A rule may also declare a *check*: a function of the FX node that returns why
that particular use is not supported (a transposed convolution with output
padding, a pooling whose indices are used, ...) or None. :func:`why_unsupported`
combines the registry, the dtypes and the checks; the backend keeps such nodes
in PyTorch (a graph break at the op, reported once with that reason).
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx

import dlvm_mlir.nnkit as dl
from dlvm_mlir.errors import FrontendError
from dlvm_mlir.nnkit.errors import StagingError

__all__ = ["RULES", "Rule", "coverage", "dtype", "import_graph", "rule", "why_unsupported"]

aten = torch.ops.aten

_DTYPES = {
    torch.float32: dl.f32,
    torch.float64: dl.f64,
    torch.float16: dl.f16,
    torch.bfloat16: dl.bf16,
    torch.int64: dl.i64,
    torch.int32: dl.i32,
    torch.int16: dl.i16,
    torch.int8: dl.i8,
    torch.uint8: dl.ui8,
    torch.uint16: dl.ui16,
    torch.uint32: dl.ui32,
    torch.uint64: dl.ui64,
    torch.bool: dl.i1,
}


def dtype(torch_dtype: torch.dtype) -> dl.DType:
    """The NNKit element type of a torch dtype (FrontendError if dlvm has none)."""
    found = _DTYPES.get(torch_dtype)
    if found is None:
        raise FrontendError(f"dtype {torch_dtype} is not supported by dlvm")
    return found


@dataclass(frozen=True)
class Rule:
    """How one ATen overload becomes NNKit ops."""

    build: Callable[..., Any]
    check: Callable[[torch.fx.Node], str | None] | None
    family: str


RULES: dict[Any, Rule] = {}


def rule(*targets: Any, check: Callable[[torch.fx.Node], str | None] | None = None) -> Callable:
    """Register ``build(node, *args, **kwargs)`` for each ATen overload in ``targets``.

    ``args``/``kwargs`` are the node's, with every FX node replaced by its
    NNKit value; ``node.meta["val"]`` (a fake tensor) gives the result's shape
    and dtype.
    """

    def register(build: Callable[..., Any]) -> Callable[..., Any]:
        family = build.__module__.rsplit(".", 1)[-1]
        for target in targets:
            RULES[target] = Rule(build, check, family)
        return build

    return register


def meta(value: Any) -> Any:
    """The fake tensor (or tuple of them) an FX node or argument stands for."""
    return value.meta.get("val") if isinstance(value, torch.fx.Node) else value


def out_shape(node: torch.fx.Node, index: int | None = None) -> tuple[int, ...]:
    val = meta(node)
    if index is not None:
        val = val[index]
    return tuple(int(d) for d in val.shape)


def out_dtype(node: torch.fx.Node, index: int | None = None) -> dl.DType:
    val = meta(node)
    if index is not None:
        val = val[index]
    return dtype(val.dtype)


def _tensors_of(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors_of(item)]
    return []


def why_unsupported(node: torch.fx.Node) -> str | None:
    """None if ``node`` can be imported, else a one-line reason."""
    found = RULES.get(node.target)
    if found is None:
        return f"{node.target} has no dlvm import rule"
    values = _tensors_of(meta(node))
    for arg in node.all_input_nodes:
        values += _tensors_of(meta(arg))
    for value in values:
        if value.dtype not in _DTYPES:
            return f"{node.target} on dtype {value.dtype}"
        if value.device.type != "cpu":
            return f"{node.target} on device {value.device} (the torch backend compiles for the CPU)"
        if any(not isinstance(d, int) for d in value.shape):
            return f"{node.target} with a symbolic shape"
    if not values:
        return f"{node.target} makes no tensor"
    return found.check(node) if found.check is not None else None


def _location(node: torch.fx.Node) -> str:
    """The user's ``file:line`` of a node, from the stack trace dynamo records."""
    trace = node.meta.get("stack_trace") or ""
    lines = [line.strip() for line in trace.strip().splitlines() if line.strip().startswith("File ")]
    if not lines:
        return ""
    last = lines[-1]  # File "model.py", line 12, in forward
    try:
        filename = last.split('"')[1]
        line = int(last.split("line ")[1].split(",")[0])
    except (IndexError, ValueError):
        return ""
    return f"{filename}:{line}: "


def _node_error(node: torch.fx.Node, message: str) -> FrontendError:
    return FrontendError(f"{_location(node)}error: {node.target} ({node.name}): {message}")


def _check_result(node: torch.fx.Node, value: Any) -> Any:
    """Cast the rule's result(s) to the node's dtype(s); a shape that differs from PyTorch's is a bug."""
    val = meta(node)
    if isinstance(val, torch.Tensor):
        if not isinstance(value, dl.Tensor):
            value = dl.constant(value, dtype(val.dtype))
        return _check_one(node, value, val)
    if isinstance(val, (tuple, list)):
        return tuple(
            _check_one(node, v, m) if isinstance(m, torch.Tensor) and v is not None else v
            for v, m in zip(value, val)
        )
    return value


def _check_one(node: torch.fx.Node, value: dl.Tensor, val: torch.Tensor) -> dl.Tensor:
    want = tuple(int(d) for d in val.shape)
    if value.shape != want:
        raise _node_error(node, f"imported with shape {list(value.shape)}, PyTorch says {list(want)}")
    return value if value.dtype == dtype(val.dtype) else dl.cast(value, dtype(val.dtype))


def _interpret(graph: torch.fx.Graph, inputs: Sequence[dl.Tensor]) -> tuple[dl.Tensor, ...]:
    env: dict[torch.fx.Node, Any] = {}
    placeholders = iter(inputs)

    def load(arg: Any) -> Any:
        return torch.fx.node.map_arg(arg, lambda n: env[n])

    for node in graph.nodes:
        if node.op == "placeholder":
            env[node] = next(placeholders)
        elif node.op == "call_function":
            if node.target is operator.getitem:
                env[node] = env[node.args[0]][node.args[1]]
                continue
            reason = why_unsupported(node)
            if reason is not None:
                raise _node_error(node, f"not supported by the dlvm importer: {reason}")
            args, kwargs = load(node.args), load(node.kwargs)
            try:
                value = RULES[node.target].build(node, *args, **kwargs)
            except StagingError as err:
                raise _node_error(node, str(err)) from None
            env[node] = _check_result(node, value)
        elif node.op == "output":
            results = node.args[0]
            results = results if isinstance(results, (tuple, list)) else (results,)
            return tuple(env[r] for r in results)
        else:
            raise _node_error(node, f"FX '{node.op}' nodes are not imported")
    raise FrontendError("the FX graph has no output")


def import_graph(gm: torch.fx.GraphModule, name: str = "torch_graph",
                 outputs: Sequence[int] | None = None) -> dl.Function:
    """``gm`` (core ATen, functional, static shapes) as an NNKit staged function.

    The function takes the graph's placeholders, in order, and returns its
    outputs (those at ``outputs``, default all) as a tuple; it is specialized
    (and compiled) per argument Specs.
    """
    graph = gm.graph
    count = sum(1 for n in graph.nodes if n.op == "placeholder")

    def body(*tensors: dl.Tensor) -> tuple[dl.Tensor, ...]:
        results = _interpret(graph, tensors)
        return results if outputs is None else tuple(results[i] for i in outputs)

    # A fixed positional signature (dl.gradient(seedable=True) needs one).
    params = [inspect.Parameter(f"a{i}", inspect.Parameter.POSITIONAL_ONLY) for i in range(count)]
    body.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    body.__name__ = name
    return dl.function(body, name=name)


def coverage() -> dict[str, list[str]]:
    """Imported ATen overloads by family (for docs/frameworks.md)."""
    table: dict[str, list[str]] = {}
    for target, found in RULES.items():
        table.setdefault(found.family, []).append(str(target).removeprefix("aten."))
    return {family: sorted(ops) for family, ops in sorted(table.items())}


# The rule modules register themselves.
from . import convolution, linalg, nn, pointwise, reductions, shape  # noqa: E402, F401
