"""Steps: how a back-end stage is written so that it can run alone or inside a pass manager.

A stage is a list of steps, each either :class:`Passes` (upstream pipeline
text) or :class:`Call` (a named Python function over the module)::

    [Call("bufferize", prepare), Passes("one-shot-bufferize{...},canonicalize,cse"),
     Call("copy-repeated-buffers", copy_repeated_buffers), ...]

:func:`run_steps` runs them one after the other (``Passes`` through
:func:`~dlvm_mlir.passes.pipeline.run_passes`): this is what
``dlvm_mlir.compile`` does. A pass that expands into its stages
(``ModulePass.expand``, e.g. ``dlvm-cpu-pipeline``) hands the same steps to
the pass manager instead: each ``Passes`` as pipeline text, each ``Call`` as
a :class:`StepPass`, so MLIR times and prints every one of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mlir import ir

from dlvm_mlir.passes.pipeline import run_passes
from dlvm_mlir.passes.registry import ModulePass

__all__ = ["Call", "Passes", "Step", "StepPass", "run_steps"]


@dataclass(frozen=True)
class Passes:
    """Upstream passes: pipeline elements on ``builtin.module`` (``canonicalize,func.func(cse)``)."""

    text: str


@dataclass(frozen=True)
class Call:
    """A Python step: ``fn(module)`` rewrites the module in place; what it returns is its outcome.

    ``module`` is an ``ir.Module`` or, inside a pass manager, the
    ``builtin.module`` op's view (both have ``body``, ``operation`` and
    ``context``).
    """

    name: str
    fn: Callable[[Any], object]


Step = Passes | Call


def run_steps(module: ir.Module | ir.Operation | ir.OpView, steps: Sequence[Step]) -> dict[str, object]:
    """Run ``steps`` on ``module`` in order; the outcome of each :class:`Call`, by name."""
    outcomes: dict[str, object] = {}
    for step in steps:
        if isinstance(step, Passes):
            run_passes(module, step.text)
        else:
            outcomes[step.name] = step.fn(module)
    return outcomes


class StepPass(ModulePass):
    """A :class:`Call` as a pass of its own in a pass manager (a step of an expanded pass).

    Not registered: ``display_name`` is what MLIR's timing report and IR
    dumps show (e.g. ``CpuPipeline.bufferize``), ``name`` the pass it belongs
    to (e.g. ``dlvm-cpu-pipeline``). ``on_error(step_pass, module, exc)``
    reports an exception of the step as diagnostics (the step then fails);
    without it the exception propagates.
    """

    name = "step"
    summary = "one step of an expanded pass"

    def __init__(
        self,
        display_name: str,
        owner: str,
        fn: Callable[[Any], object],
        *,
        summary: str = "",
        on_error: Callable[[ModulePass, ir.Operation, Exception], None] | None = None,
        before: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self._display_name = display_name
        self.name = owner  # type: ignore[misc]  (per instance: the pass it belongs to)
        self.summary = summary or f"{display_name}, a step of {owner}"  # type: ignore[misc]
        self._fn = fn
        self._on_error = on_error
        self._before = before

    @property
    def display_name(self) -> str:
        return self._display_name

    def pipeline_text(self) -> str:
        return self.name

    def run(self, module: ir.Operation) -> None:
        if self._before is not None:
            self._before()
        try:
            self._fn(module.opview)
        except Exception as exc:
            if self._on_error is None:
                raise
            self._on_error(self, module, exc)

    def __repr__(self) -> str:
        return f"StepPass({self._display_name!r})"
