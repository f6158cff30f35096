"""``jax.ad_checkpoint``: ``checkpoint`` (remat) and ``checkpoint_name``.

>>> import funcgrad as jax
>>> from funcgrad.ad_checkpoint import checkpoint_name
>>> jax.grad(jax.checkpoint(lambda x: checkpoint_name(x * x, "sq")))(3.0)
Array(6., dtype=float32, weak_type=True)
"""

from typing import Any

from funcgrad.api_extras import checkpoint_policies
from funcgrad.transforms.custom import checkpoint, name_value

remat = checkpoint


def checkpoint_name(x: Any, name: str) -> Any:
    """Name ``x`` for the ``save_*_names`` checkpoint policies; the value is ``x`` itself.

    >>> checkpoint_name(2.0, "two")
    2.0
    """
    return name_value(x, name)


__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
