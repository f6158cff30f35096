"""The speed issue's workloads (issue 14): both faces of funcgrad against their peers, side by
side in one process, written to a JSON file, a Markdown table and (with matplotlib) a plot.

Workloads (float32 on the CPU, the same data for every implementation):

- ``W1``: 100 chained elementwise ops on a 4x4 array (``* 0.9``, ``+ 0.1``, ``tanh``, ``* x``,
  cycled) + sum, forward + backward: per-op overhead. Reference: NumPy written by hand
  (forward and backward), the floor; also shown as a ratio to PyTorch eager.
- ``W2``: value_and_grad of an MLP 784-256-10 (ReLU, softmax cross-entropy), batch 64.
- ``W3``: the gradient of an elementwise chain of 12 ops summed over 1e7 values: ``jit(grad)``
  against the hand-written NumPy gradient (the floor), jax.jit, torch eager / torch.compile.
- ``W4``: reductions (sum, max) and logsumexp / softmax over the rows of a (1000, 1000) array.
- ``W5``: a jitted ``fori_loop`` of 100 small steps against the same body unrolled and jitted.
- ``W6``: per-example gradients (vmap(grad)) of logistic regression, batch 128, 100 features.
- ``W7``: a char-LSTM step (embedding 32, hidden 128, sequence 32, batch 32; forward +
  backward) and a digits CNN step (conv-relu-pool x2 + linear, batch 64, 28x28; forward +
  backward + SGD), funcgrad.torch against PyTorch (nn.LSTM, nn.Conv2d).
- ``MLP loop``: one epoch of the PyTorch tutorial's training loop (Flatten, Linear-ReLU-
  Linear-ReLU-Linear 784-512-512-10, CrossEntropyLoss, SGD, a DataLoader of batch 64 over a
  synthetic FashionMNIST-sized data set of 6400 samples): funcgrad.torch, PyTorch eager,
  torch.compile, and ``funcgrad.torch.compile`` when funcgrad has it.
- ``memory``: what one forward + backward of that MLP (batch 64) keeps and peaks at:
  funcgrad measured with tracemalloc (NumPy reports its buffers to it), PyTorch with
  ``torch.autograd.graph.saved_tensors_hooks`` (the bytes of the tensors saved for backward;
  tracemalloc does not see PyTorch's allocator) plus the gradients' bytes.

Every result is checked against the workload's reference before it is timed (the first call
is also the warm-up and, for the compiled rows, the compile). Each time is the median over
``--repeat`` interleaved timeit repeats (each about ``--min-time`` seconds) of the mean time
per call (per epoch for the MLP loop). Ratios are time / reference time: below 1 is faster
than the reference. A peer that is not installed, or that fails (torch.compile needs a C
compiler), is shown with the reason instead of a time. The issue's goals are checked at the
end (met / not met). Everything runs on one thread (OMP/OPENBLAS/MKL thread variables,
torch.set_num_threads, XLA's CPU pool).

Run: python benchmarks/bench_workloads.py [--quick] [--tiny] [--no-peers] [--no-compile]
     [--workloads W1,W3,...] [--repeat 5] [--min-time 0.2] [--json FILE] [--markdown FILE]
     [--plot FILE]
On machines that set OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE (they slow OpenBLAS down), run it
as ``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_workloads.py``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy / torch / XLA load their thread pools
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from timing import (  # noqa: E402 - benchmarks/timing.py
    chained_ops,
    fmt_time,
    median_times,
    versions,
)

import funcgrad as fg  # noqa: E402 - the JAX face
import funcgrad.numpy as fnp  # noqa: E402
import funcgrad.torch as ft  # noqa: E402 - the PyTorch face

F32 = np.float32
HERE = pathlib.Path(__file__).resolve().parent
NO_PEERS = "skipped (--no-peers)"
TORCH_EAGER = "PyTorch eager"


# ------------------------------------------------------------------ sizes


@dataclass
class Sizes:
    w1_shape: tuple[int, ...] = (4, 4)
    mlp: tuple[int, int, int] = (784, 256, 10)
    batch: int = 64
    w3_n: int = 10 ** 7
    w4_shape: tuple[int, int] = (1000, 1000)
    w5_steps: int = 100
    w6_batch: int = 128
    w6_features: int = 100
    lstm: tuple[int, int, int, int, int] = (64, 32, 128, 32, 32)  # vocab emb hidden seq batch
    cnn_side: int = 28
    loop_samples: int = 6400
    loop_hidden: int = 512


def sizes_for(quick: bool, tiny: bool) -> Sizes:
    if tiny:  # the smoke test: every code path, seconds in all
        return Sizes(w1_shape=(4,), mlp=(20, 8, 4), batch=8, w3_n=10 ** 3, w4_shape=(20, 30),
                     w5_steps=10, w6_batch=8, w6_features=5, lstm=(11, 4, 6, 3, 2),
                     cnn_side=8, loop_samples=32, loop_hidden=16)
    if quick:
        return Sizes(w3_n=10 ** 6, w4_shape=(300, 300), loop_samples=640)
    return Sizes()


# ------------------------------------------------------------------ workloads and rows


@dataclass
class Impl:
    name: str
    face: str  # "funcgrad", "funcgrad.torch", "numpy", "torch", "jax", "autograd"
    fn: Callable[[], Any]


@dataclass
class Workload:
    key: str
    title: str
    reference: str  # the impl whose time is ratio 1
    expected: Any = None  # NumPy values every result is checked against (None: the reference's)
    tol: float = 1e-4
    unit: str = "call"
    impls: list[Impl] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # name -> why
    order: list[str] = field(default_factory=list)
    faces: dict[str, str] = field(default_factory=dict)

    def add(self, name: str, face: str, build: Callable[[], Callable[[], Any]]) -> None:
        """Add a row; a builder that raises (a peer's compiler, say) becomes a reason."""
        self.order.append(name)
        self.faces[name] = face
        try:
            self.impls.append(Impl(name, face, build()))
        except Exception as e:  # noqa: BLE001 - any failure is reported in the table
            self.skipped[name] = failure("unavailable", e)

    def skip(self, name: str, why: str) -> None:
        self.order.append(name)
        self.skipped[name] = why


def failure(prefix: str, e: BaseException) -> str:
    lines = str(e).strip().splitlines() or [""]
    return f"{prefix}: {type(e).__name__}: {lines[0][:90]}".rstrip(": ")


def to_numpy(x: Any) -> list[np.ndarray]:
    """Flat list of float64 arrays from a result (arrays, tensors, tuples, lists)."""
    if isinstance(x, (tuple, list)):
        return [a for v in x for a in to_numpy(v)]
    if isinstance(x, dict):
        return [a for k in sorted(x) for a in to_numpy(x[k])]
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return [np.asarray(x, np.float64)]


def check(w: Workload) -> None:
    """Run every row once (warm-up, compile) and compare it with the expected values."""
    expected = None if w.expected is None else to_numpy(w.expected)
    # the reference runs first when the others are compared with its result
    for impl in sorted(w.impls, key=lambda i: i.name != w.reference):
        try:
            got = to_numpy(impl.fn())
        except Exception as e:  # noqa: BLE001 - reported, the other rows still run
            w.impls.remove(impl)
            w.skipped[impl.name] = failure(
                "unavailable" if "compile" in impl.name else "failed", e)
            continue
        if expected is None:
            if impl.name == w.reference:
                expected = got
            continue
        err = _mismatch(got, expected, w.tol)
        if err:
            w.impls.remove(impl)
            w.skipped[impl.name] = f"wrong result ({err})"


def _mismatch(got: list[np.ndarray], ref: list[np.ndarray], tol: float) -> str:
    if len(got) != len(ref):
        return f"{len(got)} outputs, expected {len(ref)}"
    for i, (g, r) in enumerate(zip(got, ref)):
        if g.shape != r.shape:
            return f"output {i}: shape {g.shape}, expected {r.shape}"
        scale = 1.0 + float(np.max(np.abs(r))) if r.size else 1.0
        if not np.allclose(g, r, rtol=tol, atol=tol * scale):
            return f"output {i}: max abs error {float(np.max(np.abs(g - r))):.3g}"
    return ""


# ------------------------------------------------------------------ peers


def _import(name: str) -> Any:
    try:
        return __import__(name)
    except ImportError:
        return None


class Peers:
    """The optional peers, and why a row of theirs is missing."""

    def __init__(self, enabled: bool, compile_ok: bool) -> None:
        self.enabled = enabled
        self.mods = {n: _import(n) for n in ("jax", "torch", "autograd")} if enabled else {}
        self.compile_why = "" if compile_ok else "skipped (--no-compile)"
        jax = self.mods.get("jax")
        if jax is not None:
            try:  # XLA runs on the caller's thread, as the other rows do: with async dispatch
                # a call waits for a worker thread, milliseconds when the cores are busy
                jax.config.update("jax_cpu_enable_async_dispatch", False)
            except Exception:  # noqa: BLE001 - an older jax without the option
                pass
        torch = self.mods.get("torch")
        if torch is not None:
            torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
            try:  # inductor compiles in worker processes by default; the machine is small
                import torch._inductor.config as inductor_config

                inductor_config.compile_threads = 1
            except Exception:  # noqa: BLE001 - an older torch: its default then
                pass

    def get(self, name: str) -> Any:
        return self.mods.get(name)

    def why(self, name: str) -> str:
        return NO_PEERS if not self.enabled else f"not installed ({name})"

    def torch_compile(self) -> tuple[Any, str]:
        """(torch.compile, "") or (None, the reason it is missing)."""
        torch = self.get("torch")
        if torch is None:
            return None, self.why("torch")
        if self.compile_why:
            return None, self.compile_why
        return torch.compile, ""


def fg_torch_compile() -> Any:
    """``funcgrad.torch.compile`` when the library has it (it is being built), else None."""
    return getattr(ft, "compile", None)


def torch_rows(w: Workload, peers: Peers, build: Callable[[Any, Any], Callable[[], Any]],
               fg_name: str = "funcgrad.torch eager", compiled: bool = True) -> None:
    """funcgrad.torch, PyTorch eager and torch.compile rows of one ``build(T, compile)``,
    ``T`` the module (funcgrad.torch or torch) and ``compile`` None or a compiler."""
    w.add(fg_name, "funcgrad.torch", lambda: build(ft, None))
    torch = peers.get("torch")
    if torch is None:
        w.skip(TORCH_EAGER, peers.why("torch"))
    else:
        w.add(TORCH_EAGER, "torch", lambda: build(torch, None))
    if not compiled:
        return
    tc, why = peers.torch_compile()
    if tc is None:
        w.skip("torch.compile", why)
    else:
        w.add("torch.compile", "torch", lambda: build(torch, tc))


# ------------------------------------------------------------------ W1: chain of small ops


def chain(x: Any, tanh: Callable[[Any], Any], n: int = 100) -> Any:
    return chained_ops(x, tanh, n)


def chain_grad_numpy(x: np.ndarray, n: int = 100) -> np.ndarray:
    """Forward and backward of ``chain(x).sum()`` written by hand: the floor."""
    y, tanhs, factors = x, [], []
    for i in range(n):
        k = i % 4
        if k == 0:
            y = y * F32(0.9)
        elif k == 1:
            y = y + F32(0.1)
        elif k == 2:
            y = np.tanh(y)
            tanhs.append(y)
        else:
            factors.append(y)
            y = y * x
    g, gx = np.ones_like(y), np.zeros_like(x)
    for i in reversed(range(n)):
        k = i % 4
        if k == 0:
            g = g * F32(0.9)
        elif k == 2:
            t = tanhs.pop()
            g = g * (F32(1.0) - t * t)
        elif k == 3:
            gx += g * factors.pop()
            g = g * x
    return gx + g


def w1(peers: Peers, sz: Sizes) -> Workload:
    x0 = np.random.default_rng(1).standard_normal(sz.w1_shape).astype(F32)
    w = Workload("W1", f"100 chained elementwise ops on f32{list(sz.w1_shape)} + sum, forward "
                 "+ backward", "NumPy by hand (floor)", expected=chain_grad_numpy(x0))
    w.add("NumPy by hand (floor)", "numpy", lambda: lambda: chain_grad_numpy(x0))

    def build_torch(T: Any, compile: Any) -> Callable[[], Any]:
        x = T.tensor(x0, requires_grad=True)
        f = lambda a: chain(a, lambda y: y.tanh()).sum()
        f = compile(f) if compile is not None else f

        def run() -> Any:
            x.grad = None
            f(x).backward()
            return x.grad
        return run

    torch_rows(w, peers, build_torch)
    ftc = fg_torch_compile()
    if ftc is None:
        w.skip("funcgrad.torch.compile", "not in this funcgrad (no funcgrad.torch.compile)")
    else:
        w.add("funcgrad.torch.compile", "funcgrad.torch", lambda: _fg_compiled_chain(ftc, x0))
    fx = fnp.asarray(x0)
    g = fg.grad(lambda a: chain(a, fnp.tanh).sum())
    jg = fg.jit(g)
    w.add("funcgrad.grad eager", "funcgrad", lambda: lambda: g(fx))
    w.add("funcgrad.jit(grad)", "funcgrad", lambda: lambda: jg(fx))
    _jax_rows(w, peers, lambda jnp: (lambda a: chain(a, jnp.tanh).sum()), (x0,), "jax.grad",
              lambda jax: jax.grad)
    autograd = peers.get("autograd")
    if autograd is None:
        w.skip("HIPS autograd grad", peers.why("autograd"))
    else:
        import autograd.numpy as anp

        ag = autograd.grad(lambda a: chain(a, anp.tanh).sum())
        w.add("HIPS autograd grad", "autograd", lambda: lambda: ag(x0))
    return w


def _fg_compiled_chain(ftc: Any, x0: np.ndarray) -> Callable[[], Any]:
    x = ft.tensor(x0, requires_grad=True)

    @ftc
    def step() -> Any:
        x.grad = None
        chain(x, lambda y: y.tanh()).sum().backward()
        return x.grad

    return step


def _jax_rows(w: Workload, peers: Peers, make: Callable[[Any], Callable[..., Any]],
              args: tuple[np.ndarray, ...], label: str,
              transform: Callable[[Any], Callable[..., Any]], jit_name: str = "") -> None:
    """``label`` eager and ``jax.jit(label)`` rows of ``transform(jax)(make(jnp))``."""
    jax = peers.get("jax")
    jit_name = jit_name or f"jax.jit({label})"
    if jax is None:
        w.skip(f"{label} eager", peers.why("jax"))
        w.skip(jit_name, peers.why("jax"))
        return
    import jax.numpy as jnp

    f = transform(jax)(make(jnp))
    jf = jax.jit(f)
    jargs = [jax.device_put(a) for a in args]
    w.add(f"{label} eager", "jax", lambda: lambda: jax.block_until_ready(f(*jargs)))
    w.add(jit_name, "jax", lambda: lambda: jax.block_until_ready(jf(*jargs)))


# ------------------------------------------------------------------ W2: MLP value_and_grad


def mlp_params(sz: Sizes, seed: int = 2) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n_in, n_hidden, n_out = sz.mlp
    params = [(rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in)).astype(F32),
              (0.1 * rng.standard_normal(n_hidden)).astype(F32),
              (rng.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden)).astype(F32),
              (0.1 * rng.standard_normal(n_out)).astype(F32)]
    x = rng.standard_normal((sz.batch, n_in)).astype(F32)
    onehot = np.eye(n_out, dtype=F32)[rng.integers(0, n_out, sz.batch)]
    return params, x, onehot


