"""PyTorch-face fixes from a side-by-side review, each compared with torch 2.13:
``torch.save``/``torch.load`` keep storage sharing (each storage written once, views rebuilt
on it with their offset and strides; tied weights; files crossing between funcgrad and
PyTorch both ways, ``weights_only`` included); scatter's shape checks and 0-d operands;
``var``/``std`` with a dimension out of range; ``square`` of a bool tensor; an empty
tensor's strides; ``as_subclass`` of a plain tensor; index writes (``t[i] = v``, ``index_put_``,
``index_add``, ``index_copy``) of another dtype refused as PyTorch's."""

from __future__ import annotations

import collections
import io
from typing import Any

import pytest

import funcgrad.torch as ft
from tests.torch._outcomes import same_outcome

torch = pytest.importorskip("torch")


# ------------------------------------------------------------------ save/load sharing


def _shared_objects(lib: Any) -> dict[str, Any]:
    """Tensors that share storages, as users save them: views of one base (offsets,
    transposes, steps), tied weights in a state dict, a non-legacy dtype (uint16: an
    untyped storage), an expanded tensor, empty and 0-d ones."""
    base = lib.arange(24.0)
    lin = lib.nn.Linear(3, 3)
    with lib.no_grad():
        lin.weight.copy_(lib.arange(9.0).reshape(3, 3))
        lin.bias.fill_(1.0)
    u = lib.tensor([0, 1, 2, 3, 4, 5], dtype=lib.uint16)
    return {"views": [base, base[2:5], base.view(4, 6), base.view(4, 6).t(), base[::3]],
            "sd": collections.OrderedDict(a=lin.weight, b=lin.weight, c=lin.weight.data,
                                          d=lin.bias),
            "u": [u, u[1:4]], "c": lib.tensor([1 + 2j, 3j])[1:],
            "bf": lib.arange(4, dtype=lib.bfloat16)[::2],
            "ex": lib.arange(5.0).expand(2, 5), "e": lib.empty(0), "z": lib.zeros(2, 0),
            "s": lib.tensor(3.0)}


def _layout(o: dict[str, Any]) -> list[Any]:
    """What a loaded object says of its tensors and their sharing; writes through views
    (seen by their bases) included."""
    flat = [*o["views"], *o["sd"].values(), *o["u"], o["c"], o["bf"], o["ex"], o["e"], o["z"],
            o["s"]]
    out: list[Any] = [(type(t).__name__, str(t.dtype), tuple(t.shape), t.storage_offset(),
                       tuple(t.stride()), t.untyped_storage().nbytes(), t.requires_grad,
                       t.tolist()) for t in flat]
    views, sd = o["views"], o["sd"]
    out.append([v.data_ptr() - v.storage_offset() * 4 == views[0].data_ptr() for v in views])
    out.append((sd["a"] is sd["b"], sd["a"].data_ptr() == sd["c"].data_ptr()))
    views[1][0] = 100.0
    o["u"][1][0] = 50
    out.append((views[0][2].item(), views[2][0, 2].item(), views[3][2, 0].item(),
                views[4].tolist(), o["u"][0].tolist()))
    return out


def _saved_by(lib: Any) -> bytes:
    buf = io.BytesIO()
    lib.save(_shared_objects(lib), buf)
    return buf.getvalue()


@pytest.mark.parametrize("weights_only", [True, False])
def test_saved_views_share_their_storage_when_loaded_as_torch(weights_only):
    want = _layout(torch.load(io.BytesIO(_saved_by(torch)), weights_only=weights_only))
    assert _layout(ft.load(io.BytesIO(_saved_by(ft)), weights_only=weights_only)) == want


@pytest.mark.parametrize("weights_only", [True, False])
def test_files_cross_between_funcgrad_and_torch_with_their_sharing(weights_only):
    want = _layout(torch.load(io.BytesIO(_saved_by(torch)), weights_only=weights_only))
    # PyTorch's file read here, funcgrad's file read by PyTorch.
    assert _layout(ft.load(io.BytesIO(_saved_by(torch)), weights_only=weights_only)) == want
    assert _layout(torch.load(io.BytesIO(_saved_by(ft)), weights_only=weights_only)) == want


