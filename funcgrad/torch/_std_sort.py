"""``std::sort`` of libstdc++ (introsort, then insertion sort), step for step.

PyTorch's CPU ``mode`` sorts ``(value, index)`` pairs with it by ``value < value`` and
takes the last pair of the longest run. That sort is not stable and NaN compares false
with everything, so the index it reports (and, with NaN, the value) depends on the exact
steps: they are replayed here, on the rows where a plain count could differ.
"""

from __future__ import annotations

from typing import Any


def _lt(a: Any, b: Any) -> bool:
    return a[0] < b[0]

def _lg(n: int) -> int:
    return n.bit_length() - 1

def _sort(v: list[Any]) -> None:
    """libstdc++ std::sort of (value, index) pairs by value with operator<."""
    n = len(v)
    if n < 2:
        return
    _introsort(v, 0, n, 2 * _lg(n))
    if n > 16:
        _insertion(v, 0, 16)
        for i in range(16, n):
            _linear_insert(v, i)
    else:
        _insertion(v, 0, n)

def _insertion(v: list[Any], first: int, last: int) -> None:
    for i in range(first + 1, last):
        if _lt(v[i], v[first]):
            val = v[i]
            v[first + 1:i + 1] = v[first:i]
            v[first] = val
        else:
            _linear_insert(v, i)

def _linear_insert(v: list[Any], last: int) -> None:
    val = v[last]
    nxt = last - 1
    while _lt(val, v[nxt]):
        v[last] = v[nxt]
        last = nxt
        nxt -= 1
    v[last] = val

def _introsort(v: list[Any], first: int, last: int, depth: int) -> None:
    while last - first > 16:
        if depth == 0:
            _heapsort(v, first, last)
            return
        depth -= 1
        mid = first + (last - first) // 2
        _median_to_first(v, first, first + 1, mid, last - 1)
        cut = _partition(v, first + 1, last, first)
        _introsort(v, cut, last, depth)
        last = cut

def _median_to_first(v: list[Any], r: int, a: int, b: int, c: int) -> None:
    if _lt(v[a], v[b]):
        if _lt(v[b], v[c]):
            k = b
        elif _lt(v[a], v[c]):
            k = c
        else:
            k = a
    elif _lt(v[a], v[c]):
        k = a
    elif _lt(v[b], v[c]):
        k = c
    else:
        k = b
    v[r], v[k] = v[k], v[r]

def _partition(v: list[Any], first: int, last: int, pivot: int) -> int:
    while True:
        while _lt(v[first], v[pivot]):
            first += 1
        last -= 1
        while _lt(v[pivot], v[last]):
            last -= 1
        if not first < last:
            return first
        v[first], v[last] = v[last], v[first]
        first += 1

def _adjust_heap(v: list[Any], first: int, hole: int, length: int, value: Any) -> None:
    top = hole
    second = hole
    while second < (length - 1) // 2:
        second = 2 * (second + 1)
        if _lt(v[first + second], v[first + second - 1]):
            second -= 1
        v[first + hole] = v[first + second]
        hole = second
    if (length & 1) == 0 and second == (length - 2) // 2:
        second = 2 * (second + 1)
        v[first + hole] = v[first + second - 1]
        hole = second - 1
    parent = (hole - 1) // 2
    while hole > top and _lt(v[first + parent], value):
        v[first + hole] = v[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    v[first + hole] = value

def _heapsort(v: list[Any], first: int, last: int) -> None:
    length = last - first
    if length >= 2:
        parent = (length - 2) // 2
        while True:
            _adjust_heap(v, first, parent, length, v[first + parent])
            if parent == 0:
                break
            parent -= 1
    while last - first > 1:
        last -= 1
        value = v[last]
        v[last] = v[first]
        _adjust_heap(v, first, 0, last - first, value)

def mode_row(row: list[Any]) -> tuple[Any, int]:
    """PyTorch's CPU ``mode`` of one row: ``(value, index)``."""
    v = [(x, i) for i, x in enumerate(row)]
    _sort(v)
    best: Any = 0
    besti, maxf, f = 0, 0, 0
    n = len(v)
    for i in range(n):
        f += 1
        if i == n - 1 or v[i][0] != v[i + 1][0]:
            if f > maxf:
                best, besti, maxf = v[i][0], v[i][1], f
            f = 0
    return best, besti
