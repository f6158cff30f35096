"""``torch.func.rearrange``: einops-style axis patterns as one reshape, permute, reshape.

A side of the pattern is a list of axes: a name, ``1`` (a unit axis), a group in brackets
(``(h w)``: the axes merged into one), or ``...`` (the axes not named). Lengths of axes split
out of one dimension come from ``axes_lengths`` (at most one per group is inferred).

>>> import funcgrad.torch as torch
>>> x = torch.arange(24).reshape(2, 3, 4)
>>> rearrange(x, "b h w -> b (w h)").shape
torch.Size([2, 12])
>>> rearrange(x, "b (h1 h2) w -> b h1 h2 w", h1=3).shape
torch.Size([2, 3, 1, 4])
"""

from __future__ import annotations

import functools
import keyword
import math
import warnings
from collections.abc import Sequence

from funcgrad.torch._functions import stack
from funcgrad.torch._tensor import Tensor

__all__ = ["rearrange"]

_ELLIPSIS = "\u2026"  # one character standing for "...", as the parser reads names
_SPREAD = _ELLIPSIS + "*"  # an ellipsis outside brackets: one dimension per axis it covers

# A parsed side: each entry is one dimension of the tensor, a list of the axis names merged
# into it (a unit axis is an empty list).
_Side = list[list[str]]


class DimensionBindError(Exception):
    """The tensor's sizes do not fit the pattern's axes (functorch's ``DimensionBindError``)."""


def _check_name(name: str) -> None:
    if not name.isidentifier():
        raise ValueError(f"Invalid axis identifier: {name}\nnot a valid python identifier")
    if name.startswith("_") or name.endswith("_"):
        raise ValueError(f"Invalid axis identifier: {name}\naxis name should should not start "
                         "or end with underscore")
    if keyword.iskeyword(name):
        warnings.warn(f"It is discouraged to use axes names that are keywords: {name}",
                      RuntimeWarning, stacklevel=5)
    if name == "axis":
        warnings.warn("It is discouraged to use 'axis' as an axis name and will raise an error "
                      "in future", FutureWarning, stacklevel=5)


def _parse_side(text: str) -> tuple[_Side, bool]:
    """The dimensions of one side, and whether it has an ellipsis."""
    if "." in text:
        if "..." not in text:
            raise ValueError("Expression may contain dots only inside ellipsis (...)")
        if text.count("...") != 1 or text.count(".") != 3:
            raise ValueError("Expression may contain dots only inside ellipsis (...); only one "
                             "ellipsis for tensor ")
        text = text.replace("...", _ELLIPSIS)
    dims: _Side = []
    seen: set[str] = set()
    group: list[str] | None = None
    ellipsis = False

    def add(name: str) -> None:
        nonlocal ellipsis
        if name in seen:
            raise ValueError(f"Indexing expression contains duplicate dimension '{name}'")
        if name == _ELLIPSIS:
            ellipsis = True
        elif name.isdecimal():
            if int(name) != 1:
                raise ValueError("rearrange only supports unnamed axes of size 1")
            if group is None:
                dims.append([])
            return
        else:
            _check_name(name)
        seen.add(name)
        if group is None:
            dims.append([_SPREAD if name == _ELLIPSIS else name])
        else:
            group.append(name)

    for token in text.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            if group is not None:
                raise ValueError("Axis composition is one-level (brackets inside brackets not "
                                 "allowed)")
            group = []
        elif token == ")":
            if group is None:
                raise ValueError("Brackets are not balanced")
            dims.append(group)
            group = None
        else:
            bad = next((c for c in token if not (c.isalnum() or c in "_" + _ELLIPSIS)), None)
            if bad is not None:
                raise ValueError(f"Unknown character '{bad}'")
            add(token)
    if group is not None:
        raise ValueError(f"Imbalanced parentheses in expression: '{text}'")
    return dims, ellipsis


