"""``torch.autograd.detect_anomaly`` and ``set_detect_anomaly``.

While on, the forward call of every operation recorded on the graph is remembered, and
an error in its backward warns with that traceback (PyTorch's "Error detected in ..."
warning); with ``check_nan`` (the default) a backward that returns NaN raises.

>>> import funcgrad.torch as torch
>>> with torch.autograd.set_detect_anomaly(True):
...     x = torch.tensor([0.0], requires_grad=True)
...     y = (torch.sqrt(x) * 0).sum()
...     try:
...         y.backward()
...     except RuntimeError as e:
...         print(e)
Function 'SqrtBackward0' returned nan values in its 0th output.
"""

from __future__ import annotations

import warnings

from funcgrad.torch._anomaly import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)


class detect_anomaly:  # noqa: N801 - PyTorch's name
    """Anomaly detection inside the block (a context manager; it warns that it is on).

    >>> import funcgrad.torch as torch
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with torch.autograd.detect_anomaly():
    ...         torch.is_anomaly_enabled()
    True
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:  # noqa: N801 - PyTorch's name
    """Turn anomaly detection on or off: a plain call, or a context manager that restores
    the previous setting on exit.

    >>> import funcgrad.torch as torch
    >>> with torch.autograd.set_detect_anomaly(True, check_nan=False):
    ...     torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()
    (True, False)
    >>> torch.is_anomaly_enabled()
    False
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


__all__ = ["detect_anomaly", "set_detect_anomaly"]
