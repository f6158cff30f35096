"""How much of JAX's and PyTorch's public surface each face has, measured against the
reference lists of jax 0.10.2 and torch 2.13 kept in ``tests/data/reference``.

The floors are a ratchet: a change that drops a name the project has fails here (raise the
floor when names are added). ``python tests/test_name_coverage.py`` prints the table.
"""

from __future__ import annotations

import importlib
import pathlib

import pytest

REF = pathlib.Path(__file__).parent / "data" / "reference"

# reference list -> (funcgrad module, names it has at least)
FLOORS = {
    "jax_names.txt": ("funcgrad", 114),
    "jax_numpy_names.txt": ("funcgrad.numpy", 416),
    "jax_lax_names.txt": ("funcgrad.lax", 323),
    "jax_scipy_special_names.txt": ("funcgrad.scipy.special", 53),
    "jax_nn_names.txt": ("funcgrad.nn", 36),
    "jax_tree_util_names.txt": ("funcgrad.tree_util", 36),
    "jax_tree_names.txt": ("funcgrad.tree", 14),
    "jax_numpy_linalg_names.txt": ("funcgrad.numpy.linalg", 31),
    "jax_scipy_linalg_names.txt": ("funcgrad.scipy.linalg", 40),
    "jax_numpy_fft_names.txt": ("funcgrad.numpy.fft", 18),
    "jax_random_names.txt": ("funcgrad.random", 48),
    "torch_functions_names.txt": ("funcgrad.torch", 630),
    "torch_nn_names.txt": ("funcgrad.torch.nn", 176),
    "torch_nn_functional_names.txt": ("funcgrad.torch.nn.functional", 150),
    "torch_nn_init_names.txt": ("funcgrad.torch.nn.init", 26),
    "torch_optim_names.txt": ("funcgrad.torch.optim", 19),
    "torch_autograd_names.txt": ("funcgrad.torch.autograd", 16),
    "torch_func_names.txt": ("funcgrad.torch.func", 15),
    "torch_linalg_names.txt": ("funcgrad.torch.linalg", 43),
    "torch_optim_lr_scheduler_names.txt": ("funcgrad.torch.optim.lr_scheduler", 16),
    "torch_utils_data_names.txt": ("funcgrad.torch.utils.data", 19),
}
TENSOR_METHODS_FLOOR = 577

# What the two-faces issue names for each face's top level.
JAX_TOP = ["grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev", "hessian",
           "vmap", "jit", "make_jaxpr", "eval_shape", "custom_jvp", "custom_vjp", "checkpoint",
           "remat", "block_until_ready", "device_put", "device_get", "devices", "Array",
           "ShapeDtypeStruct", "config", "numpy", "lax", "tree_util", "tree", "errors", "nn"]
TORCH_TOP = ["tensor", "Tensor", "float32", "device", "no_grad", "enable_grad",
             "set_grad_enabled", "inference_mode", "nn", "optim", "autograd", "func", "linalg",
             "manual_seed", "cuda", "matmul", "relu", "get_default_dtype", "set_default_dtype",
             "from_dlpack", "as_tensor"]


def names(file: str) -> list[str]:
    return [ln.strip() for ln in (REF / file).read_text().splitlines()
            if ln.strip() and not ln.startswith("#")]


def covered(file: str, module: str) -> list[str]:
    mod = importlib.import_module(module)
    return [n for n in names(file) if hasattr(mod, n)]


@pytest.mark.parametrize("file", sorted(FLOORS))
def test_coverage_does_not_drop(file: str) -> None:
    module, floor = FLOORS[file]
    have = covered(file, module)
    assert len(have) >= floor, (f"{module} has {len(have)} of the {len(names(file))} names of "
                                f"{file}, fewer than before ({floor})")


def test_tensor_methods_do_not_drop() -> None:
    from funcgrad.torch import Tensor  # noqa: PLC0415

    have = [n for n in names("torch_tensor_methods.txt") if hasattr(Tensor, n)]
    assert len(have) >= TENSOR_METHODS_FLOOR


def test_each_face_has_what_the_issue_names() -> None:
    import funcgrad  # noqa: PLC0415
    import funcgrad.torch  # noqa: PLC0415

    assert [n for n in JAX_TOP if not hasattr(funcgrad, n)] == []
    assert [n for n in TORCH_TOP if not hasattr(funcgrad.torch, n)] == []


def test_the_jax_face_has_nothing_of_pytorch() -> None:
    import funcgrad  # noqa: PLC0415

    torch_only = set(names("torch_functions_names.txt")) - set(names("jax_names.txt"))
    public = {n for n in dir(funcgrad) if not n.startswith("_")}
    assert sorted(public & torch_only) == []


if __name__ == "__main__":
    for f, (m, _) in sorted(FLOORS.items()):
        print(f"{m:32s} {len(covered(f, m)):4d} / {len(names(f))}")
