"""``jax.custom_derivatives``: the custom-rule decorators under their module name.

>>> from funcgrad.custom_derivatives import custom_jvp
>>> custom_jvp.__name__
'custom_jvp'
"""

from funcgrad.api_extras import closure_convert
from funcgrad.transforms.custom import (
    CustomVJPPrimal,
    SymbolicZero,
    custom_gradient,
    custom_jvp,
    custom_jvp_call_p,
    custom_vjp,
    custom_vjp_call_p,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)

__all__ = ["CustomVJPPrimal", "SymbolicZero", "closure_convert", "custom_gradient", "custom_jvp",
           "custom_jvp_call_p", "custom_vjp", "custom_vjp_call_p",
           "custom_vjp_primal_tree_values", "zero_from_primal"]
