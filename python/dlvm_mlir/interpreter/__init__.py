"""A reference interpreter for DLVM programs, in numpy.

    from dlvm_mlir.interpreter import run
    y = run(ir_text_or_module, "f", x, w)                 # one result: an array
    y, dw = run(module, "f_grad", x, w, dtype=np.float64) # several: a tuple

:func:`run` parses the text (if given text), then calls the function. It
executes every ``dlvm`` op and enough of ``func``, ``cf``, ``scf``, ``arith``,
``math``, ``tensor``, ``memref`` and ``bufferization`` for the programs users
and the passes produce. ``dtype=np.float64`` computes every float in float64
whatever the IR's element types (for finite-difference gradient checks and as
a numerics reference).

Results follow the CPU backend's conventions: a tensor comes back as an
ndarray (rank-0: a 0-d array), a scalar as a numpy scalar; one result is
returned as is, several (or none) as a tuple. Arguments are numpy arrays (or
scalars / nested lists), converted to the parameter's element type when the
conversion is a same-kind cast; static dimensions are checked.

An op the interpreter does not implement, or one that fails (an undefined
``arith`` integer division by zero, an out-of-bounds slice, ...), raises
:class:`InterpreterError` naming the op and its location; ``dlvm`` ops are
defined everywhere (``dlvm.div`` by zero is -1, as XLA: see the op docs). The ``dlvm.random`` generator is specified in
:mod:`dlvm_mlir.interpreter.rng`.

The dispatch tables (:data:`OPS`, :data:`TERMINATORS`) map op names to small
handler functions, one module per family: :mod:`.ops_dlvm`, :mod:`.ops_control`
(func/cf/scf), :mod:`.ops_arith` (arith/math), :mod:`.ops_tensor`
(tensor/memref/bufferization).
"""

from __future__ import annotations

from typing import Any

from mlir import ir

from . import ops_arith, ops_control, ops_dlvm, ops_tensor  # noqa: F401  (register handlers)
from .core import OPS, TERMINATORS, FunctionRef, Interpreter, InterpreterError
from .rng import random_uniform

__all__ = [
    "OPS",
    "TERMINATORS",
    "FunctionRef",
    "Interpreter",
    "InterpreterError",
    "random_uniform",
    "run",
    "supported_ops",
]


def run(module_or_text: ir.Module | ir.Operation | str, fn_name: str, *args: Any, dtype: Any = None) -> Any:
    """Runs function ``fn_name`` of a module (or IR text) on numpy arguments."""
    return Interpreter(module_or_text, dtype=dtype).run(fn_name, *args)


def supported_ops() -> list[str]:
    """The names of the ops the interpreter executes."""
    return sorted(set(OPS) | set(TERMINATORS))
