"""``torch.utils.tensorboard.SummaryWriter``: the event files funcgrad writes hold the same
events as PyTorch's writer writes for the same calls (read back with TensorBoard's own
loader); skipped without the ``tensorboard`` package (the ``tensorboard`` extra)."""

from __future__ import annotations

import importlib
import pathlib
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("tensorboard")

from google.protobuf.json_format import MessageToDict  # noqa: E402
from tensorboard.backend.event_processing.event_file_loader import (  # noqa: E402
    RawEventFileLoader,
)
from tensorboard.compat.proto.event_pb2 import Event  # noqa: E402

import funcgrad.torch as ft  # noqa: E402
from funcgrad.torch.utils.tensorboard import SummaryWriter, summaries  # noqa: E402


def _events(run: pathlib.Path) -> list[dict[str, Any]]:
    (path,) = sorted(run.glob("events.out.tfevents.*"))
    out = []
    # (Raw records: TensorBoard's loader would rewrite old-style scalars as tensors.)
    for record in RawEventFileLoader(str(path)).Load():
        d = MessageToDict(Event.FromString(record))
        if "fileVersion" in d or "sessionLog" in d:
            d.pop("wallTime")  # (when the file was made)
        out.append(d)
    return out


def _log(L: Any, writer_cls: Any, root: pathlib.Path) -> None:
    rng = np.random.default_rng(0)
    w = writer_cls(str(root / "run"), purge_step=3)
    for step in range(3):
        w.add_scalar("loss", 1.0 / (step + 1), step, walltime=100.0 + step)
    w.add_scalar("tensor_value", L.tensor(2.5), 3, walltime=104.0)
    w.add_scalar("array_value", np.float32(0.125), 4, walltime=105.0, new_style=True)
    w.add_scalar("double", 1 / 3, 4, walltime=105.0, new_style=True, double_precision=True)
    w.add_histogram("weights", L.tensor(rng.normal(size=500)), 5, walltime=106.0)
    w.add_histogram("auto_bins", rng.uniform(-2, 3, 300), 6, bins="auto", walltime=107.0)
    w.add_histogram("capped", rng.normal(size=200), 7, bins=64, max_bins=10, walltime=108.0)
    w.add_image("chw_float", L.tensor(rng.uniform(size=(3, 6, 5)).astype(np.float32)), 8,
                walltime=109.0)
    w.add_image("hwc_uint8", rng.integers(0, 256, (4, 7, 3)).astype(np.uint8), 9,
                walltime=110.0, dataformats="HWC")
    w.add_image("gray", rng.uniform(size=(5, 5)), 10, walltime=111.0, dataformats="HW")
    w.add_images("batch", L.tensor(rng.uniform(size=(10, 1, 4, 4)).astype(np.float32)), 11,
                 walltime=112.0)
    w.add_text("notes", "lr **0.1**, été", 12, walltime=113.0)
    w.add_scalars("curves", {"train": 0.5, "val": 0.75}, 13, walltime=114.0)
    w.add_hparams({"lr": 0.1, "opt": "adam", "bn": True, "layers": 3},
                  {"hparam/accuracy": 0.9}, run_name="hp", global_step=14)
    w.close()


def test_event_files_hold_pytorchs_events(tmp_path: pathlib.Path) -> None:
    ours = tmp_path / "funcgrad"
    _log(ft, SummaryWriter, ours)
    events = _events(ours / "run")
    assert events[0]["fileVersion"] == "brain.Event:2"
    tags = [v["tag"] for e in events for v in e.get("summary", {}).get("value", [])]
    assert tags[:3] == ["loss"] * 3 and "notes/text_summary" in tags
    loss = [e["summary"]["value"][0]["simpleValue"] for e in events[3:6]]
    assert loss == [1.0, 0.5, pytest.approx(1 / 3)]
    runs = sorted(p.name for p in (ours / "run").iterdir() if p.is_dir())
    assert runs == ["curves_train", "curves_val", "hp"]
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    theirs = tmp_path / "torch"
    _log(torch, TorchWriter, theirs)
    for sub in ("run", "run/curves_train", "run/curves_val"):
        assert _events(ours / sub) == _events(theirs / sub), sub
    hp_ours, hp_theirs = _events(ours / "run/hp"), _events(theirs / "run/hp")
    for e in hp_ours + hp_theirs:
        e.pop("wallTime", None)
    assert hp_ours == hp_theirs


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 200), scale=st.floats(1e-3, 1e3), shift=st.floats(-10, 10),
       bins=st.sampled_from(["tensorflow", "auto", 7, 30]), max_bins=st.sampled_from(
           [None, 5]), seed=st.integers(0, 2 ** 31 - 1))
def test_histograms_match_pytorchs(n: int, scale: float, shift: float, bins: Any,
                                   max_bins: Any, seed: int) -> None:
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import summary as tsummary

    values = np.random.default_rng(seed).normal(shift, scale, n)
    b = summaries.tensorflow_bins() if bins == "tensorflow" else bins
    ours = summaries.histogram("h", ft.tensor(values), b, max_bins)
    theirs = tsummary.histogram("h", torch.tensor(values), b, max_bins)
    assert MessageToDict(ours) == MessageToDict(theirs)


def test_bad_input_errors() -> None:
    with pytest.raises(AssertionError, match="Tensor should contain one element"):
        summaries.scalar("x", ft.ones(3))
    with pytest.raises(ValueError, match="The input has no element."):
        summaries.histogram("x", np.zeros(0), 10)
    with pytest.raises(AssertionError, match="size of input tensor and input format are "
                                             "different"):
        summaries.image("x", np.zeros((2, 2)), "CHW")
    with pytest.raises(TypeError, match="hparam_dict and metric_dict should be dictionary"):
        SummaryWriter.add_hparams(None, [], {})  # type: ignore[arg-type]


def test_without_tensorboard_the_import_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m.startswith("funcgrad.torch.utils.tensorboard")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    with pytest.raises(ImportError, match="^TensorBoard logging requires TensorBoard version "
                                          "1.15 or above$"):
        importlib.import_module("funcgrad.torch.utils.tensorboard")
