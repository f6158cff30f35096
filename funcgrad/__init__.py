"""funcgrad: composable function transformations (grad, jvp, vjp, vmap, jit) over NumPy.

>>> import numpy as np
>>> import funcgrad as fg
>>> float(fg.grad(lambda x: fg.numpy.sum(x ** 2))(np.array([1.0, 2.0]))[1])
4.0
"""

from funcgrad import errors, lax, numpy, tree_util
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var
from funcgrad.staging import eval_jaxpr, make_jaxpr

__version__ = "0.1.0"

__all__ = [
    "ClosedJaxpr", "Eqn", "Jaxpr", "Literal", "ShapedArray", "Var", "errors", "eval_jaxpr",
    "lax", "make_jaxpr", "numpy", "tree_util",
]