def test_each_storage_is_written_once():
    def storages(lib: Any) -> list[str]:
        import zipfile

        base = lib.arange(1000.0)
        buf = io.BytesIO()
        lib.save([base, base[10:20], base.view(10, 100).t(), base[::7], lib.ones(3)], buf)
        z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
        return sorted(f"{n.split('/', 1)[1]}:{z.getinfo(n).file_size}" for n in z.namelist()
                      if "/data/" in n)

    assert storages(ft) == storages(torch)


def test_tied_weights_of_a_module_survive_save_and_load():
    def run(lib: Any) -> list[Any]:
        lib.manual_seed(0)

        class LM(lib.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.emb = lib.nn.Embedding(5, 3)
                self.out = lib.nn.Linear(3, 5, bias=False)
                self.out.weight = self.emb.weight

        buf = io.BytesIO()
        lib.save(LM().state_dict(), buf)
        buf.seek(0)
        sd = lib.load(buf)
        m = LM()
        m.load_state_dict(sd, assign=True)
        with lib.no_grad():
            sd["emb.weight"][0, 0] = 7.0
        return [sd["emb.weight"].data_ptr() == sd["out.weight"].data_ptr(),
                sd["out.weight"][0, 0].item(), m.out.weight is m.emb.weight]

    assert run(ft) == run(torch)


def test_saving_one_storage_as_two_dtypes_is_refused_as_torch():
    def run(lib: Any) -> Any:
        x = lib.arange(6.0)
        lib.save([x, x.view(lib.int32)], io.BytesIO())

    same_outcome(run)


def test_a_saved_slice_keeps_its_offset_and_whole_storage():
    def run(lib: Any) -> Any:
        x = lib.arange(6.0).reshape(2, 3)
        buf = io.BytesIO()
        lib.save(x[1, 1:], buf)
        buf.seek(0)
        y = lib.load(buf)
        return y, y.storage_offset(), y.stride(), y.untyped_storage().nbytes()

    same_outcome(run)


# ------------------------------------------------------------------ scatter checks

SCATTER = {
    "src_dims": lambda m: m.zeros(3).scatter_(0, m.tensor([0]), m.ones(2, 2)),
    "src_smaller": lambda m: m.zeros(3).scatter_(0, m.tensor([0, 1, 2]), m.ones(2)),
    "index_larger": lambda m: m.zeros(2, 3).scatter_(
        1, m.tensor([[0, 1], [0, 1], [0, 1]]), m.ones(3, 3)),
    "add_src_smaller": lambda m: m.zeros(2, 3).scatter_add(1, m.tensor([[0, 1]]),
                                                           m.ones(1, 1)),
    "src_dim_missing": lambda m: m.zeros(2, 3).scatter_reduce(1, m.tensor([[0, 1]]),
                                                              m.ones(2), "sum"),
    "self_0d": lambda m: m.zeros(()).scatter(0, m.tensor([0]), m.ones(1)),
    "index_0d": lambda m: m.zeros(3).scatter(0, m.tensor(1), m.tensor([5.0])),
    "index_0d_grad": lambda m: m.zeros(3).scatter(
        0, m.tensor(1), m.ones(1, requires_grad=True) * 5).grad_fn.name(),
    "index_0d_add": lambda m: m.zeros(()).scatter_add_(0, m.tensor([0]), m.ones(1)),
    "reduce_index_0d": lambda m: m.zeros(3).scatter_reduce(0, m.tensor(2), m.tensor([4.0]),
                                                           "amax"),
    "empty_index": lambda m: m.zeros(3).scatter(0, m.zeros(0, 2, dtype=m.long), m.ones(3)),
}


@pytest.mark.parametrize("name", sorted(SCATTER))
def test_scatter_shapes_as_torch(name):
    same_outcome(SCATTER[name])


# ------------------------------------------------------------------ smaller ones

@pytest.mark.parametrize("call", [
    lambda m: m.tensor([[3.0, 1.0], [0.0, 5.0]]).std(5),
    lambda m: m.tensor([[3.0, 1.0], [0.0, 5.0]]).var((0, -3)),
    lambda m: m.var_mean(m.tensor([[3.0, 1.0], [0.0, 5.0]]), dim=7),
    lambda m: m.std_mean(m.tensor([1.0, 2.0]), 1),
])
def test_var_std_dimension_out_of_range_as_torch(call):
    same_outcome(call)


def test_square_of_bool_is_int64_as_torch():
    same_outcome(lambda m: m.square(m.tensor([True, False])))
    same_outcome(lambda m: m.tensor([True, False]).square_())


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0), (2, 0, 3), (0, 0)])
def test_empty_tensor_strides_as_torch(shape):
    same_outcome(lambda m: (m.zeros(shape).stride(), m.empty(shape).is_contiguous()))


