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

from funcgrad.backends.cuda_codegen import KERNEL_OPTIONS, Kernel, kernel_source, launch_shape
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
        for i, step in enumerate(plan.steps):
            self.steps.append(step if isinstance(step, CallStep)
                              else kernel_source(step, f"fg_kernel_{i}"))

    def kernels(self) -> list[dict[str, Any]]:
        """The fusion plan: one entry per generated kernel, with its CUDA source."""
        return [s.describe() for s in self.steps if isinstance(s, Kernel)]

    @property
    def source(self) -> str:
        return "\n".join(s.source for s in self.steps if isinstance(s, Kernel))

    def run(self, xp: Any, *args: Any,
            launch: Callable[[Kernel, list[Any]], list[Any]] | None = None) -> list[Any]:
        jaxpr = self.plan.jaxpr.jaxpr
        env: dict[Var, Any] = {v: self._on(xp, c) for v, c in zip(jaxpr.constvars,
                                                                  self.plan.jaxpr.consts)}
        env.update(zip(jaxpr.invars, args))
        run_kernel = launch or _launch_on_gpu

        def read(a: Any) -> Any:
            return self._on(xp, a.val, a.aval.dtype) if isinstance(a, Literal) else env[a]

        for step in self.steps:
            if isinstance(step, Kernel):
                outs = run_kernel(step, [env[v] for v in step.inputs])
                env.update(zip(step.outputs, outs))
                continue
            e = step.eqn
            out = e.primitive.impl(xp, *map(read, e.inputs), **e.params)
            outs = out if e.primitive.multiple_results else [out]
            env.update(zip(e.outputs, (xp.asarray(o) for o in outs)))
        return [read(a) for a in jaxpr.outvars]

    def _on(self, xp: Any, value: Any, dtype: Any = None) -> Any:
        """``value`` (a constant or literal of the program) as an array of ``xp``; device
        copies are made once and kept (CuPy rejects host arrays, and uploads cost)."""
        import numpy as np  # noqa: PLC0415

        if xp is np:
            return np.asarray(value, dtype)
        key = (id(xp), id(value))
        hit = self._device_values.get(key)
        if hit is None or hit[0] is not value:
            host = value if type(value).__module__.startswith("cupy") else np.asarray(value,
                                                                                         dtype)
            hit = self._device_values[key] = (value, xp.asarray(host))
        return hit[1]

    def __call__(self, *args: Any) -> list[Any]:
        return self.run(_cupy(), *args)


_gpu_kernels: dict[tuple[str, str], Any] = {}


def _launch_on_gpu(kernel: Kernel, inputs: list[Any]) -> list[Any]:
    import numpy as np  # noqa: PLC0415

    cp = _cupy()
    fn = _gpu_kernels.get((kernel.name, kernel.source))
    if fn is None:
        fn = cp.RawKernel(kernel.source, kernel.name, options=KERNEL_OPTIONS)
        _gpu_kernels[(kernel.name, kernel.source)] = fn
    args: list[Any] = []
    for arr in inputs:
        arr = cp.asarray(arr)
        args.append(arr)
        args.extend(np.int64(s // arr.itemsize) for s in arr.strides)
    outs = [cp.empty(v.aval.shape, v.aval.dtype) for v in kernel.outputs]
    args.extend(outs)
    grid, block = launch_shape(kernel)
    fn(grid, block, tuple(args))
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

    def compile(self, closed_jaxpr: ClosedJaxpr) -> Callable[..., list[Any]]:
        return build_program(closed_jaxpr)


BACKEND = CupyBackend()
