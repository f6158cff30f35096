"""The CuPy backend (NVIDIA GPUs): array module, placement, and the fused-kernel compiler.

``compile`` plans the jaxpr (``backends.fusion``), generates one CUDA kernel per
fused region (``backends.cuda_codegen``), sends ``dot_general`` and the other
structural equations to CuPy (cuBLAS for products), and caches compiled
kernels by their source. CuPy is optional (``pip install funcgrad[cuda]``);
without it, or without a device, ``available()`` is False.

>>> import numpy as np
>>> import funcgrad as fg
>>> prog = build_program(fg.make_jaxpr(lambda x: fg.numpy.sum(fg.numpy.exp(x)))(np.ones(8)))
>>> [k["kind"] for k in prog.kernels()]
['reduce']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.backends.compile_python import inline_calls
from funcgrad.backends.cuda_codegen import KERNEL_OPTIONS, Kernel, kernel_source
from funcgrad.backends.cuda_launch import plan_launches
from funcgrad.backends.fusion import CallStep, Plan, plan_jaxpr
from funcgrad.devices import Backend, Device
from funcgrad.errors import BackendError
from funcgrad.ir import ClosedJaxpr, Literal, Var


def _cupy() -> Any:
    try:
        import cupy  # noqa: PLC0415
    except ImportError as e:
        raise BackendError(
            "the cupy backend needs CuPy: pip install 'funcgrad[cuda]' on a machine with an "
            f"NVIDIA GPU ({e})"
        ) from None
    return cupy


class Program:
    """A planned jaxpr: kernels and calls in order. ``run`` executes it on an array module."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.steps: list[Kernel | CallStep] = []
        # Constants and literals uploaded once per array module, not on every call.
        self._device_values: dict[tuple[int, int], Any] = {}
        # Bodies, branches and nested calls (see ``child``), by jaxpr, with where they are.
        self._children: dict[int, tuple[ClosedJaxpr, Program, str]] = {}
        for i, step in enumerate(plan.steps):
            if isinstance(step, CallStep) and step.eqn.primitive.lowering is not None and \
                    not step.eqn.primitive.lowering(**step.eqn.params):
                continue
            self.steps.append(step if isinstance(step, CallStep)
                              else kernel_source(step, f"fg_kernel_{i}"))
            if isinstance(step, CallStep) and step.eqn.primitive.name in _STRUCTURED:
                for label, closed in _bodies(step.eqn):
                    self.child(closed, f"step {i}: {label}")
        # One kernel taking the inputs in order and giving the outputs: a call is that
        # kernel's launch, without the general walk over the steps (the dispatch cost of a
        # small jitted function).
        jaxpr = plan.jaxpr.jaxpr
        only = self.steps[0] if len(self.steps) == 1 else None
        self._single: Kernel | None = only if (
            isinstance(only, Kernel) and not jaxpr.constvars
            and list(only.inputs) == list(jaxpr.invars)
            and list(only.outputs) == list(jaxpr.outvars)) else None

    def kernels(self) -> list[dict[str, Any]]:
        """The fusion plan: one entry per generated kernel, with its CUDA source; the
        kernels of loop bodies and branches follow, each with ``body`` saying whose."""
        out = [s.describe() for s in self.steps if isinstance(s, Kernel)]
        for _, prog, label in self._children.values():
            out.extend({**k, "body": f"{label} / {k['body']}" if "body" in k else label}
                       for k in prog.kernels())
        return out

    @property
    def source(self) -> str:
        return "\n".join(k["source"] for k in self.kernels())

    def run(self, xp: Any, *args: Any,
            launch: Callable[[Kernel, list[Any]], list[Any]] | None = None) -> list[Any]:
        if self._single is not None:
            return (launch or _launch_on_gpu)(self._single, list(args))
        jaxpr = self.plan.jaxpr.jaxpr
        env: dict[Var, Any] = {v: self._on(xp, c) for v, c in zip(jaxpr.constvars,
                                                                  self.plan.jaxpr.consts)}
        env.update(zip(jaxpr.invars, args))
        run_kernel = launch or _launch_on_gpu

        def read(a: Any) -> Any:
            return self._on(xp, a.val, a.aval.dtype) if isinstance(a, Literal) else env[a]

        def read_call(a: Any) -> Any:
            # A host value (a Python scalar given to jit) reaches a kernel by value; an
            # array-module call needs it on the device.
            value = read(a)
            if xp is not np and isinstance(value, (np.ndarray, np.generic)):
                value = env[a] = xp.asarray(value)
            return value

        for step in self.steps:
            if isinstance(step, Kernel):
                outs = run_kernel(step, [env[v] for v in step.inputs])
                env.update(zip(step.outputs, outs))
                continue
            e = step.eqn
            structured = _STRUCTURED.get(e.primitive.name)
            if structured is not None:
                out = structured(self, xp, e, [read(a) for a in e.inputs], launch)
            else:
                out = e.primitive.impl(xp, *map(read_call, e.inputs), **e.params)
            outs = out if e.primitive.multiple_results else [out]
            env.update(zip(e.outputs, (xp.asarray(o) for o in outs)))
        return [read(a) for a in jaxpr.outvars]

    def _on(self, xp: Any, value: Any, dtype: Any = None) -> Any:
        """``value`` (a constant or literal of the program) as an array of ``xp``; device
        copies are made once and kept (CuPy rejects host arrays, and uploads cost)."""
        if xp is np:
            return np.asarray(value, dtype)
        key = (id(xp), id(value))
        hit = self._device_values.get(key)
        if hit is None or hit[0] is not value:
            host = value if type(value).__module__.startswith("cupy") else np.asarray(value,
                                                                                         dtype)
            hit = self._device_values[key] = (value, xp.asarray(host))
            # The upload is queued on the current stream, but the cached copy serves later
            # calls on any stream: wait for it once, so no other stream can read it early.
            xp.cuda.get_current_stream().synchronize()
        return hit[1]

    def __call__(self, *args: Any) -> list[Any]:
        return self.run(_cupy(), *args)

    def child(self, closed: ClosedJaxpr, label: str = "body") -> Program:
        """The program of a body, branch or nested call of this one (planned once)."""
        hit = self._children.get(id(closed))
        if hit is None:
            hit = self._children[id(closed)] = (closed, build_program(inline_calls(closed)),
                                                label)
        return hit[1]