def mlp_loss(params: list[Any], x: Any, onehot: Any, m: Any) -> Any:
    """Softmax cross-entropy of a ReLU MLP; ``m`` has ``maximum``, ``max``, ``exp``, ``log``,
    ``sum`` (NumPy's spelling; the torch faces get a small adapter)."""
    W1, b1, W2, b2 = params
    h = m.maximum(x @ W1 + b1, 0.0)
    z = h @ W2 + b2
    mx = m.max(z, axis=1, keepdims=True)
    lse = m.log(m.sum(m.exp(z - mx), axis=1, keepdims=True)) + mx
    return -m.sum(onehot * (z - lse)) / x.shape[0]


def mlp_value_and_grad_numpy(params: list[np.ndarray], x: np.ndarray, onehot: np.ndarray
                             ) -> list[Any]:
    W1, b1, W2, b2 = params
    z1 = x @ W1 + b1
    h = np.maximum(z1, 0.0)
    z = h @ W2 + b2
    mx = z.max(axis=1, keepdims=True)
    e = np.exp(z - mx)
    s = e.sum(axis=1, keepdims=True)
    loss = -np.sum(onehot * (z - np.log(s) - mx)) / x.shape[0]
    d = (e / s - onehot) / x.shape[0]
    dh = (d @ W2.T) * (z1 > 0)
    return [loss, x.T @ dh, dh.sum(axis=0), h.T @ d, d.sum(axis=0)]


