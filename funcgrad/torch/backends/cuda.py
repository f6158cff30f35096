"""``torch.backends.cuda``: ``matmul.allow_tf32`` lets float32 matrix products on a GPU use
TF32 (it is ``set_float32_matmul_precision("high")``); the SDP-kernel switches are kept
(funcgrad's ``scaled_dot_product_attention`` has one implementation)."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from funcgrad.torch._sdp_switches import SDP as _SDP

__all__ = ["cudnn_sdp_enabled", "enable_cudnn_sdp", "enable_flash_sdp", "enable_math_sdp",
           "enable_mem_efficient_sdp", "flash_sdp_enabled", "is_built", "math_sdp_enabled",
           "matmul", "mem_efficient_sdp_enabled", "sdp_kernel"]


class cuBLASModule:  # noqa: N801 - PyTorch's name
    """``torch.backends.cuda.matmul``."""

    _KEPT = ("allow_fp16_reduced_precision_reduction",
             "allow_bf16_reduced_precision_reduction", "allow_fp16_accumulation")

    def __init__(self) -> None:
        object.__setattr__(self, "_kept", dict.fromkeys(self._KEPT, True))
        self._kept["allow_fp16_accumulation"] = False

    def __getattr__(self, name: str) -> Any:
        if name == "allow_tf32":
            from funcgrad.torch._tensor_math import get_float32_matmul_precision  # noqa: PLC0415

            return get_float32_matmul_precision() != "highest"
        if name in self._KEPT:
            return self._kept[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            from funcgrad.torch._tensor_math import set_float32_matmul_precision  # noqa: PLC0415

            set_float32_matmul_precision("high" if value else "highest")
        elif name in self._KEPT:
            self._kept[name] = bool(value)
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = cuBLASModule()


def is_built() -> bool:
    """Whether the CUDA path is installed (CuPy importable: the ``cuda`` extra)."""
    import importlib.util  # noqa: PLC0415

    return importlib.util.find_spec("cupy") is not None


def _switch(name: str) -> tuple[Any, Any]:
    """An SDP kernel's setter and getter (``enable_flash_sdp`` and ``flash_sdp_enabled``)."""
    def enable(enabled: bool) -> None:
        _SDP[name] = bool(enabled)

    def is_enabled() -> bool:
        return _SDP[name]

    enable.__name__, is_enabled.__name__ = f"enable_{name}_sdp", f"{name}_sdp_enabled"
    return enable, is_enabled


enable_flash_sdp, flash_sdp_enabled = _switch("flash")
enable_mem_efficient_sdp, mem_efficient_sdp_enabled = _switch("mem_efficient")
enable_math_sdp, math_sdp_enabled = _switch("math")
enable_cudnn_sdp, cudnn_sdp_enabled = _switch("cudnn")


@contextlib.contextmanager
def sdp_kernel(enable_flash: bool = True, enable_math: bool = True,
               enable_mem_efficient: bool = True, enable_cudnn: bool = True
               ) -> Iterator[None]:
    """PyTorch's deprecated context for the SDP switches."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this "
                  "context manager will be removed. Please see "
                  "`torch.nn.attention.sdpa_kernel()` for the new context manager, with "
                  "updated signature.", FutureWarning, stacklevel=3)
    old = dict(_SDP)
    _SDP.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient,
                cudnn=enable_cudnn)
    try:
        yield
    finally:
        _SDP.update(old)
