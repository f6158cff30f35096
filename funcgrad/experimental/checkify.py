"""``jax.experimental.checkify``: run-time checks that a transformed program returns as a
value instead of raising.

``checkify(f, errors)`` traces ``f`` to a jaxpr and evaluates it again with an error value
threaded through: each ``check`` equation (a user's :func:`check`) is discharged into it,
and the enabled automatic checks (NaNs made by a primitive, division by zero, indices out
of bounds) are added after the primitives they watch. Inside ``cond``, ``scan`` and
``while_loop`` the error value becomes part of the operands and carries, so the result
is an ordinary pytree: it goes through ``jit`` and ``vmap`` like any other.

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> from funcgrad.experimental import checkify
>>> def f(x):
...     checkify.check(x > 0, "{} must be positive", x)
...     return jnp.log(x)
>>> err, out = jax.jit(checkify.checkify(f))(jnp.float32(-2.0))
>>> err.get()
'-2.0 must be positive (`check` failed)'
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import lax
from funcgrad.array import Array, wrap
from funcgrad.core import Tracer, bind, get_aval
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, ShapedArray
from funcgrad.primitives.checks import (
    BatchedError,
    DivisionByZeroError,
    Error,
    ErrorEffect,
    FailedCheckError,
    JaxException,
    NaNError,
    OOBError,
    check_error_value,
)
from funcgrad.primitives.checks import CheckifyRuntimeError as JaxRuntimeError
from funcgrad.source_info import user_frame
from funcgrad.staging import aval_in_use, eval_jaxpr, trace_flat
from funcgrad.tree_util import tree_flatten, tree_unflatten

ErrorCategory = type[JaxException]

user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks

init_error = Error({}, {}, {}, {})
_TRACED = (Array, Tracer, np.ndarray, np.generic)
# Codes order the checks as they were traced: the smallest code that failed is the first.
_next_code = itertools.count(1).__next__

# JAX's list of the primitives that can make a NaN (by funcgrad's names).
NAN_PRIMITIVES = frozenset({
    "acos", "acosh", "add", "asin", "asinh", "atan2", "atan", "atanh", "bessel_i0e",
    "bessel_i1e", "cbrt", "conv_general_dilated", "cos", "cosh", "cumlogsumexp", "cummax",
    "cummin", "cumprod", "cumsum", "digamma", "dot_general", "erf_inv", "erf", "erfc", "exp",
    "expm1", "fft", "igamma_grad_a", "igamma", "igammac", "integer_pow", "lgamma",
    "linear_solve", "log1p", "log", "logistic", "mul", "pad", "pow", "psum", "reduce",
    "reduce_prod", "reduce_sum", "reduce_window", "reduce_window_sum",
    "regularized_incomplete_beta", "rem", "rng_uniform", "rsqrt", "sin", "sinh", "sqrt",
    "sub", "tan", "tanh"})
SCATTERS = frozenset({"scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"})

# ------------------------------------------------------------------ error bookkeeping


def _strong(x: Any) -> Any:
    """``x`` as a strongly typed Array: loop carries must keep one type."""
    a = get_aval(x)
    return lax.convert_element_type(x, a.dtype) if a.weak_type or not isinstance(
        x, (Array, Tracer)) else x


def update_error(error: Error, pred: Any, code: int, metadata: dict[int, Any],
                 payload: Sequence[Any], eff: ErrorEffect) -> Error:
    """``error`` with ``pred`` (code ``code``) added to its kind ``eff``: the first error of a
    kind that happens is the one kept."""
    pred = _strong(pred)
    new_code = _strong(np.int32(code)) if isinstance(code, int) else _strong(code)
    payload = [_strong(p) for p in payload]
    old = error._pred.get(eff)
    if old is None:
        out_pred, out_code, out_payload = pred, new_code, payload
    else:
        out_pred = jnp.logical_or(old, pred)
        out_code = lax.select(old, error._code[eff], new_code)
        out_payload = [lax.select(jnp.broadcast_to(old, get_aval(p).shape), c, p)
                       for c, p in zip(error._payload[eff], payload)]
    return Error({**error._pred, eff: out_pred}, {**error._code, eff: out_code},
                 {**error._metadata, **metadata}, {**error._payload, eff: out_payload})


def assert_func(error: Error, pred: Any, exc: JaxException) -> Error:
    """``error`` with ``exc`` added, happened where ``pred`` is True."""
    code = _next_code()
    payload, tree = tree_flatten(exc)
    return update_error(error, pred, code, {code: tree}, payload, exc.get_effect_type())


def _placeholders(error: Error, effs: Sequence[ErrorEffect]) -> Error:
    """``error`` with every kind in ``effs`` (those it lacks never happened)."""
    pred, code, payload = dict(error._pred), dict(error._code), dict(error._payload)
    for eff in effs:
        if eff not in pred:
            pred[eff] = _strong(np.bool_(False))
            code[eff] = _strong(np.int32(-1))
            payload[eff] = [_strong(np.ones(s, d)) for s, d in eff.shape_dtypes]
    return Error(pred, code, dict(error._metadata), payload)


def _leaves(error: Error, effs: Sequence[ErrorEffect]) -> list[Any]:
    out = [error._pred[e] for e in effs] + [error._code[e] for e in effs]
    for e in effs:
        out.extend(error._payload[e])
    return [_strong(x) for x in out]


def _from_leaves(leaves: Sequence[Any], effs: Sequence[ErrorEffect],
                 metadata: dict[int, Any]) -> Error:
    n = len(effs)
    payload, k = {}, 2 * n
    for e in effs:
        m = len(e.shape_dtypes)
        payload[e] = list(leaves[k:k + m])
        k += m
    return Error(dict(zip(effs, leaves[:n])), dict(zip(effs, leaves[n:2 * n])),
                 dict(metadata), payload)


# ----------------------------------------------------------------- automatic checks


def _check_nans(name: str, error: Error, enabled: frozenset[Any], outs: Sequence[Any]
                ) -> Error:
    if NaNError not in enabled:
        return error
    inexact = [o for o in outs if jnp.issubdtype(get_aval(o).dtype, jnp.inexact)]
    if not inexact:
        return error
    any_nans = jnp.any(jnp.stack([jnp.any(jnp.isnan(o)) for o in inexact]))
    return assert_func(error, any_nans, NaNError(None, name))


def _oob_payload(oob_mask: Any, indices: Any, dims_map: Sequence[int],
                 operand_shape: tuple[int, ...]) -> Any:
    # As JAX: the first out-of-bounds index, its operand axis and that axis's size.
    flat_idx = jnp.argmin(jnp.ravel(jnp.logical_not(oob_mask)))
    multi_idx = jnp.unravel_index(flat_idx, jnp.shape(indices))
    oob_axis = jnp.array(list(dims_map), dtype=np.int32)[multi_idx[-1]]
    oob_axis_size = jnp.array(operand_shape, dtype=np.int32)[oob_axis]
    oob_index = jnp.ravel(indices)[flat_idx]
    return jnp.stack([oob_index, oob_axis, oob_axis_size])


def _assert_oob(error: Error, name: str, operand: Any, indices: Any, upper: Any,
                dims_map: Sequence[int]) -> Error:
    if int(np.prod(jnp.shape(indices))) == 0:
        return error
    shape = tuple(get_aval(operand).shape)
    # Indices may be 64-bit even in 32-bit mode (the indexing rules' own tables).
    indices = lax.convert_element_type(indices, np.int32)
    mask = (indices < 0) | (indices > jnp.asarray(np.asarray(upper, np.int32)))
    payload = _oob_payload(mask, indices, dims_map, shape)
    return assert_func(error, jnp.any(mask), OOBError(None, name, shape, payload))


def _index_check(error: Error, enabled: frozenset[Any], name: str, ins: Sequence[Any],
                 params: Mapping[str, Any]) -> Error:
    if OOBError not in enabled:
        return error
    operand = ins[0]
    shape = get_aval(operand).shape
    if name in ("dynamic_slice", "dynamic_update_slice"):
        starts = ins[1:] if name == "dynamic_slice" else ins[2:]
        if not starts:
            return error
        sizes = params["slice_sizes"] if name == "dynamic_slice" else get_aval(ins[1]).shape
        idx = jnp.stack([jnp.asarray(s).astype(np.int32) for s in starts])
        upper = np.array([d - s for d, s in zip(shape, sizes)], np.int32)
        return _assert_oob(error, name, operand, idx, upper, range(len(shape)))
    # gather and the scatters index the leading k axes with the last axis of ``indices``.
    indices = ins[1]
    k = get_aval(indices).shape[-1]
    upper = np.array([d - 1 for d in shape[:k]], np.int32)
    return _assert_oob(error, name, operand, indices, upper, range(k))


# ------------------------------------------------------------------------ interpreter


def _discover(closed: ClosedJaxpr, enabled: frozenset[Any], error: Error,
              in_avals: Sequence[ShapedArray]) -> set[ErrorEffect]:
    """The kinds of error a checked run of ``closed`` may hold (staged and thrown away)."""
    found: set[ErrorEffect] = set()

    def run(*xs: Any) -> list[Any]:
        err, _ = _interp(closed.jaxpr, closed.consts, enabled, error, xs)
        found.update(err._pred)
        return []

    trace_flat(run, in_avals)
    return found


def _avals(xs: Sequence[Any]) -> list[ShapedArray]:
    return [get_aval(x) for x in xs]


def _cond(error: Error, enabled: frozenset[Any], eqn: Eqn, ins: Sequence[Any]
          ) -> tuple[Error, list[Any]]:
    index, ops = ins[0], list(ins[1:])
    branches = eqn.params["branches"]
    effs = set(error._pred)
    for br in branches:
        effs |= _discover(br, enabled, error, _avals(ops))
    order = sorted(effs)
    error = _placeholders(error, order)
    meta = dict(error._metadata)

    def branch(br: ClosedJaxpr) -> Callable[..., Any]:
        def run(leaves: list[Any], xs: list[Any]) -> Any:
            err, outs = _interp(br.jaxpr, br.consts, enabled,
                                _from_leaves(leaves, order, meta), xs)
            meta.update(err._metadata)
            return _leaves(_placeholders(err, order), order), list(outs)
        return run

    leaves, outs = lax.switch(index, [branch(b) for b in branches], _leaves(error, order), ops)
    return _from_leaves(leaves, order, meta), list(outs)


def _scan(error: Error, enabled: frozenset[Any], eqn: Eqn, ins: Sequence[Any]
          ) -> tuple[Error, list[Any]]:
    p = eqn.params
    body: ClosedJaxpr = p["jaxpr"]
    nc, ncar = p["num_consts"], p["num_carry"]
    consts, carry, xs = list(ins[:nc]), list(ins[nc:nc + ncar]), list(ins[nc + ncar:])
    x_avals = [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in _avals(xs)]
    order = sorted(set(error._pred) | _discover(body, enabled, error,
                                                [*_avals(consts), *_avals(carry), *x_avals]))
    error = _placeholders(error, order)
    meta = dict(error._metadata)

    def step(c: Any, x: Any) -> Any:
        leaves, car = c
        err, outs = _interp(body.jaxpr, body.consts, enabled, _from_leaves(leaves, order, meta),
                            [*consts, *car, *x])
        meta.update(err._metadata)
        return (_leaves(_placeholders(err, order), order), list(outs[:ncar])), \
            list(outs[ncar:])

    (leaves, carry_out), ys = lax.scan(step, (_leaves(error, order), carry), xs,
                                       length=p["length"], reverse=p["reverse"])
    return _from_leaves(leaves, order, meta), [*carry_out, *ys]


def _while(error: Error, enabled: frozenset[Any], eqn: Eqn, ins: Sequence[Any]
           ) -> tuple[Error, list[Any]]:
    p = eqn.params
    cj: ClosedJaxpr = p["cond_jaxpr"]
    bj: ClosedJaxpr = p["body_jaxpr"]
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    cconsts, bconsts, carry = list(ins[:cn]), list(ins[cn:cn + bn]), list(ins[cn + bn:])
    effs = set(error._pred) | _discover(bj, enabled, error, [*_avals(bconsts), *_avals(carry)])
    effs |= _discover(cj, enabled, error, [*_avals(cconsts), *_avals(carry)])
    order = sorted(effs)
    meta = dict(error._metadata)

    def check_cond(err: Error, car: Sequence[Any]) -> Error:
        # The loop's predicate is checked on every carry it sees, the first one included.
        err, _ = _interp(cj.jaxpr, cj.consts, enabled, err, [*cconsts, *car])
        meta.update(err._metadata)
        return _placeholders(err, order)

    error = check_cond(_placeholders(error, order), carry)

    def cond_fun(c: Any) -> Any:
        _, car = c
        return _interp(cj.jaxpr, cj.consts, frozenset(), init_error, [*cconsts, *car])[1][0]

    def body_fun(c: Any) -> Any:
        leaves, car = c
        err, outs = _interp(bj.jaxpr, bj.consts, enabled, _from_leaves(leaves, order, meta),
                            [*bconsts, *car])
        meta.update(err._metadata)
        err = check_cond(_placeholders(err, order), outs)
        return _leaves(err, order), list(outs)

    leaves, out = lax.while_loop(cond_fun, body_fun, (_leaves(error, order), carry))
    return _from_leaves(leaves, order, meta), list(out)


def _discharge(error: Error, enabled: frozenset[Any], eqn: Eqn, ins: Sequence[Any]
               ) -> tuple[Error, list[Any]]:
    new = tree_unflatten(eqn.params["err_tree"], list(ins))
    for eff in new.effects():
        # As JAX: checks of kinds not enabled are dropped.
        if eff.error_type in enabled:
            error = update_error(error, new._pred[eff], new._code[eff], {},
                                 new._payload[eff], eff)
    return Error(error._pred, error._code, {**new._metadata, **error._metadata},
                 error._payload), []


def _interp(jaxpr: Jaxpr, consts: Sequence[Any], enabled: frozenset[Any], error: Error,
            args: Sequence[Any]) -> tuple[Error, list[Any]]:
    """Evaluate ``jaxpr`` under the current trace, threading ``error`` through it."""
    state = [error]

    def apply(eqn: Eqn, ins: list[Any]) -> list[Any]:
        state[0], outs = _checked(state[0], enabled, eqn, ins)
        return outs

    outs = eval_jaxpr(jaxpr, *args, consts=consts, apply=apply)
    return state[0], outs


def _checked(error: Error, enabled: frozenset[Any], eqn: Eqn, ins: list[Any]
             ) -> tuple[Error, list[Any]]:
    """One equation evaluated, and the checks ``enabled`` asks of it added to ``error``."""
    prim, params = eqn.primitive, eqn.params
    name = prim.name
    if name == "check":
        return _discharge(error, enabled, eqn, ins)
    if name == "cond":
        return _cond(error, enabled, eqn, ins)
    if name == "scan":
        return _scan(error, enabled, eqn, ins)
    if name == "while":
        return _while(error, enabled, eqn, ins)
    if name == "jit":
        # A jitted call runs inline: the enclosing program is compiled as one anyway.
        inner: ClosedJaxpr = params["jaxpr"]
        return _interp(inner.jaxpr, inner.consts, enabled, error, ins)
    if prim.inline_param is not None:
        # custom_jvp/custom_vjp/checkpoint: the checked value of their function.
        fun = params[prim.inline_param]
        staged, _ = trace_flat(lambda *xs, fun=fun: list(fun(*xs)), _avals(ins))
        return _interp(staged.jaxpr, staged.consts, enabled, error, ins)
    if name == "div" and DivisionByZeroError in enabled:
        error = assert_func(error, jnp.any(jnp.equal(ins[1], 0)), DivisionByZeroError(None))
    out = bind(prim, *ins, **params)
    outs = list(out) if prim.multiple_results else [out]
    if name in ("gather", "dynamic_slice", "dynamic_update_slice") or name in SCATTERS:
        error = _index_check(error, enabled, name, ins, params)
    if name in NAN_PRIMITIVES or name == "div" or (name in SCATTERS and OOBError in enabled):
        error = _check_nans(name, error, enabled, outs)
    return error, outs


def _as_output(x: Any, aval: ShapedArray) -> Any:
    """A value of the checked program as the user sees it (buffers become Arrays)."""
    if isinstance(x, (Array, Tracer)):
        return x
    if isinstance(x, np.ndarray) or type(x).__module__.startswith("cupy"):
        return wrap(x, aval)
    return jnp.asarray(x)


# --------------------------------------------------------------------------- public API


def checkify(f: Callable[..., Any], errors: frozenset[Any] = user_checks
             ) -> Callable[..., tuple[Error, Any]]:
    """``f`` returning ``(error, out)``: its ``check`` calls (and the automatic checks in
    ``errors``) give an error value instead of raising.

    >>> import funcgrad.numpy as jnp
    >>> err, out = checkify(jnp.sin, errors=nan_checks)(jnp.inf)
    >>> err.get()
    'nan generated by primitive: sin.'
    """
    enabled = frozenset(errors)

    def checked(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        # As JAX: Python values in the arguments stay static, arrays are traced.
        leaves, in_tree = tree_flatten((args, kwargs))
        dyn = [i for i, x in enumerate(leaves) if isinstance(x, _TRACED)]
        box = []

        def flat(*xs: Any) -> list[Any]:
            full = list(leaves)
            for i, x in zip(dyn, xs):
                full[i] = x
            a, k = tree_unflatten(in_tree, full)
            out_leaves, out_tree = tree_flatten(f(*a, **k))
            box.append(out_tree)
            return out_leaves

        closed, _ = trace_flat(flat, [aval_in_use(get_aval(leaves[i])) for i in dyn])
        out_tree = box[0]
        error, outs = _interp(closed.jaxpr, closed.consts, enabled, init_error,
                              [leaves[i] for i in dyn])
        outs = [_as_output(o, v.aval) for o, v in zip(outs, closed.jaxpr.outvars)]
        return error, tree_unflatten(out_tree, outs)

    checked.__name__ = getattr(f, "__name__", "checked")
    checked.__doc__ = getattr(f, "__doc__", None)
    return checked


def _is_scalar_pred(pred: Any) -> bool:
    return isinstance(pred, bool) or (isinstance(pred, (Array, Tracer))
                                      and get_aval(pred).shape == ()
                                      and get_aval(pred).dtype == np.dtype("bool"))


def _check(pred: Any, msg: str, debug: bool, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    if not _is_scalar_pred(pred):
        prim_name = "debug_check" if debug else "check"
        raise TypeError(f"{prim_name} takes a scalar pred as argument, got {pred}")
    for arg in tree_flatten((fmt_args, fmt_kwargs))[0]:
        if not isinstance(arg, (Array, Tracer, np.ndarray)):
            raise TypeError("Formatting arguments to checkify.check need to be PyTrees of "
                            f"arrays, but got {arg!r} of type {type(arg)}.")
    new_error = FailedCheckError(user_frame(), msg, *fmt_args, **fmt_kwargs)
    check_error_value(assert_func(init_error, jnp.logical_not(pred), new_error), debug=debug)


def check(pred: Any, msg: str, *fmt_args: Any, debug: bool = False, **fmt_kwargs: Any
          ) -> None:
    """Check ``pred``; when False, the error ``msg`` (formatted with the run-time values of
    ``fmt_args`` and ``fmt_kwargs``). Eagerly it raises at once; under :func:`checkify` it
    becomes the returned error value; staged (``jit``) without ``checkify`` it is an error.

    >>> import funcgrad.numpy as jnp
    >>> check(jnp.array(1) > 2, "{} is not > 2", jnp.array(1))
    Traceback (most recent call last):
    ...
    funcgrad.primitives.checks.JaxRuntimeError: 1 is not > 2 (`check` failed)
    """
    _check(pred, msg, debug, *fmt_args, **fmt_kwargs)


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """A :func:`check` that does nothing except under :func:`checkify`.

    >>> import funcgrad.numpy as jnp
    >>> debug_check(jnp.array(False), "ignored")
    >>> checkify(lambda: debug_check(jnp.array(False), "seen"))()[0].get()
    'seen (`check` failed)'
    """
    _check(pred, msg, True, *fmt_args, **fmt_kwargs)


def check_error(error: Error) -> None:
    """Raise ``error`` (if it holds one) as :func:`check` does: under :func:`checkify` it
    becomes part of the returned error value again.

    >>> err, _ = checkify(lambda: check(jnp.array(False), "no"))()
    >>> checkify(lambda: check_error(err))()[0].get()
    'no (`check` failed)'
    """
    if not isinstance(error, Error):
        raise TypeError("check_error takes an Error as argument, "
                        f"got type {type(error)} instead.")
    check_error_value(error, debug=False)


__all__ = ["BatchedError", "DivisionByZeroError", "Error", "ErrorCategory",
           "FailedCheckError", "JaxRuntimeError", "NaNError", "OOBError", "all_checks",
           "automatic_checks", "check", "check_error", "checkify", "debug_check",
           "div_checks", "float_checks", "index_checks", "init_error", "nan_checks",
           "user_checks"]
