"""funcgrad: composable function transformations (grad, jvp, vjp, vmap, jit) over NumPy.

>>> import numpy as np
>>> import funcgrad as fg
>>> fg.grad(lambda x: fg.numpy.sum(x ** 2))(np.array([1.0, 2.0])).tolist()
[2.0, 4.0]
"""

from funcgrad import errors, experimental, lax, numpy, testing, tree_util
from funcgrad.array import Array
from funcgrad.config import config
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var
from funcgrad.staging import eval_jaxpr, make_jaxpr

# Control flow registers its primitives (cond, while, scan) with the rest.
from funcgrad.transforms import control_flow as _control_flow  # noqa: F401
from funcgrad.transforms.custom import checkpoint, custom_jvp, custom_vjp, remat, stop_gradient
from funcgrad.transforms.jacobians import hessian, jacfwd, jacrev
from funcgrad.transforms.jit import jit
from funcgrad.transforms.jvp import jvp, linearize
from funcgrad.transforms.vjp import grad, value_and_grad, vjp
from funcgrad.transforms.vmap import vmap

__version__ = "0.1.0"

__all__ = [
    "Array", "config", "experimental",
    "ClosedJaxpr", "Eqn", "Jaxpr", "Literal", "ShapedArray", "Var", "checkpoint",
    "custom_jvp", "custom_vjp", "errors", "eval_jaxpr", "grad", "hessian", "jacfwd",
    "jacrev", "jit", "jvp", "lax", "linearize", "make_jaxpr", "numpy", "remat", "stop_gradient",
    "testing", "tree_util", "value_and_grad", "vjp", "vmap",
]

from funcgrad.devices import Device, device_of, device_put, devices  # noqa: E402

__all__ += ["Device", "device_of", "device_put", "devices"]

from funcgrad import autograd, func, nn, optim  # noqa: E402
from funcgrad.grad_mode import (  # noqa: E402
    enable_grad,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from funcgrad.tensor import (  # noqa: E402
    Size,
    Tensor,
    arange,
    as_tensor,
    cat,
    clamp,
    device,
    empty,
    eye,
    flatten,
    from_numpy,
    full,
    full_like,
    is_tensor,
    linspace,
    log_softmax,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    relu,
    sigmoid,
    softmax,
    tensor,
    unsqueeze,
    zeros,
    zeros_like,
)

__all__ += [
    "Size", "Tensor", "arange", "as_tensor", "autograd", "cat", "clamp", "flatten", "func",
    "log_softmax", "nn", "optim", "relu", "sigmoid", "softmax", "unsqueeze", "empty",
    "enable_grad", "eye",
    "device", "from_numpy", "full", "full_like", "is_grad_enabled", "is_tensor", "linspace",
    "manual_seed", "no_grad", "ones", "ones_like", "rand", "rand_like", "randint", "randn",
    "randn_like", "set_grad_enabled", "tensor", "zeros", "zeros_like",
]


def _export_numpy_functions() -> None:
    """``fg.exp``, ``fg.matmul``, ...: funcgrad.numpy's functions, also taking ``dim=``."""
    import functools  # noqa: PLC0415

    g = globals()
    for name in dir(numpy):
        fn = getattr(numpy, name)
        if name.startswith("_") or name in g or isinstance(fn, type) or not callable(fn):
            continue

        @functools.wraps(fn)
        def torchish(*args: object, _fn: object = fn, **kwargs: object) -> object:
            if "dim" in kwargs:
                kwargs["axis"] = kwargs.pop("dim")
            if "keepdim" in kwargs:
                kwargs["keepdims"] = kwargs.pop("keepdim")
            return _fn(*args, **kwargs)  # type: ignore[operator]

        g[name] = torchish
        __all__.append(name)
    for dt in ("bool_", "int8", "int16", "int32", "int64", "uint8", "float16", "float32",
               "float64", "complex64", "complex128"):
        g[dt] = getattr(numpy, dt)
    g["float"], g["double"], g["long"], g["half"] = (numpy.float32, numpy.float64, numpy.int64,
                                                     numpy.float16)
    g["bool"] = numpy.bool_


_export_numpy_functions()
