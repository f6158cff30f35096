"""Random Tensor programs for differential fuzzing of funcgrad.torch against PyTorch 2.13.

A program (:class:`TorchProg`) is plain data: the input shape, how many leaf tensors, a
dtype, op tuples and a value seed. Ops are Tensor methods and torch functions (elementwise
math kept away from kinks and poles, binary ops against an earlier value of the same shape
shifted by ``0.7 * y + 0.13``, reductions over a drawn dim, softmax/log_softmax, shape ops,
basic and advanced indexing, ``gather``/``index_select``, ``matmul``, ``where``/
``masked_fill`` and in-place updates of intermediate tensors; and from
tests/support/fuzz_torch_index_ops.py scatter/scatter_add/scatter_reduce, index_add/copy/
fill/put, tensor and boolean-mask assignment, take/take_along_dim, topk, kthvalue, median,
cummax, cumprod, logcumsumexp, split/chunk/unbind/narrow, stack/cat, permute/movedim,
repeat, pad, unfold, diff, tril/triu/diagonal, einsum and masked_scatter); :func:`run` builds it on
either library (``t`` is ``torch`` or ``funcgrad.torch``). :func:`check` compares the
output's values, dtype, shape and ``grad_fn`` name, the leaves' ``.grad`` after ``backward``
of a weighted sum, and second derivatives (``create_graph=True``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from fuzz_programs import Drawer
from fuzz_torch_index_ops import INDEX, PAIR

Op = tuple[Any, ...]


UNARY: dict[str, Callable[[Any, Any], Any]] = {  # name -> (t, x) -> y; t is the library
    "sin": lambda t, x: x.sin(),
    "cos": lambda t, x: t.cos(x),
    "tanh": lambda t, x: x.tanh(),
    "exp_tanh": lambda t, x: t.exp(t.tanh(x)),
    "log1p_abs": lambda t, x: x.abs().log1p(),
    "sqrt_abs1": lambda t, x: (x.abs() + 1.0).sqrt(),
    "sigmoid": lambda t, x: t.sigmoid(x),
    "square": lambda t, x: x.square(),
    "pow3": lambda t, x: x ** 3,
    "gelu": lambda t, x: t.nn.functional.gelu(x),
    "softplus": lambda t, x: t.nn.functional.softplus(x),
    "neg_mul": lambda t, x: -x * 2.5,
    "rsub": lambda t, x: 1.0 - x,
    "clamp": lambda t, x: x.clamp(-0.9, 0.8),
    "atan": lambda t, x: t.atan(x),
    "relu": lambda t, x: t.relu(x),
    "leaky_relu": lambda t, x: t.nn.functional.leaky_relu(x, 0.1),
    "elu": lambda t, x: t.nn.functional.elu(x),
    "silu": lambda t, x: t.nn.functional.silu(x),
    "mish": lambda t, x: t.nn.functional.mish(x),
    "hardtanh": lambda t, x: t.nn.functional.hardtanh(x, -0.8, 0.9),
    "erf": lambda t, x: t.erf(x),
    "exp2_tanh": lambda t, x: t.exp2(t.tanh(x)),
    "reciprocal": lambda t, x: (x.abs() + 0.5).reciprocal(),
    "rsqrt": lambda t, x: (x.abs() + 0.5).rsqrt(),
    "log_softplus": lambda t, x: t.log(t.nn.functional.softplus(x)),
    "exp": lambda t, x: x.exp(),
    "expm1": lambda t, x: t.expm1(x),
    "log_abs1": lambda t, x: (x.abs() + 1.0).log(),
    "log2_abs1": lambda t, x: t.log2(x.abs() + 1.0),
    "log10_abs1": lambda t, x: (x.abs() + 1.0).log10(),
    "log1p": lambda t, x: (x.abs()).log1p(),
    "sqrt_abs2": lambda t, x: t.sqrt(x.abs() + 2.0),
    "abs": lambda t, x: x.abs(),
    "neg": lambda t, x: -x,
    "sign_mul": lambda t, x: t.sign(x) * x,
    "floor_add": lambda t, x: t.floor(2.0 * x) + x,
    "round_add": lambda t, x: t.round(3.0 * x) + x,
    "trunc_mul": lambda t, x: x.trunc() * x,
    "frac": lambda t, x: t.frac(2.0 * x),
    "sinh": lambda t, x: t.sinh(x),
    "cosh": lambda t, x: x.cosh(),
    "asinh": lambda t, x: t.asinh(x),
    "acos_tanh": lambda t, x: t.acos(0.9 * t.tanh(x)),
    "logsigmoid": lambda t, x: t.nn.functional.logsigmoid(x),
    "hardswish": lambda t, x: t.nn.functional.hardswish(3.0 * x),
    "hardsigmoid": lambda t, x: t.nn.functional.hardsigmoid(3.0 * x),
    "softsign": lambda t, x: t.nn.functional.softsign(x),
    "tanhshrink": lambda t, x: t.nn.functional.tanhshrink(x),
    "softshrink": lambda t, x: t.nn.functional.softshrink(x, 0.3),
    "hardshrink": lambda t, x: t.nn.functional.hardshrink(x, 0.3),
    "celu": lambda t, x: t.nn.functional.celu(x, 0.5),
    "selu": lambda t, x: t.nn.functional.selu(x),
    "relu6": lambda t, x: t.nn.functional.relu6(4.0 * x),
    "logit_sigmoid": lambda t, x: t.logit(t.sigmoid(x)),
    "erfc": lambda t, x: t.erfc(x),
    "erfinv": lambda t, x: t.erfinv(0.9 * t.tanh(x)),
    "lgamma": lambda t, x: t.lgamma(x.abs() + 0.5),
    "digamma": lambda t, x: t.digamma(x.abs() + 1.0),
    "sinc": lambda t, x: t.sinc(x + 0.3),
    "deg2rad": lambda t, x: t.deg2rad(x),
    "rpow": lambda t, x: 2.0 ** x,
    "div_int": lambda t, x: x / 2,
    "rdiv": lambda t, x: 1.0 / (x.abs() + 1.0),
    "pow_float": lambda t, x: (x.abs() + 0.5) ** 1.5,
    "radd_int": lambda t, x: 3 + x,
    "clamp_min": lambda t, x: t.clamp(x, min=-0.2),
    "nan_to_num": lambda t, x: t.nan_to_num(x),
    "square_method": lambda t, x: x.pow(2),
    "mul_scalar_method": lambda t, x: x.mul(0.5).add(1.0),
}

BINARY: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda t, x, y: x + y,
    "sub": lambda t, x, y: t.sub(x, y, alpha=0.5),
    "mul": lambda t, x, y: x * y,
    "div": lambda t, x, y: x / (y.abs() + 1.0),
    "maximum": lambda t, x, y: t.maximum(x, y),
    "atan2": lambda t, x, y: t.atan2(x, y.abs() + 0.5),
    "where": lambda t, x, y: t.where(x > y, x, y * 2.0),
    "lerp": lambda t, x, y: t.lerp(x, y, 0.3),
    "hypot": lambda t, x, y: t.hypot(x, y.abs() + 0.2),
    "pow": lambda t, x, y: t.pow(x.abs() + 0.5, y),
    "fmod": lambda t, x, y: t.fmod(x, y.abs() + 0.5),
    "remainder": lambda t, x, y: t.remainder(x, y.abs() + 0.5),
    "minimum": lambda t, x, y: t.minimum(x, y),
    "fmax": lambda t, x, y: t.fmax(x, y),
    "copysign": lambda t, x, y: t.copysign(x, y),
    "xlogy": lambda t, x, y: t.xlogy(x, y.abs() + 0.5),
    "logaddexp": lambda t, x, y: t.logaddexp(x, y),
    "rsub": lambda t, x, y: t.rsub(x, y),
    "clamp_tensors": lambda t, x, y: t.clamp(x, min=-y.abs() - 0.1, max=y.abs() + 0.1),
    "addcmul": lambda t, x, y: t.addcmul(x, x, y, value=0.5),
    "addcdiv": lambda t, x, y: t.addcdiv(x, x, y.abs() + 1.0, value=0.5),
    "dist_like": lambda t, x, y: (x - y).abs() * x,
}

REDUCE = ("sum", "mean", "amax", "logsumexp", "softmax", "log_softmax", "norm", "std",
          "cumsum", "prod", "max_values", "sort_values", "var0", "amin", "normalize")
SHAPE = ("reshape", "transpose", "unsqueeze_squeeze", "cat", "slice", "flip", "roll",
         "index_select", "gather", "advanced_index", "expand")
INPLACE = ("add_", "mul_", "masked_fill_", "setitem")


def _other(y: Any) -> Any:
    return 0.7 * y + 0.13


def apply(t: Any, op: Op, vals: list[Any]) -> Any:
    kind = op[0]
    if kind == "unary":
        return UNARY[op[1]](t, vals[op[2]])
    if kind == "binary":
        return BINARY[op[1]](t, vals[op[2]], _other(vals[op[3]]))
    if kind == "reduce":
        _, name, i, dim = op
        x = vals[i]
        if name == "softmax":
            return t.softmax(x, dim=dim)
        if name == "log_softmax":
            return t.nn.functional.log_softmax(x, dim=dim)
        if name == "norm":
            return t.linalg.vector_norm(x + 2.0, dim=dim)
        if name == "std":
            return x.std(dim=dim, keepdim=True)
        if name == "cumsum":
            return t.cumsum(x, dim=dim)
        if name == "prod":
            return (x * 0.5 + 1.0).prod(dim=dim)
        if name == "max_values":
            return x.max(dim=dim).values
        if name == "sort_values":
            return t.sort(x, dim=dim, descending=True).values
        if name == "var0":
            return x.var(dim=dim, correction=0)
        if name == "normalize":
            return t.nn.functional.normalize(x + 2.0, dim=dim)
        return getattr(x, name)(dim=dim) if name != "logsumexp" else t.logsumexp(x, dim=dim)
    if kind == "shape":
        _, name, i, arg = op
        x = vals[i]
        if name == "reshape":
            return x.reshape(-1)
        if name == "transpose":
            return x.transpose(0, -1)
        if name == "unsqueeze_squeeze":
            return x.unsqueeze(0).squeeze(0)
        if name == "cat":
            return t.cat([x, x * 2.0], dim=arg)
        if name == "slice":
            return x[..., 1:] if x.shape[-1] > 1 else x[..., :1]
        if name == "flip":
            return t.flip(x, dims=(arg,))
        if name == "roll":
            return t.roll(x, shifts=1, dims=arg)
        n = x.shape[-1] if name == "advanced_index" and arg != 0 else x.shape[arg]
        idx = t.tensor([n - 1, 0, n - 1][: max(1, min(3, n + 1))])
        if name == "index_select":
            return t.index_select(x, arg, idx)
        if name == "gather":
            shape = list(x.shape)
            shape[arg] = 2
            index = t.tensor(np.arange(int(np.prod(shape))).reshape(shape) % n)
            return t.gather(x, arg, index)
        if name == "advanced_index":
            return x[idx] if arg == 0 else x[..., idx]
        if name == "expand":
            return x.unsqueeze(0).expand(2, *x.shape) * 1.5
    if kind == "inplace":
        _, name, i = op
        y = vals[i] * 1.0  # a fresh intermediate: in-place on it is legal in both
        if name == "add_":
            y.add_(vals[i], alpha=0.5)
        elif name == "mul_":
            y.mul_(0.75)
        elif name == "masked_fill_":
            y.masked_fill_(vals[i] > 0.3, 0.25)
        else:
            y[..., 0] = 0.5
        return y
    if kind == "index":
        _, name, i, dim = op
        return INDEX[name][0](t, vals[i], dim)
    if kind == "pair":
        _, name, i, j, dim = op
        return PAIR[name][0](t, vals[i], _other(vals[j]), dim)
    if kind == "matmul":
        _, i = op
        x = vals[i]
        w = t.tensor(np.linspace(-1.0, 1.0, x.shape[-1] * 3).reshape(x.shape[-1], 3),
                     dtype=x.dtype)
        return x @ w
    raise AssertionError(op)



def _shape_of(name: str, arr: np.ndarray, arg: int) -> tuple[int, ...]:
    n = arr.shape[-1] if name == "advanced_index" and arg != 0 else arr.shape[arg]
    k = max(1, min(3, n + 1))
    if name == "reshape":
        return (arr.size,)
    if name == "transpose":
        return np.swapaxes(arr, 0, -1).shape
    if name == "cat":
        return np.concatenate([arr, arr], axis=arg).shape
    if name == "slice":
        return arr[..., 1:].shape if arr.shape[-1] > 1 else arr[..., :1].shape
    if name in ("index_select", "advanced_index") and (name == "index_select" or arg == 0):
        return np.take(arr, np.zeros(k, int), axis=arg).shape
    if name == "advanced_index":
        return arr[..., np.zeros(k, int)].shape
    if name == "gather":
        s = list(arr.shape)
        s[arg] = 2
        return tuple(s)
    if name == "expand":
        return (2, *arr.shape)
    return arr.shape


@dataclasses.dataclass(frozen=True)
class TorchProg:
    shape: tuple[int, ...]
    n_in: int
    ops: tuple[Op, ...]
    seed: int
    dtype: str = "float64"

    def to_json(self) -> dict[str, Any]:
        return {"shape": list(self.shape), "n_in": self.n_in,
                "ops": [list(op) for op in self.ops], "seed": self.seed, "dtype": self.dtype}

    @staticmethod
    def from_json(d: dict[str, Any]) -> TorchProg:
        return TorchProg(tuple(d["shape"]), d["n_in"], tuple(tuple(op) for op in d["ops"]),
                         d["seed"], d.get("dtype", "float64"))

    def inputs(self) -> list[np.ndarray]:
        rng = np.random.default_rng(self.seed)
        return [rng.uniform(-1.5, 1.5, self.shape) for _ in range(self.n_in)]


def run(t: Any, prog: TorchProg, order2: bool) -> dict[str, Any]:
    dtype = getattr(t, prog.dtype)
    leaves = [t.tensor(a, dtype=dtype, requires_grad=True) for a in prog.inputs()]
    vals = list(leaves)
    for op in prog.ops:
        vals.append(apply(t, op, vals))
    out = vals[-1]
    w = t.tensor(np.linspace(0.3, 1.7, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)
    result: dict[str, Any] = {"out": out.detach().numpy().copy(), "dtype": str(out.dtype),
                              "grad_fn": type(out.grad_fn).__name__ if out.grad_fn else None}
    if not order2:
        (out * w).sum().backward()
        result["grads"] = [None if x.grad is None else x.grad.numpy().copy() for x in leaves]
        result["grad_dtypes"] = [None if x.grad is None else str(x.grad.dtype) for x in leaves]
        return result
    firsts = t.autograd.grad((out * w).sum(), leaves, create_graph=True, allow_unused=True)
    used = [k for k, g in enumerate(firsts) if g is not None and g.requires_grad]
    if used:
        total = sum(((firsts[k] * firsts[k]).sum() for k in used), t.tensor(0.0, dtype=dtype))
        seconds = t.autograd.grad(total, [leaves[k] for k in used], allow_unused=True)
        # One entry per leaf (None where the first gradient is a constant on this side), so
        # the two libraries' lists line up leaf by leaf.
        result["second"] = [None] * len(leaves)
        for k, s in zip(used, seconds):
            result["second"][k] = None if s is None else _numpy(s)
    return result


def _numpy(x: Any) -> np.ndarray:
    if getattr(x, "_is_zerotensor", lambda: False)():  # PyTorch's symbolic zeros
        return np.zeros(tuple(x.shape))
    return np.array(x.detach().numpy())


def draw_program(d: Drawer, max_ops: int = 6,
                 dtypes: tuple[str, ...] = ("float64", "float64", "float64", "float32")
                 ) -> TorchProg:
    shape = tuple(d.integer(1, 3) for _ in range(d.integer(1, 3)))
    n_in = d.integer(1, 2)
    shapes = [shape] * n_in
    ops: list[Op] = []
    for _ in range(d.integer(2, max_ops)):
        i = d.integer(0, len(shapes) - 1)
        sh = shapes[i]
        same = [j for j, s in enumerate(shapes) if s == sh]
        kind = d.choice(["unary", "unary", "binary", "binary", "reduce", "shape", "inplace",
                         "matmul", "index", "index", "pair"])
        if kind == "unary":
            ops.append(("unary", d.choice(sorted(UNARY)), i))
            shapes.append(sh)
        elif kind == "binary":
            ops.append(("binary", d.choice(sorted(BINARY)), i, d.choice(same)))
            shapes.append(sh)
        elif kind == "reduce" and len(sh) >= 1:
            name = d.choice(REDUCE)
            dim = d.integer(-len(sh), len(sh) - 1)
            if name in ("softmax", "log_softmax", "cumsum", "sort_values", "normalize"):
                new = sh
            elif name == "std":
                if sh[dim] < 2:
                    continue
                new = tuple(1 if k == dim % len(sh) else s for k, s in enumerate(sh))
            else:
                new = tuple(s for k, s in enumerate(sh) if k != dim % len(sh))
                if not new:
                    continue
            ops.append(("reduce", name, i, dim))
            shapes.append(new)
        elif kind == "shape":
            name = d.choice(SHAPE)
            arg = d.integer(0, len(sh) - 1)
            ops.append(("shape", name, i, arg))
            shapes.append(tuple(_shape_of(name, np.zeros(sh), arg)))
        elif kind == "inplace":
            ops.append(("inplace", d.choice(INPLACE), i))
            shapes.append(sh)
        elif kind in ("index", "pair"):
            table = INDEX if kind == "index" else PAIR
            name = d.choice(sorted(n for n, v in table.items() if len(sh) >= v[2]))
            dim = d.integer(0, len(sh) - 1)
            new = table[name][1](sh, dim)
            if not new or 0 in new:
                continue
            ops.append(("index", name, i, dim) if kind == "index"
                       else ("pair", name, i, d.choice(same), dim))
            shapes.append(new)
        elif kind == "matmul":
            ops.append(("matmul", i))
            shapes.append((*sh[:-1], 3))
    if not ops:
        ops.append(("unary", "sin", 0))
    return TorchProg(shape, n_in, tuple(ops), d.integer(0, 2**31 - 1), d.choice(list(dtypes)))


def hypothesis_programs(max_ops: int = 6, dtypes: tuple[str, ...] = ("float64",)) -> Any:
    """A Hypothesis strategy of programs."""
    from fuzz_programs import HypothesisDrawer
    from hypothesis import strategies as st

    @st.composite
    def programs(draw: Any) -> TorchProg:
        return draw_program(HypothesisDrawer(draw), max_ops, dtypes)
    return programs()


def _uses(prog: TorchProg, *names: str) -> bool:
    return any(op[1] in names for op in prog.ops if len(op) > 1)


# Mismatches skipped (and counted): deliberate differences, each a row of docs/sharp_bits.md.
SKIPS: list[tuple[str, Callable[[TorchProg, dict[str, Any]], bool]]] = [
    ("deliberate (docs/sharp_bits.md): copysign's second derivative where x == 0 is NaN "
     "in PyTorch (its first derivative divides by x), 0 in funcgrad",
     lambda p, b: _uses(p, "copysign") and b["check"].startswith("second order")
     and "nan" in b["error"]),
]


def skip_reason(prog: TorchProg, bad: dict[str, Any]) -> str | None:
    for why, pred in SKIPS:
        if pred(prog, bad):
            return why
    return None


class TorchRefused(Exception):
    """PyTorch raised on the program (a generator gap), skipped."""


def _diff(a: Any, b: Any, dtype: str, loose: bool = False) -> str | None:
    if a is None or b is None:
        if a is None and b is None:
            return None
        present = np.asarray(b if a is None else a)
        return f"{a is None} vs {b is None} (None; the other side {present.tolist()})"
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return f"shape {a.shape} vs {b.shape}"
    rtol, atol = (1e-9, 1e-12) if dtype == "float64" else (2e-4, 2e-5)
    if loose:
        rtol, atol = (1e-7, 1e-10) if dtype == "float64" else (1e-3, 2e-4)
    scale = 1.0 + (float(np.max(np.abs(b[np.isfinite(b)]))) if np.isfinite(b).any() else 0)
    try:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol * scale)
    except AssertionError as e:
        return f"values differ:{str(e).splitlines()[-1]}"
    return None


def check(prog: TorchProg) -> list[dict[str, Any]]:
    """Mismatches of funcgrad.torch against PyTorch: one dict per failing check."""
    import torch

    import funcgrad.torch as ft
    bad: list[dict[str, Any]] = []
    for order2 in (False, True):
        try:
            theirs = run(torch, prog, order2)
        except Exception as e:
            raise TorchRefused(f"{type(e).__name__}: {e}") from e
        try:
            ours = run(ft, prog, order2)
        except Exception as e:
            bad.append({"check": "second order" if order2 else "first order",
                        "error": f"{type(e).__name__}: {e}"[:2000]})
            continue
        if not order2:
            for key in ("dtype", "grad_fn", "grad_dtypes"):
                if ours[key] != theirs[key]:
                    bad.append({"check": key, "error": f"{ours[key]} vs {theirs[key]}"})
            why = _diff(ours["out"], theirs["out"], prog.dtype)
            if why:
                bad.append({"check": "value", "error": why})
            # PyTorch's trigamma (digamma's derivative) is accurate to ~5e-10 only
            # (docs/sharp_bits.md): gradients through digamma get the looser tolerance.
            loose = _uses(prog, "digamma")
            for k, (g, h) in enumerate(zip(ours["grads"], theirs["grads"])):
                why = _diff(g, h, prog.dtype, loose)
                if why:
                    bad.append({"check": f"grad {k}", "error": why})
            continue
        # PyTorch's trigamma (digamma's derivative) is accurate to ~5e-10 only; funcgrad's
        # to the last bit: second derivatives through them get a looser float64 tolerance.
        bad += _second_order(ours, theirs, prog.dtype, _uses(prog, "digamma", "lgamma"))
    return bad


def _second_order(ours: dict[str, Any], theirs: dict[str, Any], dtype: str,
                  loose: bool = False) -> list[dict]:
    # float32 second derivatives lose more digits (std of two values, divisions): both
    # libraries round differently, so they are compared at 1e-3.
    loose = loose or dtype == "float32"
    atol = 1e-12 if dtype == "float64" else 2e-5
    if ("second" in ours) != ("second" in theirs):
        # A first gradient that no longer depends on the inputs (a saturated clamp, a linear
        # map) still requires grad in PyTorch; funcgrad's is a constant. Both second
        # derivatives are then zero (docs/sharp_bits.md, "A first gradient that no longer
        # depends on the inputs").
        present = ours.get("second", theirs.get("second")) or []
        if all(s is None or np.allclose(s, 0.0, atol=atol) for s in present):
            return []
        return [{"check": "second order", "error": "present on one side only, not zero"}]
    out = []
    for k, (g, h) in enumerate(zip(ours.get("second", []), theirs.get("second", []))):
        if (g is None) != (h is None):  # an unused input: None on one side, zeros on the other
            if np.allclose(g if h is None else h, 0.0, atol=atol):
                continue
        why = _diff(g, h, dtype, loose)
        if why:
            out.append({"check": f"second order {k}", "error": why})
    return out


def _drop(prog: TorchProg, i: int) -> TorchProg | None:
    removed = prog.n_in + i
    ops = []
    for op in prog.ops[:i] + prog.ops[i + 1:]:
        refs = {"unary": (2,), "binary": (2, 3), "reduce": (2,), "shape": (2,),
                "inplace": (2,), "matmul": (1,), "index": (2,), "pair": (2, 3)}[op[0]]
        new = list(op)
        for r in refs:
            if new[r] == removed:
                return None
            if new[r] > removed:
                new[r] -= 1
        ops.append(tuple(new))
    return TorchProg(prog.shape, prog.n_in, tuple(ops), prog.seed, prog.dtype)


def shrink(prog: TorchProg, bad: dict[str, Any], budget_s: float) -> tuple[TorchProg, dict]:
    """Greedy: keep any program with an op fewer that still fails the same check."""
    t_end = time.monotonic() + budget_s
    changed = True
    while changed and time.monotonic() < t_end:
        changed = False
        for i in range(len(prog.ops) - 1, -1, -1):
            cand = _drop(prog, i)
            if cand is None or not cand.ops:
                continue
            try:
                still = [b for b in check(cand) if b["check"] == bad["check"]]
            except Exception:
                continue
            if still:
                prog, bad, changed = cand, still[0], True
                break
    return prog, bad
