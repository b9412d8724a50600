"""Test-session defaults: compiled code checks its run-time indices
(dlvm-check-bounds), and the compile cache is a private directory of this
session (the tests never read or write the user's cache)."""

import os
import shutil
import tempfile

os.environ.setdefault("DLVM_MLIR_CHECK_BOUNDS", "1")
_CACHE = tempfile.mkdtemp(prefix="dlvm-test-cache-")
os.environ["DLVM_MLIR_CACHE_DIR"] = _CACHE


def pytest_unconfigure(config):
    shutil.rmtree(_CACHE, ignore_errors=True)
