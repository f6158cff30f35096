"""Fusion planning: group a jaxpr's elementwise equations into kernels.

The plan is a list of steps in program order. A ``FusedStep`` is a maximal run
of elementwise equations with one iteration shape (operands may broadcast into
it), optionally ending in a sum/max/min reduction that consumes the run (an
elementwise prologue fused into the reduction). Every other equation is a
``CallStep`` that runs the primitive's ``impl`` (``dot_general`` goes to the
array module's matmul, i.e. cuBLAS on CuPy).

The plan can be evaluated with NumPy (``run_plan_numpy``), which checks its
grouping and data flow on any machine.

>>> import numpy as np
>>> import funcgrad as fg
>>> cj = fg.make_jaxpr(lambda x: fg.numpy.sum(fg.numpy.exp(x) * 2.0 + x))(np.ones(4))
>>> [s.kind for s in plan_jaxpr(cj).steps]
['reduce']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from funcgrad.ir import Atom, ClosedJaxpr, Eqn, Literal, Var, live_equations, use_counts


@dataclass
class FusedStep:
    """One generated kernel: ``eqns`` over ``shape``, reading ``inputs``, writing ``outputs``.

    ``broadcasts`` maps a broadcast_in_dim output to (operand, broadcast_dimensions):
    the kernel reads the operand with stride 0 along the new axes instead of
    materialising the broadcast.
    """

    eqns: list[Eqn]
    shape: tuple[int, ...]
    inputs: list[Var] = field(default_factory=list)
    outputs: list[Var] = field(default_factory=list)
    broadcasts: dict[Var, tuple[Atom, tuple[int, ...]]] = field(default_factory=dict)
    reduction: Eqn | None = None
    # Values of rank 0 computed inside this kernel for its own use (recomputed per element
    # instead of a launch of their own); never written out by it.
    inlined: set[Var] = field(default_factory=set)

    @property
    def kind(self) -> str:
        return "reduce" if self.reduction is not None else "elementwise"


@dataclass
class CallStep:
    eqn: Eqn
    kind: str = "call"


@dataclass
class Plan:
    jaxpr: ClosedJaxpr
    steps: list[FusedStep | CallStep]


HALF_FLOATS = ("float16", "bfloat16")


def kernel_dtype(dtype: Any, kinds: str = "biuf", half: bool = True) -> bool:
    """Whether generated kernels handle ``dtype``: bool, integers, float32 and float64, and
    with ``half`` float16 and bfloat16 (CUDA kernels compute them in float and round each
    result, as NumPy does). Complex runs as calls to the array module."""
    if dtype.name in HALF_FLOATS:
        return half and "f" in kinds
    return bool(dtype.kind in kinds and not (dtype.kind == "f" and dtype.itemsize < 4))


def _is_fusable(eqn: Eqn, half: bool = True) -> bool:
    """An elementwise primitive (its definition gives a CUDA expression) on kernel dtypes."""
    if eqn.primitive.fusion != "elementwise":
        return False
    return all(kernel_dtype(a.aval.dtype, half=half) for a in (*eqn.inputs, *eqn.outputs))


def plan_jaxpr(closed: ClosedJaxpr, fusable: Callable[[Eqn], bool] | None = None) -> Plan:
    """Group the live equations of ``closed`` into kernels and calls.

    ``fusable(eqn)`` narrows which elementwise and reduction equations a backend can put
    in a kernel (the CPU's numba kernels need the primitive's ``py_scalar``); by default,
    every one whose definition gives a CUDA expression. Half-precision equations join
    kernels only in that default (CUDA) plan."""
    cuda = fusable is None  # half precision and pending rank-0 values: CUDA plans only
    is_fusable = _is_fusable if fusable is None else \
        (lambda e: _is_fusable(e, half=False) and fusable(e))
    fuses_reduction = (lambda e: True) if fusable is None else fusable
    jaxpr = closed.jaxpr
    eqns = live_equations(jaxpr)
    uses = use_counts(eqns, jaxpr.outvars)
    steps: list[FusedStep | CallStep] = []
    # Open kernels by iteration shape; a kernel is emitted (runs) when it is closed.
    # Closing happens just before the first step that needs one of its values, so an
    # unrelated equation of another shape in between does not split a region.
    open_groups: dict[tuple[int, ...], FusedStep] = {}
    producer: dict[Var, FusedStep] = {}
    outvars = set(jaxpr.outvars)

    def close(group: FusedStep) -> None:
        if open_groups.get(group.shape) is group:
            del open_groups[group.shape]
            _finish(group, uses, outvars)
            steps.append(group)

    def close_producers(eqn: Eqn, keep: FusedStep | None = None) -> None:
        for a in eqn.inputs:
            g = producer.get(a) if isinstance(a, Var) else None
            if g is not None and g is not keep:
                close(g)

    # CUDA plans keep rank-0 elementwise equations (a Python scalar's conversion, a
    # learning rate times a constant) pending: each kernel that uses one computes it
    # (``inline``); only other uses give it a kernel of its own (``materialise``).
    pending: dict[Atom, Eqn] = {}
    position = {id(e): i for i, e in enumerate(eqns)}

    def needed(a: Atom, skip: set[Var]) -> list[Eqn]:
        """The pending equations ``a`` needs, in program order (no recursion: a nested
        function that calls itself is a reference cycle, garbage on every compile)."""
        found: dict[int, Eqn] = {}
        stack = [a]
        while stack:
            e = pending.get(stack.pop())
            if e is not None and e.outputs[0] not in skip and id(e) not in found:
                found[id(e)] = e
                stack.extend(e.inputs)
        return sorted(found.values(), key=lambda e: position[id(e)])

    def inline(group: FusedStep, a: Atom) -> None:
        for e in needed(a, group.inlined):
            close_producers(e, keep=group)
            group.eqns.append(e)
            group.inlined.update(e.outputs)

    def materialise(a: Atom) -> None:
        for e in needed(a, set()):
            del pending[e.outputs[0]]
            join(e, ())

    def join(eqn: Eqn, shape: tuple[int, ...]) -> FusedStep:
        group = open_groups.get(shape)
        close_producers(eqn, keep=group)
        if group is None:
            group = open_groups[shape] = FusedStep([], shape)
        for a in eqn.inputs:
            inline(group, a)
        group.eqns.append(eqn)
        for v in eqn.outputs:
            producer[v] = group
        return group

    for eqn in eqns:
        fusion = eqn.primitive.fusion
        out_shape = eqn.outputs[0].aval.shape if eqn.outputs else ()
        if cuda and is_fusable(eqn) and not out_shape and \
                all(not a.aval.shape for a in eqn.inputs):
            pending[eqn.outputs[0]] = eqn
            continue
        if fusion == "broadcast" and kernel_dtype(eqn.inputs[0].aval.dtype, half=cuda):
            # Folded into the reads of the kernel that consumes it.
            group = join(eqn, out_shape)
            group.broadcasts[eqn.outputs[0]] = (eqn.inputs[0],
                                                tuple(eqn.params["broadcast_dimensions"]))
            continue
        if is_fusable(eqn):
            join(eqn, out_shape)
            continue
        for a in eqn.inputs:
            materialise(a)
        x = eqn.inputs[0] if eqn.inputs else None
        g = producer.get(x) if isinstance(x, Var) else None
        if fusion == "reduction" and g is not None and open_groups.get(g.shape) is g and \
                fuses_reduction(eqn) and _can_fuse_reduction(g, eqn, uses, cuda):
            close_producers(eqn, keep=g)
            g.reduction = eqn
            close(g)
            continue
        close_producers(eqn)
        if fusion == "reduction" and \
                kernel_dtype(eqn.inputs[0].aval.dtype, "iuf", half=cuda) and fuses_reduction(eqn):
            steps.append(_standalone_reduction(eqn, uses, outvars))
            continue
        steps.append(CallStep(eqn))
    for a in jaxpr.outvars:
        materialise(a)
    for group in list(open_groups.values()):
        close(group)
    return Plan(closed, steps)


def _standalone_reduction(eqn: Eqn, uses: dict[Var, int], outvars: set[Any]) -> FusedStep:
    group = FusedStep([], eqn.inputs[0].aval.shape, reduction=eqn)
    _finish(group, uses, outvars)
    return group


def _can_fuse_reduction(group: FusedStep, eqn: Eqn, uses: dict[Var, int],
                        half: bool) -> bool:
    """A reduction absorbs the kernel when the kernel's only result is what it reduces."""
    x = eqn.inputs[0]
    if not isinstance(x, Var) or x.aval.shape != group.shape or \
            not kernel_dtype(x.aval.dtype, "iuf", half=half):
        return False
    if not any(x in e.outputs for e in group.eqns) or uses.get(x, 0) != 1:
        return False
    inner: dict[Var, int] = {}
    for e in group.eqns:
        for a in e.inputs:
            if isinstance(a, Var):
                inner[a] = inner.get(a, 0) + 1
    produced = [v for e in group.eqns for v in e.outputs if v is not x and
                v not in group.inlined]
    return all(uses.get(v, 0) == inner.get(v, 0) for v in produced)


