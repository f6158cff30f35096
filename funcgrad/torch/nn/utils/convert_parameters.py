"""Parameters as one flat vector and back, as ``torch.nn.utils.parameters_to_vector`` /
``vector_to_parameters``.

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.nn.utils import parameters_to_vector, vector_to_parameters
>>> ps = [torch.zeros(2, 2), torch.zeros(1)]
>>> vector_to_parameters(torch.arange(5.0), ps); ps
[tensor([[0., 1.],
        [2., 3.]]), tensor([4.])]
>>> parameters_to_vector(ps)
tensor([0., 1., 2., 3., 4.])
"""

from __future__ import annotations

from collections.abc import Iterable

from funcgrad.torch._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_device(param: Tensor, device: str | None) -> str:
    here = str(param.device)
    if device is not None and here != device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return here


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated (differentiable)."""
    from funcgrad.torch._functions import cat  # noqa: PLC0415

    device = None
    views = []
    for p in parameters:
        device = _check_device(p, device)
        views.append(p.reshape(-1))
    return cat(views)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of ``vec`` into the parameters' data (each reshaped to
    its parameter's shape)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    device = None
    pointer = 0
    for p in parameters:
        device = _check_device(p, device)
        n = p.numel()
        p.data = vec[pointer: pointer + n].view_as(p).data
        pointer += n
