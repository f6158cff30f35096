"""``jax.experimental.mesh_utils`` against JAX's on device lists it lays out the same way
(stand-in devices of several processes), its errors, and the device attributes meshes read."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad.experimental import mesh_utils


class _Dev:
    """A CPU device of process ``p`` (what the layouts read of a device)."""

    def __init__(self, i: int, p: int) -> None:
        self.id, self.process_index, self.slice_index = i, p, p
        self.platform = self.device_kind = "cpu"

    def __repr__(self) -> str:
        return f"_Dev({self.id}, {self.process_index})"


def _ids(mesh: np.ndarray) -> list[Any]:
    return np.vectorize(lambda d: d.id, otypes=[int])(mesh).tolist()


_dims = st.lists(st.integers(1, 3), min_size=1, max_size=3)


@settings(max_examples=40, deadline=None)
@given(mesh=_dims, dcn=_dims)
def test_meshes_match_jax(mesh: list[int], dcn: list[int]) -> None:
    jmu = pytest.importorskip("jax.experimental.mesh_utils")
    dcn = (dcn + [1] * len(mesh))[:len(mesh)]
    per, granules = math.prod(mesh), math.prod(dcn)
    devs = [_Dev(i, i // per) for i in range(per * granules)]
    assert _ids(mesh_utils.create_device_mesh([per * granules], devs)) == \
        _ids(jmu.create_device_mesh([per * granules], devs))
    ours = mesh_utils.create_hybrid_device_mesh(mesh, dcn, devs, process_is_granule=True)
    theirs = jmu.create_hybrid_device_mesh(mesh, dcn, devs, process_is_granule=True)
    assert ours.shape == theirs.shape and _ids(ours) == _ids(theirs)


def test_errors_and_defaults_match_jax() -> None:
    jmu = pytest.importorskip("jax.experimental.mesh_utils")
    n = len(fg.devices())
    assert mesh_utils.create_device_mesh((n,)).tolist() == fg.devices()
    assert mesh_utils.create_device_mesh((n,)).dtype == jmu.create_device_mesh((1,)).dtype
    for call in (lambda m: m.create_device_mesh((n + 1,)),
                 lambda m: m.create_device_mesh((1,), devices=[])):
        with pytest.raises(ValueError) as want:
            call(jmu)
        with pytest.raises(ValueError) as got:
            call(mesh_utils)
        assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="does not have attribute slice_index. See "
                                         "`process_is_granule` option."):
        mesh_utils.create_hybrid_device_mesh((1,), (1,))


def test_device_attributes_as_jax() -> None:
    jax = pytest.importorskip("jax")
    ours, theirs = fg.devices()[0], jax.devices()[0]
    for name in ("process_index", "host_id", "task_id", "local_hardware_id", "device_kind",
                 "id", "platform"):
        assert getattr(ours, name) == getattr(theirs, name), name
