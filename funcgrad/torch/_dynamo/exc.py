"""``torch._dynamo.exc``: the errors ``torch.compile`` raises, to catch by PyTorch's names.

>>> import funcgrad.torch as torch
>>> f = torch.compile(lambda x: print(x) or x, fullgraph=True)
>>> try:
...     f(torch.ones(1))
... except torch._dynamo.exc.Unsupported as e:
...     print(type(e).__name__, isinstance(e, torch._dynamo.exc.TorchDynamoException))
Unsupported True
"""

from __future__ import annotations

from funcgrad.torch._compile import InvalidBackend, TorchDynamoException, Unsupported

__all__ = ["InvalidBackend", "TorchDynamoException", "Unsupported"]
