"""Automatic differentiation of dlvm programs (the ``dlvm-differentiate`` pass).

- ``differentiate(module)`` synthesizes the body of every function declared
  with ``#dlvm.gradient<...>`` (reverse mode) or ``#dlvm.tangent<...>``
  (forward mode), plus the derivatives of callees they need.
- ``vocab``: the builder vocabulary the rules are written in.
- ``rules``: the derivative rules, one module per source dialect.
"""

from dlvm_mlir.ad.errors import DifferentiationError
from dlvm_mlir.ad.synthesis import DERIVATIVE_OF_ATTR, Synthesizer, differentiate

__all__ = ["DERIVATIVE_OF_ATTR", "DifferentiationError", "Synthesizer", "differentiate"]