def _bodies(eqn: Any) -> list[tuple[str, ClosedJaxpr]]:
    """The jaxprs a control-flow or call equation runs, named as the jaxpr printer shows."""
    p = eqn.params
    if eqn.primitive.name == "cond":
        return [(f"cond branch {j}", b) for j, b in enumerate(p["branches"])]
    if eqn.primitive.name == "while":
        return [("while cond", p["cond_jaxpr"]), ("while body", p["body_jaxpr"])]
    if "jaxpr" not in p:  # device_put: no body
        return []
    return [(f"{eqn.primitive.name} body", p["jaxpr"])]


# Control flow runs its bodies' fused kernels, driven from the host: a while loop reads
# back its predicate once per step, cond its index once; scan (and fori_loop with a static
# trip count) reads nothing back.
_Runner = Callable[[Program, Any, Any, list[Any], Any], list[Any]]


def _run_cond(prog: Program, xp: Any, eqn: Any, args: list[Any], launch: Any) -> list[Any]:
    branches = eqn.params["branches"]
    i = min(max(int(args[0]), 0), len(branches) - 1)
    return prog.child(branches[i]).run(xp, *args[1:], launch=launch)


def _run_while(prog: Program, xp: Any, eqn: Any, args: list[Any], launch: Any) -> list[Any]:
    p = eqn.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cond, body = prog.child(p["cond_jaxpr"]), prog.child(p["body_jaxpr"])
    cc, bc, carry = args[:nc], args[nc:nc + nb], args[nc + nb:]
    while bool(cond.run(xp, *cc, *carry, launch=launch)[0]):
        carry = body.run(xp, *bc, *carry, launch=launch)
    return carry