def _finish(group: FusedStep, uses: dict[Var, int], outvars: set[Any]) -> None:
    """Work out a group's external inputs and the values it must write."""
    produced: set[Var] = set()
    inputs: list[Var] = []
    inner_uses: dict[Var, int] = {}
    members = list(group.eqns) + ([group.reduction] if group.reduction is not None else [])
    for e in members:
        for a in e.inputs:
            if isinstance(a, Var):
                if a not in produced and a not in inputs:
                    inputs.append(a)
                inner_uses[a] = inner_uses.get(a, 0) + 1
        produced.update(e.outputs)
    # A broadcast's operand is what the kernel reads; the broadcast itself is internal.
    for operand, _ in group.broadcasts.values():
        if isinstance(operand, Var) and operand not in produced and operand not in inputs:
            inputs.append(operand)
    group.inputs = [v for v in inputs if v not in group.broadcasts]
    if group.reduction is not None:
        group.outputs = [group.reduction.outputs[0]]
        return
    group.outputs = [v for e in group.eqns for v in e.outputs
                     if v not in group.broadcasts and v not in group.inlined and
                     (uses.get(v, 0) > inner_uses.get(v, 0) or v in outvars)]
    # Broadcasts used outside the kernel are materialised by it as well.
    group.outputs += [v for v in group.broadcasts
                      if uses.get(v, 0) > inner_uses.get(v, 0) or v in outvars]


