"""PyTorch's CPU sort (stable=False), topk, kthvalue and mode order tied entries as the
C++ algorithms they call leave them: ``std::sort``, ``std::partial_sort`` and
``std::nth_element`` of libstdc++ and ATen's Sedgewick quickselect. They are replayed
here, step for step, on the rows where the order could differ from a stable one.

The replays sort a list of keys with a plain ``<`` and move a list of indices with them:
integer ranks (NaN above everything; negated for a descending order) for sort and topk;
the values themselves for mode, where NaN compares false with everything as in C++.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np


def _lg(n: int) -> int:
    return n.bit_length() - 1


def _swap(key: list[Any], ix: list[Any], a: int, b: int) -> None:
    key[a], key[b] = key[b], key[a]
    ix[a], ix[b] = ix[b], ix[a]


def _move_median_to_first(key: list[Any], ix: list[Any], r: int, a: int,
                          b: int, c: int) -> None:
    if key[a] < key[b]:
        m = b if key[b] < key[c] else (c if key[a] < key[c] else a)
    elif key[a] < key[c]:
        m = a
    else:
        m = c if key[b] < key[c] else b
    _swap(key, ix, r, m)


def _unguarded_partition_pivot(key: list[Any], ix: list[Any], first: int,
                               last: int) -> int:
    _move_median_to_first(key, ix, first, first + 1, first + (last - first) // 2, last - 1)
    lo, hi, p = first + 1, last, key[first]
    while True:
        while key[lo] < p:
            lo += 1
        hi -= 1
        while p < key[hi]:
            hi -= 1
        if not lo < hi:
            return lo
        _swap(key, ix, lo, hi)
        lo += 1


def _adjust_heap(key: list[Any], ix: list[Any], first: int, hole: int,
                 length: int, vk: Any, vi: Any) -> None:
    top = second = hole
    while second < (length - 1) // 2:
        second = 2 * (second + 1)
        if key[first + second] < key[first + second - 1]:
            second -= 1
        key[first + hole], ix[first + hole] = key[first + second], ix[first + second]
        hole = second
    if (length & 1) == 0 and second == (length - 2) // 2:
        second = 2 * (second + 1)
        key[first + hole], ix[first + hole] = key[first + second - 1], ix[first + second - 1]
        hole = second - 1
    parent = (hole - 1) // 2
    while hole > top and key[first + parent] < vk:
        key[first + hole], ix[first + hole] = key[first + parent], ix[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    key[first + hole], ix[first + hole] = vk, vi


def _heap_select(key: list[Any], ix: list[Any], first: int, middle: int,
                 last: int) -> None:
    length = middle - first
    if length >= 2:
        parent = (length - 2) // 2
        while True:
            _adjust_heap(key, ix, first, parent, length, key[first + parent],
                         ix[first + parent])
            if parent == 0:
                break
            parent -= 1
    for i in range(middle, last):
        if key[i] < key[first]:
            vk, vi = key[i], ix[i]
            key[i], ix[i] = key[first], ix[first]
            _adjust_heap(key, ix, first, 0, length, vk, vi)


def _sort_heap(key: list[Any], ix: list[Any], first: int, last: int
               ) -> None:
    while last - first > 1:
        last -= 1
        vk, vi = key[last], ix[last]
        key[last], ix[last] = key[first], ix[first]
        _adjust_heap(key, ix, first, 0, last - first, vk, vi)


def _insertion_sort(key: list[Any], ix: list[Any], first: int, last: int
                    ) -> None:
    for i in range(first + 1, last):
        vk, vi = key[i], ix[i]
        if vk < key[first]:
            key[first + 1:i + 1], ix[first + 1:i + 1] = key[first:i], ix[first:i]
            key[first], ix[first] = vk, vi
        else:
            _linear_insert(key, ix, i)


def _linear_insert(key: list[Any], ix: list[Any], last: int) -> None:
    vk, vi = key[last], ix[last]
    nxt = last - 1
    while vk < key[nxt]:
        key[last], ix[last] = key[nxt], ix[nxt]
        last = nxt
        nxt -= 1
    key[last], ix[last] = vk, vi


def std_sort(key: list[Any], ix: list[Any], first: int, last: int) -> None:
    """libstdc++'s ``std::sort`` (introsort, then a final insertion sort)."""
    if last - first < 2:
        return
    stack = [(first, last, 2 * _lg(last - first))]
    while stack:  # __introsort_loop, its recursion on the right part made explicit
        lo, hi, depth = stack.pop()
        while hi - lo > 16:
            if depth == 0:
                _heap_select(key, ix, lo, hi, hi)
                _sort_heap(key, ix, lo, hi)
                break
            depth -= 1
            cut = _unguarded_partition_pivot(key, ix, lo, hi)
            stack.append((cut, hi, depth))
            hi = cut
    if last - first > 16:
        _insertion_sort(key, ix, first, first + 16)
        for i in range(first + 16, last):
            _linear_insert(key, ix, i)
    else:
        _insertion_sort(key, ix, first, last)


def std_partial_sort(key: list[Any], ix: list[Any], middle: int) -> None:
    """libstdc++'s ``std::partial_sort(begin, begin + middle, end)``."""
    _heap_select(key, ix, 0, middle, len(key))
    _sort_heap(key, ix, 0, middle)