def test_as_subclass_of_a_plain_tensor():
    def run(lib: Any) -> Any:
        class Mine(lib.Tensor):
            pass

        w = lib.arange(3.0).as_subclass(Mine)
        w.add_(1)
        return type(w).__name__, w.tolist()

    same_outcome(run)


@pytest.mark.parametrize("call", [
    lambda m: m.normal(0.0, -0.5, (2,)),
    lambda m: m.normal(m.zeros(2), m.tensor([1.0, -1.0])),
    lambda m: m.normal(m.zeros(2), -1.0),
    lambda m: m.zeros(2).normal_(0, -1),
    lambda m: m.linspace(0, 1, -1),
    lambda m: m.logspace(0, 1, -2),
    lambda m: m.clamp(m.ones(2), max=m.ones(3)),
    lambda m: m.clamp(m.ones(2), m.ones(2), m.ones(4)),
])
def test_argument_checks_as_torch(call):
    same_outcome(call)


# ------------------------------------------------------ index writes of another dtype


def _put(idx: Any, value: Any) -> Any:
    def call(lib: Any) -> Any:
        z = lib.zeros(2, 3)
        z[idx(lib)] = value(lib)
        return z
    return call


_F64 = {"vec": lambda lib: lib.ones(2, 3, dtype=lib.float64),
        "row": lambda lib: lib.ones(3, dtype=lib.float64),
        "one": lambda lib: lib.tensor(5.0, dtype=lib.float64),
        "one_1d": lambda lib: lib.tensor([5.0], dtype=lib.float64),
        "long": lambda lib: lib.ones(2, 3, dtype=lib.int64)}
_IDX = {"ints": lambda lib: lib.tensor([0, 1]), "mask": lambda lib: lib.tensor([True, False]),
        "list": lambda lib: [0, 1], "pair": lambda lib: (lib.tensor([0]), lib.tensor([1])),
        "mixed": lambda lib: (0, lib.tensor([0, 2])), "basic": lambda lib: 0,
        "slice": lambda lib: slice(0, 1)}


@pytest.mark.parametrize("value", sorted(_F64))
@pytest.mark.parametrize("idx", sorted(_IDX))
def test_setitem_of_another_dtype_as_pytorch(idx: str, value: str) -> None:
    # index_put_ refuses another dtype except through masked_fill_ (one boolean mask, one
    # element); basic indexing copies with a conversion.
    same_outcome(_put(_IDX[idx], _F64[value]))


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("mask", [False, True])
def test_index_put_of_another_dtype_as_pytorch(mask: bool, accumulate: bool) -> None:
    same_outcome(lambda lib: lib.zeros(2, 3).index_put_(
        (lib.tensor([True, False]) if mask else lib.tensor([0]),),
        lib.tensor(5.0, dtype=lib.float64), accumulate=accumulate))


@pytest.mark.parametrize("how", ["index_add", "index_copy", "index_add_", "index_copy_",
                                 "index_fill"])
@pytest.mark.parametrize("dtype", ["float64", "bfloat16", "int64"])
def test_index_add_and_copy_of_another_dtype_as_pytorch(how: str, dtype: str) -> None:
    def call(lib: Any) -> Any:
        src = lib.ones(1, 3, dtype=getattr(lib, dtype))
        if how == "index_fill":
            src = lib.tensor(2.0, dtype=getattr(lib, dtype))
        return getattr(lib.zeros(2, 3), how)(0, lib.tensor([0]), src)
    same_outcome(call)