@functools.lru_cache(256)
def _plan(ndim: int, pattern: str, lengths: tuple[tuple[str, int], ...]
          ) -> tuple[_Side, _Side, dict[str, int]]:
    if pattern.count("->") != 1:
        raise ValueError("Pattern must contain a single '->' separator")
    left_text, right_text = pattern.split("->")
    left, left_ellipsis = _parse_side(left_text)
    right, right_ellipsis = _parse_side(right_text)
    if right_ellipsis and not left_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern "
                         f"{pattern}")
    if left_ellipsis and any(_ELLIPSIS in d and len(d) > 1 for d in left):
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    names_left = {_ELLIPSIS if n == _SPREAD else n for d in left for n in d}
    names_right = {_ELLIPSIS if n == _SPREAD else n for d in right for n in d}
    if names_left != names_right:
        raise ValueError("Identifiers only on one side of rearrange expression (should be on "
                         f"both): {names_left ^ names_right}")
    unmatched = {n for n, _ in lengths} - names_left
    if unmatched:
        raise ValueError(f"Identifiers not found in rearrange expression: {unmatched}")
    if left_ellipsis:
        extra = ndim - (len(left) - 1)
        if len(left) - 1 > ndim:
            raise ValueError(f"Number of dimensions in pattern ({len(left) - 1}) must be less "
                             f"than or equal to the number of dimensions in the tensor ({ndim})")
        # The ellipsis becomes names of its own for the dimensions it covers.
        covered = [f"{_ELLIPSIS}{i}" for i in range(extra)]
        left = [e for d in left for e in ([[c] for c in covered] if d == [_SPREAD] else [d])]
        right = [e for d in right for e in (
            [[c] for c in covered] if d == [_SPREAD]
            else [[c for n in d for c in (covered if n == _ELLIPSIS else [n])]])]
    elif len(left) != ndim:
        raise ValueError(f"Number of dimensions in pattern ({len(left)}) must be equal to the "
                         f"number of dimensions in the tensor ({ndim})")
    return left, right, dict(lengths)


def rearrange(tensor: Tensor | Sequence[Tensor], pattern: str, **axes_lengths: int) -> Tensor:
    """Reorder, merge and split axes by an einops pattern (a list of tensors is stacked).

    >>> import funcgrad.torch as torch
    >>> rearrange([torch.zeros(2, 3)] * 5, "n h w -> h (n w)").shape
    torch.Size([2, 15])
    """
    for v in axes_lengths.values():
        if not isinstance(v, int):
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(v)}")
    x = tensor if isinstance(tensor, Tensor) else stack(list(tensor))
    left, right, known = _plan(x.ndim, pattern, tuple(sorted(axes_lengths.items())))
    sizes = dict(known)
    order = [n for d in left for n in d]
    for names, size in zip(left, x.shape, strict=True):
        unknown = [n for n in names if n not in sizes]
        product = math.prod(sizes[n] for n in names if n in sizes)
        if len(unknown) > 1:
            raise DimensionBindError(f"cannot infer the sizes of two dimensions at once "
                                     f"d{order.index(unknown[0])} and "
                                     f"d{order.index(unknown[1])}")
        if unknown:
            if size % product:
                shown = tuple(sizes.get(n, "?") for n in names)
                raise DimensionBindError("inferred dimension does not evenly fit into larger "
                                         f"dimension: {size} vs {shown}")
            sizes[unknown[0]] = size // product
        elif product != size:
            # functorch prints the pack as a tuple of its first-class dims d0, d1, ...
            pack = "".join(f"d{order.index(n)}, " for n in names)
            pack = pack[:-2] if len(names) > 1 else pack[:-1]
            raise DimensionBindError(f"Dimension sizes to do not match ({size} != {product}) "
                                     f"when matching dimension pack ({pack})")
    y = x.reshape(tuple(sizes[n] for n in order))
    wanted = [n for d in right for n in d]
    y = y.permute(tuple(order.index(n) for n in wanted))
    return y.reshape(tuple(math.prod(sizes[n] for n in d) for d in right))
