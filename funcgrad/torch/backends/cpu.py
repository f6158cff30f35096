"""``torch.backends.cpu``: the vector instruction set the CPU offers."""

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """``"AVX512"``, ``"AVX2"`` or ``"DEFAULT"`` (from NumPy's CPU feature detection), as
    PyTorch names its kernel levels."""
    import importlib  # noqa: PLC0415

    try:
        umath = importlib.import_module("numpy._core._multiarray_umath")
    except ImportError:  # NumPy < 2
        umath = importlib.import_module("numpy.core._multiarray_umath")
    features = umath.__cpu_features__
    if features.get("AVX512F") and features.get("AVX512BW"):
        return "AVX512"
    if features.get("AVX2"):
        return "AVX2"
    return "DEFAULT"
