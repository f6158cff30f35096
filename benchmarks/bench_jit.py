"""funcgrad.jit on the CPU against hand-written NumPy, jax.jit and PyTorch, side by side.

Sections (all float32, the same data for every implementation):

(a) ``dispatch``: the cost of one call on tiny inputs: ``f(x, y, z)`` of three (3,)
    arrays (a handful of elementwise ops). Measures per-call overhead, not arithmetic.
(b) ``chain``: an elementwise chain of 12 operations on 1e6 and 1e7 elements
    (``tanh(1.5 x + 0.5) * exp(-x*x) + 0.25 sin(x) - x / (1 + x*x)``). NumPy and eager
    torch run one kernel per operation; funcgrad's NumPy backend too, but reuses buffers
    with ``out=``; XLA (and torch.jit.script's fuser, when it kicks in) fuse.
(c) ``mlp``: ``value_and_grad`` of the softmax cross-entropy of a 784-512-512-10 tanh MLP
    on a batch of 128: funcgrad ``jit(value_and_grad)``, funcgrad eager, NumPy with a
    hand-written backward pass, ``jax.jit(jax.value_and_grad)``, torch autograd, HIPS
    autograd's (eager) ``value_and_grad``.
(d) ``tracing``: the cost of staging a long chain (3 x 1000 ops on a (3,) array) per
    equation: funcgrad ``make_jaxpr``, funcgrad ``jit(f).lower(x).compile()`` (trace +
    generate the Python program), ``jax.make_jaxpr``, ``torch.fx.symbolic_trace``.

funcgrad is called as JAX users call JAX: on ``funcgrad.Array`` arguments made once with
``jnp.asarray`` (as the jax rows get theirs from ``jax.device_put``); the dispatch section
also shows a jitted call on NumPy arguments, which are converted to Arrays on every call.
All data is float32, funcgrad's (and JAX's) default, so 64-bit mode stays off.

Every result is checked against the NumPy reference before it is timed (the first call
is also the warm-up, and the compile for the jitted rows). Each time is the median over
``--repeat`` interleaved timeit repeats (each about ``--min-time`` seconds) of the mean
time of one call. Ratios: funcgrad (jit) time / peer time, so > 1 means funcgrad is
slower. Peers that are not installed are shown as "not installed" (``--no-peers``: skipped).

Threads: everything runs on ``--threads`` threads (default 1: OMP/OPENBLAS/MKL thread
variables, torch.set_num_threads, and XLA's CPU thread pool), so that the numbers compare
per-core work and do not depend on how busy the machine's other cores are.

Run: python benchmarks/bench_jit.py [--repeat 5] [--min-time 0.2] [--quick]
     [--sections dispatch,chain,mlp,tracing] [--threads 1] [--no-peers]
On machines that set OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE (they slow OpenBLAS down),
run it as ``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_jit.py``.
"""

from __future__ import annotations

# isort: off
# Thread settings (benchmarks/threads.py) before NumPy, JAX or torch start their pools.
from threads import THREADS  # noqa: F401
# isort: on
import argparse  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from plotting import add_output_options, write_outputs  # noqa: E402 - benchmarks/plotting.py
from timing import fmt_time, median_times  # noqa: E402 - benchmarks/timing.py

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402 - the JAX face's jnp

F32 = np.float32


NO_PEERS = "skipped (--no-peers)"


def _peer(name: str) -> Any:
    try:
        return __import__(name)
    except ImportError:
        return None


def _missing(peers: dict[str, Any], name: str) -> str:
    """Why a peer's row is skipped."""
    return NO_PEERS if not peers else f"not installed ({name})"


# ------------------------------------------------------------------ measuring


def to_numpy(x: Any) -> Any:
    if isinstance(x, (tuple, list)):
        return [to_numpy(v) for v in x]
    if isinstance(x, dict):
        return [to_numpy(x[k]) for k in sorted(x)]
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def flat(x: Any) -> list[np.ndarray]:
    if isinstance(x, list):
        return [a for v in x for a in flat(v)]
    return [x]


class Section:
    """Implementations of one workload: name -> (kind, thunk); kind is one of
    funcgrad/numpy/jax/torch, used for the ratio columns."""

    def __init__(self, title: str, reference: Any, tol: float) -> None:
        self.title = title
        self.reference = reference
        self.tol = tol
        self.impls: dict[str, tuple[str, Callable[[], Any]]] = {}
        self.skipped: list[tuple[str, str]] = []
        self.unit = "time/call"
        self.per: float = 1.0  # divide times by this (e.g. per equation)

    def add(self, name: str, kind: str, fn: Callable[[], Any]) -> None:
        self.impls[name] = (kind, fn)

    def skip(self, name: str, why: str) -> None:
        self.skipped.append((name, why))


