"""PyTorch's legacy tensor types (``torch.FloatTensor(2, 3)``, ``torch.LongTensor([1, 2])``,
``isinstance(x, torch.FloatTensor)``, ``x.type(torch.DoubleTensor)``,
``set_default_tensor_type``), against torch 2.13: values, dtypes, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

torch = pytest.importorskip("torch")

NAMES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
         "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


def _outcome(f):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = f()
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return (type(e).__name__, str(e))
    if hasattr(r, "numpy"):
        is_bool = r.dtype == r.new_empty(0).bool().dtype
        return ("tensor", str(r.dtype), tuple(r.shape),
                (r if is_bool else r.float()).numpy().tolist())
    return ("ok", repr(r).replace("funcgrad.", ""))


def _both(f):
    assert _outcome(lambda: f(ft)) == _outcome(lambda: f(torch))


@pytest.mark.parametrize("name", NAMES)
def test_type_objects_construct_and_check_as_torch(name):
    probes = [
        lambda L: repr(getattr(L, name)),
        lambda L: (getattr(L, name).dtype, getattr(L, name).is_cuda, getattr(L, name).is_sparse),
        lambda L: getattr(L, name)(2, 3).shape,
        lambda L: getattr(L, name)().shape,
        lambda L: getattr(L, name)(L.Size([2, 1])).shape,
        lambda L: getattr(L, name)((2, 3)),
        lambda L: getattr(L, name)(L.tensor([1.0, 2.0])),
        lambda L: getattr(L, name)([1], dtype=L.float64),
        lambda L: getattr(L, name)("a"),
        lambda L: getattr(L, name)(2.5),
        lambda L: isinstance(L.ones(2), getattr(L, name)),
        lambda L: isinstance(L.ones(2, dtype=L.int64), getattr(L, name)),
        lambda L: L.ones(2).type(getattr(L, name)),
        lambda L: L.ones(2).type(f"torch.{name}"),
        lambda L: getattr(L, name)([1]).type(),
    ]
    for probe in probes:
        _both(probe)


@given(data=st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=0, max_size=6),
       name=st.sampled_from(NAMES))
@settings(max_examples=30, deadline=None)
def test_converting_data_as_torch(data, name):
    _both(lambda L: getattr(L, name)(data))
    _both(lambda L: getattr(L, name)(np.asarray(data, np.float32)))


def test_construction_from_a_tensor_of_the_type_shares_its_storage():
    t = ft.tensor([1.0, 2.0])
    alias = ft.FloatTensor(t)
    assert alias is not t
    alias[0] = 5.0
    assert t[0].item() == 5.0


def test_strings_name_legacy_types_only_and_cuda_types_need_a_gpu():
    _both(lambda L: L.ones(2).type("torch.float64"))
    if not ft.cuda.is_available():
        _both(lambda L: L.cuda.FloatTensor(2))
        _both(lambda L: isinstance(L.ones(2), L.cuda.FloatTensor))


@pytest.mark.parametrize("arg", ["float32", "x.y.Z", 1, "torch.Foo", "LongTensor",
                                 "DoubleTensor", "torch.FloatTensor"])
def test_set_default_tensor_type_as_torch(arg):
    def call(L):
        a = getattr(L, arg) if arg in ("float32", "LongTensor", "DoubleTensor") else arg
        try:
            L.set_default_tensor_type(a)
            return (L.tensor([1.0]).dtype, L.get_default_dtype())
        finally:
            L.set_default_dtype(L.float32)

    _both(call)
    with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
        ft.set_default_tensor_type(ft.FloatTensor)


@given(data=st.lists(st.one_of(st.floats(), st.floats(-300, 300), st.integers(-300, 300)),
                     min_size=1, max_size=4),
       dtype=st.sampled_from(["int8", "uint8", "int16", "int32", "int64", "uint64", "bool"]))
@settings(max_examples=60, deadline=None)
def test_python_floats_into_integer_dtypes_checked_as_torch(data, dtype):
    """PyTorch checks floats against the integer dtype's range (NaN and inf fail), where
    NumPy would wrap them silently."""
    _both(lambda L: L.tensor(data, dtype=getattr(L, dtype)))
