"""Command-line tools of dlvm-mlir (``dlvm-opt``)."""
