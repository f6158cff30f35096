"""benchmarks/bench_workloads.py (the speed issue's workloads) runs and reports every row.

A smoke run at tiny sizes without peers, as tests/test_examples_vmap.py runs
bench_per_example_grads.py: no timing is asserted, only that every funcgrad row was checked
and timed, that skipped peers say why, and that the JSON, Markdown and goal lines are written.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_workloads_benchmark_smoke_run(tmp_path: pathlib.Path) -> None:
    results, table = tmp_path / "workloads.json", tmp_path / "workloads.md"
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_workloads.py"),
                          "--quick", "--tiny", "--no-peers", "--json", str(results),
                          "--markdown", str(table)],
                         capture_output=True, text=True, timeout=900, check=False)
    assert out.returncode == 0, out.stderr
    data = json.loads(results.read_text())
    rows = {(r["workload"], r["name"]): r for r in data["rows"]}
    assert {w for w, _ in rows} == {"W1", "W2", "W3", "W4", "W5", "W6", "W7 LSTM", "W7 CNN",
                                    "MLP loop"}
    for (workload, name), r in rows.items():
        if name == "funcgrad.torch.compile":  # being built: a time, or the reason it failed
            assert (r["status"] == "ok") == (r["seconds"] is not None), r
        elif r["face"].startswith("funcgrad") or r["face"] == "numpy":
            # every funcgrad row agreed with the reference (else it would carry a reason)
            assert r["status"] == "ok", (workload, name, r["status"])
            assert r["seconds"] > 0, (workload, name)
        else:
            assert r["seconds"] is None
            assert r["status"] == "skipped (--no-peers)", (workload, name, r["status"])
    assert rows[("W1", "NumPy by hand (floor)")]["ratio_ref"] == 1.0
    assert rows[("W5", "funcgrad.jit, unrolled")]["ratio_ref"] == 1.0
    w3 = rows[("W3", "funcgrad.jit(grad)")]
    floor = rows[("W3", "NumPy gradient by hand (floor)")]
    assert abs(w3["ratio_ref"] - w3["seconds"] / floor["seconds"]) < 1e-9
    memory = {m["name"]: m for m in data["memory"]}
    assert memory["funcgrad.torch"]["peak_bytes"] >= memory["funcgrad.torch"]["held_bytes"] > 0
    assert memory["PyTorch eager"]["why"] == "skipped (--no-peers)"
    assert len(data["goals"]) == 7
    fori = next(g for g in data["goals"] if g["goal"].startswith("W5"))
    assert fori["verdict"] in ("met", "not met")
    text = table.read_text()
    assert text in out.stdout
    assert "| W1 | funcgrad.torch eager |" in text
    assert "not measured (HIPS autograd grad: skipped (--no-peers))" in text


def test_linalg_benchmark_smoke_run(tmp_path: pathlib.Path) -> None:
    """benchmarks/bench_linalg.py at tiny sizes without peers: every funcgrad row is checked
    (value against NumPy, gradient against finite differences) and timed, and the JSON and
    Markdown tables are written."""
    results, table = tmp_path / "linalg.json", tmp_path / "linalg.md"
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_linalg.py"),
                          "--tiny", "--no-peers", "--json", str(results),
                          "--markdown", str(table)],
                         capture_output=True, text=True, timeout=900, check=False)
    assert out.returncode == 0, out.stderr
    data = json.loads(results.read_text())
    assert data["sizes"] == ["8x8", "4 x 4x4"]
    workloads = ("slogdet", "cholesky+solve", "svd", "eigh")
    keys = {f"{w} @ {s}" for w in workloads for s in data["sizes"]}
    for impl in ("funcgrad jit", "funcgrad eager"):
        assert set(data["times_s"][impl]) == keys
        assert all(t > 0 for t in data["times_s"][impl].values())
    assert "jax.jit" not in data["times_s"] and "torch" not in data["times_s"]
    assert all(r is None for r in data["ratio_to_faster_peer"].values())  # no peer ran
    text = table.read_text()
    assert text in out.stdout
    assert "| cholesky+solve | 4 x 4x4 |" in text


def test_random_benchmark_smoke_run(tmp_path: pathlib.Path) -> None:
    """benchmarks/bench_random.py at a tiny size without peers: every funcgrad row is checked
    (jit against eager, the moments) and timed, and the JSON and Markdown are written."""
    results, table = tmp_path / "random.json", tmp_path / "random.md"
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_random.py"),
                          "--tiny", "--no-peers", "--json", str(results),
                          "--markdown", str(table)],
                         capture_output=True, text=True, timeout=900, check=False)
    assert out.returncode == 0, out.stderr
    data = json.loads(results.read_text())
    assert data["n"] == 1000 and data["splits"] == 10
    for impl in ("funcgrad jit", "funcgrad eager"):
        assert set(data["times_s"][impl]) == {"normal", "uniform", "split"}
        assert all(t > 0 for t in data["times_s"][impl].values())
    assert "jax.jit" not in data["times_s"]
    assert [g["verdict"] for g in data["goals"]] == ["not measured"] * 3
    text = table.read_text()
    assert text in out.stdout
    assert "| funcgrad eager |" in text
