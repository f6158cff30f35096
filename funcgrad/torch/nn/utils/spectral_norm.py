"""The hook-based spectral normalization, as ``torch.nn.utils.spectral_norm`` (PyTorch
now recommends ``torch.nn.utils.parametrizations.spectral_norm``).

``spectral_norm(module)`` moves the parameter ``weight`` to ``weight_orig``, adds the
power-method vectors as buffers ``weight_u`` and ``weight_v``, and a forward pre-hook sets
``module.weight = weight_orig / sigma`` before each call (in training mode after one more
power-method step, which updates the buffers in place).

>>> import funcgrad.torch.nn as nn
>>> from funcgrad.torch.nn.utils import spectral_norm, remove_spectral_norm
>>> lin = spectral_norm(nn.Linear(3, 2))
>>> list(lin.state_dict())
['bias', 'weight_orig', 'weight_u', 'weight_v']
>>> list(remove_spectral_norm(lin).state_dict())
['bias', 'weight']
"""

from __future__ import annotations

from typing import Any, TypeVar

from funcgrad.torch import linalg
from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.normalization import normalize
from funcgrad.torch.nn.parameter import Parameter

__all__ = [
    "SpectralNorm",
    "SpectralNormLoadStateDictPreHook",
    "SpectralNormStateDictHook",
    "remove_spectral_norm",
    "spectral_norm",
]


class SpectralNorm:
    """The forward pre-hook that ``spectral_norm`` registers.

    >>> SpectralNorm("weight", n_power_iterations=2).n_power_iterations
    2
    """

    # The version recorded in a state dict's metadata: 1 stores weight_v instead of
    # recomputing it from weight and weight_u at load time.
    _version: int = 1
    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Any) -> Any:
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(
                self.dim, *[d for d in range(weight_mat.dim()) if d != self.dim])
        height = weight_mat.size(0)
        return weight_mat.reshape(height, -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Any:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    # In place, so the buffers carry the estimate to the next call.
                    v = normalize(weight_mat.t().mv(u), dim=0, eps=self.eps, out=v)
                    u = normalize(weight_mat.mv(v), dim=0, eps=self.eps, out=u)
                # Clones, so the next in-place step does not change what backward saved.
                u = u.clone()
                v = v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat: Any, u: Any, target_sigma: Any) -> Any:
        # The v with u^T W v = target_sigma that is closest to the power method's fixed
        # point: W^+ u, rescaled.
        v = linalg.multi_dot(
            [weight_mat.t().mm(weight_mat).pinverse(), weight_mat.t(), u.unsqueeze(1)]
        ).squeeze(1)
        return v.mul_(target_sigma / u.dot(weight_mat.mv(v)))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError("Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        from funcgrad.torch.nn.lazy import UninitializedParameter

        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `SpectralNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying spectral normalization")
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)

        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # A plain attribute until the first forward: the hook recomputes it each call.
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        # State-dict hooks exist only where the Module implements them.
        register_sd = getattr(module, "_register_state_dict_hook", None)
        if register_sd is not None:
            register_sd(SpectralNormStateDictHook(fn))
        register_load = getattr(module, "_register_load_state_dict_pre_hook", None)
        if register_load is not None:
            register_load(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts a version-0 state dict (``weight`` and ``weight_u``, no ``weight_v``) to
    the current form while loading.

    >>> SpectralNormLoadStateDictPreHook(SpectralNorm()).fn.name
    'weight'
    """

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict: dict[str, Any], prefix: str, local_metadata: dict[str, Any],
                 strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                 error_msgs: list[str]) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is None or version < 1:
            weight_key = prefix + fn.name
            if version is None and all(weight_key + s in state_dict
                                       for s in ("_orig", "_u", "_v")) \
                    and weight_key not in state_dict:
                # A state dict without metadata that already has the version-1 keys.
                return
            has_missing_keys = False
            for suffix in ("_orig", "", "_u"):
                key = weight_key + suffix
                if key not in state_dict:
                    has_missing_keys = True
                    if strict:
                        missing_keys.append(key)
            if has_missing_keys:
                return
            with no_grad():
                weight_orig = state_dict[weight_key + "_orig"]
                weight = state_dict.pop(weight_key)
                sigma = (weight_orig / weight).mean()
                weight_mat = fn.reshape_weight_to_matrix(weight_orig)
                u = state_dict[weight_key + "_u"]
                state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Records ``SpectralNorm._version`` in a state dict's metadata.

    >>> meta = {}
    >>> SpectralNormStateDictHook(SpectralNorm())(None, {}, "", meta); meta
    {'spectral_norm': {'weight.version': 1}}
    """

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module: Any, state_dict: Any, prefix: str,
                 local_metadata: dict[str, Any]) -> None:
        if "spectral_norm" not in local_metadata:
            local_metadata["spectral_norm"] = {}
        key = self.fn.name + ".version"
        if key in local_metadata["spectral_norm"]:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        local_metadata["spectral_norm"][key] = self.fn._version


T_module = TypeVar("T_module", bound=Module)


def spectral_norm(module: T_module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> T_module:
    """Divide ``module.<name>`` by its spectral norm, estimated by the power method with
    vectors in the buffers ``<name>_u`` and ``<name>_v`` (``dim`` defaults to 1 for
    ConvTranspose, else 0); the raw parameter becomes ``<name>_orig``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.nn.utils import spectral_norm
    >>> lin = spectral_norm(nn.Linear(4, 3), n_power_iterations=30)
    >>> _ = lin(torch.ones(1, 4))
    >>> round(float(linalg.matrix_norm(lin.weight.detach(), ord=2)), 3)
    1.0
    """
    if dim is None:
        from funcgrad.torch.nn.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d,
                                       ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo ``spectral_norm``: ``<name>`` is a plain parameter again, holding the
    normalized value.

    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.nn.utils import spectral_norm, remove_spectral_norm
    >>> lin = remove_spectral_norm(spectral_norm(nn.Linear(4, 3)))
    >>> [name for name, _ in lin.named_parameters()]
    ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    hooks: Any = getattr(module, "_state_dict_hooks", {})
    for k, hook in list(hooks.items()):
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del hooks[k]
            break
    hooks = getattr(module, "_load_state_dict_pre_hooks", {})
    for k, hook in list(hooks.items()):
        if isinstance(hook, SpectralNormLoadStateDictPreHook) and hook.fn.name == name:
            del hooks[k]
            break
    return module
