"""``torch.backends``: PyTorch's backend switches. ``cuda.matmul.allow_tf32`` (with
``torch.set_float32_matmul_precision``) chooses TF32 or exact float32 for float32 matrix
products on a GPU; the cuDNN, SDP-kernel and oneDNN switches are kept and reported (funcgrad
has one implementation of each operation: no cuDNN, no flash kernels, no oneDNN).

>>> import funcgrad.torch as torch
>>> torch.backends.cudnn.enabled, torch.backends.mps.is_available()
(True, False)
"""

from funcgrad.torch.backends import cpu, cuda, cudnn, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkldnn", "mps", "openmp", "opt_einsum"]