class TorchNS:
    """NumPy-style names for a torch-like module ``T`` (funcgrad.torch or torch)."""

    def __init__(self, T: Any) -> None:
        self.T = T
        self.exp, self.log, self.tanh, self.sin, self.cos = T.exp, T.log, T.tanh, T.sin, T.cos

    def maximum(self, a: Any, c: float) -> Any:
        return a.clamp(min=c)

    def max(self, a: Any, axis: int, keepdims: bool = False) -> Any:
        return a.amax(dim=axis, keepdim=keepdims)

    def sum(self, a: Any, axis: Any = None, keepdims: bool = False) -> Any:
        return a.sum() if axis is None else a.sum(dim=axis, keepdim=keepdims)


def w2(peers: Peers, sz: Sizes) -> Workload:
    params, x, onehot = mlp_params(sz)
    n_in, n_hidden, n_out = sz.mlp
    w = Workload("W2", f"MLP {n_in}-{n_hidden}-{n_out} value_and_grad, batch {sz.batch}",
                 "NumPy by hand (floor)", expected=mlp_value_and_grad_numpy(params, x, onehot),
                 tol=2e-4)
    w.add("NumPy by hand (floor)", "numpy",
          lambda: lambda: mlp_value_and_grad_numpy(params, x, onehot))

    def build_torch(T: Any, compile: Any) -> Callable[[], Any]:
        tp = [T.tensor(p, requires_grad=True) for p in params]
        tx, to = T.tensor(x), T.tensor(onehot)
        ns = TorchNS(T)
        f = lambda p, a, o: mlp_loss(p, a, o, ns)
        f = compile(f) if compile is not None else f

        def run() -> Any:
            for p in tp:
                p.grad = None
            loss = f(tp, tx, to)
            loss.backward()
            return [loss.detach()] + [p.grad for p in tp]
        return run

    torch_rows(w, peers, build_torch)
    fp = [fnp.asarray(p) for p in params]
    fx, fo = fnp.asarray(x), fnp.asarray(onehot)
    vg = fg.value_and_grad(lambda p, a, o: mlp_loss(p, a, o, fnp))
    jvg = fg.jit(vg)
    w.add("funcgrad value_and_grad eager", "funcgrad", lambda: lambda: vg(fp, fx, fo))
    w.add("funcgrad.jit(value_and_grad)", "funcgrad", lambda: lambda: jvg(fp, fx, fo))
    jax = peers.get("jax")
    if jax is None:
        w.skip("jax.value_and_grad eager", peers.why("jax"))
        w.skip("jax.jit(value_and_grad)", peers.why("jax"))
    else:
        import jax.numpy as jnp

        jvg_e = jax.value_and_grad(lambda p, a, o: mlp_loss(p, a, o, jnp))
        jvg_j = jax.jit(jvg_e)
        jp = [jax.device_put(p) for p in params]
        jx, jo = jax.device_put(x), jax.device_put(onehot)
        w.add("jax.value_and_grad eager", "jax",
              lambda: lambda: jax.block_until_ready(jvg_e(jp, jx, jo)))
        w.add("jax.jit(value_and_grad)", "jax",
              lambda: lambda: jax.block_until_ready(jvg_j(jp, jx, jo)))
    autograd = peers.get("autograd")
    if autograd is None:
        w.skip("HIPS autograd value_and_grad", peers.why("autograd"))
    else:
        import autograd.numpy as anp

        avg = autograd.value_and_grad(lambda p, a, o: mlp_loss(p, a, o, anp))
        w.add("HIPS autograd value_and_grad", "autograd", lambda: lambda: avg(params, x, onehot))
    return w


