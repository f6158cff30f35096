"""The runnable examples run and print what they promise."""

from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_example(name: str, *args: str) -> str:
    out = subprocess.run([sys.executable, str(ROOT / "examples" / name), *args],
                         capture_output=True, text=True, timeout=300, check=False)
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
