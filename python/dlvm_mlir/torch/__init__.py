"""DLVM as a PyTorch back end: ``torch.compile(model, backend="dlvm")``.

See :mod:`dlvm_mlir.torch.dynamo` (the back end: ``dlvm_mlir.torch.backend``) and docs/frameworks.md.
"""

from .dynamo import backend, coverage, summary

__all__ = ["backend", "coverage", "summary"]
