"""``torch.testing``: ``assert_close`` (with PyTorch's default tolerances per dtype and its
error messages), ``make_tensor`` (drawing from the torch RNG stream as PyTorch does) and the
deprecated ``assert_allclose``.

>>> import funcgrad.torch as torch
>>> torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5]))
Traceback (most recent call last):
AssertionError: Tensor-likes are not close!
<BLANKLINE>
Mismatched elements: 1 / 2 (50.0%)
Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)
"""

from __future__ import annotations

import builtins
import cmath
import collections.abc
import contextlib
import functools
import math
import warnings
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from funcgrad.torch import _creation, _dtypes
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._tensor_math import view_as_complex
from funcgrad.torch._type_info import finfo, iinfo

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

D = _dtypes

# PyTorch's {dtype: (rtol, atol)}
_DTYPE_PRECISIONS = {
    D.float16: (0.001, 1e-5),
    D.bfloat16: (0.016, 1e-5),
    D.float32: (1.3e-6, 1e-5),
    D.float64: (1e-7, 1e-7),
    D.complex64: (1.3e-6, 1e-5),
    D.complex128: (1e-7, 1e-7),
}
_NUMBER_DTYPE = {builtins.bool: D.bool, builtins.int: D.int64, builtins.float: D.float64,
                 builtins.complex: D.complex128}


class _ErrorMeta(Exception):
    """An error to raise, with the item of nested inputs it occurred for."""

    def __init__(self, kind: type[Exception], msg: str, *, id: tuple[Any, ...] = ()) -> None:  # noqa: A002
        super().__init__(msg)
        self.kind, self.msg, self.id = kind, msg, id

    def to_error(self, msg: Any = None) -> Exception:
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += "\n\nThe failure occurred for item " + "".join(
                    str([item]) for item in self.id)
            msg = msg(generated) if callable(msg) else generated
        return self.kind(msg)


def _default_tolerances(*dtypes: Any, precisions: dict[Any, tuple[float, float]] | None = None
                        ) -> tuple[float, float]:
    table = precisions or _DTYPE_PRECISIONS
    rtols, atols = zip(*[table.get(dt, (0.0, 0.0)) for dt in dtypes], strict=True)
    return max(rtols), max(atols)


def _tolerances(*dtypes: Any, rtol: Any, atol: Any, id: tuple[Any, ...]) -> tuple[float, float]:  # noqa: A002
    if (rtol is None) ^ (atol is None):
        raise _ErrorMeta(ValueError, "Both 'rtol' and 'atol' must be either specified or "
                         f"omitted, but got no {'rtol' if rtol is None else 'atol'}.", id=id)
    if rtol is not None and atol is not None:
        return rtol, atol
    return _default_tolerances(*dtypes)


def _mismatch_msg(*, identifier: Any, default: str, extra: str | None, abs_diff: float,
                  abs_idx: Any, atol: float, rel_diff: float, rel_idx: Any, rtol: float) -> str:
    equality = rtol == 0 and atol == 0

    def diff_msg(kind: str, diff: float, idx: Any, tol: float) -> str:
        msg = f"{kind.title()} difference: {diff}" if idx is None else \
            f"Greatest {kind} difference: {diff} at index {idx}"
        if not equality:
            msg += f" (up to {tol} allowed)"
        return msg + "\n"

    name = default if identifier is None else (
        identifier(default) if callable(identifier) else identifier)
    msg = f"{name} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_mismatch_msg(actual: Any, expected: Any, *, rtol: float, atol: float,
                         identifier: Any = None) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(identifier=identifier, default="Scalars",
                         extra=f"Expected {expected} but got {actual}.", abs_diff=abs_diff,
                         abs_idx=None, atol=atol, rel_diff=rel_diff, rel_idx=None, rtol=rtol)


def _tensor_mismatch_msg(actual: Any, expected: Any, matches: Any, *, rtol: float,
                         atol: float) -> str:
    shape = tuple(matches.shape)

    def unravel(flat: int) -> tuple[int, ...]:
        out = []
        for size in shape[::-1]:
            flat, mod = divmod(flat, size)
            out.append(mod)
        return tuple(out[::-1])

    n = matches.numel()
    bad = n - int(matches.sum())
    extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not actual.dtype.is_floating_point and not actual.dtype.is_complex:
        a, e = a.to(D.int64), e.to(D.int64)
    abs_diff = (a - e).abs()
    abs_diff[m] = 0
    max_abs, abs_at = abs_diff.max(0)
    rel_diff = abs_diff / e.abs()
    rel_diff[m] = 0
    max_rel, rel_at = rel_diff.max(0)
    return _mismatch_msg(identifier=None, default="Tensor-likes", extra=extra,
                         abs_diff=max_abs.item(), abs_idx=unravel(int(abs_at)), atol=atol,
                         rel_diff=max_rel.item(), rel_idx=unravel(int(rel_at)), rtol=rtol)