# ------------------------------------------------------------------ W3: big elementwise chain


def chain12(x: Any, m: Any) -> Any:
    return m.tanh(x * 1.5 + 0.5) * m.exp(-(x * x)) + m.sin(x) * 0.25 - x / (x * x + 1.0)


def chain12_grad_numpy(x: np.ndarray) -> np.ndarray:
    """d/dx of ``chain12(x).sum()`` as a NumPy user writes it (one temporary per op)."""
    t = np.tanh(x * 1.5 + 0.5)
    e = np.exp(-(x * x))
    x2 = x * x
    return (1.5 * (1.0 - t * t) * e - 2.0 * x * t * e + 0.25 * np.cos(x)
            - (1.0 - x2) / ((x2 + 1.0) * (x2 + 1.0)))


def w3(peers: Peers, sz: Sizes) -> Workload:
    x0 = np.random.default_rng(3).standard_normal(sz.w3_n).astype(F32)
    w = Workload("W3", f"gradient of a 12-op elementwise chain, f32[{sz.w3_n:.0e}]"
                 .replace("+0", ""), "NumPy gradient by hand (floor)",
                 expected=chain12_grad_numpy(x0))
    w.add("NumPy gradient by hand (floor)", "numpy", lambda: lambda: chain12_grad_numpy(x0))
    fx = fnp.asarray(x0)
    g = fg.grad(lambda a: chain12(a, fnp).sum())
    jg = fg.jit(g)
    w.add("funcgrad.jit(grad)", "funcgrad", lambda: lambda: jg(fx))
    w.add("funcgrad.grad eager", "funcgrad", lambda: lambda: g(fx))

    def build_torch(T: Any, compile: Any) -> Callable[[], Any]:
        x = T.tensor(x0, requires_grad=True)
        f = lambda a: chain12(a, T).sum()
        f = compile(f) if compile is not None else f

        def run() -> Any:
            x.grad = None
            f(x).backward()
            return x.grad
        return run

    torch_rows(w, peers, build_torch)
    _jax_rows(w, peers, lambda jnp: (lambda a: chain12(a, jnp).sum()), (x0,), "jax.grad",
              lambda jax: jax.grad)
    return w


# ------------------------------------------------------------------ W4: reductions, softmax


def reductions_numpy(x: np.ndarray) -> list[np.ndarray]:
    mx = x.max(axis=1, keepdims=True)
    e = np.exp(x - mx)
    s = e.sum(axis=1, keepdims=True)
    return [x.sum(axis=1), x.max(axis=0), (np.log(s) + mx)[:, 0], e / s]


def w4(peers: Peers, sz: Sizes) -> Workload:
    x0 = np.random.default_rng(4).standard_normal(sz.w4_shape).astype(F32)
    w = Workload("W4", f"sum(axis=1), max(axis=0), logsumexp and softmax over rows, "
                 f"f32{list(sz.w4_shape)}", "NumPy by hand (floor)",
                 expected=reductions_numpy(x0), tol=1e-5)
    w.add("NumPy by hand (floor)", "numpy", lambda: lambda: reductions_numpy(x0))
    fx = fnp.asarray(x0)
    f = lambda a: [fnp.sum(a, axis=1), fnp.max(a, axis=0), fg.nn.logsumexp(a, axis=1),
                   fg.nn.softmax(a, axis=1)]
    jf = fg.jit(f)
    w.add("funcgrad eager", "funcgrad", lambda: lambda: f(fx))
    w.add("funcgrad.jit", "funcgrad", lambda: lambda: jf(fx))

    def build_torch(T: Any, compile: Any) -> Callable[[], Any]:
        x = T.tensor(x0)
        g = lambda a: [a.sum(1), a.amax(0), a.logsumexp(1), a.softmax(1)]
        g = compile(g) if compile is not None else g
        return lambda: g(x)

    torch_rows(w, peers, build_torch)
    _jax_rows(w, peers, lambda jnp: _jax_reductions, (x0,), "jax", lambda jax: lambda h: h,
              "jax.jit")
    return w


def _jax_reductions(a: Any) -> Any:
    import jax
    import jax.numpy as jnp

    return [jnp.sum(a, axis=1), jnp.max(a, axis=0), jax.nn.logsumexp(a, axis=1),
            jax.nn.softmax(a, axis=1)]


# ------------------------------------------------------------------ W5: fori_loop


def w5(peers: Peers, sz: Sizes) -> Workload:
    x0 = np.linspace(-1.0, 1.0, 16).astype(F32)
    n = sz.w5_steps

    def body_np(x: np.ndarray) -> np.ndarray:
        for _ in range(n):
            x = np.sin(x) * F32(0.99) + F32(0.01)
        return x

    w = Workload("W5", f"jitted fori_loop of {n} small steps (sin(x)*0.99 + 0.01 on f32[16]) "
                 "vs the same body unrolled", "funcgrad.jit, unrolled", expected=body_np(x0),
                 tol=1e-5)

    def make(m: Any, lax: Any) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
        step = lambda i, x: m.sin(x) * 0.99 + 0.01

        def unrolled(x: Any) -> Any:
            for i in range(n):
                x = step(i, x)
            return x
        return (lambda x: lax.fori_loop(0, n, step, x)), unrolled

    fori, unrolled = make(fnp, fg.lax)
    jfori, junr = fg.jit(fori), fg.jit(unrolled)
    fx = fnp.asarray(x0)
    w.add("funcgrad.jit, unrolled", "funcgrad", lambda: lambda: junr(fx))
    w.add("funcgrad.jit(fori_loop)", "funcgrad", lambda: lambda: jfori(fx))
    w.add("NumPy loop", "numpy", lambda: lambda: body_np(x0))
    jax = peers.get("jax")
    if jax is None:
        w.skip("jax.jit, unrolled", peers.why("jax"))
        w.skip("jax.jit(fori_loop)", peers.why("jax"))
    else:
        import jax.numpy as jnp

        jf, ju = (jax.jit(h) for h in make(jnp, jax.lax))
        jx = jax.device_put(x0)
        w.add("jax.jit, unrolled", "jax", lambda: lambda: ju(jx).block_until_ready())
        w.add("jax.jit(fori_loop)", "jax", lambda: lambda: jf(jx).block_until_ready())
    return w


