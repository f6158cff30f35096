"""``torch.nn.attention.bias``: causal masks that ``scaled_dot_product_attention`` takes as
``attn_mask`` without a mask tensor (upper-left is ``is_causal=True``; lower-right aligns
the last query with the last key, as in decoding with a cache).

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.nn.attention.bias import causal_lower_right
>>> causal_lower_right(2, 3)
tensor([[ True,  True, False],
        [ True,  True,  True]])
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

__all__ = ["CausalBias", "CausalVariant", "causal_lower_right", "causal_upper_left"]


class CausalVariant(enum.IntEnum):
    """Where the causal triangle is anchored: ``UPPER_LEFT`` (``tril(ones)``) or
    ``LOWER_RIGHT`` (``tril(ones, diagonal=kv - q)``)."""

    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    """A causal mask of ``seq_len_q`` queries by ``seq_len_kv`` keys, kept as its variant.

    >>> from funcgrad.torch.nn.attention.bias import causal_upper_left
    >>> causal_upper_left(2, 3).variant
    <CausalVariant.UPPER_LEFT: 1>
    """

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        self.variant, self.seq_len_q, self.seq_len_kv = variant, seq_len_q, seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            import warnings  # noqa: PLC0415

            warnings.warn("Lower right causal bias will produce NaNs in the output when "
                          "seq_len_q > seq_len_kv!", stacklevel=2)

    def _mask(self) -> np.ndarray:
        offset = 0 if self.variant == CausalVariant.UPPER_LEFT else \
            self.seq_len_kv - self.seq_len_q
        return np.tril(np.ones((self.seq_len_q, self.seq_len_kv), bool), offset)

    def _materialize(self, device: Any = None) -> Any:
        """The mask as a boolean tensor (True: may attend)."""
        from funcgrad.torch._creation import tensor  # noqa: PLC0415

        return tensor(self._mask(), device=device if device is not None else "cpu")

    def _upper_left(self, device: Any) -> Any:
        return CausalBias(CausalVariant.UPPER_LEFT, self.seq_len_q,
                          self.seq_len_kv)._materialize(device)

    def _lower_right(self, device: Any) -> Any:
        return CausalBias(CausalVariant.LOWER_RIGHT, self.seq_len_q,
                          self.seq_len_kv)._materialize(device)

    def __repr__(self) -> str:
        return repr(self._materialize())


def _sizes(name: str, size: tuple[int, ...]) -> tuple[int, int]:
    if len(size) != 2:
        raise AssertionError(f"{name} only supports 2D tensors")
    return size[0], size[1]


def causal_upper_left(*size: int) -> CausalBias:
    """The causal mask anchored at the first query and key (``is_causal=True``'s).

    >>> causal_upper_left(2, 3)
    tensor([[ True, False, False],
            [ True,  True, False]])
    """
    q, kv = _sizes("causal_upper_left", size)
    return CausalBias(CausalVariant.UPPER_LEFT, q, kv)


def causal_lower_right(*size: int) -> CausalBias:
    """The causal mask anchored at the last query and key.

    >>> causal_lower_right(2, 3).seq_len_kv
    3
    """
    q, kv = _sizes("causal_lower_right", size)
    return CausalBias(CausalVariant.LOWER_RIGHT, q, kv)
