"""Named exceptions raised by funcgrad.

Every error says what went wrong, where (the user's source line when it can
be found) and what to do instead. Each class also derives from the closest
built-in exception so that ``except TypeError`` style handlers keep working.

>>> import funcgrad.errors as E
>>> issubclass(E.ShapeError, ValueError)
True
"""

from __future__ import annotations


class FuncgradError(Exception):
    """Base class of every error funcgrad raises on purpose."""


class ShapeError(FuncgradError, ValueError, TypeError):
    """Operands whose shapes do not fit the operation (a TypeError, as JAX raises for
    mismatched shapes, and a ValueError, as NumPy does)."""


class AxisError(ShapeError, IndexError):
    """An axis outside an array's rank (a ShapeError, and an IndexError as NumPy's is)."""

    def __init__(self, message: str, axis: int = 0, ndim: int = 0) -> None:
        super().__init__(message)
        self.axis = axis
        self.ndim = ndim


class DTypeError(FuncgradError, TypeError):
    """Operands whose dtypes do not fit the operation."""


class UnsupportedDTypeError(DTypeError, NotImplementedError):
    """A dtype the operation has no implementation for (JAX raises NotImplementedError,
    which this is too): half-precision matrix decompositions."""


class TypePromotionError(FuncgradError, ValueError):
    """A promotion JAX refuses: a sampler's parameter that does not cast safely to its
    ``dtype`` (``jax.dtypes.TypePromotionError``)."""


class JAXTypeError(FuncgradError, TypeError):
    """The base of the tracer errors (``jax.errors.JAXTypeError``): a value that is traced
    where a concrete one is needed, or used outside its transformation."""


class JAXIndexError(FuncgradError, IndexError):
    """``jax.errors.JAXIndexError``: the base of the index errors JAX names
    (:class:`NonConcreteBooleanIndexError`)."""


class IndexingError(FuncgradError, IndexError):
    """An index that is out of bounds or of an unsupported kind."""


class UnexpectedTracerError(JAXTypeError):
    """A tracer was used outside the transformation that created it (a TypeError, as
    JAX's)."""


class ConcretizationTypeError(JAXTypeError):
    """A concrete Python value was asked of an abstract (traced) value."""


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` (an ``if`` or ``while``) on a traced value."""


class TracerIntegerConversionError(ConcretizationTypeError):
    """``int()``/``float()``/indexing with a traced value that has no value."""


class TracerArrayConversionError(JAXTypeError):
    """A NumPy function (or ``np.asarray``) was given a traced value."""


class IndexTypeError(IndexingError, TypeError):
    """An index of the wrong type: a float array, or a list where JAX wants a tuple or an
    array (JAX raises TypeError)."""


class NonConcreteBooleanIndexError(IndexingError, JAXIndexError):
    """A boolean mask whose value is unknown (traced) was used as an index."""


class GradError(FuncgradError, TypeError):
    """Base class of misuse of the differentiation API."""


class NonScalarOutputError(GradError):
    """``grad`` of a function whose output is not a scalar."""


class IntegerInputError(GradError):
    """Differentiation with respect to an integer or boolean input."""


class ArgnumsError(GradError, ValueError):
    """``argnums`` that does not name positional arguments of the call."""


class HasAuxError(GradError):
    """``has_aux=True`` but the function did not return a pair."""


class NonDifferentiableError(GradError):
    """A derivative was requested through an operation that has none."""


class NonLinearError(FuncgradError, NotImplementedError):
    """``linear_transpose`` of a function that is not linear in its inputs (JAX raises
    NotImplementedError: no transpose rule)."""


class WhileLoopReverseError(NonDifferentiableError, ValueError):
    """Reverse mode through a ``while_loop`` that the differentiated inputs reach (JAX
    raises a ValueError)."""


class TreeStructureError(FuncgradError, ValueError, TypeError):
    """Pytrees whose structures were expected to match but do not."""


class DeviceError(FuncgradError, ValueError):
    """Arrays on different devices in one operation, or an unknown device."""


class BackendError(FuncgradError, RuntimeError):
    """A backend that is unavailable or failed to compile a program."""


class JaxRuntimeError(FuncgradError, RuntimeError):
    """A failure found while a program ran (``jax.errors.JaxRuntimeError``): a failed
    ``checkify.check`` raises one."""


class KeyReuseError(JAXTypeError):
    """A typed PRNG key used again after a sampler or ``split`` used it (with
    ``jax_debug_key_reuse`` on)."""


__all__ = [
    "ArgnumsError",
    "AxisError",
    "BackendError",
    "ConcretizationTypeError",
    "DTypeError",
    "UnsupportedDTypeError",
    "TypePromotionError",
    "DeviceError",
    "FuncgradError",
    "GradError",
    "HasAuxError",
    "IndexTypeError",
    "IndexingError",
    "JAXIndexError",
    "JAXTypeError",
    "IntegerInputError",
    "JaxRuntimeError",
    "KeyReuseError",
    "NonConcreteBooleanIndexError",
    "NonDifferentiableError",
    "NonLinearError",
    "NonScalarOutputError",
    "ShapeError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "TreeStructureError",
    "UnexpectedTracerError",
    "WhileLoopReverseError",
]
