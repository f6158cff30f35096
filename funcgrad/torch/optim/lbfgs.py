"""L-BFGS, with PyTorch's algorithm (``torch.optim.LBFGS``): up to ``max_iter``
quasi-Newton iterations per ``step(closure)``, with a fixed step ``lr`` (the first
iteration scaled by ``1 / sum|g|``) or a strong-Wolfe line search
(``line_search_fn="strong_wolfe"``, cubic interpolation as in minFunc).

All parameters are treated as one flat vector (parameter groups are not supported,
as in PyTorch). Scalars derived from the vectors (``ys``, ``H_diag``, ``al``...) stay
in the parameters' dtype, as PyTorch's 0-d tensors do.

>>> import funcgrad.torch as torch
>>> from funcgrad.torch import optim
>>> w = torch.tensor([3.0, -1.0], requires_grad=True)
>>> opt = optim.LBFGS([w], line_search_fn="strong_wolfe")
>>> def closure():
...     opt.zero_grad()
...     loss = ((w - torch.tensor([1.0, 2.0])) ** 2).sum()
...     loss.backward()
...     return loss
>>> _ = opt.step(closure)
>>> [round(v, 4) for v in w.tolist()]
[1.0, 2.0]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import Optimizer, _bump, _scalar, _writable, _xp

__all__ = ["LBFGS"]


def _cubic_interpolate(x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any,
                       bounds: tuple[Any, Any] | None = None) -> Any:
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), within bounds."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = math.sqrt(d2_square) if isinstance(d2_square, float) else d2_square ** 0.5
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func: Callable[[Any, Any, Any], tuple[float, Any]], x: Any, t: Any,
                  d: Any, f: float, g: Any, gtd: Any, c1: float = 1e-4, c2: float = 0.9,
                  tolerance_change: float = 1e-9, max_ls: int = 25
                  ) -> tuple[float, Any, Any, int]:
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions (bracketing, then
    zooming): returns (loss, flat gradient, t, function evaluations)."""
    xp = _xp(d)
    d_norm = xp.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket: list[Any] = []
    bracket_f: list[Any] = []
    bracket_g: list[Any] = []
    bracket_gtd: list[Any] = []
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # Keep t away from the bracket's ends unless the last tries made no progress.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    """Limited-memory BFGS, as ``torch.optim.LBFGS`` (``step`` needs a closure).

    State (on the first parameter): ``"func_evals"``, ``"n_iter"``, the direction
    ``"d"``, step ``"t"``, the history ``"old_dirs"`` / ``"old_stps"`` / ``"ro"``,
    ``"H_diag"``, ``"prev_flat_grad"`` and ``"prev_loss"``.
    """

    _sparse_refusal = None

    def __init__(self, params: Any, lr: Any = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if not 0.0 <= _scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _gather_flat_grad(self) -> Any:
        xp = _xp(self._params[0]._data)
        # (a sparse gradient enters densified, as in PyTorch)
        views = [xp.zeros(p._data.size, p._data.dtype) if p.grad is None
                 else (p.grad.to_dense() if p.grad.is_sparse else p.grad)._data.reshape(-1)
                 for p in self._params]
        # As PyTorch: a complex gradient enters as its real view (re, im pairs).
        views = [xp.stack((v.real, v.imag), axis=-1).reshape(-1) if v.dtype.kind == "c"
                 else v for v in views]
        return xp.concatenate(views)

    def _add_grad(self, step_size: Any, update: Any) -> None:
        offset = 0
        for p in self._params:
            data = _writable(p)
            if data.dtype.kind == "c":
                # As PyTorch: a complex parameter moves through its real view.
                n = 2 * data.size
                step = (step_size * update[offset: offset + n]).reshape(data.shape + (2,))
                step = step.astype(data.real.dtype, copy=False)
                data.real[...] += step[..., 0]
                data.imag[...] += step[..., 1]
            else:
                n = data.size
                data += (step_size * update[offset: offset + n]).reshape(data.shape).astype(
                    data.dtype, copy=False)
            _bump(p)
            offset += n

    def _clone_param(self) -> list[Any]:
        return [p._data.copy() for p in self._params]

    def _set_param(self, params_data: list[Any]) -> None:
        for p, pdata in zip(self._params, params_data):
            _writable(p)[...] = pdata
            _bump(p)

    def _directional_evaluate(self, closure: Callable[[], Any], x: list[Any], t: Any,
                              d: Any) -> tuple[float, Any]:
        self._add_grad(t, d)
        loss = float(self._eval_closure(closure))
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Run up to ``max_iter`` iterations; ``closure`` re-evaluates the model and
        returns the loss (it is required). Returns the loss of the first evaluation."""
        if closure is None:
            raise TypeError("LBFGS.step() missing 1 required positional argument: 'closure'")
        with no_grad():
            return self._step(closure)

    def _step(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr = float(_scalar(group["lr"]))
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = self._eval_closure(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        xp = _xp(flat_grad)
        opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
        if opt_cond:
            return orig_loss

        # The state holds Tensors (as PyTorch's does); the iterations work on arrays.
        d, t, h_diag = _arr(state.get("d")), _arr(state.get("t")), _arr(state.get("H_diag"))
        old_dirs, old_stps, ro = (_arrs(state.get(k)) for k in ("old_dirs", "old_stps", "ro"))
        prev_flat_grad, prev_loss = _arr(state.get("prev_flat_grad")), state.get("prev_loss")
        if "al" in state:
            state["al"] = _arrs(state["al"])
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                # Two-loop recursion: d = -H g from the stored (s, y) pairs.
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q -= al[i] * old_dirs[i]
                d = r = q * h_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / xp.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break
            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x: list[Any], t: Any, d: Any) -> tuple[float, Any]:
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    loss = float(self._eval_closure(closure))
                    flat_grad = self._gather_flat_grad()
                    opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if xp.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break
        state["d"] = _tensor(d)
        state["t"] = _tensor(t)
        state["old_dirs"] = _tensors(old_dirs)
        state["old_stps"] = _tensors(old_stps)
        state["ro"] = _tensors(ro)
        state["H_diag"] = _tensor(h_diag)
        state["prev_flat_grad"] = _tensor(prev_flat_grad)
        state["prev_loss"] = prev_loss
        if "al" in state:
            state["al"] = _tensors(state["al"])
        return orig_loss


def _arr(x: Any) -> Any:
    """A state value as the iterations use it: a Tensor's array (a 0-d one as a scalar)."""
    if isinstance(x, Tensor):
        return x._data[()] if x._data.ndim == 0 else x._data
    return x


def _arrs(xs: Any) -> Any:
    return None if xs is None else [_arr(x) for x in xs]


def _tensor(x: Any) -> Any:
    """An array or array scalar as a state Tensor (Python numbers stay as they are)."""
    if isinstance(x, np.ndarray) or isinstance(x, np.generic) or \
            type(x).__module__.startswith("cupy"):
        return Tensor._from_data(x if not isinstance(x, np.generic) else np.asarray(x))
    return x


def _tensors(xs: list[Any]) -> list[Any]:
    return [_tensor(x) for x in xs]
