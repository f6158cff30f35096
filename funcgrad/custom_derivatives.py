"""``jax.custom_derivatives``: the custom-rule decorators under their module name.

>>> from funcgrad.custom_derivatives import custom_jvp
>>> custom_jvp.__name__
'custom_jvp'
"""

from funcgrad.api_extras import closure_convert
from funcgrad.transforms.custom import custom_gradient, custom_jvp, custom_vjp

__all__ = ["closure_convert", "custom_gradient", "custom_jvp", "custom_vjp"]
