"""PyTorch's free functions without a NumPy namesake: ft.relu(t) is t.relu(), and so on."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as ft

CASES = [
    ("relu", (), {}), ("sigmoid", (), {}), ("softmax", (1,), {}), ("log_softmax", (0,), {}),
    ("clamp", (), {"min": -0.5, "max": 0.7}), ("flatten", (), {}), ("unsqueeze", (1,), {}),
]


@pytest.mark.parametrize("name,args,kwargs", CASES, ids=[c[0] for c in CASES])
def test_free_function_is_the_method(name, args, kwargs) -> None:
    data = np.array([[0.3, -1.2, 2.0], [0.5, 0.1, -0.7]], np.float32)
    a = ft.tensor(data, requires_grad=True)
    b = ft.tensor(data, requires_grad=True)
    out_f = getattr(ft, name)(a, *args, **kwargs)
    out_m = getattr(b, name)(*args, **kwargs)
    np.testing.assert_array_equal(out_f.detach().numpy(), out_m.detach().numpy())
    (out_f * out_f).sum().backward()
    (out_m * out_m).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    # As in PyTorch, a NumPy array is refused, not converted.
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'input' \(position 1\) must "
                                        r"be Tensor, not numpy.ndarray"):
        getattr(ft, name)(data, *args, **kwargs)
