"""benchmarks/plotting.py: the ratio plot and the --json/--plot options of the benchmark
scripts; the plots the benchmarks page shows are committed and embedded. (No timings are
checked: the numbers are whatever the machine gave.)"""

from __future__ import annotations

import builtins
import importlib.util
import json
import pathlib
import re
import subprocess
import sys
from types import ModuleType

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PNG = b"\x89PNG\r\n\x1a\n"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}",
                                                  ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


plotting = _load("plotting")


def test_plot_is_a_png_with_one_bar_per_ratio(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    rows = [("slower", 3.0), ("faster", 0.25), ("not installed", None), ("same", 1.0)]
    drawn: list = []
    real_savefig = plt.Figure.savefig

    def keep(fig, *args, **kwargs):  # the figure, to count its bars and read its scale
        drawn.append(fig)
        return real_savefig(fig, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plt.Figure, "savefig", keep)
        out = plotting.save_ratio_plot(rows, tmp_path / "sub" / "r.png", title="t")
    assert out == str(tmp_path / "sub" / "r.png")
    assert (tmp_path / "sub" / "r.png").read_bytes()[:8] == PNG
    (ax,) = drawn[0].axes
    assert ax.get_xscale() == "log"
    widths = [p.get_width() for p in ax.patches]
    assert sorted(widths) == [-0.75, 0.0, 2.0]  # bars from the line at 1 to each ratio
    assert [t.get_text() for t in ax.get_yticklabels()] == ["slower", "faster", "same"]
    assert any(list(line.get_xdata()) == [1.0, 1.0] for line in ax.lines)
    lo, hi = ax.get_xlim()
    assert lo < 0.25 and hi > 3.0


def test_no_ratios_and_no_matplotlib_write_nothing(tmp_path: pathlib.Path,
                                                   capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert plotting.save_ratio_plot([("x", None)], tmp_path / "a.png") is None
    assert "no ratios" in capsys.readouterr().out
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    assert plotting.save_ratio_plot([("x", 2.0)], tmp_path / "b.png") is None
    assert "matplotlib is not installed" in capsys.readouterr().out
    assert not list(tmp_path.iterdir())


def test_the_plot_goes_next_to_the_json(tmp_path: pathlib.Path) -> None:
    import argparse  # noqa: PLC0415

    parser = argparse.ArgumentParser()
    plotting.add_output_options(parser)
    args = parser.parse_args(["--json", str(tmp_path / "r.json")])
    plotting.write_outputs(args, {"rows": [1]}, [("a", 2.0)])
    assert json.loads((tmp_path / "r.json").read_text()) == {"rows": [1]}
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "r.png").read_bytes()[:8] == PNG
    args = parser.parse_args(["--plot", str(tmp_path / "only.png")])
    plotting.write_outputs(args, {}, [])
    assert not (tmp_path / "only.png").exists()  # nothing to draw


@pytest.mark.parametrize("script", ["bench_facade", "bench_jit", "bench_fft", "bench_linalg",
                                    "bench_distributed", "bench_per_example_grads"])
def test_scripts_take_json_and_plot(script: str) -> None:
    source = (ROOT / "benchmarks" / f"{script}.py").read_text()
    # Each script builds its parser with the shared options and writes through them.
    assert "add_output_options(" in source and "write_outputs(" in source


def test_a_script_writes_its_json_and_plot(tmp_path: pathlib.Path) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_per_example_grads.py"), "--quick",
         "--no-peers", "--batch", "8", "--features", "3", "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=900, check=False, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["machine"].startswith("machine: ")
    names = [r["implementation"] for r in result["rows"]]
    assert "funcgrad vmap(grad)" in names
    ref = next(r for r in result["rows"] if r["implementation"] == result["reference"])
    assert ref["ratio"] == 1.0
    for row in result["rows"]:
        if row["time_s"] is not None:
            assert row["ratio"] == pytest.approx(row["time_s"] / ref["time_s"])
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "r.png").read_bytes()[:8] == PNG


def test_benchmarks_page_embeds_committed_plots() -> None:
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    shown = re.findall(r"!\[[^\]]+\]\(images/(bench_\w+\.png)\)", page)
    assert len(shown) >= 2
    for name in shown:
        png = ROOT / "docs" / "images" / name
        assert png.read_bytes()[:8] == PNG, name
        results = json.loads(png.with_suffix(".json").read_text())
        assert results["machine"] in page, f"the page quotes the machine line of {name}"
