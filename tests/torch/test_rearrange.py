"""``torch.func.rearrange`` against PyTorch 2.13's on drawn patterns: values, shapes,
gradients, and the errors of malformed patterns and sizes."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft


def _torch():
    return pytest.importorskip("torch", exc_type=ImportError)


@st.composite
def _pattern(draw):
    """A tensor shape, a pattern that splits, reorders and merges its axes, and the NumPy
    reshape/transpose/reshape that the pattern means (the reference)."""
    ndim = draw(st.integers(1, 4))
    shape, left, lengths, atoms, sizes = [], [], {}, [], {}
    for i in range(ndim):
        name = f"a{i}"
        if draw(st.booleans()):
            f1, f2 = draw(st.integers(1, 3)), draw(st.integers(1, 3))
            shape.append(f1 * f2)
            left.append(f"({name}x {name}y)")
            lengths[f"{name}x"] = f1
            atoms += [f"{name}x", f"{name}y"]
            sizes.update({f"{name}x": f1, f"{name}y": f2})
        else:
            shape.append(draw(st.integers(1, 4)))
            left.append(name)
            atoms.append(name)
            sizes[name] = shape[-1]
    elementary = list(atoms)
    if ndim > 1 and draw(st.booleans()):
        # the last dimension is covered by "..." instead of being named
        covered = left.pop()
        atoms = [a for a in atoms if a not in covered]
        lengths = {k: v for k, v in lengths.items() if k not in covered}
        elementary = [a for a in elementary if a not in covered] + ["..."]
        sizes["..."] = shape[-1]
        left.append("...")
        atoms.append("...")
    order = draw(st.permutations(atoms))
    right, groups, i = [], [], 0
    while i < len(order):
        k = draw(st.integers(1, len(order) - i))
        group = order[i:i + k]
        right.append(group[0] if k == 1 else "(" + " ".join(group) + ")")
        groups.append(group)
        if draw(st.booleans()):
            right.append("1")
            groups.append([])
        i += k

    def reference(a):
        a = a.reshape([sizes[n] for n in elementary])
        a = a.transpose([elementary.index(n) for n in order])
        return a.reshape([int(np.prod([sizes[n] for n in g])) for g in groups])

    return tuple(shape), f"{' '.join(left)} -> {' '.join(right)}", lengths, reference


@given(_pattern())
@settings(deadline=None)
def test_rearrange_matches_numpy_and_torch_with_gradients(case):
    shape, pattern, lengths, reference = case
    data = np.arange(float(np.prod(shape))).reshape(shape) + 0.5
    x = ft.tensor(data, requires_grad=True)
    y = ft.func.rearrange(x, pattern, **lengths)
    want = reference(data)
    assert tuple(y.shape) == want.shape, pattern
    np.testing.assert_array_equal(y.detach().numpy(), want)
    w = np.cos(np.arange(want.size)).reshape(want.shape)
    (y * ft.tensor(w)).sum().backward()
    # the gradient of a rearrangement is the weights rearranged back: each input element
    # meets the weight at the position its value went to
    grad = np.zeros(data.size)
    grad[(reference(np.arange(data.size).reshape(shape))).ravel()] = w.ravel()
    np.testing.assert_array_equal(x.grad.numpy(), grad.reshape(shape))
    torch = pytest.importorskip("torch", exc_type=ImportError)
    try:
        theirs = torch.func.rearrange(torch.tensor(data), pattern, **lengths)
    except ValueError as e:
        # PyTorch 2.13's functorch refuses two valid kinds of pattern: splitting the only
        # dimension of a 1-D tensor, and (with "...") more named axes than the tensor has
        # dimensions, counting the axes inside brackets
        one_d = "indices were supplied but the tensor only has 1 dimensions" in str(e)
        assert one_d or "must be less than or equal to the number of dimensions" in str(e)
        assert len(shape) == 1 if one_d else "..." in pattern
    else:
        np.testing.assert_array_equal(theirs.numpy(), want)


@given(st.integers(1, 4), st.integers(1, 3), st.integers(1, 3))
def test_a_list_is_stacked_first(n, h, w):
    torch = _torch()
    data = np.arange(n * h * w, dtype=np.float32).reshape(n, h, w)
    got = ft.func.rearrange([ft.tensor(d) for d in data], "n h w -> h (n w)")
    want = torch.func.rearrange([torch.tensor(d) for d in data], "n h w -> h (n w)")
    np.testing.assert_array_equal(got.numpy(), want.numpy())


ERRORS = [
    ("b (h1 h2) w -> b h1 h2 w", {"h1": 4}), ("b (h1 h2) w -> b h1 h2 w", {}),
    ("b h w -> b h w c", {}), ("b h -> b h", {}), ("b h w -> b h", {}), ("b h w", {}),
    ("b h h -> b h", {}), ("b h w -> b h w", {"x": 2}), ("b (h (w)) -> b", {}),
    ("b h w -> b 2 h w", {}), ("b h w -> b h w", {"h": 5}), ("b h w -> b h.w", {}),
    ("b h w -> b h w_", {}), ("b h w -> b h w", {"h": 2.0}), ("(b h) w x -> b h w x", {}),
    ("b (h1 h2 h3) w -> b h1 h2 h3 w", {"h1": 2}), ("b (h1 h2) w -> b h1 h2 w", {"h1": 2, "h2": 2}),
    ("b h (w1 w2) -> b h w1 w2", {"w1": 0}), ("b h w -> b h w", {"b": 3}),
    ("b ... -> b", {}), ("b h -> ... b h", {}), ("(b ...) -> b ...", {}), ("b (h w -> b h w", {}),
    ("b h) w -> b h w", {}), ("b h w -> b h w ...", {}), ("b h w -> b h w!", {}),
    ("b h w -> b h class", {}), ("b h class -> b h", {}),
]


@pytest.mark.filterwarnings("error")
def test_keyword_and_axis_names_warn_as_torch():
    torch = _torch()
    for L in (ft, torch):
        with pytest.warns(RuntimeWarning, match="keywords: class"):
            L.func.rearrange(L.zeros(2, 3), "b class -> class b")
        with pytest.warns(FutureWarning, match="discouraged to use 'axis'"):
            L.func.rearrange(L.zeros(2, 3), "b axis -> axis b")


@pytest.mark.filterwarnings("ignore:It is discouraged:RuntimeWarning")
@pytest.mark.parametrize("pattern,lengths", ERRORS)
def test_errors_as_torch(pattern, lengths):
    torch = _torch()
    data = np.zeros((2, 6, 4), np.float32)
    got = []
    for L in (ft, torch):
        with pytest.raises(Exception) as info:  # noqa: PT011 - compared with torch's below
            L.func.rearrange(L.tensor(data), pattern, **lengths)
        got.append((type(info.value).__name__, _sorted_sets(str(info.value))))
    assert got[0] == got[1]


def _sorted_sets(message: str) -> str:
    # a set of names prints in hash order, which differs between the two sets
    return re.sub(r"\{([^}]*)\}", lambda m: "{" + ", ".join(sorted(m[1].split(", "))) + "}",
                  message)
