"""``torch.autograd.Function``: operations with a user-written backward, on the one
reverse engine.

``MyOp.apply(*args)`` runs ``forward`` without recording, then records ONE engine node
(of the ``custom_vjp_call`` primitive, the JAX face's custom-rule primitive) whose
backward closure calls ``MyOp.backward(ctx, *grad_outputs)``; ``backward()``,
``autograd.grad``, hooks and ``create_graph`` then treat it as any other node. Its
``grad_fn`` is named ``MyOpBackward``, as in PyTorch.

>>> import funcgrad.torch as torch
>>> class Cube(torch.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x ** 3
...     @staticmethod
...     def backward(ctx, g):
...         (x,) = ctx.saved_tensors
...         return g * 3 * x ** 2
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> y = Cube.apply(x)
>>> y
tensor([1., 8.], grad_fn=<CubeBackward>)
>>> y.sum().backward(); x.grad
tensor([ 3., 12.])
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

from funcgrad.core import current_trace
from funcgrad.ir import NamedFn
from funcgrad.torch import _anomaly, _saved_hooks
from funcgrad.torch._grad_mode import is_grad_enabled, no_grad
from funcgrad.torch._graph import FREED, GradFn, TapeTrace, torch_ct, value_of
from funcgrad.torch._saved_hooks import run_pack, run_unpack
from funcgrad.torch._tensor import Tensor
from funcgrad.transforms.custom import custom_vjp_call_p
from funcgrad.transforms.reverse import record

__all__ = ["Function", "FunctionCtx", "InplaceFunction", "NestedIOFunction",
           "once_differentiable"]

# What ``ctx._saved`` holds for a tensor sent through a pack hook (the tensor is not kept).
_PACKED = object()

_ONCE = ("trying to differentiate twice a function that was marked with "
         "@once_differentiable")


class FunctionCtx:
    """The ``ctx`` of a custom Function: what ``forward`` hands to ``backward``."""

    def __init__(self) -> None:
        self._saved: tuple[Any, ...] = ()  # Tensors, None, or _PACKED
        self._saved_versions: tuple[int, ...] = ()
        self._dirty: tuple[Tensor, ...] = ()
        self._non_differentiable: tuple[Tensor, ...] = ()
        self._materialize_grads = True
        self._released = False
        self._node: FunctionNode | None = None
        self.needs_input_grad: tuple[bool, ...] = ()
        self.to_save: tuple[Any, ...] = ()
        # What saved_tensors_hooks' pack_hook gave for each saved tensor, and the unpack
        # hook (set when the call is recorded under the hooks).
        self._packed: tuple[Any, ...] = ()
        self._unpack: Any = None
        # save_for_forward's tensors, which saved_tensors gives while jvp runs
        self.saved_for_forward: tuple[Tensor | None, ...] = ()
        self._in_jvp = False

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for ``backward`` (read back as ``ctx.saved_tensors``); changing
        one in place before ``backward`` is an error there."""
        for k, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{k} is of type {type(t).__name__}")
        self._saved = tuple(tensors)
        self._saved_versions = tuple(t._vc[0] if t is not None else 0 for t in tensors)
        self.to_save = self._saved

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for ``jvp`` (read back as ``ctx.saved_tensors`` there)."""
        if not all(t is None or isinstance(t, Tensor) for t in tensors):
            raise AssertionError("save_for_forward expects all arguments to be tensors; you "
                                 "should save non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        if self._in_jvp:
            return self.saved_for_forward
        node = self._node
        if self._released or node is not None and node.freed:
            raise RuntimeError(FREED)
        if self._unpack is not None:
            # (PyTorch checks no version of a packed tensor: backward reads what unpack gives.)
            return tuple(None if p is None else run_unpack(self._unpack, p[0], Tensor)
                         for p in self._packed)
        for i, (t, v) in enumerate(zip(self._saved, self._saved_versions)):
            if t is not None and t._vc[0] != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: [{_describe(t)}], which is output {i} of "
                    f"{node.name() if node else 'the function'}, is at version "
                    f"{t._vc[0]}; expected version {v} instead. Hint: the backtrace further "
                    "above shows the operation that failed to compute its gradient. The "
                    "variable in question was changed in there or anywhere later. Good luck!")
        return self._saved

    saved_variables = saved_tensors

    def mark_dirty(self, *args: Tensor) -> None:
        """Say that ``forward`` modified these inputs in place (and returns them)."""
        self._dirty = args

    def mark_non_differentiable(self, *args: Tensor) -> None:
        """Say that these outputs have no gradient (integer indices, masks...)."""
        self._non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` gets zeros (default) or ``None`` for unused outputs."""
        self._materialize_grads = bool(value)