# ------------------------------------------------------------------ W6: per-example grads


def w6(peers: Peers, sz: Sizes) -> Workload:
    rng = np.random.default_rng(6)
    b, d = sz.w6_batch, sz.w6_features
    wv = (rng.standard_normal(d) / np.sqrt(d)).astype(F32)
    X = rng.standard_normal((b, d)).astype(F32)
    y = (rng.random(b) < 0.5).astype(F32)

    def closed_form() -> np.ndarray:
        return X * (1.0 / (1.0 + np.exp(-(X @ wv))) - y)[:, None]

    w = Workload("W6", f"per-example gradients of logistic regression (vmap(grad)), batch {b}, "
                 f"{d} features", "NumPy closed form (floor)", expected=closed_form())
    w.add("NumPy closed form (floor)", "numpy", lambda: closed_form)
    # softplus(z) - y z: binary cross-entropy with logits, d/dw = (sigmoid(z) - y) x
    loss = lambda m, zeros: lambda p, a, t: m.logaddexp(zeros, a @ p) - t * (a @ p)
    pe = fg.vmap(fg.grad(loss(fnp, 0.0)), in_axes=(None, 0, 0))
    jpe = fg.jit(pe)
    fw, fX, fy = fnp.asarray(wv), fnp.asarray(X), fnp.asarray(y)
    w.add("funcgrad vmap(grad) eager", "funcgrad", lambda: lambda: pe(fw, fX, fy))
    w.add("funcgrad.jit(vmap(grad))", "funcgrad", lambda: lambda: jpe(fw, fX, fy))
    tloss = lambda T: lambda p, a, t: T.nn.functional.softplus(a @ p) - t * (a @ p)
    fpe = ft.func.vmap(ft.func.grad(tloss(ft)), in_dims=(None, 0, 0))
    tw, tX, ty = ft.tensor(wv), ft.tensor(X), ft.tensor(y)
    w.add("funcgrad.torch.func.vmap(grad)", "funcgrad.torch", lambda: lambda: fpe(tw, tX, ty))
    torch = peers.get("torch")
    if torch is None:
        w.skip("torch.func.vmap(grad)", peers.why("torch"))
    else:
        tpe = torch.func.vmap(torch.func.grad(tloss(torch)), in_dims=(None, 0, 0))
        pw, pX, py = (torch.from_numpy(a) for a in (wv, X, y))
        w.add("torch.func.vmap(grad)", "torch", lambda: lambda: tpe(pw, pX, py))
    _jax_rows(w, peers, lambda jnp: loss(jnp, 0.0), (wv, X, y), "jax.vmap(grad)",
              lambda jax: lambda f: jax.vmap(jax.grad(f), in_axes=(None, 0, 0)))
    return w


# ------------------------------------------------------------------ W7: LSTM and CNN steps


def _set_params(model: Any, T: Any, values: dict[str, np.ndarray]) -> None:
    with T.no_grad():
        for name, p in model.named_parameters():
            p.copy_(T.tensor(values[name]))


