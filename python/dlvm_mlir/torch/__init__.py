"""DLVM as a PyTorch back end: ``torch.compile(model, backend="dlvm")``.

See :mod:`dlvm_mlir.torch.backend` and docs/frameworks.md.
"""

from .backend import backend, coverage, summary

__all__ = ["backend", "coverage", "summary"]
