"""``precision=`` of the products (``jax.lax.Precision``, ``DotAlgorithmPreset``, ...) and
``accuracy=`` of the transcendental functions (``AccuracyMode``, ``Tolerance``).

funcgrad's backends compute every product at the operands' own precision (exact float32
for float32 unless ``jax_default_matmul_precision`` allows TF32 on a GPU), as JAX's CPU
backend does whatever the precision says. The arguments are checked as JAX checks them:
a malformed one is a ``ValueError``, and an algorithm JAX's CPU backend refuses is refused.

>>> from funcgrad.primitives.precision import Precision, canonicalize_precision
>>> Precision("highest"), Precision.HIGH
(Precision.HIGHEST, Precision.HIGH)
>>> canonicalize_precision(("default", "float32"))
(Precision.DEFAULT, Precision.HIGHEST)
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple, Union

import numpy as np

from funcgrad import dtypes
from funcgrad.config import config

_PRECISION_STRINGS: dict[Any, Precision] = {}


class Precision(enum.Enum):
    """The precision of a product on accelerators (JAX's ``lax.Precision``): ``DEFAULT``
    (aliases ``'default'``, ``'bfloat16'``, ``'fastest'``), ``HIGH`` (``'high'``,
    ``'bfloat16_3x'``, ``'tensorfloat32'``), ``HIGHEST`` (``'highest'``, ``'float32'``).

    >>> Precision("float32")
    Precision.HIGHEST
    >>> str(Precision.DEFAULT)
    'DEFAULT'
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Precision | None:
        return _PRECISION_STRINGS.get(value)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name


_PRECISION_STRINGS.update({
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST,
    "high": Precision.HIGH, "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT, "bfloat16": Precision.DEFAULT, "fastest": Precision.DEFAULT,
    None: Precision.DEFAULT,
})


class DotAlgorithm(NamedTuple):
    """A dot-product algorithm (JAX's ``lax.DotAlgorithm``): the types the operands are
    rounded to, the accumulation type, and how many passes emulate a wider type. Like JAX's
    CPU backend, funcgrad's products refuse it (``ValueError``): use a
    ``DotAlgorithmPreset`` or a ``Precision``.

    >>> import numpy as np
    >>> DotAlgorithm(np.float32, np.float32, np.float32).num_primitive_operations
    1
    """

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """The named dot-product algorithms (JAX's ``lax.DotAlgorithmPreset``); a preset's name
    is accepted as ``precision=`` too.

    >>> DotAlgorithmPreset["F32_F32_F32"]
    DotAlgorithmPreset.F32_F32_F32
    """

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name

    @property
    def accumulation_type(self) -> Any:
        """The accumulation dtype the preset names (None: chosen from the operands)."""
        name = self.name
        if name in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
            return None
        return {"F16_F16_F16": np.float16, "BF16_BF16_BF16": dtypes.bfloat16.type,
                "F64_F64_F64": np.float64}.get(name, np.float32)


PrecisionLike = Union[None, str, Precision, tuple[str, str],  # noqa: UP007 - JAX's alias
                      tuple[Precision, Precision], DotAlgorithm, DotAlgorithmPreset]
CanonicalPrecision = Union[None, tuple[Precision, Precision],  # noqa: UP007
                           DotAlgorithm, DotAlgorithmPreset]

# The presets JAX's CPU backend runs (at the operands' own precision, as funcgrad does).
_SUPPORTED_PRESETS = frozenset({
    DotAlgorithmPreset.DEFAULT, DotAlgorithmPreset.F16_F16_F16,
    DotAlgorithmPreset.F32_F32_F32, DotAlgorithmPreset.F64_F64_F64,
    DotAlgorithmPreset.BF16_BF16_F32, DotAlgorithmPreset.BF16_BF16_F32_X3,
    DotAlgorithmPreset.BF16_BF16_F32_X6})


def canonicalize_precision(precision: Any) -> CanonicalPrecision:
    """``precision`` as JAX canonicalizes it: None, a pair of ``Precision`` values, a
    ``DotAlgorithm`` or a ``DotAlgorithmPreset``; anything else is a ``ValueError``.

    >>> canonicalize_precision("highest")
    (Precision.HIGHEST, Precision.HIGHEST)
    >>> canonicalize_precision("BF16_BF16_F32")
    DotAlgorithmPreset.BF16_BF16_F32
    """
    if precision is None:
        default = config.read("jax_default_matmul_precision")
        if default is None:
            return None
        try:
            return canonicalize_precision(default)
        except ValueError:
            raise ValueError(
                "jax_default_matmul_precision flag must be set to None, a value in "
                f"{list(_PRECISION_STRINGS)}, or the name of a lax.DotAlgorithmPreset, "
                f"but got {default}") from None
    if isinstance(precision, str):
        if precision in _PRECISION_STRINGS:
            return Precision(precision), Precision(precision)
        if precision in DotAlgorithmPreset.__members__:
            return DotAlgorithmPreset[precision]
    elif isinstance(precision, Precision):
        return precision, precision
    elif isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return precision
    elif isinstance(precision, (list, tuple)) and len(precision) == 2:
        if all(isinstance(p, Precision) for p in precision):
            return precision[0], precision[1]
        if all(isinstance(p, str) for p in precision):
            first, second = (canonicalize_precision(p) for p in precision)
            if not (isinstance(first, tuple) and isinstance(second, tuple)):
                # JAX indexes the canonical form of each string: a preset is no pair.
                raise TypeError("'DotAlgorithmPreset' object is not subscriptable")
            return first[0], second[0]
    raise ValueError(
        "Precision argument must be one of:\n"
        "- None,\n"
        f"- a string in {list(_PRECISION_STRINGS)},\n"
        "- a lax.Precision value,\n"
        "- a tuple of two lax.Precision values or strings,\n"
        "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
        "- a lax.DotAlgorithm value;\n"
        f"but got {precision}.")


def check_dot_precision(precision: Any) -> None:
    """``precision`` checked for a product: canonicalized (``ValueError`` when malformed),
    and an algorithm that JAX's CPU backend refuses refused the same way (funcgrad computes
    at the operands' own precision, which is what JAX's CPU does for the ones it takes).

    >>> check_dot_precision("F32_F32_F32")
    >>> check_dot_precision("TF32_TF32_F32")
    Traceback (most recent call last):
    ...
    ValueError: The precision 'TF32_TF32_F32' is not supported by dot_general in funcgrad
    """
    canon = canonicalize_precision(precision)
    if isinstance(canon, DotAlgorithm) or (isinstance(canon, DotAlgorithmPreset)
                                           and canon not in _SUPPORTED_PRESETS):
        raise ValueError(f"The precision '{canon}' is not supported by dot_general in funcgrad")


def _preset_inputs(preset: DotAlgorithmPreset) -> tuple[np.dtype[Any], ...] | None:
    name = preset.name
    if name == "DEFAULT" or name.startswith("ANY_F8"):
        return None
    if name.startswith("F16_"):
        return (np.dtype(np.float16),)
    if name in ("BF16_BF16_BF16", "BF16_BF16_F32"):
        return (dtypes.bfloat16, np.dtype(np.float32))
    if name == "F64_F64_F64":
        return (np.dtype(np.float64),)
    return (np.dtype(np.float32),)


def algorithm_types(precision: Any, lhs: np.dtype[Any], rhs: np.dtype[Any], out: np.dtype[Any]
                    ) -> tuple[np.dtype[Any], np.dtype[Any], np.dtype[Any]] | None:
    """For a product asked for ``precision`` (already checked): the dtypes its operands are
    rounded to and the dtype it accumulates in, as JAX converts them for a
    ``DotAlgorithmPreset`` (an operand type the preset does not take becomes its first);
    None when nothing converts.

    >>> import numpy as np
    >>> f64 = np.dtype(np.float64)
    >>> algorithm_types("F32_F32_F32", f64, f64, f64)
    (dtype('float32'), dtype('float32'), dtype('float32'))
    """
    canon = canonicalize_precision(precision)
    if not isinstance(canon, DotAlgorithmPreset):
        return None
    inputs = _preset_inputs(canon)
    if inputs is None:
        return None
    lt = lhs if lhs in inputs else inputs[0]
    rt = rhs if rhs in inputs else inputs[0]
    acc = np.dtype(canon.accumulation_type)
    outs = [acc]
    if canon is DotAlgorithmPreset.BF16_BF16_F32 and lt == rt == dtypes.bfloat16:
        outs.append(dtypes.bfloat16)
    return lt, rt, out if out in outs else outs[0]


class AccuracyMode(enum.Enum):
    """The accuracy a transcendental function is asked for (JAX's ``lax.AccuracyMode``,
    for ``accuracy=`` of ``lax.exp``, ``lax.log``, ...). funcgrad computes them at full
    accuracy whatever the mode, as JAX's CPU backend does.

    >>> AccuracyMode.HIGHEST.value
    1
    """

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """Tolerances a transcendental function may use (JAX's ``lax.Tolerance``): at most two
    of ``atol``, ``rtol``, ``ulps``, none negative and one at least set.

    >>> Tolerance(atol=1e-6).atol
    1e-06
    """

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0) -> None:
        if atol < 0.0 or rtol < 0.0 or ulps < 0.0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol = atol
        self.rtol = rtol
        self.ulps = ulps


__all__ = ["AccuracyMode", "CanonicalPrecision", "DotAlgorithm", "DotAlgorithmPreset",
           "Precision", "PrecisionLike", "Tolerance", "canonicalize_precision",
           "algorithm_types", "check_dot_precision"]