def _init_values(model: Any, seed: int) -> dict[str, np.ndarray]:
    """Seeded parameter values by name (the same for both libraries' models)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, p in model.named_parameters():
        fan_in = int(np.prod(p.shape[1:])) if len(p.shape) > 1 else int(p.shape[0])
        out[name] = (rng.standard_normal(tuple(p.shape)) / np.sqrt(fan_in)).astype(F32)
    return out


def lstm_model(T: Any, vocab: int, emb: int, hidden: int) -> Any:
    class CharLSTM(T.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = T.nn.Embedding(vocab, emb)
            self.lstm = T.nn.LSTM(emb, hidden, batch_first=True)
            self.out = T.nn.Linear(hidden, vocab)

        def forward(self, x: Any) -> Any:
            h, _ = self.lstm(self.embed(x))
            return self.out(h)

    return CharLSTM()


def w7_lstm(peers: Peers, sz: Sizes) -> Workload:
    vocab, emb, hidden, seq, batch = sz.lstm
    rng = np.random.default_rng(7)
    tokens = rng.integers(0, vocab, (batch, seq + 1))
    values = _init_values(lstm_model(ft, vocab, emb, hidden), 7)
    w = Workload("W7 LSTM", f"char-LSTM step (embedding {emb}, hidden {hidden}, sequence {seq}, "
                 f"batch {batch}), forward + backward", TORCH_EAGER, tol=2e-4)

    def build(T: Any, compile: Any) -> Callable[[], Any]:
        model = lstm_model(T, vocab, emb, hidden)
        _set_params(model, T, values)
        fwd = compile(model) if compile is not None else model
        x, y = T.tensor(tokens[:, :-1]), T.tensor(tokens[:, 1:])
        loss_fn = T.nn.CrossEntropyLoss()

        def run() -> Any:
            model.zero_grad()
            loss = loss_fn(fwd(x).reshape(-1, vocab), y.reshape(-1))
            loss.backward()
            return [loss.detach()] + [p.grad for p in model.parameters()]
        return run

    torch_rows(w, peers, build)
    return w


def cnn_model(T: Any, side: int) -> Any:
    """The digits CNN of examples/cnn_digits.py without its BatchNorm and Dropout."""
    nn = T.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * (side // 4) ** 2, 10))


def w7_cnn(peers: Peers, sz: Sizes) -> Workload:
    side = sz.cnn_side
    rng = np.random.default_rng(8)
    x0 = rng.random((sz.batch, 1, side, side)).astype(F32)
    y0 = rng.integers(0, 10, sz.batch)
    values = _init_values(cnn_model(ft, side), 8)
    # tol: PyTorch's float32 CPU convolution gradients differ from a float64 computation by up
    # to 4e-3 of their largest value (funcgrad's by 3e-7), so the check compares loosely
    w = Workload("W7 CNN", f"digits CNN step (conv-relu-pool x2 + linear, {side}x{side}, batch "
                 f"{sz.batch}), forward + backward + SGD", TORCH_EAGER, tol=1e-2)

    def build(T: Any, compile: Any) -> Callable[[], Any]:
        model = cnn_model(T, side)
        _set_params(model, T, values)
        fwd = compile(model) if compile is not None else model
        opt = T.optim.SGD(model.parameters(), lr=0.01)
        x, y = T.tensor(x0), T.tensor(y0)
        loss_fn = T.nn.CrossEntropyLoss()
        first = [True]

        def run() -> Any:
            opt.zero_grad()
            loss = loss_fn(fwd(x), y)
            loss.backward()
            # the check compares the first call's gradients; later calls train on
            grads = [p.grad.clone() for p in model.parameters()] if first[0] else []
            first[0] = False
            opt.step()
            return [loss.detach()] + grads
        return run

    torch_rows(w, peers, build)
    return w


# ------------------------------------------------------------------ MLP training loop


def tutorial_mlp(T: Any, hidden: int) -> Any:
    nn = T.nn
    return nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, hidden), nn.ReLU(),
                         nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 10))


def loop_data(sz: Sizes) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(9)
    return (rng.random((sz.loop_samples, 1, 28, 28)).astype(F32),
            rng.integers(0, 10, sz.loop_samples))


def w_loop(peers: Peers, sz: Sizes) -> Workload:
    X0, y0 = loop_data(sz)
    values = _init_values(tutorial_mlp(ft, sz.loop_hidden), 9)
    h = sz.loop_hidden
    w = Workload("MLP loop", f"PyTorch tutorial training loop, MLP 784-{h}-{h}-10, SGD, "
                 f"DataLoader batch 64 over {sz.loop_samples} samples", TORCH_EAGER,
                 tol=1e-3, unit="epoch")

    def build(T: Any, compile: Any, fg_compile: Any = None) -> Callable[[], Any]:
        from_lib = T.utils.data
        loader = from_lib.DataLoader(from_lib.TensorDataset(T.tensor(X0), T.tensor(y0)),
                                     batch_size=64)
        model = tutorial_mlp(T, h)
        _set_params(model, T, values)
        fwd = compile(model) if compile is not None else model
        loss_fn = T.nn.CrossEntropyLoss()
        optimizer = T.optim.SGD(model.parameters(), lr=1e-3)

        def train_step(X: Any, y: Any) -> Any:
            loss = loss_fn(fwd(X), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            return loss

        step = fg_compile(train_step) if fg_compile is not None else train_step
        epochs = [0]

        def epoch() -> Any:
            model.train()
            losses = [step(X, y) for X, y in loader]
            # checked: the first epoch's losses (later epochs keep training)
            out = [T.stack(losses).detach()] if epochs[0] == 0 else []
            epochs[0] += 1
            return out + [losses[-1].detach()]
        return epoch

    torch_rows(w, peers, build, fg_name="funcgrad.torch eager")
    ftc = fg_torch_compile()
    if ftc is None:
        w.skip("funcgrad.torch.compile", "not in this funcgrad (no funcgrad.torch.compile)")
    else:
        w.add("funcgrad.torch.compile", "funcgrad.torch", lambda: build(ft, None, ftc))
    return w


# ------------------------------------------------------------------ memory


@dataclass
class Memory:
    rows: list[dict[str, Any]] = field(default_factory=list)


def _tracemalloc_fwd_bwd(forward: Callable[[], Any], backward: Callable[[Any], Any]
                         ) -> tuple[int, int]:
    """(bytes held after the forward, peak bytes of forward + backward), above the baseline."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = forward()
        held = tracemalloc.get_traced_memory()[0] - base
        backward(out)
        del out
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return held, peak


def memory(peers: Peers, sz: Sizes) -> Memory:
    """What one forward + backward of the tutorial MLP keeps and peaks at (batch 64)."""
    X0, y0 = loop_data(sz)
    x0, t0 = X0[:64], y0[:64]
    b = len(x0)
    values = _init_values(tutorial_mlp(ft, sz.loop_hidden), 9)
    mem = Memory()

    def setup(T: Any) -> tuple[Any, Any, Any, Any]:
        model = tutorial_mlp(T, sz.loop_hidden)
        _set_params(model, T, values)
        x, y = T.tensor(x0), T.tensor(t0)
        loss_fn = T.nn.CrossEntropyLoss()
        loss_fn(model(x), y).backward()  # warm-up: caches, lazily made state
        model.zero_grad(set_to_none=True)
        return model, x, y, loss_fn

    model, x, y, loss_fn = setup(ft)
    held, peak = _tracemalloc_fwd_bwd(lambda: loss_fn(model(x), y), lambda loss: loss.backward())
    grad_bytes = sum(p.numel() * 4 for p in model.parameters())
    mem.rows.append({"name": "funcgrad.torch", "held_bytes": held, "peak_bytes": peak,
                     "grad_bytes": grad_bytes,
                     "how": "tracemalloc (NumPy buffers and Python objects)"})

    fparams = [fnp.asarray(values[k]) for k in sorted(values)]
    names = sorted(values)
    fx = fnp.asarray(x0.reshape(b, -1))
    onehot = fnp.asarray(np.eye(10, dtype=F32)[t0])

    def jax_face_loss(p: list[Any]) -> Any:
        d = dict(zip(names, p))
        h1 = fg.nn.relu(fx @ d["1.weight"].T + d["1.bias"])
        h2 = fg.nn.relu(h1 @ d["3.weight"].T + d["3.bias"])
        z = h2 @ d["5.weight"].T + d["5.bias"]
        return -fnp.sum(onehot * fg.nn.log_softmax(z, axis=1)) / b

    vjp_fn: Any = None

    def fwd() -> Any:
        nonlocal vjp_fn
        loss, vjp_fn = fg.vjp(jax_face_loss, fparams)
        return loss

    def bwd(loss: Any) -> Any:
        nonlocal vjp_fn
        out = vjp_fn(fnp.ones_like(loss))
        vjp_fn = None
        return out

    fwd()
    bwd(fnp.asarray(F32(0.0)))
    held, peak = _tracemalloc_fwd_bwd(fwd, bwd)
    mem.rows.append({"name": "funcgrad (JAX face) vjp", "held_bytes": held, "peak_bytes": peak,
                     "grad_bytes": grad_bytes,
                     "how": "tracemalloc; held = after fg.vjp, peak = through the vjp call"})

    torch = peers.get("torch")
    if torch is None:
        mem.rows.append({"name": TORCH_EAGER, "why": peers.why("torch")})
        return mem
    model, x, y, loss_fn = setup(torch)
    before = {t.untyped_storage().data_ptr() for t in [*model.parameters(), x, y]}
    saved: dict[int, int] = {}

    def pack(t: Any) -> Any:
        st = t.untyped_storage()
        saved[st.data_ptr()] = st.nbytes()
        return t

    def forward() -> Any:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            return loss_fn(model(x), y)

    tm_held, tm_peak = _tracemalloc_fwd_bwd(forward, lambda loss: loss.backward())
    new = sum(n for ptr, n in saved.items() if ptr not in before)
    mem.rows.append({"name": TORCH_EAGER, "held_bytes": new, "peak_bytes": new + grad_bytes,
                     "grad_bytes": grad_bytes, "saved_all_bytes": sum(saved.values()),
                     "tracemalloc_held_bytes": tm_held, "tracemalloc_peak_bytes": tm_peak,
                     "how": "saved_tensors_hooks: held = saved tensors other than parameters "
                            "and inputs; peak = held + gradients"})
    model.zero_grad(set_to_none=True)
    mem.rows.append(_torch_profiler_peak(torch, lambda: loss_fn(model(x), y).backward()))
    return mem


