"""Which scaled-dot-product-attention kernels are switched on: the state that
``torch.backends.cuda``'s ``enable_*_sdp`` and ``torch.nn.attention.sdpa_kernel`` set and
``scaled_dot_product_attention`` checks (kept apart so neither imports the other)."""

from __future__ import annotations

SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "overrideable": True}