def _class_repr(cls: type) -> str:
    return f"<class '{cls.__module__}.{cls.__qualname__}'>"


def _describe(t: Tensor) -> str:
    kind = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
            "int32": "Int", "bool": "Bool"}.get(t.dtype.name, t.dtype.name)
    return f"torch.{kind}Tensor [{', '.join(str(s) for s in t.shape)}]"


class FunctionNode(GradFn):
    """The graph node of one custom Function call (``grad_fn`` of its outputs)."""

    __slots__ = ("ctx", "fn_name")
    ctx: FunctionCtx
    fn_name: str

    def name(self) -> str:
        return self.fn_name

    def __repr__(self) -> str:
        # PyTorch's node of a Function is a Python class made in torch.autograd.function.
        return f"<torch.autograd.function.{self.fn_name} object at {id(self):#x}>"

    def release(self) -> None:
        # Only save_for_backward's tensors go with the graph, as in PyTorch: a second
        # backward runs the Function's backward again, and reading ctx.saved_tensors
        # there is the error.
        if self.ctx._saved:
            self.ctx._saved = self.ctx._packed = ()
            self.ctx._released = True


_NODE_CLASSES: dict[type, type] = {}


def _node_class(fn_cls: type) -> type:
    cls = _NODE_CLASSES.get(fn_cls)
    if cls is None:
        cls = _NODE_CLASSES[fn_cls] = type(f"{fn_cls.__name__}Backward", (FunctionNode,),
                                           {"__slots__": ()})
    return cls


def _custom_setup(cls: type) -> bool:
    return cls.__dict__.get("setup_context", None) is not None or any(
        "setup_context" in c.__dict__ for c in cls.__mro__[1:]
        if c not in (Function, _SingleLevel))


class _SingleLevel:
    """Marker base (PyTorch's ``_SingleLevelFunction``): ``setup_context`` is not
    overridden unless a subclass defines it."""