def _run_scan(prog: Program, xp: Any, eqn: Any, args: list[Any], launch: Any) -> list[Any]:
    p = eqn.params
    nc, ncar, length = p["num_consts"], p["num_carry"], p["length"]
    body = prog.child(p["jaxpr"])
    consts, carry, xs = args[:nc], args[nc:nc + ncar], args[nc + ncar:]
    # Each step writes its slice into one stack on the device (no list, no xp.stack).
    ys = [xp.empty((length, *a.shape), a.dtype) for a in p["jaxpr"].out_avals[ncar:]]
    for i in (range(length - 1, -1, -1) if p["reverse"] else range(length)):
        outs = body.run(xp, *consts, *carry, *(x[i] for x in xs), launch=launch)
        carry = outs[:ncar]
        for buf, y in zip(ys, outs[ncar:]):
            buf[i] = y
    return [*carry, *ys]


def _run_call(prog: Program, xp: Any, eqn: Any, args: list[Any], launch: Any) -> list[Any]:
    # Part of this program, on its device (staging pinned it to the host: see
    # compile_python._emit_call).
    return prog.child(eqn.params["jaxpr"]).run(xp, *args, launch=launch)


_STRUCTURED: dict[str, _Runner] = {
    "cond": _run_cond, "while": _run_while, "scan": _run_scan, "jit": _run_call,
    # One program, one device: a transfer inside it is the identity.
    "device_put": lambda prog, xp, e, args, launch: args[0]}


_gpu_kernels: dict[tuple[str, str], Any] = {}


def _on_host(value: Any) -> bool:
    """A host value given to a device program: one element of it is passed by value."""
    return isinstance(value, (np.ndarray, np.generic))


def _to_gpu(value: Any) -> Any:
    """An operand on the device: device arrays as they are, host values uploaded."""
    return value if type(value).__module__.startswith("cupy") else _cupy().asarray(value)


def _launch_on_gpu(kernel: Kernel, inputs: list[Any]) -> list[Any]:
    cp = _cupy()
    launches, outs = plan_launches(kernel, inputs, cp, _on_host, _to_gpu)
    for launch in launches:
        key = (launch.name, launch.source)
        fn = _gpu_kernels.get(key)
        if fn is None:
            # One text per layout, not per shape: a new shape reuses the compiled kernel.
            fn = _gpu_kernels[key] = cp.RawKernel(launch.source, launch.name,
                                                  options=KERNEL_OPTIONS)
        fn(launch.grid, launch.block, tuple(launch.args))
    return outs


def build_program(closed: ClosedJaxpr) -> Program:
    """Plan and generate the kernels of ``closed`` (no GPU needed)."""
    return Program(plan_jaxpr(closed))


class CupyBackend(Backend):
    name = "cupy"
    platform = "cuda"

    @property
    def xp(self) -> Any:
        return _cupy()

    def available(self) -> bool:
        try:
            return int(_cupy().cuda.runtime.getDeviceCount()) > 0
        except Exception:  # noqa: BLE001 - no CuPy, no driver or no device all mean "no"
            return False

    def devices(self) -> list[Device]:
        if not self.available():
            return []
        return [Device("cuda", i) for i in range(int(_cupy().cuda.runtime.getDeviceCount()))]

    def owns(self, x: Any) -> bool:
        return type(x).__module__.startswith("cupy")

    def device_of(self, x: Any) -> Device:
        return Device("cuda", int(x.device.id))

    def device_put(self, x: Any, device: Device) -> Any:
        cp = _cupy()
        with cp.cuda.Device(device.id):
            return cp.asarray(x)

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any, device: Device) -> Any:
        if np.dtype(dtype).name == "bfloat16":  # CuPy's bfloat16 fill is not relied on
            return super().full(shape, value, dtype, device)
        cp = _cupy()
        with cp.cuda.Device(device.id):
            return cp.full(shape, value, dtype)

    def compile(self, closed_jaxpr: ClosedJaxpr) -> Callable[..., list[Any]]:
        return build_program(closed_jaxpr)


BACKEND = CupyBackend()