def std_nth_element(key: list[Any], ix: list[Any], nth: int) -> None:
    """libstdc++'s ``std::nth_element(begin, begin + nth, end)`` (introselect)."""
    first, last = 0, len(key)
    if last in (first, nth):
        return
    depth = 2 * _lg(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(key, ix, first, nth + 1, last)
            _swap(key, ix, first, nth)
            return
        depth -= 1
        cut = _unguarded_partition_pivot(key, ix, first, last)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(key, ix, first, last)


def aten_quick_select(key: list[Any], ix: list[Any], k: int) -> None:
    """ATen's ``quick_select_template`` (Sedgewick's), as kthvalue runs it."""
    lo, hi = 0, len(key) - 1
    while True:
        if hi <= lo:
            return
        if hi == lo + 1:
            if key[lo] > key[hi]:
                _swap(key, ix, lo, hi)
            return
        _swap(key, ix, (lo + hi) >> 1, lo + 1)
        if key[lo + 1] > key[hi]:
            _swap(key, ix, lo + 1, hi)
        if key[lo] > key[hi]:
            _swap(key, ix, lo, hi)
        if key[lo + 1] > key[lo]:
            _swap(key, ix, lo + 1, lo)
        i, j, piv = lo + 1, hi, key[lo]
        while True:
            i += 1
            while piv > key[i]:
                i += 1
            j -= 1
            while key[j] > piv:
                j -= 1
            if j < i:
                break
            _swap(key, ix, i, j)
        _swap(key, ix, lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1


def rank_keys(host: np.ndarray, dim: int) -> np.ndarray:
    """The values of ``host`` moved to the last axis as ranks (equal values, and all NaNs,
    share one; NaN ranks highest), shaped ``(rows, n)``."""
    a = np.moveaxis(np.atleast_1d(host), dim, -1)
    if a.dtype.kind not in "biuf" or a.dtype.itemsize < 4 and a.dtype.kind == "f":
        a = a.astype(np.float32)
    if a.dtype == np.bool_:
        a = a.astype(np.int8)
    _, inv = np.unique(a.reshape(-1), return_inverse=True)
    return cast(np.ndarray, inv.reshape(-1, a.shape[-1]).astype(np.int64))


def tied_rows(keys: np.ndarray) -> np.ndarray:
    """Which rows of ``keys`` hold a value twice."""
    if keys.shape[-1] < 2:
        return np.zeros(keys.shape[0], bool)
    s = np.sort(keys, axis=-1)
    return cast(np.ndarray, (s[:, 1:] == s[:, :-1]).any(-1))






def replayed_order(host: np.ndarray, dim: int, descending: bool
                    ) -> np.ndarray | None:
    """``argsort`` as PyTorch's CPU ``std::sort`` leaves it (None: stable gives the same)."""
    n = np.atleast_1d(host).shape[dim]
    if n <= 16:
        return None  # std::sort's insertion sort: stable on rows this short
    keys = rank_keys(host, dim)
    rows = np.flatnonzero(tied_rows(keys))
    if not len(rows):
        return None
    if descending:
        keys = -keys
    order = np.argsort(keys, axis=-1, kind="stable")
    for r in rows:
        key, ix = keys[r].tolist(), list(range(n))
        std_sort(key, ix, 0, n)
        order[r] = ix
    moved = np.moveaxis(host, dim, -1).shape
    return np.moveaxis(order.reshape(moved), -1, dim)


def topk_order(host: np.ndarray, dim: int, k: int,
                largest: bool, is_sorted: bool) -> np.ndarray:
    """The indices PyTorch's CPU topk picks (aten/src/ATen/native/TopKImpl.h): a
    partial_sort where ``64 k <= n``, else nth_element and a sort of the first ``k - 1``."""
    keys = rank_keys(host, dim)
    if largest:
        keys = -keys
    n = keys.shape[-1]
    partial = k * 64 <= n
    order = np.argsort(keys, axis=-1, kind="stable")[:, :k]
    replay = np.ones(len(keys), bool) if not (partial or is_sorted) else tied_rows(keys)
    for r in np.flatnonzero(replay):
        key, ix = keys[r].tolist(), list(range(n))
        if partial:
            std_partial_sort(key, ix, k)
        else:
            std_nth_element(key, ix, k - 1)
            if is_sorted:
                std_sort(key, ix, 0, k - 1)
        order[r] = ix[:k]
    moved = np.moveaxis(host, dim, -1).shape
    return np.moveaxis(order.reshape((*moved[:-1], k)), -1, dim)


def mode_row(row: list[Any]) -> tuple[Any, int]:
    """PyTorch's CPU ``mode`` of one row: ``(value, index)`` (it sorts the row's values and
    indices by value with ``std::sort`` and takes the last pair of the longest run)."""
    key, ix = list(row), list(range(len(row)))
    std_sort(key, ix, 0, len(key))
    best: Any = 0
    besti, maxf, f = 0, 0, 0
    n = len(key)
    for i in range(n):
        f += 1
        if i == n - 1 or key[i] != key[i + 1]:
            if f > maxf:
                best, besti, maxf = key[i], ix[i], f
            f = 0
    return best, besti
