"""The Tensor-facade examples run and print what they promise; the autograd lesson prints
exactly what PyTorch prints for the same code."""

from __future__ import annotations

import importlib.util
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
IMPORT_LINE = "import funcgrad.torch as torch"
# PyTorch 2.13's output for the seed lesson, written by running it with ``import torch``.
EXPECTED = (ROOT / "tests" / "data" / "seed_lesson.txt").read_text()


def run_source(source: str, *args: str) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([sys.executable, "-c", source, *args], capture_output=True, text=True,
                         timeout=900, check=False, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out


def seed_source() -> str:
    text = (EXAMPLES / "seed_tensor_autograd.py").read_text()
    code = text.split('"""', 2)[2]  # after the module docstring
    assert code.count(IMPORT_LINE) == 1 and "funcgrad" not in code.replace(IMPORT_LINE, "")
    return text


def test_seed_lesson_prints_what_pytorch_prints():
    ours = run_source(seed_source())
    for i, (a, b) in enumerate(zip(ours.stdout.splitlines(), EXPECTED.splitlines())):
        assert a == b, f"line {i + 1} differs:\n funcgrad: {a}\n torch:    {b}"
    assert len(ours.stdout.splitlines()) == len(EXPECTED.splitlines())
    # PyTorch warns (on stderr) when a non-leaf's .grad is read.
    assert "The .grad attribute of a Tensor that is not a leaf Tensor" in ours.stderr


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_seed_lesson_under_pytorch_still_prints_the_stored_text():
    theirs = run_source(seed_source().replace(IMPORT_LINE, "import torch"))
    assert theirs.stdout == EXPECTED


@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None,
                    reason="scikit-learn is not installed")
def test_train_mlp_digits_reaches_95_percent():
    out = subprocess.run([sys.executable, str(EXAMPLES / "train_mlp_digits.py"), "--epochs", "6",
                          "--no-bar"], capture_output=True, text=True, timeout=900, check=False)
    assert out.returncode == 0, out.stderr
    epochs = [line for line in out.stdout.splitlines() if line.startswith("epoch")]
    assert len(epochs) == 6
    losses = [float(re.search(r"loss ([\d.]+)", line).group(1)) for line in epochs]
    assert losses[-1] < 0.5 * losses[0]
    match = re.search(r"^test accuracy: ([\d.]+)", out.stdout, re.MULTILINE)
    assert match, out.stdout
    assert float(match.group(1)) >= 0.95