def _torch_profiler_peak(torch: Any, fwd_bwd: Callable[[], Any]) -> dict[str, Any]:
    """PyTorch's CPU allocations through forward + backward, from the profiler's memory
    timeline (a private API of torch.profiler: a cross-check of the saved-tensor count)."""
    name = "PyTorch eager (profiler timeline)"
    try:
        from torch.profiler import ProfilerActivity, profile
        from torch.profiler._memory_profiler import MemoryProfileTimeline

        with profile(activities=[ProfilerActivity.CPU], profile_memory=True,
                     record_shapes=True, with_stack=True) as prof:
            fwd_bwd()
        timeline = MemoryProfileTimeline(prof._memory_profile())
        _, sizes = timeline._coalesce_timeline(torch.device("cpu"))
        total = np.asarray(sizes).sum(axis=1)
    except Exception as e:  # noqa: BLE001 - a private API: report why it is missing
        return {"name": name, "why": failure("unavailable", e)}
    return {"name": name, "held_bytes": None, "peak_bytes": int(total.max() - total[0]),
            "how": "torch.profiler memory timeline (private API), peak above the start"}


# ------------------------------------------------------------------ running, reporting


BUILDERS: dict[str, Callable[[Peers, Sizes], Workload]] = {
    "W1": w1, "W2": w2, "W3": w3, "W4": w4, "W5": w5, "W6": w6, "W7": w7_lstm,
    "CNN": w7_cnn, "loop": w_loop}


def run_workload(w: Workload, repeat: int, min_time: float) -> list[dict[str, Any]]:
    check(w)
    times = _time_rows(w, repeat, min_time)
    ref = times.get(w.reference, (None, 0))[0]
    t_torch = times.get(TORCH_EAGER, (None, 0))[0]
    rows = []
    for name in w.order:
        t, number = times.get(name, (None, 0))
        rows.append({
            "workload": w.key, "name": name, "face": w.faces.get(name, ""), "seconds": t,
            "unit": w.unit, "calls_per_repeat": number,
            "ratio_ref": t / ref if t is not None and ref else None,
            "ratio_torch": t / t_torch if t is not None and t_torch else None,
            "status": w.skipped.get(name, "ok")})
    return rows


