"""The pictures of the documentation site (docs/images/*.dot and *.svg) are those of the
current code: each DOT file is regenerated and compared, each SVG is well-formed, drawn from
that DOT text and has its nodes, edges and clusters; each page that shows one embeds it."""

from __future__ import annotations

import importlib.util
import pathlib
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from types import ModuleType

import pytest

from funcgrad import visualize

ROOT = pathlib.Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
SVG_NS = "{http://www.w3.org/2000/svg}"
RERUN = "rerun `python scripts/render_doc_pictures.py` and commit docs/images/"

# Pictures show what a JAX user sees by default: 32-bit mode.
pytestmark = pytest.mark.x32


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "render_doc_pictures", ROOT / "scripts" / "render_doc_pictures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


script = _load_script()
NAMES = sorted(script.PICTURES)

NODE = re.compile(r"^\s*(\w+) \[label=")
EDGE = re.compile(r"^\s*(\w+) -> (\w+) \[")
CLUSTER = re.compile(r"^\s*subgraph (cluster\w*) \{$")


def dot_structure(dot: str) -> dict[str, list[str]]:
    """Node ids, edges (``a->b``) and cluster names of the DOT text visualize writes."""
    nodes, edges, clusters = [], [], []
    for line in dot.splitlines():
        if m := EDGE.match(line):
            edges.append(f"{m.group(1)}->{m.group(2)}")
        elif m := NODE.match(line):
            nodes.append(m.group(1))
        elif m := CLUSTER.match(line):
            clusters.append(m.group(1))
    return {"nodes": nodes, "edges": edges, "clusters": clusters}


def svg_structure(svg: bytes) -> dict[str, list[str]]:
    """The same, read from an SVG Graphviz drew: each node, edge and cluster is a ``<g>``
    of that class whose ``<title>`` is its DOT name (an edge's is ``a->b``)."""
    root = ET.fromstring(svg)  # noqa: S314 - our own committed file
    out: dict[str, list[str]] = {"nodes": [], "edges": [], "clusters": []}
    for g in root.iter(f"{SVG_NS}g"):
        kind = {"node": "nodes", "edge": "edges", "cluster": "clusters"}.get(g.get("class", ""))
        if kind is not None:
            title = g.find(f"{SVG_NS}title")
            assert title is not None and title.text is not None
            out[kind].append(title.text)
    return out


def same_structure(dot: dict[str, list[str]], svg: dict[str, list[str]]) -> None:
    assert sorted(svg["nodes"]) == sorted(dot["nodes"])
    assert sorted(svg["edges"]) == sorted(dot["edges"])
    assert sorted(svg["clusters"]) == sorted(dot["clusters"])


@pytest.mark.parametrize("name", NAMES)
def test_committed_dot_is_the_current_picture(name: str) -> None:
    path = IMAGES / f"{name}.dot"
    assert path.exists(), f"{path} is missing: {RERUN}"
    assert script.dot_text(name) == path.read_text(), (
        f"docs/images/{name}.dot is stale (the program or its drawing changed): {RERUN}")


@pytest.mark.parametrize("name", NAMES)
def test_committed_svg_is_drawn_from_the_committed_dot(name: str) -> None:
    dot = (IMAGES / f"{name}.dot").read_text()
    path = IMAGES / f"{name}.svg"
    assert path.exists(), f"{path} is missing: {RERUN}"
    svg = path.read_bytes()
    assert f"<!-- {script.dot_digest(dot)} -->".encode() in svg, (
        f"docs/images/{name}.svg was not drawn from docs/images/{name}.dot: {RERUN}")
    structure = dot_structure(dot)
    assert structure["nodes"] and structure["edges"]
    same_structure(structure, svg_structure(svg))


needs_graphviz = pytest.mark.skipif(
    importlib.util.find_spec("graphviz") is None or shutil.which("dot") is None,
    reason="needs the graphviz package and the dot program")


@needs_graphviz
@pytest.mark.parametrize("name", NAMES)
def test_graphviz_renders_the_dot(name: str) -> None:
    dot = (IMAGES / f"{name}.dot").read_text()
    svg = script.stamped_svg(dot)
    assert svg.startswith(b"<?xml") and f"<!-- {script.dot_digest(dot)} -->".encode() in svg
    same_structure(dot_structure(dot), svg_structure(svg))
    # A DOT syntax error makes `dot` complain on stderr, yet it may still draw something.
    out = subprocess.run(["dot", "-Tsvg", "-o", "/dev/null"], input=dot, capture_output=True,
                         text=True, timeout=60, check=False)
    assert out.returncode == 0 and not out.stderr, out.stderr


def test_every_picture_is_embedded_and_every_image_is_a_picture() -> None:
    pages = "\n".join(p.read_text() for p in (ROOT / "docs").rglob("*.md"))
    for name in NAMES:
        assert re.search(rf"!\[[^\]]+\]\((\.\./)*images/{name}\.svg\)", pages), (
            f"no page embeds docs/images/{name}.svg")
    stems = {p.stem for p in IMAGES.glob("*.dot")} | {p.stem for p in IMAGES.glob("*.svg")}
    assert stems == set(NAMES), f"pictures without a program in the script: {stems - set(NAMES)}"


def test_the_pictures_show_what_their_pages_describe() -> None:
    parts = {name: dot_structure(script.dot_text(name)) for name in NAMES}
    kernels = [c for c in parts["jit_fused_kernels"]["clusters"] if c.startswith("cluster_fg")]
    assert kernels == ["cluster_fg_kernel_1"]
    assert len(parts["control_flow_while"]["clusters"]) == 2  # condition and body
    assert len(parts["control_flow_cond"]["clusters"]) == 2  # two branches
    assert len(parts["control_flow_scan_grad"]["clusters"]) == 2  # forward, backward scans
    assert len(parts["jit_under_grad"]["clusters"]) == 2  # compiled forward and backward
    assert not parts["jit_staged"]["clusters"] and not parts["autodiff_grad"]["clusters"]
    scan_grad = script.dot_text("control_flow_scan_grad")
    assert "reverse=False" in scan_grad and "reverse=True" in scan_grad


def test_the_script_writes_the_dot_files(tmp_path: pathlib.Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    script.main(["--dot-only", "--out", str(tmp_path), "jit_staged"])
    assert [p.name for p in tmp_path.iterdir()] == ["jit_staged.dot"]
    assert (tmp_path / "jit_staged.dot").read_text() == (IMAGES / "jit_staged.dot").read_text()
    assert "jit_staged.dot" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        script.main(["--dot-only", "--out", str(tmp_path), "no_such_picture"])


def test_dot_text_is_the_same_in_64_bit_mode() -> None:
    from funcgrad.config import enable_x64  # noqa: PLC0415

    with enable_x64(True):
        assert script.dot_text("jit_staged") == (IMAGES / "jit_staged.dot").read_text()


def test_params_are_drawn_without_memory_addresses() -> None:
    class Opaque:
        pass

    text = visualize._param_text(Opaque())
    assert "0x" not in text and text.endswith("Opaque object>")
    assert visualize._param_text(print) == "<built-in function print>"


def test_readme_links_the_site_and_says_how_to_serve_it() -> None:
    readme = (ROOT / "README.md").read_text()
    assert 'pip install -e ".[docs]" && mkdocs serve' in readme
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)\)", readme))
    for page in ("getting_started", "for_jax_users", "for_pytorch_users", "architecture",
                 "sharp_bits", "benchmarks", "api", "tutorials/jit"):
        assert f"docs/{page}.md" in linked, page
    for target in linked:
        assert (ROOT / target).exists(), target