def run_plan_numpy(plan: Plan, *args: Any) -> list[Any]:
    """Evaluate a plan step by step with NumPy: the CPU check of fusion planning."""
    import numpy as np  # noqa: PLC0415

    jaxpr = plan.jaxpr.jaxpr
    env: dict[Var, Any] = dict(zip(jaxpr.constvars, plan.jaxpr.consts))
    env.update(zip(jaxpr.invars, args))

    def read(a: Atom, scope: dict[Var, Any]) -> Any:
        return a.val if isinstance(a, Literal) else scope[a]

    for step in plan.steps:
        if isinstance(step, CallStep):
            e = step.eqn
            if getattr(e.primitive, "places_result", False):  # device_put: one program, one device
                env[e.outputs[0]] = read(e.inputs[0], env)
                continue
            out = e.primitive.impl(np, *[read(a, env) for a in e.inputs], **e.params)
            outs = out if e.primitive.multiple_results else [out]
            env.update(zip(e.outputs, (np.asarray(o) for o in outs)))
            continue
        # A kernel sees only its inputs; everything else is computed inside it.
        local: dict[Var, Any] = {v: env[v] for v in step.inputs}
        members = list(step.eqns) + ([step.reduction] if step.reduction is not None else [])
        for e in members:
            out = e.primitive.impl(np, *[read(a, local) for a in e.inputs], **e.params)
            local[e.outputs[0]] = np.asarray(out).astype(e.outputs[0].aval.dtype)
        for v in step.outputs:
            env[v] = local[v]
    return [read(a, env) for a in jaxpr.outvars]


__all__ = ["CallStep", "FusedStep", "Plan", "plan_jaxpr", "run_plan_numpy"]


