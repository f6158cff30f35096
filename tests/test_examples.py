"""The runnable examples run and print what they promise."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_example(name: str, *args: str) -> str:
    out = subprocess.run([sys.executable, str(ROOT / "examples" / name), *args],
                         capture_output=True, text=True, timeout=900, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_quickstart() -> None:
    out = run_example("quickstart.py")
    assert "reduce_sum[axes=(0, 1)]" in out
    assert "check_grads: first and second derivatives agree" in out
    losses = [float(line.split()[-1]) for line in out.splitlines() if line.startswith("step")]
    assert losses[-1] < 0.5 * losses[0]


def test_readme_tour_runs() -> None:
    import re  # noqa: PLC0415

    text = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S)
    assert code is not None
    exec(compile(code.group(1), "README.md", "exec"), {})  # noqa: S102


def _launch(name: str, nproc: int, *args: str) -> str:
    pytest.importorskip("mpi4py")
    out = subprocess.run([sys.executable, "-m", "funcgrad.distributed.run", "--nproc",
                          str(nproc), str(ROOT / "examples" / name), *args],
                         capture_output=True, text=True, timeout=900, check=False)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout


def test_data_parallel_jax_on_two_processes() -> None:
    out = _launch("data_parallel_jax.py", 2)
    final = [line for line in out.splitlines() if "final loss" in line]
    assert len(final) == 1 and final[0].startswith("[rank 0] world size 2")
    assert float(final[0].split()[-1]) < 0.2


def test_ddp_digits_on_two_processes() -> None:
    pytest.importorskip("sklearn")
    out = _launch("ddp_digits.py", 2, "--epochs", "3")
    acc = [line for line in out.splitlines() if "test accuracy" in line]
    assert len(acc) == 1 and acc[0].startswith("[rank 0] world size 2")
    assert float(acc[0].split()[-1]) > 0.9


def test_cnn_digits_reaches_097() -> None:
    pytest.importorskip("sklearn")
    out = run_example("cnn_digits.py")
    acc = float(out.strip().splitlines()[-1].split()[-1])
    assert acc >= 0.97, out


def test_char_lstm_learns_its_text() -> None:
    out = run_example("char_lstm.py", "--steps", "60")
    assert "generated: the quick brown fox jumps over the lazy dog." in out, out


def test_tiny_transformer_learns_to_sort() -> None:
    out = run_example("tiny_transformer.py", "--steps", "150")
    assert float(out.strip().splitlines()[-1].split()[-1]) >= 0.5, out