def check(section: Section) -> None:
    for name, (_, fn) in list(section.impls.items()):
        try:
            got = to_numpy(fn())
        except Exception as e:  # noqa: BLE001 - an optional peer that fails is reported
            del section.impls[name]
            section.skip(name, f"failed: {type(e).__name__}: {str(e).splitlines()[0][:60]}")
            continue
        if section.reference is None:
            continue
        ref = flat(to_numpy(section.reference))
        out = flat(got)
        assert len(out) == len(ref), (name, len(out), len(ref))
        for g, r in zip(out, ref):
            scale = 1.0 + float(np.max(np.abs(r)))
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(r, np.float64),
                                       rtol=section.tol, atol=section.tol * scale, err_msg=name)


def run_section(section: Section, repeat: int, min_time: float) -> dict[str, float]:
    check(section)
    thunks = {name: fn for name, (_, fn) in section.impls.items()}
    times = median_times(thunks, repeat, min_time)
    base_name = next(n for n, (k, _) in section.impls.items() if k == "funcgrad")
    base = times[base_name][0] / section.per
    print(f"== {section.title}")
    width = max(len(n) for n in [*section.impls, *(s for s, _ in section.skipped)])
    print(f"{'implementation':<{width}}  {section.unit:>12}  {'funcgrad/this':>13}  notes")
    print(f"{'-' * width}  {'-' * 12}  {'-' * 13}  {'-' * 18}")
    out = {}
    for name, (t, number) in times.items():
        t = t / section.per
        out[name] = t
        print(f"{name:<{width}}  {fmt_time(t):>12}  {base / t:12.3f}x  {number} calls/repeat")
    for name, why in section.skipped:
        print(f"{name:<{width}}  {'-':>12}  {'-':>13}  {why}")
    print()
    return out


# ------------------------------------------------------------------ (a) dispatch


def tiny_fn(x: Any, y: Any, z: Any, m: Any) -> Any:
    return m.tanh(x * y + z) * 2.0 - m.sin(z)


def section_dispatch(peers: dict[str, Any]) -> Section:
    rng = np.random.default_rng(0)
    x, y, z = (rng.standard_normal(3).astype(F32) for _ in range(3))
    ref = tiny_fn(x, y, z, np)
    s = Section("(a) dispatch overhead: f(x, y, z) = tanh(x*y + z)*2 - sin(z), three f32[3]",
                ref, 1e-5)
    fx, fy, fz = (fnp.asarray(a) for a in (x, y, z))
    jf = fg.jit(lambda a, b, c: tiny_fn(a, b, c, fnp))
    s.add("funcgrad jit", "funcgrad", lambda: jf(fx, fy, fz))
    s.add("funcgrad jit, NumPy arguments", "funcgrad-numpy-args", lambda: jf(x, y, z))
    s.add("funcgrad eager", "funcgrad-eager", lambda: tiny_fn(fx, fy, fz, fnp))
    s.add("NumPy by hand", "numpy", lambda: tiny_fn(x, y, z, np))
    _jax_and_torch_elementwise(s, peers, tiny_fn, (x, y, z))
    return s


def _jax_and_torch_elementwise(s: Section, peers: dict[str, Any],
                               fn: Callable[..., Any], args: tuple[np.ndarray, ...]) -> None:
    jax, torch = peers.get("jax"), peers.get("torch")
    if jax is None:
        s.skip("jax.jit", _missing(peers, "jax"))
    else:
        import jax.numpy as jnp

        jargs = [jax.device_put(a) for a in args]
        jj = jax.jit(lambda *a: fn(*a, jnp))
        s.add("jax.jit", "jax", lambda: jj(*jargs).block_until_ready())
    if torch is None:
        s.skip("torch eager", _missing(peers, "torch"))
        return
    targs = [torch.from_numpy(np.ascontiguousarray(a)) for a in args]
    s.add("torch eager", "torch", lambda: fn(*targs, torch))
    try:
        scripted = torch.jit.script(_TORCH_SCRIPT[fn.__name__])
        for _ in range(3):  # the profiling executor optimises after a few calls
            scripted(*targs)
        s.add("torch.jit.script", "torch-script", lambda: scripted(*targs))
    except Exception as e:  # noqa: BLE001 - optional
        s.skip("torch.jit.script", f"failed: {type(e).__name__}")


# ------------------------------------------------------------------ (b) chain


