"""torch.save / torch.load: PyTorch's zip format both ways (funcgrad writes, torch 2.13
reads, and the reverse), the archive layout read with zipfile, and the safe
(weights_only) unpickler refusing every global off its allow-list."""

from __future__ import annotations

import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad.torch as ft

HYP = settings(max_examples=15, deadline=None)

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64"]


def _roundtrip(obj, **kw):
    buf = io.BytesIO()
    ft.save(obj, buf)
    buf.seek(0)
    return ft.load(buf, **kw)


@HYP
@given(hnp.arrays(st.sampled_from(DTYPES), hnp.array_shapes(min_dims=0, max_dims=3,
                                                           max_side=4)))
def test_roundtrip_any_dtype_and_shape(a):
    t = ft.tensor(a)
    out = _roundtrip({"t": t, "n": [1, 2.5, "s", b"b", None, True]})
    assert out["n"] == [1, 2.5, "s", b"b", None, True]
    assert out["t"].dtype is t.dtype
    assert tuple(out["t"].shape) == a.shape
    np.testing.assert_array_equal(out["t"].numpy(), a)


def test_archive_layout():
    buf = io.BytesIO()
    ft.save({"a": ft.ones(3), "b": ft.arange(4)}, buf)
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    names = set(z.namelist())
    assert {"archive/data.pkl", "archive/version", "archive/byteorder", "archive/data/0",
            "archive/data/1"} <= names
    assert z.read("archive/byteorder") == b"little"
    assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
    assert np.frombuffer(z.read("archive/data/0"), np.float32).tolist() == [1.0, 1.0, 1.0]
    assert np.frombuffer(z.read("archive/data/1"), np.int64).tolist() == [0, 1, 2, 3]


def test_file_path_and_file_object(tmp_path):
    path = tmp_path / "weights.pt"
    ft.save([ft.tensor([1.0, 2.0])], str(path))
    assert "weights/data.pkl" in zipfile.ZipFile(path).namelist()
    assert ft.load(path)[0].tolist() == [1.0, 2.0]
    with open(path, "rb") as fh:
        assert ft.load(fh, map_location="cpu")[0].tolist() == [1.0, 2.0]
    with open(tmp_path / "w2.pt", "wb") as fh:
        ft.save(ft.tensor(3), fh)
    assert ft.load(os.fspath(tmp_path / "w2.pt"), map_location=ft.device("cpu")).item() == 3


def test_same_tensor_twice_is_one_storage_and_shared_after_load():
    t = ft.arange(3.0)
    out = _roundtrip({"a": t, "b": t})
    assert out["a"] is out["b"]


def test_parameter_and_requires_grad_survive():
    p = ft.nn.Parameter(ft.tensor([1.0, 2.0]))
    out = _roundtrip({"p": p, "r": ft.tensor([1.0], requires_grad=True)})
    assert isinstance(out["p"], ft.nn.Parameter) and out["p"].requires_grad
    assert out["r"].requires_grad and out["r"].is_leaf


def test_malicious_reduce_payload_never_runs(tmp_path):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps({"x": Evil()}, protocol=2))
        z.writestr("archive/version", "3\n")
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError,
                       match="(?s)Weights only load failed.*GLOBAL posix.system"):
        ft.load(buf)
    assert not marker.exists()


def test_unknown_class_refused_then_allowed_with_add_safe_globals():
    buf = io.BytesIO()
    ft.save({"c": collections.Counter("aab"), "z": complex(1, 2)}, buf)
    buf.seek(0)
    assert ft.load(buf) == {"c": collections.Counter("aab"), "z": 1 + 2j}
    buf = io.BytesIO()
    ft.save({"d": collections.deque([1])}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="collections.deque"):
        ft.load(buf)
    ft.serialization.add_safe_globals([collections.deque])
    try:
        buf.seek(0)
        assert ft.load(buf) == {"d": collections.deque([1])}
    finally:
        ft.serialization.clear_safe_globals()
    buf.seek(0)
    assert ft.load(buf, weights_only=False) == {"d": collections.deque([1])}


def test_not_a_zip_file():
    with pytest.raises(RuntimeError, match="zip"):
        ft.load(io.BytesIO(pickle.dumps([1])))


