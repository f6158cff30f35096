"""Reading and writing arrays, and printing them, as in ``jax.numpy``: ``frombuffer``,
``fromstring``, ``fromfile``, ``fromiter``, ``load``, ``save``, ``savez``, ``array_repr``,
``array_str`` and the print options (NumPy's, which funcgrad's arrays print with).

The readers run on the host (they produce concrete arrays, never traced ones).

>>> import funcgrad.numpy as fnp
>>> fnp.fromstring("1 2", dtype=int, sep=" ").tolist()
[1, 2]
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp

save = np.save
savez = np.savez
array_repr = np.array_repr
array_str = np.array_str
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
printoptions = np.printoptions


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    """A 1-d array from the bytes of ``buffer``.

    >>> import numpy as np
    >>> import funcgrad.numpy as fnp
    >>> fnp.frombuffer(np.arange(3, dtype=np.int32).tobytes(), np.int32).tolist()
    [0, 1, 2]
    """
    return fnp.asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """A 1-d array from numbers in text separated by ``sep``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fromstring("1.5,2", sep=",").tolist()
    [1.5, 2.0]
    """
    return fnp.asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromfile(*args: Any, **kwargs: Any) -> Any:
    """``numpy.fromfile`` as a funcgrad array (read once, on the host; JAX refuses this
    because a file read is not pure: do not call it inside a transformed function).

    >>> import os, tempfile
    >>> import numpy as np
    >>> import funcgrad.numpy as fnp
    >>> path = os.path.join(tempfile.mkdtemp(), "a.bin")
    >>> np.arange(3.0).tofile(path)
    >>> fnp.fromfile(path).tolist()
    [0.0, 1.0, 2.0]
    """
    return fnp.asarray(np.fromfile(*args, **kwargs))


def fromiter(*args: Any, **kwargs: Any) -> Any:
    """``numpy.fromiter`` as a funcgrad array (consumes the iterable on the host; JAX
    refuses this because it is not pure).

    >>> import funcgrad.numpy as fnp
    >>> fnp.fromiter(range(3), dtype=float).tolist()
    [0.0, 1.0, 2.0]
    """
    return fnp.asarray(np.fromiter(*args, **kwargs))


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """``numpy.load``, with single arrays returned as funcgrad arrays (bfloat16 recovered
    from the void16 that NumPy stores for it).

    >>> import io
    >>> import numpy as np
    >>> import funcgrad.numpy as fnp
    >>> f = io.BytesIO(); np.save(f, np.arange(2)); _ = f.seek(0)
    >>> fnp.load(f).tolist()
    [0, 1]
    """
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == np.dtype("V2"):
            out = out.view(fnp.bfloat16.dtype)
        try:
            return fnp.asarray(out)
        except (TypeError, ValueError):  # a dtype funcgrad has no arrays of
            return out
    return out


__all__ = ["array_repr", "array_str", "frombuffer", "fromfile", "fromiter", "fromstring",
           "get_printoptions", "load", "printoptions", "save", "savez", "set_printoptions"]