def chain_fn(x: Any, m: Any) -> Any:
    # 12 operations: mul add tanh mul neg exp mul sin mul mul add div (+ sub, add)
    return m.tanh(x * 1.5 + 0.5) * m.exp(-(x * x)) + m.sin(x) * 0.25 - x / (x * x + 1.0)


def section_chain(peers: dict[str, Any], n: int) -> Section:
    x = np.random.default_rng(1).standard_normal(n).astype(F32)
    ref = chain_fn(x, np)
    s = Section(f"(b) elementwise chain of 12 ops, f32[{n:.0e}]".replace("+0", ""), ref, 1e-5)
    fx = fnp.asarray(x)
    jf = fg.jit(lambda a: chain_fn(a, fnp))
    s.add("funcgrad jit", "funcgrad", lambda: jf(fx))
    s.add("NumPy by hand", "numpy", lambda: chain_fn(x, np))
    _jax_and_torch_elementwise(s, peers, _chain2, (x,))
    return s


def _chain2(x: Any, m: Any) -> Any:
    return chain_fn(x, m)


# TorchScript versions (scripted only when torch is installed; ``torch`` is then bound as a
# module global, which is where TorchScript looks names up).
def _tiny_script(x, y, z):
    return torch.tanh(x * y + z) * 2.0 - torch.sin(z)  # noqa: F821


def _chain_script(x):
    return torch.tanh(x * 1.5 + 0.5) * torch.exp(-(x * x)) + torch.sin(x) * 0.25 \
        - x / (x * x + 1.0)  # noqa: F821


_TORCH_SCRIPT = {"tiny_fn": _tiny_script, "_chain2": _chain_script}


# ------------------------------------------------------------------ (c) MLP


SIZES = (784, 512, 512, 10)
BATCH = 128


def mlp_loss(params: list[Any], X: Any, Y: Any, m: Any) -> Any:
    h = X
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = m.tanh(h)
    mx = m.max(h, axis=1, keepdims=True)
    lse = m.log(m.sum(m.exp(h - mx), axis=1, keepdims=True)) + mx
    return -m.sum(Y * (h - lse)) / X.shape[0]


def numpy_value_and_grad(params: list[tuple[np.ndarray, np.ndarray]], X: np.ndarray,
                         Y: np.ndarray) -> tuple[Any, list[tuple[np.ndarray, np.ndarray]]]:
    acts = [X]
    h = X
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = np.tanh(h)
        acts.append(h)
    mx = h.max(axis=1, keepdims=True)
    e = np.exp(h - mx)
    se = e.sum(axis=1, keepdims=True)
    lse = np.log(se) + mx
    loss = -np.sum(Y * (h - lse)) / X.shape[0]
    d = (e / se - Y) / X.shape[0]
    grads = []
    for i in range(len(params) - 1, -1, -1):
        w, _ = params[i]
        grads.append((acts[i].T @ d, d.sum(axis=0)))
        if i > 0:
            d = (d @ w.T) * (1.0 - acts[i] * acts[i])
    return loss, grads[::-1]


