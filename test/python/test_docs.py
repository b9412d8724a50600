"""The reference docs under docs/ are generated from ODS and must be current."""

from pathlib import Path

from dlvm_mlir.tools import gendocs

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_generated_docs_are_current():
    assert gendocs.main([str(DOCS), "--check"]) == 0, "run `make docs`"
