"""Pictures of programs: a jaxpr as a Graphviz graph.

Each equation is a node labelled with its primitive and parameters; each edge is a
variable, labelled with its name (the names of the printed jaxpr) and abstract value.
The programs that control flow and ``jit`` carry (``cond`` branches, ``while``
condition and body, ``scan`` body, the ``jit`` call) are drawn as clusters next to the
equation that runs them. Given a fusion plan (a compiled ``jit(f, backend="cupy")``
program), the equations of each generated kernel are framed together.

``to_dot`` needs nothing but the standard library; ``render`` and the Jupyter pictures
need the ``graphviz`` Python package and its ``dot`` program (``pip install
'funcgrad[viz]'``).

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> dot = to_dot(jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(jnp.ones(3)))
>>> dot.splitlines()[0]
'digraph jaxpr {'
>>> 'label="a:f32[3]"' in dot
True
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.var_names import Namer

# This module reads the IR through its attributes (``eqns``, ``invars``, ``outvars``,
# ``constvars``, ``params``, ``aval``) and imports nothing of funcgrad but the variable
# namer it shares with the printer: ``ClosedJaxpr``'s drawing methods call it, and the IR
# module may not be part of an import cycle.

_HEADER = [
    "digraph jaxpr {",
    "  rankdir=TB;",
    '  fontname="Helvetica";',
    '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", fontname="monospace",'
    " fontsize=10];",
    '  edge [fontname="monospace", fontsize=9];',
]
_IN_STYLE = 'shape=ellipse, fillcolor="#e3f4e1"'
_CONST_STYLE = 'shape=ellipse, fillcolor="#f1f1f1", style="dashed,filled"'
_OUT_STYLE = 'shape=ellipse, fillcolor="#fbeee0"'


def _quote(text: str) -> str:
    """A DOT string literal (``\\n`` stays a line break of the label)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _is_literal(atom: Any) -> bool:
    return hasattr(atom, "val")


def _open(program: Any) -> Any:
    """The jaxpr of a ClosedJaxpr (a jaxpr is returned as it is)."""
    return program.jaxpr if hasattr(program, "consts") else program


def _is_program(value: Any) -> bool:
    return hasattr(_open(value), "eqns")


def _sub_jaxprs(value: Any) -> list[Any]:
    """The jaxprs a parameter holds (one, or a tuple of them as ``cond``'s branches)."""
    if _is_program(value):
        return [_open(value)]
    if isinstance(value, tuple) and value and all(_is_program(v) for v in value):
        return [_open(v) for v in value]
    return []


# A default repr names its object's address: drawn, the same program would differ from run to
# run, and the pictures committed to the documentation site could not be checked for staleness.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _param_text(value: Any) -> str:
    if isinstance(value, np.dtype):
        return str(value.name)
    return _ADDRESS.sub("", repr(value))


class _Graph:
    """Builds the DOT lines of one program and its sub-programs."""

    def __init__(self, kernels: dict[Any, str]) -> None:
        self.namer = Namer()
        self.lines: list[str] = []
        # Edges are written after every node, outside the clusters: an edge statement inside a
        # subgraph would pull its endpoints (e.g. a kernel's producer) into that cluster.
        self.edges: list[str] = []
        self.counter = 0
        self.kernels = kernels  # equation -> the title of the kernel cluster it belongs to

    def node_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def edge(self, src: str, dst: str, atom: Any) -> None:
        label = atom.pretty() if _is_literal(atom) else self.namer.decl(atom)
        self.edges.append(f"  {src} -> {dst} [label={_quote(label)}];")

    def program(self, jaxpr: Any, indent: str, role: str) -> list[str]:
        """Draw ``jaxpr``; returns the ids of its input nodes (constvars first)."""
        producers: dict[Any, str] = {}
        inputs = []
        for kind, vars_, style in (("const", jaxpr.constvars, _CONST_STYLE),
                                   ("in", jaxpr.invars, _IN_STYLE)):
            for k, v in enumerate(vars_):
                nid = self.node_id(kind)
                producers[v] = nid
                inputs.append(nid)
                text = f"{role} {kind} {k}" if role else f"{kind} {k}"
                self.lines.append(f"{indent}{nid} [label={_quote(text)}, {style}];")
                self.namer.bind(v)
        open_kernel: str | None = None
        for eqn in jaxpr.eqns:
            kernel = self.kernels.get(eqn)
            if kernel != open_kernel:
                if open_kernel is not None:
                    self.lines.append(f"{indent}}}")
                if kernel is not None:
                    self.lines.append(f"{indent}subgraph cluster_{kernel.split()[0]} {{")
                    self.lines.append(f'{indent}  label={_quote(kernel)}; style="filled";'
                                      ' fillcolor="#fff7d6"; color="#c9a227";')
                open_kernel = kernel
            self.equation(eqn, producers, indent + ("  " if kernel else ""))
        if open_kernel is not None:
            self.lines.append(f"{indent}}}")
        for k, out in enumerate(jaxpr.outvars):
            nid = self.node_id("out")
            text = f"{role} out {k}" if role else f"out {k}"
            if _is_literal(out):
                text += f" = {out.pretty()}"
            self.lines.append(f"{indent}{nid} [label={_quote(text)}, {_OUT_STYLE}];")
            if not _is_literal(out) and out in producers:
                self.edge(producers[out], nid, out)
        return inputs

    def equation(self, eqn: Any, producers: dict[Any, str], indent: str) -> None:
        nid = self.node_id("eqn")
        lines = [eqn.primitive.name]
        subs: list[tuple[str, Any]] = []
        for key, value in eqn.params.items():
            jaxprs = _sub_jaxprs(value)
            if jaxprs:
                many = len(jaxprs) > 1
                subs.extend((f"{key}[{i}]" if many else key, j) for i, j in enumerate(jaxprs))
            else:
                lines.append(f"{key}={_param_text(value)}")
        # Literal operands have no producer: they are written into the node.
        for pos, a in enumerate(eqn.inputs):
            if _is_literal(a):
                lines.append(f"operand {pos} = {a.pretty()}")
        self.lines.append(f"{indent}{nid} [label={_quote(chr(10).join(lines))}];")
        # Sub-programs are named before the outputs, as the printer names them.
        for title, sub in subs:
            cluster = self.node_id("cluster_")
            self.lines.append(f"{indent}subgraph {cluster} {{")
            self.lines.append(f'{indent}  label={_quote(f"{eqn.primitive.name}: {title}")};'
                              ' style="dashed"; color="#7a8ca8";')
            sub_inputs = self.program(sub, indent + "  ", title)
            self.lines.append(f"{indent}}}")
            for sid in sub_inputs:
                self.edges.append(f"  {nid} -> {sid} [style=dotted, arrowhead=none];")
        for a in eqn.inputs:
            if not _is_literal(a) and a in producers:
                self.edge(producers[a], nid, a)
        for v in eqn.outputs:
            self.namer.bind(v)
            producers[v] = nid


