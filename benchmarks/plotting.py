"""Results files shared by the benchmark scripts: the table as JSON and its ratios as a plot.

Each script that prints a ratio table takes ``--json PATH`` (the table, with the machine
line) and ``--plot PATH`` (a PNG of the ratios; by default next to the JSON, same name with
``.png``). The plot needs matplotlib (``pip install -e ".[bench]"``); without it the script
prints a note and writes the JSON alone.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
from collections.abc import Sequence
from typing import Any

ABOVE = "#c0504d"  # ratio > 1 (the x label says what that means for funcgrad)
BELOW = "#4f81bd"


def save_ratio_plot(rows: Sequence[tuple[str, float | None]], path: str | os.PathLike[str],
                    *, title: str = "", xlabel: str = "funcgrad time / peer time") -> str | None:
    """Draw ``(label, ratio)`` rows as horizontal bars on a log scale with a line at 1.0,
    and save the figure to ``path`` (format from its suffix). Rows without a ratio (a peer
    not installed) are left out. Returns the path written, or None when there was nothing to
    draw or matplotlib is missing (a note says so)."""
    bars = [(label, float(r)) for label, r in rows
            if r is not None and math.isfinite(r) and r > 0]
    if not bars:
        print(f"note: no ratios to plot; {path} not written")
        return None
    try:
        import matplotlib  # noqa: PLC0415 - optional (the bench extra)

        matplotlib.use("Agg")  # files only: no display on CI machines
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        print(f"note: matplotlib is not installed (pip install -e '.[bench]'); {path} "
              "not written")
        return None
    labels = [label for label, _ in bars]
    ratios = [r for _, r in bars]
    fig, ax = plt.subplots(figsize=(8.0, 0.8 + 0.32 * len(bars)))
    y = list(range(len(bars)))
    # Bars grow from the line at 1 (a log axis has no 0): left is below 1, right above.
    ax.barh(y, [r - 1.0 for r in ratios], left=1.0, height=0.6,
            color=[ABOVE if r > 1 else BELOW for r in ratios])
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=1.0)
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()  # first row on top, as in the printed table
    # Room for the value labels on both sides of the line at 1.
    low, high = min(*ratios, 1.0), max(*ratios, 1.0)
    ax.set_xlim(low / 2.5, high * 2.5)
    for yi, r in zip(y, ratios):
        ax.text(r * 1.06 if r >= 1 else r / 1.06, yi, f"{r:.3g}x", va="center", fontsize=7,
                ha="left" if r >= 1 else "right")
    ax.set_xlabel(xlabel, fontsize=9)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(axis="x", which="both", alpha=0.25)
    fig.tight_layout()
    out = os.fspath(path)
    pathlib.Path(out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """``--json PATH`` and ``--plot PATH``."""
    parser.add_argument("--json", metavar="PATH", type=pathlib.Path,
                        help="also write the table (and the machine line) as JSON")
    parser.add_argument("--plot", metavar="PATH", type=pathlib.Path,
                        help="also draw the ratios (needs matplotlib); default with --json: "
                             "next to it, .png")


def write_outputs(args: argparse.Namespace, results: dict[str, Any],
                  ratios: Sequence[tuple[str, float | None]], *, title: str = "",
                  xlabel: str = "funcgrad time / peer time") -> None:
    """Write ``results`` to ``args.json`` and the plot of ``ratios`` to ``args.plot`` (or
    next to the JSON), for the options ``add_output_options`` added."""
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1) + "\n")
        print(f"wrote {args.json}")
    plot = args.plot
    if plot is None and args.json is not None:
        plot = args.json.with_suffix(".png")
    if plot is not None and save_ratio_plot(ratios, plot, title=title, xlabel=xlabel):
        print(f"wrote {plot}")