def _is_number(x: Any) -> bool:
    return isinstance(x, (builtins.bool, builtins.int, builtins.float, builtins.complex))


def _compare_numbers(actual: Any, expected: Any, *, id: tuple[Any, ...], rtol: Any,  # noqa: A002
                     atol: Any, equal_nan: bool, check_dtype: bool) -> None:
    rtol, atol = _tolerances(_NUMBER_DTYPE[type(actual)], _NUMBER_DTYPE[type(expected)],
                             rtol=rtol, atol=atol, id=id)
    if check_dtype and type(actual) is not type(expected):
        raise _ErrorMeta(AssertionError, f"The (d)types do not match: {type(actual)} != "
                         f"{type(expected)}.", id=id)
    if actual == expected:
        return
    if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
        return
    if abs(actual - expected) <= (atol + rtol * abs(expected)):
        return
    raise _ErrorMeta(AssertionError, _scalar_mismatch_msg(actual, expected, rtol=rtol,
                                                          atol=atol), id=id)


def _compare_tensors(actual: Any, expected: Any, *, id: tuple[Any, ...], rtol: Any,  # noqa: A002
                     atol: Any, equal_nan: bool, check_device: bool, check_dtype: bool,
                     check_layout: bool, check_stride: bool) -> None:
    actual, expected = (x if isinstance(x, Tensor) else _creation.as_tensor(x)
                        for x in (actual, expected))
    rtol, atol = _tolerances(actual.dtype, expected.dtype, rtol=rtol, atol=atol, id=id)

    def mismatch(name: str, a: Any, e: Any) -> NoReturn:
        raise _ErrorMeta(AssertionError, f"The values for attribute '{name}' do not match: "
                         f"{a} != {e}.", id=id)

    if actual.shape != expected.shape:
        mismatch("shape", actual.shape, expected.shape)
    if check_stride and actual.stride() != expected.stride():
        mismatch("stride()", actual.stride(), expected.stride())
    if check_device and actual.device != expected.device:
        mismatch("device", actual.device, expected.device)
    if check_dtype and actual.dtype != expected.dtype:
        mismatch("dtype", actual.dtype, expected.dtype)
    actual, expected = actual.detach(), expected.detach()
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        dtype = D.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(dtype), expected.to(dtype)
    matches = actual.isclose(expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if tuple(actual.shape) == ():
        msg = _scalar_mismatch_msg(actual.item(), expected.item(), rtol=rtol, atol=atol)
    else:
        msg = _tensor_mismatch_msg(actual, expected, matches, rtol=rtol, atol=atol)
    raise _ErrorMeta(AssertionError, msg, id=id)


def _tensor_like(x: Any) -> bool:
    return isinstance(x, (Tensor, np.ndarray))


def _compare(actual: Any, expected: Any, *, id: tuple[Any, ...], **options: Any) -> None:  # noqa: A002
    seq = collections.abc.Sequence
    if isinstance(actual, seq) and not isinstance(actual, str) and \
            isinstance(expected, seq) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _ErrorMeta(AssertionError, f"The length of the sequences mismatch: "
                             f"{len(actual)} != {len(expected)}", id=id)
        for i in range(len(actual)):
            _compare(actual[i], expected[i], id=(*id, i), **options)
        return
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        ak, ek = set(actual.keys()), set(expected.keys())
        if ak != ek:
            raise _ErrorMeta(AssertionError, (
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(ek - ak)}\n"
                f"Additional keys in the actual mapping: {sorted(ak - ek)}"), id=id)
        keys: Any = ak
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        for k in keys:
            _compare(actual[k], expected[k], id=(*id, k), **options)
        return
    if actual is None and expected is None:
        return
    if _is_number(actual) and _is_number(expected):
        _compare_numbers(actual, expected, id=id, rtol=options["rtol"], atol=options["atol"],
                         equal_nan=options["equal_nan"], check_dtype=options["check_dtype"])
        return
    if _tensor_like(actual) and _tensor_like(expected) and (
            isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        if not options["allow_subclasses"] and type(actual) is not type(expected):
            pass
        else:
            _compare_tensors(actual, expected, id=id, **{
                k: v for k, v in options.items() if k != "allow_subclasses"})
            return
    raise _ErrorMeta(TypeError, f"No comparison pair was able to handle inputs of type "
                     f"{_type_name(actual)} and {_type_name(expected)}.", id=id)


def _type_name(x: Any) -> str:
    return "<class 'torch.Tensor'>" if type(x) is Tensor else str(type(x))


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg: str | Callable[[str], str] | None = None
                 ) -> None:
    """Assert that ``actual`` and ``expected`` are close (PyTorch's ``assert_close``: tensors,
    numbers, and sequences or mappings of them)."""
    __tracebackhide__ = True
    try:
        _compare(actual, expected, id=(), allow_subclasses=allow_subclasses, rtol=rtol,
                 atol=atol, equal_nan=equal_nan, check_device=check_device,
                 check_dtype=check_dtype, check_layout=check_layout,
                 check_stride=check_stride)
    except _ErrorMeta as meta:
        raise meta.to_error(msg) from None


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None,
                    atol: float | None = None, equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated in PyTorch (since 1.12): ``assert_close`` with its older tolerances."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                  stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = _creation.tensor(actual)
    if not isinstance(expected, Tensor):
        expected = _creation.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _default_tolerances(actual.dtype, expected.dtype, precisions={
            D.float16: (1e-3, 1e-3), D.float32: (1e-4, 1e-5), D.float64: (1e-5, 1e-8)})
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)