def _kernel_clusters(plan: Any) -> dict[Any, str]:
    """Equation -> kernel name, from a fusion plan (``funcgrad.backends.fusion.Plan``: its
    ``steps`` are fused steps, with ``eqns`` and an optional fused ``reduction``, and calls).
    Kernels are named as the CuPy backend names them: by their step's position."""
    out: dict[Any, str] = {}
    for i, step in enumerate(plan.steps):
        eqns = getattr(step, "eqns", None)
        if eqns is None:
            continue
        reduction = getattr(step, "reduction", None)
        for eqn in (*eqns, *([reduction] if reduction is not None else [])):
            out[eqn] = f"fg_kernel_{i} ({getattr(step, 'kind', 'fused')})"
    return out


def to_dot(closed: Any, plan: Any = None) -> str:
    """Graphviz DOT text of a program: equations as nodes, variables as labelled edges, the
    programs of control flow and ``jit`` as clusters, and, given a fusion ``plan`` of this
    program, each generated kernel as a cluster of its equations.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> text = to_dot(jax.make_jaxpr(lambda x: jnp.exp(x) + x)(jnp.ones(2)))
    >>> text.count(" -> ")
    4
    """
    jaxpr = _open(closed)
    graph = _Graph(_kernel_clusters(plan) if plan is not None else {})
    graph.program(jaxpr, "  ", "")
    return "\n".join([*_HEADER, *graph.lines, *graph.edges, "}"]) + "\n"


def _graphviz() -> Any:
    try:
        import graphviz  # noqa: PLC0415
    except ImportError:
        raise ImportError(
            "drawing a jaxpr needs the graphviz Python package and the Graphviz 'dot' "
            "program: pip install 'funcgrad[viz]' (and the graphviz system package, e.g. "
            "apt-get install graphviz); to_dot() needs neither"
        ) from None
    return graphviz


def render(closed: Any, path: str | os.PathLike[str], plan: Any = None
           ) -> str:
    """Draw the program to ``path``; the format comes from its suffix (``.svg``, ``.png``,
    ``.pdf``; SVG without one). Returns the path written.

    >>> import funcgrad as jax
    >>> render(jax.make_jaxpr(abs)(1.0), "graph.svg")  # doctest: +SKIP
    'graph.svg'
    """
    graphviz = _graphviz()
    root, ext = os.path.splitext(os.fspath(path))
    fmt = ext[1:].lower() or "svg"
    data = _pipe(graphviz, to_dot(closed, plan), fmt)
    out = os.fspath(path) if ext else f"{root}.svg"
    with open(out, "wb") as f:
        f.write(data)
    return out


def _pipe(graphviz: Any, dot: str, fmt: str) -> bytes:
    try:
        return bytes(graphviz.Source(dot).pipe(format=fmt))
    except graphviz.ExecutableNotFound:
        raise RuntimeError(
            "the Graphviz 'dot' program is not on PATH: install the graphviz system package "
            "(e.g. apt-get install graphviz, brew install graphviz)"
        ) from None


def svg(closed: Any) -> str | None:
    """The SVG picture, or None when graphviz (package or program) is missing: what Jupyter
    shows in place of the text."""
    try:
        import graphviz  # noqa: PLC0415
    except ImportError:
        return None
    try:
        return _pipe(graphviz, to_dot(closed), "svg").decode()
    except RuntimeError:
        return None


__all__: Sequence[str] = ["render", "svg", "to_dot"]