def test_module_and_optimizer_state_dicts_roundtrip():
    ft.manual_seed(0)
    model = ft.nn.Linear(3, 2)
    opt = ft.optim.Adam(model.parameters(), lr=0.1)
    model(ft.randn(4, 3)).sum().backward()
    opt.step()
    sd, osd = _roundtrip(model.state_dict()), _roundtrip(opt.state_dict())
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(sd[k].numpy(), v.detach().numpy())
    assert osd["param_groups"][0]["params"] == [0, 1]
    assert osd["param_groups"][0]["betas"] == (0.9, 0.999)
    np.testing.assert_array_equal(osd["state"][0]["exp_avg"].numpy(),
                                  opt.state_dict()["state"][0]["exp_avg"].numpy())


# ------------------------------------------------------------ against torch 2.13


@HYP
@given(st.sampled_from(DTYPES + ["bfloat16", "uint16"]), st.data())
def test_funcgrad_file_loads_in_torch(name, data):
    torch = pytest.importorskip("torch")
    shapes = hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)
    if name == "bfloat16":
        a = data.draw(hnp.arrays(np.float32, shapes, elements=st.integers(-100, 100)))
        t = ft.tensor(a).to(ft.bfloat16)
    else:
        t = ft.tensor(data.draw(hnp.arrays(name, shapes)))
    buf = io.BytesIO()
    ft.save({"t": t, "meta": (1, 2.0, "x"), "sub": collections.OrderedDict(w=t)}, buf)
    buf.seek(0)
    out = torch.load(buf)  # weights_only=True: the file names only allowed globals
    assert out["meta"] == (1, 2.0, "x")
    assert str(out["t"].dtype) == str(t.dtype)
    assert isinstance(out["sub"], collections.OrderedDict)
    got = out["t"].float().numpy() if str(t.dtype) == "torch.bfloat16" else out["t"].numpy()
    want = t.float().numpy() if str(t.dtype) == "torch.bfloat16" else t.numpy()
    np.testing.assert_array_equal(got, want)


@HYP
@given(hnp.arrays(st.sampled_from(DTYPES), hnp.array_shapes(min_dims=1, max_dims=3,
                                                           max_side=4)),
       st.booleans())
def test_torch_file_loads_in_funcgrad(a, transposed):
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(a.copy())
    if transposed and t.ndim >= 2:
        t = t.transpose(0, 1)  # a strided view: saved with its storage and strides
    view = t.reshape(-1)[1:] if t.is_contiguous() else t
    buf = io.BytesIO()
    torch.save({"t": t, "view": view, "dt": t.dtype, "size": t.shape}, buf)
    buf.seek(0)
    out = ft.load(buf)
    np.testing.assert_array_equal(out["t"].numpy(), t.numpy())
    np.testing.assert_array_equal(out["view"].numpy(), view.numpy())
    assert str(out["dt"]) == str(t.dtype)
    assert tuple(out["size"]) == tuple(t.shape)


def test_torch_model_and_optimizer_files_load_in_funcgrad():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.randn(5, 3)).sum().backward()
    opt.step()
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                "param": torch.nn.Parameter(torch.ones(2))}, buf)
    buf.seek(0)
    out = ft.load(buf)
    assert list(out["model"]) == list(model.state_dict())
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(out["model"][k].numpy(), v.numpy())
    assert out["opt"]["param_groups"][0]["params"] == [0, 1, 2, 3]
    assert out["opt"]["state"][0]["step"].item() == 1.0
    assert isinstance(out["param"], ft.nn.Parameter)
    fmodel = ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.ReLU(), ft.nn.Linear(4, 1))
    fmodel.load_state_dict(out["model"])
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(fmodel(ft.tensor(x)).detach().numpy(),
                               model(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)
    fopt = ft.optim.Adam(fmodel.parameters(), lr=0.01)
    fopt.load_state_dict(out["opt"])
    assert fopt.state_dict()["state"][0]["step"].item() == 1.0


def test_funcgrad_optimizer_state_loads_into_torch_optimizer():
    torch = pytest.importorskip("torch")
    w = ft.tensor([1.0, -2.0], requires_grad=True)
    opt = ft.optim.SGD([w], lr=0.1, momentum=0.9)
    (w * w).sum().backward()
    opt.step()
    buf = io.BytesIO()
    ft.save(opt.state_dict(), buf)
    buf.seek(0)
    tw = torch.tensor([1.0, -2.0], requires_grad=True)
    topt = torch.optim.SGD([tw], lr=0.5)
    topt.load_state_dict(torch.load(buf))
    assert topt.param_groups[0]["lr"] == 0.1
    np.testing.assert_allclose(topt.state[tw]["momentum_buffer"].numpy(), [2.0, -4.0])