class Function(_SingleLevel):
    """Base class of operations with a custom backward (``torch.autograd.Function``).

    Subclasses define ``forward(ctx, *args)`` (or ``forward(*args)`` plus
    ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grad_outputs)``
    returning one gradient per forward argument (``None`` for non-tensors); call them
    with ``apply``.
    """

    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        import warnings  # noqa: PLC0415

        warnings.warn(f"{_class_repr(type(self))} should not be instantiated. Methods on "
                      "autograd functions are all static, so you should invoke them on the "
                      "class itself. Instantiating an autograd function will raise an error "
                      "in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """Save what ``backward`` needs (when ``forward`` takes no ``ctx``)."""
        return None

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise RuntimeError("You must implement the jvp function for custom autograd.Function "
                           "to use it with forward mode AD.")

    @classmethod
    def vjp(cls, ctx: Any, *grad_outputs: Any) -> Any:
        return cls.backward(ctx, *grad_outputs)

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` and record the call for ``backward``."""
        if "forward" not in dir(cls):
            raise NotImplementedError("You must implement the forward function for custom "
                                      "autograd.Function.")
        setup = _custom_setup(cls)
        if setup:
            # forward's defaults filled in (setup_context sees them in ``inputs``), as PyTorch
            import inspect  # noqa: PLC0415

            forward = cls.forward  # type: ignore[attr-defined]
            bound = inspect.signature(forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        ctx = FunctionCtx()
        grad_on = is_grad_enabled()
        # PyTorch fills this from the inputs alone: it stays True under no_grad.
        # (keyword arguments are inputs too, after the positional ones, as in PyTorch)
        inputs = (*args, *kwargs.values())
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad
                                     for a in inputs)
        mode = _check_func_transforms(cls, setup)
        if mode:
            out = (_apply_by_backward if mode == "reverse" else _apply_by_jvp)(cls, args, kwargs)
            if out is not _NO_RULE:
                return out
        from funcgrad.torch import _dual  # noqa: PLC0415
        from funcgrad.torch.autograd.forward_ad import _plain  # noqa: PLC0415

        dual = bool(_dual.state.tangents) and any(
            isinstance(a, Tensor) and _dual.tangent_of(a) is not None for a in inputs)
        with no_grad(), (_plain if dual else contextlib.nullcontext()):
            # (under forward AD the Function's jvp gives its outputs' tangents)
            if setup:
                output = _forward(cls, args, kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)  # type: ignore[attr-defined]
        if dual:
            _forward_tangents(cls, ctx, inputs, output)
        if not (grad_on and any(ctx.needs_input_grad)):
            return _unrecorded(ctx, inputs, output, view=grad_on)
        return _record(cls, ctx, inputs, output)


def _call_jvp(cls: type, ctx: FunctionCtx, seeds: Sequence[Any], output: Any
              ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The Function's ``jvp`` on the input tangents ``seeds``: the outputs and their
    tangents as tuples, one tangent per output (PyTorch's error otherwise)."""
    ctx._in_jvp = True
    try:
        got = cls.jvp(ctx, *seeds)  # type: ignore[attr-defined]
    finally:
        ctx._in_jvp = False
    outs = output if isinstance(output, tuple) else (output,)
    tangents = got if isinstance(got, tuple) else (got,)
    if len(tangents) != len(outs):
        raise RuntimeError("Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outs)} but got {len(tangents)})")
    return outs, tangents


def _forward_tangents(cls: type, ctx: FunctionCtx, args: tuple[Any, ...], output: Any) -> None:
    """``torch.autograd.forward_ad``: the outputs' tangents from the Function's ``jvp``
    (zeros for tensor inputs without one, None for other arguments), as PyTorch's."""
    from funcgrad.torch import _dual  # noqa: PLC0415
    from funcgrad.torch._creation import zeros_like  # noqa: PLC0415
    from funcgrad.torch.autograd.forward_ad import _plain  # noqa: PLC0415

    if cls.jvp is Function.jvp:  # type: ignore[attr-defined]
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")
    with _plain:
        seeds = [None if not isinstance(a, Tensor) else
                 (_dual.tangent_of(a) if _dual.tangent_of(a) is not None else zeros_like(a))
                 for a in args]
        outs, tangents = _call_jvp(cls, ctx, seeds, output)
    for o, t in zip(outs, tangents):
        if isinstance(o, Tensor) and isinstance(t, Tensor) and (
                o.dtype.is_floating_point or o.dtype.is_complex):
            _dual.check_tangent(o, t)
            _dual.set_tangent(o, t.detach() if t.dtype == o.dtype else t.detach().to(o.dtype))


_EXTENDING_FUNC = "For more details, please see " \
    "https://pytorch.org/docs/main/notes/extending.func.html"


def _check_func_transforms(cls: type, setup: bool) -> str:
    """PyTorch's conditions for a Function called under torch.func transforms: a separate
    ``setup_context``, and under vmap a ``vmap`` staticmethod or ``generate_vmap_rule``.
    "forward" when a forward-mode transform is active (the Function's ``jvp`` then gives
    the derivative, as in PyTorch), "reverse" when only reverse-mode ones are (its
    ``backward`` does), "" otherwise."""
    from funcgrad.torch._grad_mode import FUNCTORCH_DEPTH  # noqa: PLC0415
    from funcgrad.transforms.jvp import JVPTrace  # noqa: PLC0415
    from funcgrad.transforms.vjp import VJPTrace  # noqa: PLC0415
    from funcgrad.transforms.vmap import BatchTrace  # noqa: PLC0415

    if not FUNCTORCH_DEPTH[0]:
        return ""
    active = mapped = forward = reverse = False
    t: Any = current_trace()
    while t is not None:
        if isinstance(t, BatchTrace):
            active = mapped = True
        elif isinstance(t, JVPTrace):
            active = forward = True
        elif isinstance(t, VJPTrace):
            active = reverse = True
        t = t.parent
    if not active:
        return ""
    if forward and cls.jvp is Function.jvp:  # type: ignore[attr-defined]
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")
    if not setup:
        raise RuntimeError(
            "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
            "jacrev, ...), it must override the setup_context staticmethod. "
            + _EXTENDING_FUNC)
    if mapped and cls.generate_vmap_rule and (  # type: ignore[attr-defined]
            getattr(cls, "vmap", None) is not None):
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True "
            "and an overridden vmap staticmethod. Please set generate_vmap_rule=False or "
            "delete the overridden vmap staticmethod to avoid ambiguity. " + _EXTENDING_FUNC)
    if mapped and not cls.generate_vmap_rule and (  # type: ignore[attr-defined]
            getattr(cls, "vmap", None) is None):
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. "
            "Please override and implement the vmap staticmethod or set "
            "generate_vmap_rule=True. " + _EXTENDING_FUNC)
    return "forward" if forward else "reverse" if reverse else ""


_NO_RULE = object()

# The randomness of each vmap running (innermost last): a vmap staticmethod's info says it.
VMAP_RANDOMNESS: list[str] = []


class VmapInfo(NamedTuple):
    """What a Function's ``vmap`` staticmethod is told of the vmap calling it."""

    batch_size: int
    randomness: str


def _own_vmap_rule(cls: type) -> bool:
    return not cls.generate_vmap_rule and (  # type: ignore[attr-defined]
        getattr(cls, "vmap", None) is not None)


def _forward(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``cls.forward(*args)``; under vmap, a Function with its own ``vmap`` staticmethod
    runs that instead (as PyTorch's), on the batched tensors with their batch dimensions."""
    from funcgrad.transforms.vmap import BatchTrace  # noqa: PLC0415

    # (also in a backward pass the engine runs batched, outside the transform's call)
    if _own_vmap_rule(cls):
        t: Any = current_trace()
        while t is not None and not isinstance(t, BatchTrace):
            t = t.parent
        if t is not None:
            return _forward_by_vmap_rule(cls, args, kwargs, t)
    return cls.forward(*args, **kwargs)  # type: ignore[attr-defined]


def _forward_by_vmap_rule(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any],
                          trace: Any) -> Any:
    """The call as the engine's ``custom_vmap_call``: the vmap it meets (``trace``) calls
    the user's ``vmap(info, in_dims, *args)`` on the batched tensors, each with its batch
    dimension where it is (a level with nothing batched runs ``forward``)."""
    from funcgrad.custom_batching import custom_vmap_call_p  # noqa: PLC0415
    from funcgrad.torch._engine_values import tensors as _tensors  # noqa: PLC0415
    from funcgrad.torch._engine_values import values as _values  # noqa: PLC0415
    from funcgrad.transforms.vmap import BatchTracer  # noqa: PLC0415

    pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    vals0 = [_values(args[i]) for i in pos]
    where = [v.bdim if isinstance(v, BatchTracer) and v._trace is trace else 0 for v in vals0]
    single: list[bool] = []

    def with_values(vals: Sequence[Any], batched: Sequence[bool] = ()) -> list[Any]:
        now = list(args)
        for k, (i, v) in enumerate(zip(pos, vals)):
            now[i] = _tensors(v)
            if batched and batched[k] and where[k]:
                # (the engine's rule has the batch dimension first: put it back)
                now[i] = now[i].movedim(0, where[k])
        return now

    def flat(out: Any) -> list[Any]:
        single[:] = [not isinstance(out, tuple)]
        return [_values(o) for o in (out if isinstance(out, tuple) else (out,))]

    def body(*vals: Any) -> list[Any]:
        return flat(cls.forward(*with_values(vals), **kwargs))  # type: ignore[attr-defined]

    def rule(size: int, in_batched: Sequence[bool], vals: Sequence[Any]
             ) -> tuple[list[Any], list[bool]]:
        from funcgrad.torch._graph import TapeTracer  # noqa: PLC0415

        if any(type(v) is TapeTracer and v.edge is not None for v in vals):
            # (its outputs would leave the outer graph: refused rather than detached)
            raise NotImplementedError(
                f"vmap over {cls.__name__}, a Function with a vmap staticmethod, of tensors "
                "that require grad outside the vmap is not supported by funcgrad (its result "
                "would not be differentiable): detach the inputs, or use torch.func.grad/vjp "
                "inside the vmap (see docs/sharp_bits.md)")
        in_dims: list[int | None] = [None] * len(args)
        for i, b, d in zip(pos, in_batched, where):
            in_dims[i] = d if b else None
        info = VmapInfo(size, VMAP_RANDOMNESS[-1] if VMAP_RANDOMNESS else "error")
        res = cls.vmap(info, tuple(in_dims),  # type: ignore[attr-defined]
                       *with_values(vals, in_batched), **kwargs)
        if not (isinstance(res, tuple) and len(res) == 2):
            kind = "<class 'torch.Tensor'>" if isinstance(res, Tensor) else str(type(res))
            raise RuntimeError("Expected the vmap staticmethod to have two returns, an output "
                               "and out_dims with pytree structure compatible with the "
                               f"output. Got a {kind} instead")
        out, out_dims = res
        outs = out if isinstance(out, tuple) else (out,)
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(outs)
        if len(dims) != len(outs):
            raise RuntimeError("Expected the vmap staticmethod to have two returns, an output "
                               "and out_dims with pytree structure compatible with the "
                               f"output. Got out_dims {out_dims} for {len(outs)} outputs")
        values = flat(out)
        moved = [v if d is None or d == 0 else _values(_tensors(v).movedim(d, 0))
                 for v, d in zip(values, dims)]
        return moved, [d is not None for d in dims]

    outs = custom_vmap_call_p.bind(*vals0, fun=NamedFn(body, cls.__name__), rule=rule)
    res = tuple(_tensors(o) for o in outs)
    return res[0] if single and single[0] else res


def _apply_by_backward(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``cls.apply`` under torch.func's reverse-mode transforms: an engine custom_vjp whose
    rule is the Function's ``backward`` (``_NO_RULE`` for outputs other than Tensors)."""
    from funcgrad.torch._engine_values import tensors as _tensors  # noqa: PLC0415
    from funcgrad.torch._engine_values import values as _values  # noqa: PLC0415
    from funcgrad.transforms.custom import custom_vjp  # noqa: PLC0415

    staged = _StagedForward(cls, args, kwargs)
    pos, single, call, flat, fun = staged.pos, staged.single, staged.call, staged.flat, \
        staged.fun
    if not pos:
        return _NO_RULE

    def fwd(*vals: Any) -> tuple[tuple[Any, ...], Any]:
        now, out = call(vals)
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(i in pos for i in range(len(args)))
        cls.setup_context(ctx, tuple(now), out)  # type: ignore[attr-defined]
        # (the context is a Python object: kept by the closure, not as a residual array)
        kept.append(ctx)
        return flat(out), None

    def bwd(res: Any, cts: tuple[Any, ...]) -> tuple[Any, ...]:
        ctx = kept[0]
        grads = cls.backward(ctx, *(_tensors(c) for c in cts))  # type: ignore[attr-defined]
        grads = grads if isinstance(grads, tuple) else (grads,)
        return tuple(None if grads[i] is None else _values(grads[i]) for i in pos)

    kept: list[FunctionCtx] = []
    rule = custom_vjp(fun)
    rule.defvjp(fwd, bwd)
    try:
        outs = rule(*(_values(args[i]) for i in pos))
    except _Unsupported:
        return _NO_RULE
    res = tuple(_tensors(o) for o in outs)
    return res[0] if single and single[0] else res


def _apply_by_jvp(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``cls.apply`` under torch.func's forward-mode transforms: an engine custom_jvp whose
    rule is the Function's ``jvp`` (``_NO_RULE`` for outputs other than Tensors)."""
    from funcgrad.torch._creation import zeros_like  # noqa: PLC0415
    from funcgrad.torch._engine_values import tensors as _tensors  # noqa: PLC0415
    from funcgrad.torch._engine_values import values as _values  # noqa: PLC0415
    from funcgrad.transforms.custom import custom_jvp  # noqa: PLC0415

    staged = _StagedForward(cls, args, kwargs)
    pos, single, flat, fun = staged.pos, staged.single, staged.flat, staged.fun
    if not pos:
        return _NO_RULE

    def rule(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
        now = list(args)
        for i, v in zip(pos, primals):
            now[i] = _tensors(v)
        # (the outputs through the Function again, so that enclosing transforms see them
        # depend on the inputs: jacfwd(jacrev(f)) differentiates what jvp reads)
        outs_now = tuple(_tensors(o) for o in cj(*primals))
        out = outs_now[0] if single and single[0] else outs_now
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(i in pos for i in range(len(args)))
        cls.setup_context(ctx, tuple(now), out)  # type: ignore[attr-defined]
        seeds: list[Any] = [None if not isinstance(a, Tensor) else zeros_like(a) for a in now]
        for i, t in zip(pos, tangents):
            seeds[i] = _tensors(t)
        outs, got = _call_jvp(cls, ctx, seeds, out)
        return flat(out), tuple(_values(zeros_like(o) if t is None else t.to(o.dtype))
                                for o, t in zip(outs, got))

    cj = custom_jvp(fun)
    cj.defjvp(rule)
    try:
        outs = cj(*(_values(args[i]) for i in pos))
    except _Unsupported:
        return _NO_RULE
    res = tuple(_tensors(o) for o in outs)
    return res[0] if single and single[0] else res


class _StagedForward:
    """A Function's forward as a function of the engine values of its floating-point
    Tensor arguments (at ``pos``), for the engine's custom rules: ``call`` runs it (under
    no_grad, as PyTorch runs forward), ``flat`` turns its outputs into values (``single``:
    whether forward returned one Tensor), ``fun`` is both."""

    def __init__(self, cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.cls, self.args, self.kwargs = cls, args, kwargs
        self.pos = [i for i, a in enumerate(args) if isinstance(a, Tensor) and (
            a.dtype.is_floating_point or a.dtype.is_complex)]
        self.single: list[bool] = []

    def call(self, vals: Sequence[Any]) -> tuple[list[Any], Any]:
        from funcgrad.torch._engine_values import tensors as _tensors  # noqa: PLC0415

        now = list(self.args)
        for i, v in zip(self.pos, vals):
            now[i] = _tensors(v)
        with no_grad():
            out = _forward(self.cls, tuple(now), self.kwargs)
        return now, out

    def flat(self, out: Any) -> tuple[Any, ...]:
        from funcgrad.torch._engine_values import values as _values  # noqa: PLC0415

        outs = out if isinstance(out, tuple) else (out,)
        self.single[:] = [not isinstance(out, tuple)]
        if not all(isinstance(o, Tensor) for o in outs):
            raise _Unsupported
        return tuple(_values(o) for o in outs)

    def fun(self, *vals: Any) -> tuple[Any, ...]:
        return self.flat(self.call(vals)[1])


class _Unsupported(Exception):
    """A Function whose outputs the engine's custom_vjp cannot carry."""


class InplaceFunction(Function):
    """PyTorch's base for Functions with an ``inplace`` flag."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


NestedIOFunction = Function


def _alias(t: Tensor, view: bool) -> Tensor:
    """A new tensor on ``t``'s memory, sharing its version counter: PyTorch's output for an
    input a Function returns as it is (a view of it when ``view``, as with grad mode on)."""
    out = Tensor._from_data(t._data)
    out._vc, out._inference = t._vc, t._inference
    if view:
        out._view_flag = True
        out._view_base = t._view_base if t._view_flag and t._view_base is not None else t
    return out


def _unrecorded(ctx: FunctionCtx, args: tuple[Any, ...], output: Any, view: bool) -> Any:
    """``output`` of a call not recorded, each input returned as it is (not marked dirty)
    replaced by an alias of it."""
    single = not isinstance(output, tuple)
    outs = [output] if single else list(output)
    arg_ids = {id(a) for a in args if isinstance(a, Tensor)}
    dirty = {id(t) for t in ctx._dirty}
    if not any(isinstance(o, Tensor) and id(o) in arg_ids and id(o) not in dirty
               for o in outs):
        return output
    res = [_alias(o, view) if isinstance(o, Tensor) and id(o) in arg_ids and
           id(o) not in dirty else o for o in outs]
    return res[0] if single else tuple(res)


def _record(cls: type, ctx: FunctionCtx, args: tuple[Any, ...], output: Any) -> Any:
    single = not isinstance(output, tuple)
    outs = [output] if single else list(output)
    tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    inputs = [cast(Tensor, args[i]) for i in tensor_pos]
    primals = [value_of(t._data) for t in inputs]
    parents = [t._edge() if t.requires_grad else None for t in inputs]
    dirty = {id(t) for t in ctx._dirty}
    non_diff = {id(t) for t in ctx._non_differentiable}
    arg_ids = {id(a) for a in inputs}
    results: list[Any] = []
    out_positions: list[int] = []
    out_values: list[Any] = []
    aliased: list[int] = []  # the outputs that alias an input
    bases = arg_ids | {id(a._view_base) for a in inputs if a._view_flag}
    for k, o in enumerate(outs):
        if not isinstance(o, Tensor):
            results.append(o)
            continue
        if id(o) in arg_ids and id(o) not in dirty:
            # An input returned as it is: a new tensor on the same memory (PyTorch's view).
            o = _alias(o, view=True)
            aliased.append(k)
        elif o._view_flag and id(o) not in dirty and id(o._view_base) in bases:
            aliased.append(k)  # a view of an input made in forward
        elif id(o) in dirty:
            if o.is_leaf and o.requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
            o._vc[0] += 1
        results.append(o)
        out_positions.append(k)
        out_values.append(value_of(o._data))
    returned = {id(o) for o in outs}
    if any(id(t) not in returned for t in ctx._dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not "
                           "returned as output. The inputs that are modified inplace must all "
                           "be outputs of the Function.")
    if not out_values:
        return output
    node_ref: list[FunctionNode] = []

    def backward(cts: Sequence[Any]) -> list[Any]:
        return _run_backward(cls, ctx, node_ref[0], cts, outs, out_positions, len(args),
                             tensor_pos, inputs)

    node = cast(FunctionNode, record(custom_vjp_call_p, {}, primals, out_values, parents,
                                     backward, node_type=_node_class(cls)))
    node.ctx = ctx
    node.fn_name = f"{cls.__name__}Backward"
    node_ref.append(node)
    if _anomaly.state.enabled:
        _anomaly.record(node)
    ctx._node = node
    hooks = _saved_hooks.active()
    if hooks is not None and ctx._saved:
        # (One-element tuples: a pack hook may return None for a tensor.)
        ctx._packed = tuple(None if t is None else (run_pack(hooks, t),) for t in ctx._saved)
        ctx._unpack = hooks[1]
        ctx._saved = tuple(None if t is None else _PACKED for t in ctx._saved)
    for j, k in enumerate(out_positions):
        t = results[k]
        if id(outs[k]) in non_diff or not (t.dtype.is_floating_point or t.dtype.is_complex):
            continue
        t.grad_fn = node
        t._out_index = j
        t._requires_grad = True
        if k in aliased:
            t._function_view = j  # PyTorch's view made in a custom Function
    return results[0] if single else tuple(results)


def _run_backward(cls: type, ctx: FunctionCtx, node: FunctionNode, cts: Sequence[Any],
                  outs: list[Any], out_positions: list[int], n_args: int,
                  tensor_pos: list[int], inputs: list[Tensor]) -> list[Any]:
    tape = current_trace()
    recording = isinstance(tape, TapeTrace) and tape.recording
    grads: list[Any] = []
    j = 0
    for k, o in enumerate(outs):
        if k in out_positions:
            ct = cts[j]
            j += 1
            if ct is None:
                g = _zeros_for(o) if ctx._materialize_grads else None
            else:
                # (backward sees PyTorch's gradients, not the engine's: _graph.torch_ct)
                g = Tensor._wrap_grad(torch_ct(ct), detach=not recording)
            grads.append(g)
        else:
            grads.append(None)
    result = cls.backward(ctx, *grads)  # type: ignore[attr-defined]
    if not isinstance(result, tuple):
        result = (result,)
    name = node.name()
    if len(result) != n_args:
        if len(result) > n_args and all(r is None for r in result[n_args:]):
            result = result[:n_args]
        else:
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {n_args}, got {len(result)})")
    for i, g in enumerate(result):
        if g is not None and i not in tensor_pos:
            raise RuntimeError(f"function {name} returned a gradient different than None at "
                               f"position {i + 1}, but the corresponding forward input was not "
                               "a Variable")
    in_cts: list[Any] = []
    for i, t in zip(tensor_pos, inputs):
        g = result[i]
        if g is None:
            in_cts.append(None)
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"function {name} returned a gradient different than None at "
                            f"position {i + 1}, but the corresponding forward input was not a "
                            "Variable")
        if tuple(g.shape) != tuple(t.shape):
            if _broadcastable(tuple(t.shape), tuple(g.shape)):
                g = _sum_to(g, tuple(t.shape))
            else:
                raise RuntimeError(f"Function {name} returned an invalid gradient at index {i} "
                                   f"- got {list(g.shape)} but expected shape compatible with "
                                   f"{list(t.shape)}")
        value = g._value_for_backward()
        if recording and g.requires_grad:
            value = cast(TapeTrace, tape).lift(value, g._edge())
        in_cts.append(torch_ct(value))
    return in_cts


def _broadcastable(target: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    if len(shape) < len(target):
        return False
    for a, b in zip(reversed(target), reversed(shape)):
        if a not in (b, 1):
            return False
    return True


def _sum_to(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``g`` summed down to ``shape`` (which broadcasts to ``g``'s shape)."""
    lead = g.dim() - len(shape)
    if lead:
        g = g.sum(tuple(range(lead)))
    dims = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    if dims:
        g = g.sum(dims, keepdim=True)
    return g


def _zeros_for(t: Tensor) -> Tensor:
    from funcgrad.torch._creation import zeros_like  # noqa: PLC0415

    return zeros_like(t)


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a ``backward`` as not itself differentiable: it runs without recording, and
    differentiating its result (``create_graph=True``) raises PyTorch's error.

    >>> import funcgrad.torch as torch
    >>> class Twice(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x * 2
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, g):
    ...         return g * 2
    >>> x = torch.ones(1, requires_grad=True)
    >>> torch.autograd.grad(Twice.apply(x).sum(), x)
    (tensor([2.]),)
    """

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not is_grad_enabled() or not any(
                isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        # create_graph=True: results exist, but their own gradient is an error.
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        deps = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        wrapped = tuple(_OnceBackward.apply(o, *deps) if isinstance(o, Tensor) else o
                        for o in outs)
        return wrapped[0] if single else wrapped

    return wrapper


class _OnceBackward(Function):
    """Passes a value through; differentiating it raises PyTorch's once_differentiable
    error."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, *deps: Tensor) -> Tensor:
        return x.clone()

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> Any:
        raise RuntimeError(_ONCE)
