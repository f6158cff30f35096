"""``device_put`` as a primitive: a copy of an array to another device, which reverse mode
undoes (the cotangent goes back to the operand's device) and forward mode repeats. Both
faces move differentiable values through it: ``jax.device_put`` under ``grad`` and
``Tensor.to("cuda")`` / ``.cpu()`` of a tensor that requires grad.

Its impl returns a buffer on ``device``, not on its operand's backend (``places_result``).
Inside a compiled program it is the identity: a program runs on one device.

>>> import numpy as np
>>> import funcgrad as fg
>>> fg.grad(lambda x: (fg.device_put(x, "cpu") ** 2).sum())(np.array([1.0, 2.0]))
Array([2., 4.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from funcgrad.core import Primitive
from funcgrad.ir import ShapedArray
from funcgrad.primitives.rules import linear


def device_name(buf: Any) -> str | None:
    """The engine's name of the device of a backend buffer (None for anything else)."""
    from funcgrad.devices import device_of  # noqa: PLC0415

    if type(buf).__module__.startswith(("numpy", "cupy")):
        return str(device_of(buf))
    return None


_FROM_OPERAND = "operand"


def device_put(x: Any, device: Any, source: str | None = _FROM_OPERAND) -> Any:
    """``x`` on ``device`` (``"cpu"``, ``"cuda:1"``, a Device), its cotangent sent back to
    ``source``: by default the device ``x`` is on (None where that is unknown: abstract
    values inside ``jit`` or ``vmap``, whose programs run on one device)."""
    from funcgrad.array import ArrayImpl  # noqa: PLC0415
    from funcgrad.core import Tracer  # noqa: PLC0415
    from funcgrad.devices import require_device  # noqa: PLC0415

    target = str(require_device(device)[1])
    if source == _FROM_OPERAND:
        buf = x.concrete_value() if isinstance(x, Tracer) else x
        buf = buf._value if type(buf) is ArrayImpl else buf
        source = device_name(buf)
    return device_put_p.bind(x, device=target, source=source)


def _abstract(x: ShapedArray, *, device: str, source: str | None) -> ShapedArray:
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _impl(xp: Any, x: Any, *, device: str, source: str | None) -> Any:
    from funcgrad.devices import put_buffer  # noqa: PLC0415

    return put_buffer(x, device)


device_put_p = Primitive("device_put", abstract_eval=_abstract, impl=_impl)
device_put_p.places_result = True
linear(device_put_p, lambda ct, primals, ans, device, source: [
    ct if source is None or source == device else device_put(ct, source, device)])
device_put_p.batch = lambda args, dims, device, source: (
    device_put(args[0], device, source), dims[0])
device_put_p.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None,
                      torch_node="ToCopy")
__all__ = ["device_name", "device_put", "device_put_p"]
