"""Variable-length sequences for the recurrent layers, as ``torch.nn.utils.rnn``:
``PackedSequence``, ``pack_padded_sequence``, ``pad_packed_sequence``, ``pad_sequence``,
``pack_sequence``, ``unpad_sequence`` and ``unpack_sequence``.

A packed sequence holds the time steps of a batch back to back, longest sequences first:
``data[k]`` for step ``t`` is one of the ``batch_sizes[t]`` sequences still running then.
Packing and padding are differentiable (one gather each).

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.nn.utils.rnn import pack_sequence, pad_packed_sequence
>>> packed = pack_sequence([torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0])])
>>> packed.data, packed.batch_sizes
(tensor([1., 4., 2., 3.]), tensor([2, 1, 1]))
>>> padded, lengths = pad_packed_sequence(packed, batch_first=True)
>>> padded, lengths
(tensor([[1., 2., 3.],
        [4., 0., 0.]]), tensor([3, 1]))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch._creation import tensor
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._apply import on_device_of, op

__all__ = [
    "PackedSequence", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence",
    "pad_sequence", "unpack_sequence", "unpad_sequence",
]


class PackedSequence(NamedTuple):
    """The packed time steps (``data``), how many sequences run at each step
    (``batch_sizes``, int64 on the CPU), and the permutation that sorted the batch by
    decreasing length (``None`` when it came sorted)."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """The data moved or cast (``batch_sizes`` stays on the CPU)."""
        return self._replace(data=self.data.to(*args, **kwargs))

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def _host_ints(x: Any) -> np.ndarray:
    if isinstance(x, Tensor):
        return x._host().astype(np.int64)
    return np.asarray(x, dtype=np.int64).reshape(-1)


def _packed_positions(batch_sizes: np.ndarray) -> np.ndarray:
    """``pos[t, b]``: the row of ``data`` holding step ``t`` of sorted sequence ``b``
    (-1 past its end)."""
    steps = len(batch_sizes)
    width = int(batch_sizes[0]) if steps else 0
    pos = np.full((steps, width), -1, np.int64)
    start = 0
    for t, n in enumerate(batch_sizes):
        pos[t, :n] = np.arange(start, start + n)
        start += int(n)
    return pos


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,  # noqa: A002
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` if ``batch_first``) of sequences of
    the given ``lengths``; unsorted lengths need ``enforce_sorted=False``.

    >>> import funcgrad.torch as torch
    >>> from funcgrad.torch.nn.utils.rnn import pack_padded_sequence
    >>> pack_padded_sequence(torch.tensor([[1, 2], [3, 0]]), [2, 1], batch_first=True).data
    tensor([1, 3, 2])
    """
    lens = _host_ints(lengths)
    if enforce_sorted:
        if np.any(np.diff(lens) > 0):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
        order = np.arange(len(lens))
        sorted_indices = unsorted_indices = None
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_indices = tensor(order)
        unsorted_indices = tensor(np.argsort(order))
    if lens.size and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    steps = int(input.shape[1 if batch_first else 0])
    batch = int(input.shape[0 if batch_first else 1])
    if lens.size and lens.max() > steps:
        raise RuntimeError(f"Expected sequence length to be larger than or equal to the "
                           f"maximum length in lengths, but got {steps} and {int(lens.max())}")
    slens = lens[order]
    batch_sizes = np.array([int(np.sum(slens > t)) for t in range(int(slens.max()))]
                           if slens.size else [], np.int64)
    rows = [(t, int(order[b])) for t in range(len(batch_sizes)) for b in range(batch_sizes[t])]
    flat = np.array([(b * steps + t) if batch_first else (t * batch + b) for t, b in rows],
                    np.int64)
    flat_d = on_device_of(flat, input)

    def impl(x: Any) -> Any:
        merged = fnp.reshape(x, (steps * batch,) + tuple(x.shape[2:]))
        return fnp.take(merged, fnp.asarray(flat_d), axis=0)

    data = op("PackPaddedSequence", impl, input)
    return PackedSequence(data, tensor(batch_sizes), sorted_indices, unsorted_indices)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The padded batch of a packed sequence, in the original batch order, and the
    lengths (int64); ``total_length`` pads to that many steps.

    >>> import funcgrad.torch as torch
    >>> from funcgrad.torch.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> pad_packed_sequence(pack_sequence([torch.ones(1), torch.ones(2)],
    ...                                   enforce_sorted=False), total_length=3)[0]
    tensor([[1., 1.],
            [0., 1.],
            [0., 0.]])
    """
    batch_sizes = _host_ints(sequence.batch_sizes)
    pos = _packed_positions(batch_sizes)
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        pos = np.concatenate([pos, np.full((total_length - steps, pos.shape[1]), -1,
                                           np.int64)])
    lengths = (pos >= 0).sum(axis=0)
    if sequence.unsorted_indices is not None:
        unsorted = _host_ints(sequence.unsorted_indices)
        pos, lengths = pos[:, unsorted], lengths[unsorted]
    if batch_first:
        pos = pos.T
    n_rows = int(sequence.data.shape[0])
    gather = on_device_of(np.where(pos >= 0, pos, n_rows), sequence.data)

    def impl(d: Any) -> Any:
        pad_row = fnp.full((1,) + tuple(d.shape[1:]), padding_value, d.dtype)
        return fnp.take(fnp.concatenate([d, pad_row]), fnp.asarray(gather), axis=0)

    return op("IndexSelect", impl, sequence.data), tensor(lengths.astype(np.int64))


def pad_sequence(sequences: Sequence[Tensor] | Tensor, batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack sequences of different lengths ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)``
    if ``batch_first``), padding with ``padding_value`` on ``padding_side``.

    >>> import funcgrad.torch as torch
    >>> from funcgrad.torch.nn.utils.rnn import pad_sequence
    >>> pad_sequence([torch.tensor([1, 2]), torch.tensor([3])], batch_first=True,
    ...              padding_side="left")
    tensor([[1, 2],
            [0, 3]])
    """
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    seqs = list(sequences.unbind(0)) if isinstance(sequences, Tensor) else list(sequences)
    lens = [int(s.shape[0]) for s in seqs]
    steps = max(lens, default=0)
    total = sum(lens)
    pos = np.full((len(seqs), steps), total, np.int64)
    start = 0
    for b, n in enumerate(lens):
        cols = np.arange(n) if padding_side == "right" else np.arange(steps - n, steps)
        pos[b, cols] = np.arange(start, start + n)
        start += n
    if not batch_first:
        pos = pos.T
    gather = on_device_of(pos, seqs[0]) if seqs else pos

    def impl(xs: list[Any]) -> Any:
        tail = tuple(xs[0].shape[1:])
        pad_row = fnp.full((1,) + tail, padding_value, xs[0].dtype)
        return fnp.take(fnp.concatenate(list(xs) + [pad_row]), fnp.asarray(gather), axis=0)

    return op("CopySlices", impl, seqs)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences ``(L_i, *)`` (longest first, unless
    ``enforce_sorted=False``)."""
    lengths = [int(s.shape[0]) for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Any,
                   batch_first: bool = False) -> list[Tensor]:
    """The list of sequences of a padded batch, each cut to its length.

    >>> import funcgrad.torch as torch
    >>> from funcgrad.torch.nn.utils.rnn import unpad_sequence
    >>> unpad_sequence(torch.tensor([[1, 2], [3, 0]]), [2, 1], batch_first=True)
    [tensor([1, 2]), tensor([3])]
    """
    padded = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [padded[b, :n] for b, n in enumerate(_host_ints(lengths).tolist())]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences of a packed batch (in the original order)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
