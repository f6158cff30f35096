"""examples/per_example_grads.py runs and prints what it promises."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_per_example_grads_example() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "per_example_grads.py")],
                         capture_output=True, text=True, timeout=900, check=False)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "matches the per-example loop" in text
    assert "per-example gradient of w1: shape (64, 10, 16)" in text
    assert "per-example gradient of b2: shape (64, 3)" in text
    m = re.search(r"min ([\d.]+)\s+median ([\d.]+)\s+mean ([\d.]+)\s+max ([\d.]+)", text)
    assert m, text
    lo, med, mean, hi = map(float, m.groups())
    assert 0.0 < lo <= med <= hi
    assert lo <= mean <= hi


def test_per_example_grads_benchmark_smoke_run() -> None:
    """The benchmark runs and prints its table (no timing is asserted, only the rows)."""
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_per_example_grads.py"),
                          "--quick", "--no-peers", "--batch", "16", "--features", "5"],
                         capture_output=True, text=True, timeout=900, check=False)
    assert out.returncode == 0, out.stderr
    rows = {line.split("  ")[0]: line for line in out.stdout.splitlines()}
    assert "1.000x" in rows["funcgrad vmap(grad)"]
    for name in ("funcgrad Python loop of grad", "NumPy by hand (closed form)"):
        assert re.search(r"\d+\.\d+x", rows[name]), out.stdout
    assert "skipped (--no-peers)" in rows["torch.func.vmap(torch.func.grad)"]