_INTEGRAL = [D.uint8, D.int8, D.int16, D.int32, D.int64]
_FLOATING = [D.float16, D.bfloat16, D.float32, D.float64]
_COMPLEX = [D.complex64, D.complex128]


def make_tensor(*shape: Any, dtype: Any, device: Any, low: float | None = None,
                high: float | None = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format: Any = None) -> Tensor:
    """A tensor of ``shape`` filled with values drawn uniformly from ``[low, high)`` (PyTorch's
    algorithm and draws: ``randint`` for integers and booleans, ``uniform_`` for floats)."""
    int_like = dtype is D.bool or dtype in _INTEGRAL

    def modify_low_high(low: Any, high: Any, *, lowest_inclusive: float,
                        highest_exclusive: float, default_low: float,
                        default_high: float) -> tuple[Any, Any]:
        low = low if low is not None else default_low
        high = high if high is not None else default_high
        if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
            raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
        if low == high and dtype in _FLOATING + _COMPLEX:
            warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                          "complex types is deprecated since 2.1 and will be removed in 2.3. "
                          "Use `torch.full(...)` instead.", FutureWarning, stacklevel=3)
        elif low >= high:
            raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
        elif high < lowest_inclusive or low >= highest_exclusive:
            raise ValueError(f"The value interval specified by `low` and `high` is [{low}, "
                             f"{high}), but {dtype} only supports [{lowest_inclusive}, "
                             f"{highest_exclusive})")
        low = min(max(low, lowest_inclusive), highest_exclusive)
        high = min(max(high, lowest_inclusive), highest_exclusive)
        if int_like:
            return math.ceil(low), math.ceil(high)
        return low, high

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = tuple(shape[0])
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got {noncontiguous=} and {memory_format=}")
    if requires_grad and int_like:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got {dtype=}")
    noncontiguous = noncontiguous and functools.reduce(lambda x, y: x * y, shape, 1) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    result: Any
    if dtype is D.bool:
        lo, hi = modify_low_high(low, high, lowest_inclusive=0, highest_exclusive=2,
                                 default_low=0, default_high=2)
        result = _creation.randint(lo, hi, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = iinfo(dtype)
        lo, hi = modify_low_high(low, high, lowest_inclusive=info.min,
                                 highest_exclusive=info.max + (dtype is not D.int64),
                                 default_low=-9, default_high=10)
        result = _creation.randint(lo, hi, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING + _COMPLEX:
        fi = finfo(dtype)
        lo, hi = modify_low_high(low, high, lowest_inclusive=fi.min, highest_exclusive=fi.max,
                                 default_low=-9, default_high=9)
        # a complex tensor's draws fill its real view (real and imaginary interleaved)
        real = dtype.to_real() if dtype in _COMPLEX else dtype
        target = _creation.empty((*shape, 2) if dtype in _COMPLEX else shape, device=device,
                                 dtype=real)
        if hi - lo >= finfo(real).max:
            target.uniform_(lo / 2, hi / 2).mul_(2)
        else:
            target.uniform_(lo, hi)
        result = view_as_complex(target) if dtype in _COMPLEX else target
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "torch.testing.make_tensor(). To request support, file an issue at: "
                        "https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        # (masked_fill_: boolean-mask assignment of a 0-d tensor fails in funcgrad's indexing)
        result.masked_fill_(result == 0, 1 if int_like else finfo(dtype).tiny)
    if dtype in _FLOATING + _COMPLEX:
        result.requires_grad = requires_grad
    return result
