"""The wheel installs ONE import package, ``funcgrad``.

``transforms/`` and ``backends/`` are mapped to ``funcgrad.transforms`` and
``funcgrad.backends`` (pyproject.toml ``package-dir`` + setup.py); nothing may
land in site-packages as a top-level ``transforms`` or ``backends``.
"""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# installed path -> source folder
MAPPED = {
    "funcgrad": "funcgrad",
    "funcgrad/transforms": "transforms",
    "funcgrad/backends": "backends",
}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Build from a copy: setuptools' build/ folder in the checkout can hold stale
    # modules that would leak into the wheel, and the checkout stays clean.
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "setup.py"):
        shutil.copy2(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in MAPPED.values():
        shutil.copytree(ROOT / folder, src / folder, ignore=ignore)
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    (whl,) = out.glob("funcgrad-*.whl")
    return whl


def _names(whl: Path) -> list[str]:
    with zipfile.ZipFile(whl) as zf:
        return zf.namelist()


def test_wheel_has_one_import_package(wheel: Path) -> None:
    names = _names(wheel)
    for required in (
        "funcgrad/__init__.py",
        "funcgrad/transforms/__init__.py",
        "funcgrad/backends/__init__.py",
        "funcgrad/py.typed",
    ):
        assert required in names, f"{required} missing from {wheel.name}"
    stray = [n for n in names if n.startswith(("transforms/", "backends/", "tests/"))]
    assert not stray, f"top-level modules in the wheel: {stray}"
    tops = {n.split("/", 1)[0] for n in names if ".dist-info/" not in n}
    assert tops == {"funcgrad"}, tops


def test_wheel_has_every_subpackage(wheel: Path) -> None:
    # Packages added later under any of the three folders must be picked up.
    names = set(_names(wheel))
    missing = []
    for installed, folder in MAPPED.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.relative_to(ROOT / folder).as_posix()
            if "__pycache__" not in rel and f"{installed}/{rel}" not in names:
                missing.append(f"{installed}/{rel}")
    assert not missing, f"packages missing from the wheel: {missing}"


def test_wheel_metadata_requires_only_the_numeric_stack(wheel: Path) -> None:
    # numpy, ml_dtypes (bfloat16 and friends, as JAX) and scipy (special functions); the
    # oracles (jax, torch) and the GPU stack are extras, never runtime requirements.
    with zipfile.ZipFile(wheel) as zf:
        (meta_name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        meta = email.parser.Parser().parsestr(zf.read(meta_name).decode())
    assert meta["Name"] == "funcgrad"
    requires = meta.get_all("Requires-Dist") or []
    runtime = [r for r in requires if "extra ==" not in r]
    names = sorted(r.replace(" ", "").split(">")[0].split("=")[0].split("<")[0] for r in runtime)
    assert names == ["ml_dtypes", "numpy", "scipy"], runtime
    extras = set(meta.get_all("Provides-Extra") or [])
    assert {"test", "cuda", "bench", "examples", "compat"} <= extras


def test_wheel_imports_as_funcgrad(wheel: Path, tmp_path: Path) -> None:
    # Unpack the wheel (a plain install, no deps) and import from a neutral folder,
    # so neither the checkout nor the editable install can answer the import.
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    code = (
        "import funcgrad, funcgrad.transforms, funcgrad.backends\n"
        "for m in (funcgrad, funcgrad.transforms, funcgrad.backends):\n"
        "    print(m.__file__)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    files = proc.stdout.split()
    assert len(files) == 3
    assert all(Path(f).is_relative_to(site) for f in files), files
