"""Derivative rules, one module per source dialect, registered on import."""

from dlvm_mlir.ad.rules import arith, dlvm, func, math, scf, tensor

__all__ = ["arith", "dlvm", "func", "math", "scf", "tensor"]