def section_mlp(peers: dict[str, Any]) -> Section:
    rng = np.random.default_rng(2)
    params = [((rng.standard_normal((a, b)) / np.sqrt(a)).astype(F32),
               (0.1 * rng.standard_normal(b)).astype(F32)) for a, b in zip(SIZES, SIZES[1:])]
    X = rng.standard_normal((BATCH, SIZES[0])).astype(F32)
    Y = np.eye(SIZES[-1], dtype=F32)[rng.integers(0, SIZES[-1], BATCH)]
    ref = numpy_value_and_grad(params, X, Y)
    s = Section(f"(c) MLP {'-'.join(map(str, SIZES))} tanh, softmax CE, batch {BATCH}, "
                "value_and_grad", ref, 2e-4)
    fp = [(fnp.asarray(w), fnp.asarray(b)) for w, b in params]
    fX, fY = fnp.asarray(X), fnp.asarray(Y)
    vg = fg.value_and_grad(lambda p, x, y: mlp_loss(p, x, y, fnp))
    jvg = fg.jit(vg)
    s.add("funcgrad jit(value_and_grad)", "funcgrad", lambda: jvg(fp, fX, fY))
    s.add("funcgrad value_and_grad, eager", "funcgrad-eager", lambda: vg(fp, fX, fY))
    s.add("NumPy by hand (manual backward)", "numpy", lambda: numpy_value_and_grad(params, X, Y))
    jax, torch, autograd = peers.get("jax"), peers.get("torch"), peers.get("autograd")
    if jax is None:
        s.skip("jax.jit(jax.value_and_grad)", _missing(peers, "jax"))
    else:
        import jax.numpy as jnp

        jp = jax.device_put(params)
        jX, jY = jax.device_put(X), jax.device_put(Y)
        jjvg = jax.jit(jax.value_and_grad(lambda p, x, y: mlp_loss(p, x, y, jnp)))

        def run_jax() -> Any:
            out = jjvg(jp, jX, jY)
            jax.block_until_ready(out)
            return out

        s.add("jax.jit(jax.value_and_grad)", "jax", run_jax)
    if torch is None:
        s.skip("torch autograd (eager)", _missing(peers, "torch"))
    else:
        tp = [(torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True))
              for w, b in params]
        tX, tY = torch.from_numpy(X), torch.from_numpy(Y)

        def tmax(h: Any, axis: int, keepdims: bool) -> Any:
            return h.amax(dim=axis, keepdim=keepdims)

        class TorchNS:
            tanh = staticmethod(torch.tanh)
            exp = staticmethod(torch.exp)
            log = staticmethod(torch.log)
            max = staticmethod(tmax)

            @staticmethod
            def sum(h: Any, axis: Any = None, keepdims: bool = False) -> Any:
                return h.sum() if axis is None else h.sum(dim=axis, keepdim=keepdims)

        def run_torch() -> Any:
            for w, b in tp:
                w.grad = None
                b.grad = None
            loss = mlp_loss(tp, tX, tY, TorchNS)
            loss.backward()
            return loss.detach(), [(w.grad, b.grad) for w, b in tp]

        s.add("torch autograd (eager)", "torch", run_torch)
    if autograd is None:
        s.skip("HIPS autograd value_and_grad (eager)", _missing(peers, "autograd"))
    else:
        import autograd.numpy as anp

        avg = autograd.value_and_grad(lambda p, x, y: mlp_loss(p, x, y, anp))
        s.add("HIPS autograd value_and_grad (eager)", "autograd", lambda: avg(params, X, Y))
    return s


# ------------------------------------------------------------------ (d) tracing


N_CHAIN = 1000


def long_chain(x: Any, m: Any) -> Any:
    for _ in range(N_CHAIN):
        x = m.sin(x) * 1.01 + 0.1
    return x


def section_tracing(peers: dict[str, Any]) -> Section:
    x = fnp.asarray(np.linspace(-1, 1, 3).astype(F32))
    cj = fg.make_jaxpr(lambda a: long_chain(a, fnp))(x)
    n_eqns = len(cj.eqns)
    s = Section(f"(d) tracing cost per equation: a chain of {n_eqns} equations on f32[3]",
                None, 0.0)
    s.unit = "time/eqn"
    s.per = float(n_eqns)
    s.add("funcgrad make_jaxpr", "funcgrad", lambda: fg.make_jaxpr(lambda a: long_chain(a, fnp))(x))
    s.add("funcgrad jit(f).lower(x).compile()", "funcgrad-compile",
          lambda: fg.jit(lambda a: long_chain(a, fnp)).lower(x).compile())
    jax, torch = peers.get("jax"), peers.get("torch")
    if jax is None:
        s.skip("jax.make_jaxpr", _missing(peers, "jax"))
    else:
        import jax.numpy as jnp

        jx = jax.device_put(np.asarray(x))
        jn = len(jax.make_jaxpr(lambda a: long_chain(a, jnp))(jx).jaxpr.eqns)
        assert jn == n_eqns, (jn, n_eqns)
        s.add("jax.make_jaxpr", "jax", lambda: jax.make_jaxpr(lambda a: long_chain(a, jnp))(jx))
    if torch is None:
        s.skip("torch.fx.symbolic_trace", _missing(peers, "torch"))
    else:
        import torch.fx

        class Chain(torch.nn.Module):
            def forward(self, a: Any) -> Any:
                return long_chain(a, torch)

        g = torch.fx.symbolic_trace(Chain())
        tn = sum(1 for node in g.graph.nodes if node.op == "call_function")
        assert tn == n_eqns, (tn, n_eqns)
        s.add("torch.fx.symbolic_trace", "torch", lambda: torch.fx.symbolic_trace(Chain()))
    return s


# ------------------------------------------------------------------ main


def versions(peers: dict[str, Any]) -> str:
    out = [f"Python {platform.python_version()}", f"numpy {np.__version__}",
           f"funcgrad {getattr(fg, '__version__', '?')}"]
    for name, mod in peers.items():
        if mod is not None:
            out.append(f"{name} {_version(name, mod)}")
    return ", ".join(out)


