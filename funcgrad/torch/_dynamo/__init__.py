"""``torch._dynamo``'s user-facing corner: ``explain``, ``reset``, ``config``.

>>> import funcgrad.torch as torch
>>> out = torch._dynamo.explain(lambda x: (x * 2).sum())(torch.ones(3))
>>> out.graph_count, out.graph_break_count
(1, 0)
"""

from __future__ import annotations

from funcgrad.torch._compile import (
    BreakReason,
    ExplainOutput,
    InvalidBackend,
    OptimizedModule,
    Unsupported,
    config,
    explain,
    is_compiling,
    reset,
)
from funcgrad.torch._dynamo import exc

__all__ = ["BreakReason", "ExplainOutput", "InvalidBackend", "OptimizedModule",
           "Unsupported", "config", "exc", "explain", "is_compiling", "list_backends", "reset"]


def list_backends() -> list[str]:
    """The ``backend=`` names ``torch.compile`` takes here."""
    return ["cudagraphs", "inductor"]
