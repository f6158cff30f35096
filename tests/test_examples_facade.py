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
IMPORT_LINE = "import funcgrad as fg"


def run_source(source: str, *args: str) -> str:
    out = subprocess.run([sys.executable, "-c", source, *args], capture_output=True, text=True,
                         timeout=300, check=False, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout


def seed_source() -> str:
    text = (EXAMPLES / "seed_tensor_autograd.py").read_text()
    code = text.split('"""', 2)[2]  # after the module docstring
    assert text.count(IMPORT_LINE) == 1 and "torch" not in code
    return text


def test_seed_tensor_autograd_runs():
    out = run_source(seed_source())
    assert "b = tensor(33., grad_fn=<MeanBackward0>)" in out
    assert "y.grad is None: True" in out
    assert "x.grad = tensor([[2., 4.],\n        [6., 8.]])" in out


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_seed_tensor_autograd_prints_what_torch_prints():
    source = seed_source()
    ours = run_source(source).splitlines()
    theirs = run_source(source.replace(IMPORT_LINE, "import torch as fg")).splitlines()
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"line {i + 1} differs:\n funcgrad: {a}\n torch:    {b}"


@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None,
                    reason="scikit-learn is not installed")
def test_train_mlp_digits_reaches_95_percent():
    out = subprocess.run([sys.executable, str(EXAMPLES / "train_mlp_digits.py"), "--epochs", "6",
                          "--no-bar"], capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    epochs = [line for line in out.stdout.splitlines() if line.startswith("epoch")]
    assert len(epochs) == 6
    losses = [float(re.search(r"loss ([\d.]+)", line).group(1)) for line in epochs]
    assert losses[-1] < 0.5 * losses[0]
    match = re.search(r"^test accuracy: ([\d.]+)", out.stdout, re.MULTILINE)
    assert match, out.stdout
    assert float(match.group(1)) >= 0.95