def _time_rows(w: Workload, repeat: int, min_time: float) -> dict[str, tuple[float, int]]:
    """median_times of the rows; a row that raises while timed (a compiled step whose guard
    fails later, say) is dropped with its reason and the others are timed again."""
    errors: dict[str, Exception] = {}

    def guarded(name: str, fn: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            try:
                return fn()
            except Exception as e:
                errors[name] = e
                raise
        return run

    while w.impls:
        try:
            return median_times({i.name: guarded(i.name, i.fn) for i in w.impls}, repeat,
                                min_time)
        except Exception:
            if not errors:
                raise
            for name, e in errors.items():
                w.skipped[name] = failure("failed while timed", e)
            w.impls = [i for i in w.impls if i.name not in errors]
            errors.clear()
    return {}


def _ratio(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _row(rows: list[dict[str, Any]], key: str, name: str) -> dict[str, Any] | None:
    return next((r for r in rows if r["workload"] == key and r["name"] == name), None)


def goals(rows: list[dict[str, Any]], mem: Memory | None) -> list[dict[str, Any]]:
    """The issue's goals, each met / not met / not measured (with the reason)."""

    def ratio(key: str, name: str, over: str | None = None) -> tuple[float | None, str]:
        r = _row(rows, key, name)
        if r is None:
            return None, f"{key} not run"
        if r["seconds"] is None:
            return None, f"{name}: {r['status']}"
        if over is None:
            return r["ratio_torch"], "" if r["ratio_torch"] else "PyTorch eager not measured"
        o = _row(rows, key, over)
        if o is None or o["seconds"] is None:
            return None, f"{over}: {o['status'] if o else 'not run'}"
        return r["seconds"] / o["seconds"], ""

    specs = [
        ("MLP training loop, funcgrad.torch / PyTorch eager (per epoch)", 1.5,
         ratio("MLP loop", "funcgrad.torch eager")),
        ("W1 funcgrad.torch / PyTorch eager", 2.0, ratio("W1", "funcgrad.torch eager")),
        ("W1 funcgrad.grad eager / HIPS autograd", 1.0,
         ratio("W1", "funcgrad.grad eager", "HIPS autograd grad")),
        ("funcgrad.torch.compile'd MLP loop / PyTorch eager", 1.0,
         ratio("MLP loop", "funcgrad.torch.compile")),
        ("W3 funcgrad.jit(grad) / NumPy floor", 0.6,
         ratio("W3", "funcgrad.jit(grad)", "NumPy gradient by hand (floor)")),
        ("W5 jitted fori_loop / unrolled jit", 2.0,
         ratio("W5", "funcgrad.jit(fori_loop)", "funcgrad.jit, unrolled")),
    ]
    mem_ratio: tuple[float | None, str] = (None, "memory not measured")
    if mem is not None:
        by = {r["name"]: r for r in mem.rows}
        t = by.get(TORCH_EAGER, {})
        if "peak_bytes" in t:
            mem_ratio = (by["funcgrad.torch"]["peak_bytes"] / t["peak_bytes"], "")
        else:
            mem_ratio = (None, f"PyTorch: {t.get('why', 'not measured')}")
    specs.append(("MLP forward+backward peak memory, funcgrad.torch / PyTorch", 1.2, mem_ratio))
    out = []
    for text, limit, (value, why) in specs:
        verdict = ("met" if value <= limit else "not met") if value is not None \
            else f"not measured ({why})"
        out.append({"goal": f"{text} <= {limit}x", "value": value, "verdict": verdict})
    return out


def _mib(n: int | None) -> str:
    return "-" if n is None else f"{n / 2 ** 20:.2f} MiB"


def markdown(rows: list[dict[str, Any]], titles: dict[str, tuple[str, str]], mem: Memory | None,
             goal_list: list[dict[str, Any]], machine: str) -> str:
    lines = [f"machine: {machine}", "",
             "| workload | implementation | time | / reference | / PyTorch eager | notes |",
             "|---|---|---:|---:|---:|---|"]
    for key, (title, ref) in titles.items():
        lines.append(f"| **{key}** | {title} (reference: {ref}) | | | | |")
        for r in (r for r in rows if r["workload"] == key):
            t = "-" if r["seconds"] is None else fmt_time(r["seconds"], 0).strip()
            if r["seconds"] is not None and r["unit"] != "call":
                t += f"/{r['unit']}"
            note = "" if r["status"] == "ok" else r["status"]
            lines.append(f"| {key} | {r['name']} | {t} | {_ratio(r['ratio_ref'])} | "
                         f"{_ratio(r['ratio_torch'])} | {note} |")
    if mem is not None:
        lines += ["", "| memory: MLP forward + backward, one batch | held for backward | peak | "
                  "how |", "|---|---:|---:|---|"]
        for m in mem.rows:
            if "why" in m:
                lines.append(f"| {m['name']} | - | - | {m['why']} |")
                continue
            extra = ""
            if "tracemalloc_peak_bytes" in m:
                extra = (f" (all saved tensors incl. parameters {_mib(m['saved_all_bytes'])};"
                         f" tracemalloc sees {_mib(m['tracemalloc_peak_bytes'])} peak)")
            lines.append(f"| {m['name']} | {_mib(m['held_bytes'])} | {_mib(m['peak_bytes'])} | "
                         f"{m['how']}{extra} |")
    lines += ["", "Goals of the issue (one run):", ""]
    for g in goal_list:
        v = "" if g["value"] is None else f": {g['value']:.2f}x"
        lines.append(f"- {g['goal']}{v} — **{g['verdict']}**")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: pathlib.Path) -> bool:
    """A bar chart of the ratios to each workload's reference (log scale), with matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    timed = [r for r in rows if r["ratio_ref"]]
    if not timed:
        return False
    fig, ax = plt.subplots(figsize=(8, 0.25 * len(timed) + 1))
    labels = [f"{r['workload']}: {r['name']}" for r in timed]
    ax.barh(range(len(timed)), [r["ratio_ref"] for r in timed],
            color=["C0" if r["face"].startswith("funcgrad") else "C7" for r in timed])
    ax.set_yticks(range(len(timed)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xlabel("time / the workload's reference (log scale; funcgrad in blue)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def machine_line(peers: Peers) -> str:
    extra = []
    autograd = peers.get("autograd")
    if autograd is not None:
        from importlib.metadata import version

        extra.append(f"autograd {version('autograd')}")
    load = ""
    if hasattr(os, "getloadavg"):
        load = "; load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())
    return (f"{os.cpu_count()} CPU cores ({platform.machine()}, {platform.system()}), shared; "
            f"{', '.join([versions(), *extra])}{load}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timeit repeats (median)")
    parser.add_argument("--min-time", type=float, default=0.2,
                        help="seconds each timeit repeat should at least take")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 3 short repeats, smaller W3/W4/loop, no torch.compile")
    parser.add_argument("--tiny", action="store_true", help="tiny sizes (the test's smoke run)")
    parser.add_argument("--no-peers", action="store_true",
                        help="skip JAX, PyTorch and HIPS autograd")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--workloads", default=",".join([*BUILDERS, "memory"]),
                        help=f"comma-separated subset of {','.join([*BUILDERS, 'memory'])}")
    parser.add_argument("--json", type=pathlib.Path, default=None,
                        help="results file (default benchmarks/results/workloads.json, "
                             "workloads_quick.json with --quick/--tiny)")
    parser.add_argument("--markdown", type=pathlib.Path, default=None,
                        help="also write the Markdown table to this file")
    parser.add_argument("--plot", type=pathlib.Path, default=None,
                        help="PNG bar chart (default next to the JSON file; needs matplotlib)")
    args = parser.parse_args(argv)
    if args.quick or args.tiny:
        args.repeat, args.min_time = 3, 0.02
    sz = sizes_for(args.quick, args.tiny)
    peers = Peers(not args.no_peers, not (args.no_compile or args.quick or args.tiny))
    if peers.get("torch") is not None and (args.quick or args.tiny) and not args.no_compile:
        peers.compile_why = "skipped (--quick: compiling takes ~30 s per function here)"
    wanted = args.workloads.split(",")
    unknown = set(wanted) - {*BUILDERS, "memory"}
    if unknown:
        parser.error(f"unknown workloads {sorted(unknown)}")
    results = args.json or HERE / "results" / (
        "workloads_quick.json" if args.quick or args.tiny else "workloads.json")
    machine = machine_line(peers)
    print(f"funcgrad speed-issue workloads; machine: {machine}")
    print(f"time: median of {args.repeat} interleaved timeit repeats of the mean time per call "
          "(per epoch for the MLP loop); / reference = time / the workload's reference "
          "(< 1: faster)")
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    titles: dict[str, tuple[str, str]] = {}
    for key in (k for k in BUILDERS if k in wanted):
        t_w = time.perf_counter()
        w = BUILDERS[key](peers, sz)
        titles[w.key] = (w.title, w.reference)
        rows += run_workload(w, args.repeat, args.min_time)
        print(f"  {w.key}: {time.perf_counter() - t_w:.0f} s", flush=True)
    mem = memory(peers, sz) if "memory" in wanted else None
    goal_list = goals(rows, mem)
    table = markdown(rows, titles, mem, goal_list, machine)
    print()
    print(table)
    print(f"(total {time.perf_counter() - t0:.0f} s)")
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps({
        "machine": machine, "repeat": args.repeat, "min_time": args.min_time,
        "quick": args.quick, "tiny": args.tiny, "workloads": titles, "rows": rows,
        "memory": mem.rows if mem else None, "goals": goal_list}, indent=1) + "\n")
    print(f"wrote {results}")
    if args.markdown:
        args.markdown.write_text(table)
        print(f"wrote {args.markdown}")
    png = args.plot or results.with_suffix(".png")
    if plot(rows, png):
        print(f"wrote {png}")


if __name__ == "__main__":
    main()
