"""Pictures of programs: ClosedJaxpr.to_dot / render and the fused-kernel clusters of jit."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess

import pytest

import funcgrad as jax
import funcgrad.numpy as jnp
from funcgrad import lax, visualize

# Labels are checked as a JAX user meets them: 32-bit by default.
pytestmark = pytest.mark.x32

NODE = re.compile(r"^\s*(\w+) \[label=\"((?:[^\"\\]|\\.)*)\"")
EDGE = re.compile(r"^\s*(\w+) -> (\w+) \[(.*)\];$")


def parse(dot: str) -> dict:
    """A small reader of the DOT this module writes: nodes (id -> label), edges, clusters
    (name -> node ids declared inside), checking that braces balance and that every edge
    joins declared nodes."""
    lines = dot.splitlines()
    assert lines[0] == "digraph jaxpr {" and lines[-1] == "}"
    nodes: dict[str, str] = {}
    edges: list[tuple[str, str, str]] = []
    clusters: dict[str, list[str]] = {}
    stack: list[str] = []
    for line in lines[1:-1]:
        s = line.strip()
        if s.startswith("subgraph "):
            name = s.split()[1]
            assert name.startswith("cluster")
            stack.append(name)
            clusters.setdefault(name, [])
        elif s == "}":
            stack.pop()
        elif m := EDGE.match(line):
            label = re.search(r'label="([^"]*)"', m.group(3))
            edges.append((m.group(1), m.group(2), label.group(1) if label else ""))
        elif m := NODE.match(line):
            nodes[m.group(1)] = m.group(2).replace("\\n", "\n")
            for c in stack:
                clusters[c].append(m.group(1))
    assert not stack, "unbalanced braces"
    for a, b, _ in edges:
        assert a in nodes and b in nodes, (a, b)
    return {"nodes": nodes, "edges": edges, "clusters": clusters}


def eqn_nodes(g: dict) -> dict[str, str]:
    return {k: v for k, v in g["nodes"].items() if k.startswith("eqn")}


def data_edges(g: dict) -> list[tuple[str, str, str]]:
    return [e for e in g["edges"] if e[2]]


def test_straight_line_program_structure() -> None:
    def f(x, y):
        return jnp.sum(jnp.sin(x) * y)

    closed = jax.make_jaxpr(f)(jnp.ones(3), jnp.ones(3))
    g = parse(closed.to_dot())
    prims = sorted(v.split("\n")[0] for v in eqn_nodes(g).values())
    assert prims == ["mul", "reduce_sum", "sin"]
    # x -> sin, sin -> mul, y -> mul, mul -> reduce_sum, reduce_sum -> out
    assert len(data_edges(g)) == 5
    assert sum(k.startswith("in") for k in g["nodes"]) == 2
    assert sum(k.startswith("out") for k in g["nodes"]) == 1
    assert not g["clusters"]
    assert "axes=(0,)" in next(v for v in eqn_nodes(g).values() if v.startswith("reduce_sum"))


def test_edge_labels_are_the_printed_names_and_avals() -> None:
    closed = jax.make_jaxpr(jax.grad(lambda x: jnp.sum(jnp.tanh(x) ** 2)))(jnp.ones(3))
    text = str(closed)
    g = parse(closed.to_dot())
    labels = {label for _, _, label in data_edges(g)}
    assert labels
    for label in labels:
        assert re.search(rf"(?<![a-z]){re.escape(label)}", text), label
    assert len(eqn_nodes(g)) == len(closed.eqns)


def test_fan_out_gives_one_edge_per_use_and_literals_go_into_the_node() -> None:
    g = parse(jax.make_jaxpr(lambda x: x * x + 2.0)(jnp.ones(2)).to_dot())
    uses = [e for e in data_edges(g) if e[0].startswith("in")]
    assert len(uses) == 2  # both operands of mul
    add = next(v for v in eqn_nodes(g).values() if v.startswith("add"))
    assert "2.0:f32[]" in add


def test_control_flow_bodies_are_clusters() -> None:
    def f(x):
        y = lax.cond(jnp.sum(x) > 0, jnp.sin, jnp.cos, x)
        c, _ = lax.scan(lambda c, a: (c + a, c * a), 0.0, y)
        return lax.while_loop(lambda s: s < 10.0, lambda s: s * 2.0, c)

    g = parse(jax.make_jaxpr(f)(jnp.ones(3)).to_dot())
    titles = sorted(re.sub(r"^.*label=\"", "", line).split('"')[0]
                    for line in jax.make_jaxpr(f)(jnp.ones(3)).to_dot().splitlines()
                    if line.strip().startswith("label=") and "cluster" not in line)
    assert titles == ["cond: branches[0]", "cond: branches[1]", "scan: jaxpr",
                      "while: body_jaxpr", "while: cond_jaxpr"]
    assert len(g["clusters"]) == 5
    body = {prim for c in g["clusters"].values() for n in c if n.startswith("eqn")
            for prim in [g["nodes"][n].split("\n")[0]]}
    assert {"sin", "cos", "add", "mul", "lt"} <= body
    # Each sub-program input hangs from the equation that runs it (dotted, unlabelled).
    links = [e for e in g["edges"] if not e[2]]
    assert len(links) == 1 + 1 + 2 + 1 + 1  # branches, scan (carry, x), while body and cond


def test_nested_jit_call_is_a_cluster() -> None:
    inner = jax.jit(lambda q: jnp.exp(q) * 2.0)
    g = parse(jax.make_jaxpr(lambda x: inner(x) + 1.0)(jnp.ones(2)).to_dot())
    (cluster,) = g["clusters"].values()
    prims = sorted(g["nodes"][n].split("\n")[0] for n in cluster if n.startswith("eqn"))
    assert prims == ["exp", "mul"]
    assert any(v.startswith("jit\n") for v in eqn_nodes(g).values())


def test_fused_kernels_are_clusters_of_their_equations() -> None:
    f = jax.jit(lambda x, w: jnp.sum(jnp.tanh(x @ w) * 2.0 + 1.0), backend="cupy")
    lowered = f.lower(jnp.ones((4, 3)), jnp.ones((3, 5)))
    g = parse(lowered.to_dot())
    kernels = lowered.kernels()
    assert len(g["clusters"]) == len(kernels) == 1
    (members,) = g["clusters"].values()
    prims = sorted(g["nodes"][n].split("\n")[0] for n in members)
    assert prims == ["add", "mul", "reduce_sum", "tanh"]
    name = next(iter(g["clusters"]))
    assert name == f"cluster_{kernels[0]['name']}"
    # The matrix product is a cuBLAS call, outside every kernel.
    dot = next(k for k, v in g["nodes"].items() if v.startswith("dot_general"))
    assert dot not in members


def test_numpy_backend_lowered_has_no_kernel_clusters() -> None:
    lowered = jax.jit(lambda x: jnp.sin(x) + 1.0).lower(jnp.ones(3))
    g = parse(lowered.to_dot())
    assert not g["clusters"] and len(eqn_nodes(g)) == 2


def test_quotes_and_backslashes_in_params_are_escaped() -> None:
    g = parse(jax.make_jaxpr(jax.jit(lambda q: q + 1.0))(jnp.ones(2)).to_dot())
    jit_label = next(v for v in eqn_nodes(g).values() if v.startswith("jit"))
    assert "name='<lambda>'" in jit_label


def test_render_without_graphviz_names_the_extra(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path) -> None:
    import builtins

    real_import = builtins.__import__

    def no_graphviz(name, *args, **kwargs):
        if name == "graphviz":
            raise ImportError("No module named 'graphviz'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_graphviz)
    closed = jax.make_jaxpr(jnp.sin)(1.0)
    with pytest.raises(ImportError, match=r"funcgrad\[viz\]"):
        closed.render(str(tmp_path / "g.svg"))
    assert closed._repr_svg_() is None
    assert set(closed._repr_mimebundle_()) == {"text/plain"}


needs_graphviz = pytest.mark.skipif(
    importlib.util.find_spec("graphviz") is None or shutil.which("dot") is None,
    reason="needs the graphviz package and the dot program")


@needs_graphviz
def test_dot_text_is_accepted_by_graphviz() -> None:
    def f(x):
        return lax.cond(jnp.sum(x) > 0, jnp.sin, jnp.cos, x)

    dot = jax.make_jaxpr(f)(jnp.ones(3)).to_dot()
    out = subprocess.run(["dot", "-Tplain"], input=dot, capture_output=True, text=True,
                         check=True, timeout=60)
    node_lines = [ln for ln in out.stdout.splitlines() if ln.startswith("node ")]
    edge_lines = [ln for ln in out.stdout.splitlines() if ln.startswith("edge ")]
    g = parse(dot)
    assert len(node_lines) == len(g["nodes"])
    assert len(edge_lines) == len(g["edges"])


@needs_graphviz
def test_render_writes_svg_and_png(tmp_path) -> None:
    closed = jax.make_jaxpr(lambda x: jnp.sum(jnp.exp(x)))(jnp.ones(3))
    svg_path = closed.render(str(tmp_path / "g.svg"))
    assert open(svg_path).read().lstrip().startswith(("<?xml", "<svg"))
    png_path = closed.render(str(tmp_path / "g.png"))
    assert open(png_path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    no_suffix = visualize.render(closed, str(tmp_path / "plain"))
    assert no_suffix.endswith("plain.svg")
    bundle = closed._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"] and bundle["text/plain"] == str(closed)
