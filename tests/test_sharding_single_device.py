"""funcgrad.sharding and shard_map on one device, checked against JAX (meshes of size-1
axes, Auto axis types where JAX's sharding-in-types would differ)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.sharding import NamedSharding, PartitionSpec

jax = pytest.importorskip("jax")
jnp = jax.numpy
JP = jax.sharding.PartitionSpec
pytestmark = pytest.mark.x32


def jmesh(shape: tuple[int, ...] = (1,), names: tuple[str, ...] = ("x",)) -> object:
    auto = jax.sharding.AxisType.Auto
    return jax.make_mesh(shape, names, axis_types=(auto,) * len(names))


def test_partition_spec_as_jax() -> None:
    for parts in [("x",), ("x", None), (("x", "y"),), (), (None, "x")]:
        assert repr(PartitionSpec(*parts)) == repr(JP(*parts))
        assert len(PartitionSpec(*parts)) == len(JP(*parts))
    assert (fg.P("x") == fg.P("x", None)) == (JP("x") == JP("x", None))
    assert (fg.P() == fg.P(None)) == (JP() == JP(None))
    assert fg.P is PartitionSpec


def test_make_mesh_and_errors() -> None:
    m = fg.make_mesh((1, 1), ("a", "b"))
    jm = jax.make_mesh((1, 1), ("a", "b"))
    assert m.shape == jm.shape and m.axis_names == jm.axis_names and m.size == jm.size
    assert str(m) == str(jm).replace("('a': 1, 'b': 1", "('a': 1, 'b': 1")
    for lib in (fg, jax):
        with pytest.raises(ValueError, match="product of mesh_shape"):
            lib.make_mesh((2,), ("x",))
        with pytest.raises(ValueError, match="ndim"):
            lib.make_mesh((1, 1), ("x",))


def test_named_sharding_as_jax() -> None:
    m, jm = fg.make_mesh((1,), ("x",)), jmesh()
    s, js = NamedSharding(m, fg.P("x")), jax.NamedSharding(jm, JP("x"))
    assert s.shard_shape((4, 3)) == js.shard_shape((4, 3))
    assert s.is_fully_replicated == js.is_fully_replicated
    assert s.num_devices == js.num_devices
    assert list(s.addressable_devices_indices_map((4,)).values()) == \
        list(js.addressable_devices_indices_map((4,)).values())
    for lib, mesh, P in ((fg, m, fg.P), (jax, jm, JP)):
        with pytest.raises(ValueError, match="not found in mesh"):
            lib.NamedSharding(mesh, P("y"))
        # JAX's DuplicateSpecError is no ValueError; funcgrad's is one.
        with pytest.raises(ValueError if lib is fg else Exception, match="duplicate entries"):
            lib.NamedSharding(mesh, P("x", "x"))


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 5), st.integers(1, 4))
def test_make_array_from_callback_and_friends(n: int, k: int) -> None:
    data = np.arange(n * k, dtype=np.float32).reshape(n, k)
    s = NamedSharding(fg.make_mesh((1,), ("x",)), fg.P("x"))
    js = jax.NamedSharding(jmesh(), JP("x"))
    seen: list[object] = []

    def cb(idx: object) -> np.ndarray:
        seen.append(idx)
        return data[idx]  # type: ignore[index]

    ours = fg.make_array_from_callback(data.shape, s, cb)
    theirs = jax.make_array_from_callback(data.shape, js, cb)
    np.testing.assert_array_equal(ours, theirs)
    assert seen[0] == seen[1]
    np.testing.assert_array_equal(
        fg.make_array_from_single_device_arrays(data.shape, s, [fnp.asarray(data)]), data)
    np.testing.assert_array_equal(fg.make_array_from_process_local_data(s, data), data)
    assert isinstance(ours, fg.Array) and ours.dtype == theirs.dtype


def test_make_array_errors_as_jax() -> None:
    x = np.arange(4.0, dtype=np.float32)
    s = NamedSharding(fg.make_mesh((1,), ("x",)), fg.P("x"))
    js = jax.NamedSharding(jmesh(), JP("x"))
    for lib, sh, arr in ((fg, s, fnp.asarray(x)), (jax, js, jnp.asarray(x))):
        with pytest.raises(ValueError, match="Expected shard shape"):
            lib.make_array_from_callback((5,), sh, lambda idx: x[idx])
        with pytest.raises(ValueError, match="Expected shard shape"):
            lib.make_array_from_single_device_arrays((5,), sh, [arr])
        with pytest.raises(ValueError, match="per-device arrays"):
            lib.make_array_from_single_device_arrays((4,), sh, [arr, arr])
        with pytest.raises(ValueError, match="global_shape should be None"):
            lib.make_array_from_process_local_data(sh, x, (5,))


def test_reshard_set_mesh_device_put_and_shards() -> None:
    x = fnp.arange(4.0)
    m = fg.make_mesh((1,), ("x",))
    with pytest.raises(ValueError, match="not under a mesh context"):
        fg.reshard(x, fg.P("x"))
    with pytest.raises(ValueError, match="not under a mesh context"):
        jax.reshard(jnp.arange(4.0), JP("x"))
    np.testing.assert_array_equal(fg.reshard(x, NamedSharding(m, fg.P("x"))), x)
    with fg.set_mesh(m):
        assert fg.sharding.get_mesh() is m
        np.testing.assert_array_equal(fg.reshard({"a": x}, fg.P("x"))["a"], x)
        with pytest.raises(ValueError, match="rank"):
            fg.reshard(x, fg.P("x", None))
    assert fg.sharding.get_mesh() is None
    y = fg.device_put(x, NamedSharding(m, fg.P("x")))
    np.testing.assert_array_equal(y, x)
    (shard,) = y.addressable_shards
    (jshard,) = jax.device_put(jnp.arange(4.0), jax.NamedSharding(jmesh(), JP("x"))) \
        .addressable_shards
    assert isinstance(shard, fg.Shard)
    assert shard.index == jshard.index and shard.replica_id == jshard.replica_id
    np.testing.assert_array_equal(shard.data, jshard.data)
    assert y.sharding.device_set == {fg.devices()[0]}


CASES = {
    "psum": (lambda lax: lambda x: lax.psum(x, "x"), "x", ""),
    "pmax": (lambda lax: lambda x: lax.pmax(x, "x"), "x", ""),
    "pmean_sum": (lambda lax: lambda x: lax.pmean(x.sum(0), "x"), "x", ""),
    "axis_index": (lambda lax: lambda x: x * (lax.axis_index("x") + 1), "x", "x"),
    "ppermute": (lambda lax: lambda x: lax.ppermute(x, "x", [(0, 0)]), "x", "x"),
    "gather_tiled": (lambda lax: lambda x: lax.psum(lax.all_gather(x, "x", tiled=True), "x"),
                     "x", ""),
    "replicated_in": (lambda lax: lambda x: x * 2.0, "", ""),
}


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(sorted(CASES)),
       st.lists(st.floats(-4, 4, width=32, allow_subnormal=False), min_size=4,
                max_size=4))
def test_shard_map_values_as_jax(case: str, xs: list[float]) -> None:
    make, ins, outs = CASES[case]
    x = np.array(xs, np.float32).reshape(2, 2)

    def run(lib: object, mesh: object, P: object) -> object:
        f = lib.shard_map(make(lib.lax), mesh=mesh,  # type: ignore[attr-defined]
                          in_specs=P(ins) if ins else P(),  # type: ignore[operator]
                          out_specs=P(outs) if outs else P())  # type: ignore[operator]
        return f(x), lib.jit(f)(x)  # type: ignore[attr-defined]

    for a, b in zip(run(fg, fg.make_mesh((1,), ("x",)), fg.P), run(jax, jmesh(), JP)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@settings(max_examples=5, deadline=None)
# (no subnormals: XLA flushes them to zero, NumPy keeps them)
@given(st.lists(st.floats(-2, 2, width=64, allow_subnormal=False), min_size=3, max_size=3))
def test_shard_map_grad(xs: list[float]) -> None:
    x = np.array(xs)

    def loss(lib: object, mesh: object, P: object) -> object:
        inner = lib.shard_map(lambda v, lax=lib.lax: lax.psum(lib.numpy.sum(lib.numpy.sin(v) ** 2),  # type: ignore[attr-defined]
                                                     "x"),
                              mesh=mesh, in_specs=P("x"), out_specs=P())  # type: ignore[operator]
        return lib.grad(inner)(x)  # type: ignore[attr-defined]

    with fg.enable_x64():
        ours = loss(fg, fg.make_mesh((1,), ("x",)), fg.P)
        f = fg.shard_map(lambda v: fg.lax.psum(fnp.sum(fnp.sin(v) ** 2), "x"),
                         mesh=fg.make_mesh((1,), ("x",)), in_specs=fg.P("x"),
                         out_specs=fg.P())
        fg.testing.check_grads(f, (x,), order=2)
    with jax.enable_x64(True):
        theirs = loss(jax, jmesh(), JP)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_shard_map_errors_as_jax() -> None:
    x = np.arange(4.0, dtype=np.float32)
    m, jm = fg.make_mesh((1,), ("x",)), jmesh()
    for lib, mesh, P in ((fg, m, fg.P), (jax, jm, JP)):
        def sm(f: object, i: object, o: object, lib: object = lib, mesh: object = mesh,
               **kw: object) -> object:
            return lib.shard_map(f, mesh=mesh, in_specs=i, out_specs=o, **kw)(x)  # type: ignore[attr-defined]

        with pytest.raises(ValueError, match="must refer to an axis marked as manual"):
            sm(lambda v: v, P("y"), P("x"))
        with pytest.raises(ValueError, match="must refer to an axis marked as manual"):
            sm(lambda v: v, P("x"), P("y"))
        with pytest.raises(ValueError, match="in_specs entry which is too long"):
            sm(lambda v: v, P("x", None), P("x"))
        with pytest.raises(ValueError, match="out_specs entry which is too long"):
            sm(lambda v: v.sum(), P("x"), P("x"))
        with pytest.raises(ValueError, match="require replication"):
            sm(lambda v: v * 2, P("x"), P())
        np.testing.assert_array_equal(sm(lambda v: v * 2, P("x"), P(), check_vma=False),
                                      x * 2)
        with pytest.raises(ValueError, match="context mesh cannot be empty"):
            lib.shard_map(lambda v: v, in_specs=P("x"), out_specs=P("x"))(x)
        with pytest.raises(ValueError):
            lib.shard_map(lambda a, b: a, mesh=mesh, in_specs=(P("x"),), out_specs=P("x"))(x, x)
        with lib.remove_size_one_mesh_axis_from_type(True):
            np.testing.assert_array_equal(sm(lambda v: v * 2, P("x"), P()), x * 2)


def test_shard_map_two_axes_and_smap() -> None:
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    m = fg.make_mesh((1, 1), ("a", "b"))
    jm = jmesh((1, 1), ("a", "b"))
    for lib, mesh, P in ((fg, m, fg.P), (jax, jm, JP)):
        f = lib.shard_map(lambda v, lax=lib.lax: lax.psum(v, ("a", "b")), mesh=mesh,
                          in_specs=P("a", "b"), out_specs=P())
        np.testing.assert_array_equal(f(x), x)
        with pytest.raises(ValueError, match="require replication"):
            lib.shard_map(lambda v, lax=lib.lax: lax.psum(v, "b"), mesh=mesh, in_specs=P("a", "b"),
                          out_specs=P())(x)
        with lib.set_mesh(mesh):
            g = lib.smap(lambda v, lax=lib.lax: v * 2 + lax.axis_index("a"), in_axes=0, out_axes=0,
                         axis_name="a")
            np.testing.assert_array_equal(g(x), x * 2)
            with pytest.raises(ValueError, match="subset of mesh.axis_names"):
                lib.smap(lambda v: v, in_axes=0, out_axes=0, axis_name="z")(x)
        with pytest.raises(ValueError, match="context mesh cannot be empty"):
            lib.smap(lambda v: v, in_axes=0, out_axes=0, axis_name="a")(x)