def _version(name: str, mod: Any) -> str:
    if hasattr(mod, "__version__"):
        return str(mod.__version__)
    try:  # HIPS autograd has no __version__
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001
        return "?"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timeit repeats (median)")
    parser.add_argument("--min-time", type=float, default=0.2,
                        help="seconds each timeit repeat should at least take")
    parser.add_argument("--quick", action="store_true", help="smoke run: noisy numbers")
    parser.add_argument("--sections", default="dispatch,chain,mlp,tracing")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-peers", action="store_true",
                        help="skip JAX, PyTorch and HIPS autograd")
    add_output_options(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.repeat, args.min_time = 3, 0.02
    peers: dict[str, Any] = {} if args.no_peers else {
        name: _peer(name) for name in ("jax", "torch", "autograd")}
    if peers.get("torch") is not None:
        peers["torch"].set_num_threads(args.threads)
        globals()["torch"] = peers["torch"]  # for the TorchScript functions
    machine = (f"machine: {os.cpu_count()} CPU cores ({platform.machine()}, "
               f"{platform.system()}); {versions(peers)}; {args.threads} thread(s)")
    print(f"funcgrad.jit (NumPy backend) vs peers; {machine}")
    if hasattr(os, "getloadavg"):
        print("load average before the run: " + ", ".join(f"{v:.2f}" for v in os.getloadavg())
              + " (other processes on the machine make the numbers noisy)")
    blas = [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if v in os.environ]
    if blas:
        print(f"warning: {', '.join(blas)} set: OpenBLAS may be slowed down")
    print(f"time: median of {args.repeat} interleaved timeit repeats of the mean time per call;"
          " funcgrad/this = funcgrad (jit) time / this row's time (> 1: funcgrad is slower)")
    print()
    wanted = args.sections.split(",")
    summary: list[tuple[str, dict[str, float], Section]] = []
    builders: list[tuple[str, Callable[[], Section]]] = []
    if "dispatch" in wanted:
        builders.append(("dispatch", lambda: section_dispatch(peers)))
    if "chain" in wanted:
        builders.append(("chain 1e6", lambda: section_chain(peers, 10 ** 6)))
        builders.append(("chain 1e7", lambda: section_chain(peers, 10 ** 7)))
    if "mlp" in wanted:
        builders.append(("mlp", lambda: section_mlp(peers)))
    if "tracing" in wanted:
        builders.append(("tracing/eqn", lambda: section_tracing(peers)))
    t0 = time.perf_counter()
    for label, build in builders:
        section = build()
        summary.append((label, run_section(section, args.repeat, args.min_time), section))
    print("== summary: funcgrad (jit) time / peer time (> 1: funcgrad is slower)")
    print(f"{'workload':<12}  {'funcgrad':>11}  {'/numpy':>8}  {'/jax':>8}  {'/torch':>8}  "
          f"{'/autograd':>9}")
    print(f"{'-' * 12}  {'-' * 11}  {'-' * 8}  {'-' * 8}  {'-' * 8}  {'-' * 9}")
    for label, times, section in summary:
        kinds = {k: name for name, (k, _) in section.impls.items()}
        base = times[kinds["funcgrad"]]

        def ratio(kind: str, width: int = 8, kinds: dict[str, str] = kinds,
                  times: dict[str, float] = times, base: float = base) -> str:
            return f"{base / times[kinds[kind]]:{width - 1}.2f}x" if kind in kinds \
                else f"{'-':>{width}}"

        print(f"{label:<12}  {fmt_time(base):>11}  {ratio('numpy')}  {ratio('jax')}  "
              f"{ratio('torch')}  {ratio('autograd', 9)}")
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    table, ratios = [], []
    for label, times, section in summary:
        kinds = {k: name for name, (k, _) in section.impls.items()}
        base = times[kinds["funcgrad"]]
        table.append({"workload": label, "title": section.title, "unit": section.unit,
                      "times_s": times, "kinds": {n: k for n, (k, _) in section.impls.items()},
                      "skipped": dict(section.skipped)})
        ratios += [(f"{label} vs {kind}", base / times[kinds[kind]])
                   for kind in ("numpy", "jax", "torch", "autograd") if kind in kinds]
    write_outputs(args, {"benchmark": "bench_jit", "machine": machine, "quick": args.quick,
                         "ratio": "funcgrad (jit) time / peer time (> 1: funcgrad is slower)",
                         "rows": table, "ratios": dict(ratios)}, ratios,
                  title="funcgrad.jit (NumPy backend) vs peers (CPU)",
                  xlabel="funcgrad (jit) time / peer time (> 1: funcgrad is slower)")


if __name__ == "__main__":
    main()
