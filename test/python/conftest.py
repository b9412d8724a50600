"""Test-session defaults: compiled code checks its run-time indices (dlvm-check-bounds)."""

import os

os.environ.setdefault("DLVM_MLIR_CHECK_BOUNDS", "1")
