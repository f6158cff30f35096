"""The training examples draw a tqdm progress bar on stderr when tqdm is installed, never on
stdout: what they print (and what tests/test_examples.py checks) is the same with the bar and
with ``--no-bar``."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytest.importorskip("tqdm")

# Each example at its smallest size; the scikit-learn ones skip without it.
RUNS = {
    "char_lstm.py": ["--steps", "3"],
    "tiny_transformer.py": ["--steps", "3"],
    "data_parallel_jax.py": ["--steps", "3"],
    "cnn_digits.py": ["--epochs", "1"],
    "ddp_digits.py": ["--epochs", "1"],
}
NEEDS_SKLEARN = {"cnn_digits.py", "ddp_digits.py"}


def run(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([sys.executable, str(ROOT / "examples" / name), *args],
                         capture_output=True, text=True, timeout=900, check=False)
    assert out.returncode == 0, out.stderr
    return out


@pytest.mark.parametrize("name", sorted(RUNS))
def test_bar_on_stderr_and_the_same_output_without_it(name: str) -> None:
    if name in NEEDS_SKLEARN:
        pytest.importorskip("sklearn")
    with_bar = run(name, *RUNS[name])
    no_bar = run(name, *RUNS[name], "--no-bar")
    assert "it/s" in with_bar.stderr or "s/it" in with_bar.stderr, with_bar.stderr
    assert "it/s" not in with_bar.stdout and "\r" not in with_bar.stdout
    assert no_bar.stderr == ""
    assert with_bar.stdout == no_bar.stdout
    assert with_bar.stdout.strip()
