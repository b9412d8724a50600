"""examples/train_cnn_digits.py: the two-convolution network trains to >= 97% test accuracy."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
import train_cnn_digits  # noqa: E402


def test_trains_to_97_percent(tmp_path: Path, capsys) -> None:
    assert train_cnn_digits.main(["--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("epoch ") == 20 and "final test accuracy" in out
    accuracy = float(out.split("final test accuracy ")[1].split()[0])
    assert accuracy >= 0.97
    assert (tmp_path / "train_cnn_digits.png").stat().st_size > 10_000
