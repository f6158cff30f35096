"""funcgrad: composable function transformations (grad, jvp, vjp, vmap, jit) over NumPy.

>>> import numpy as np
>>> import funcgrad as fg
>>> float(fg.grad(lambda x: fg.numpy.sum(x ** 2))(np.array([1.0, 2.0]))[1])
4.0
"""

from funcgrad import errors, lax, numpy, testing, tree_util
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var
from funcgrad.staging import eval_jaxpr, make_jaxpr
from funcgrad.transforms.custom import checkpoint, custom_jvp, custom_vjp, remat, stop_gradient
from funcgrad.transforms.jacobians import hessian, jacfwd, jacrev
from funcgrad.transforms.jit import jit
from funcgrad.transforms.jvp import jvp, linearize
from funcgrad.transforms.vjp import grad, value_and_grad, vjp
from funcgrad.transforms.vmap import vmap

__version__ = "0.1.0"

__all__ = [
    "ClosedJaxpr", "Eqn", "Jaxpr", "Literal", "ShapedArray", "Var", "checkpoint",
    "custom_jvp", "custom_vjp", "errors", "eval_jaxpr", "grad", "hessian", "jacfwd",
    "jacrev", "jit", "jvp", "lax", "linearize", "make_jaxpr", "numpy", "remat", "stop_gradient",
    "testing", "tree_util", "value_and_grad", "vjp", "vmap",
]

from funcgrad.devices import Device, device_of, device_put, devices  # noqa: E402

__all__ += ["Device", "device_of", "device_put", "devices"]
