"""The documentation site builds with ``mkdocs build --strict``: every page in the nav,
every link and anchor resolving, every API module rendering from its docstrings."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

needs_mkdocs = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("mkdocs", "material", "mkdocstrings")),
    reason="the docs extra is not installed (pip install -e '.[docs]')")


@needs_mkdocs
def test_mkdocs_build_strict(tmp_path: pathlib.Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                          str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                         timeout=900, check=False, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    site = tmp_path / "site"
    reference = (site / "reference" / "funcgrad" / "index.html").read_text()
    # Names funcgrad re-exports from funcgrad.transforms are documented, examples as code.
    for name in ("funcgrad.grad", "funcgrad.jit", "funcgrad.vmap"):
        assert f'id="{name}"' in reference, name
    assert "highlight" in reference and "&gt;&gt;&gt;" in reference
    torch_nn = (site / "reference" / "funcgrad.torch.nn" / "index.html").read_text()
    assert 'id="funcgrad.torch.nn.Linear"' in torch_nn
    assert (site / "tutorials" / "autodiff" / "index.html").exists()


def test_every_page_is_in_the_nav_and_every_reference_module_exists() -> None:
    config = (ROOT / "mkdocs.yml").read_text()
    nav_pages = set(re.findall(r":\s+(\S+\.md)\s*$", config, re.M))
    docs = ROOT / "docs"
    pages = {str(p.relative_to(docs)) for p in docs.rglob("*.md")
             if "hooks" not in p.relative_to(docs).parts}
    assert pages <= nav_pages, f"pages missing from the nav: {sorted(pages - nav_pages)}"
    for page in sorted(nav_pages):
        if page.startswith("reference/"):
            module = page[len("reference/"):-len(".md")]
            assert importlib.util.find_spec(module) is not None, module
        else:
            assert (docs / page).exists(), page
