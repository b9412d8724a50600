"""dlvm-mlir: DLVM rebuilt as an MLIR project driven from Python.

Importing this package registers the ``dlvm`` dialect into the global dialect
registry of the ``mlir`` Python bindings, so every ``mlir.ir.Context`` created
afterwards knows ``dlvm`` ops.
"""
