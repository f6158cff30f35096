"""Package discovery only; all metadata lives in pyproject.toml.

The wheel installs one import package, ``funcgrad``. The top-level folders
``transforms/`` and ``backends/`` are installed as ``funcgrad.transforms`` and
``funcgrad.backends`` through ``package-dir`` (see pyproject.toml). A plain
``[tool.setuptools.packages.find]`` cannot name packages under a mapped folder,
so the package list is built here: every package under ``funcgrad/``,
``transforms/`` and ``backends/`` is picked up, including ones added later.
"""

from setuptools import find_packages, setup


def _mapped(name: str, folder: str) -> list[str]:
    return [name, *(f"{name}.{sub}" for sub in find_packages(folder))]


setup(
    packages=[
        *find_packages(include=["funcgrad", "funcgrad.*"]),
        *_mapped("funcgrad.transforms", "transforms"),
        *_mapped("funcgrad.backends", "backends"),
    ]
)
