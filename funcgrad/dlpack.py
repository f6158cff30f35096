"""``jax.dlpack``: arrays from other libraries through DLPack (shared memory, read-only).

>>> import numpy as np
>>> from funcgrad import dlpack
>>> dlpack.from_dlpack(np.arange(3, dtype=np.float32))
Array([0., 1., 2.], dtype=float32)
"""

from funcgrad.numpy._creation import from_dlpack

SUPPORTED_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                    "uint64", "float16", "bfloat16", "float32", "float64", "complex64",
                    "complex128")

__all__ = ["SUPPORTED_DTYPES", "from_dlpack"]
