"""``torch.backends.opt_einsum``: whether the opt_einsum package (contraction orders for
``einsum``) is installed; ``enabled`` and ``strategy`` are kept."""

import importlib.util

__all__ = ["enabled", "is_available", "strategy"]

enabled = True
strategy = "auto"


def is_available() -> bool:
    return importlib.util.find_spec("opt_einsum") is not None
