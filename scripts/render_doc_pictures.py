"""Write the pictures of the documentation site: docs/images/<name>.dot and <name>.svg.

Each picture is a program of a tutorial page (the same function on the same inputs), drawn
by ``funcgrad.visualize``. Both files are committed: CI machines have no Graphviz ``dot``
program, so the site embeds the committed SVGs, and tests/test_doc_pictures.py regenerates
the DOT text from the current code and fails when a committed picture is stale. Rerun
after a change to the tracer, the fusion planner or the drawing code:

    python scripts/render_doc_pictures.py            # needs the viz extra and Graphviz

``--dot-only`` writes only the .dot files (no Graphviz needed); the SVGs are then stale
until the script runs where Graphviz is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import pathlib
from collections.abc import Callable

import funcgrad as jax
import funcgrad.numpy as jnp
from funcgrad import lax
from funcgrad.config import enable_x64

ROOT = pathlib.Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"


# -------------------------------------------------------------- the tutorials' programs


def jit_staged() -> str:
    """docs/tutorials/jit.md, "The staged program"."""
    def f(x):
        return jnp.sum(jnp.exp(x) * 2.0 + x)

    return jax.make_jaxpr(f)(jnp.arange(3.0)).to_dot()


def jit_fused_kernels() -> str:
    """docs/tutorials/jit.md, "Fusion for GPUs": the CuPy backend's plan (planning needs no
    GPU), each generated kernel a cluster; the matrix product is a cuBLAS call."""
    gpu = jax.jit(lambda x, w: jnp.sum(jnp.tanh(x @ w) * 2.0 + 1.0), backend="cupy")
    return gpu.lower(jnp.ones((4, 3)), jnp.ones((3, 5))).to_dot()


def jit_under_grad() -> str:
    """docs/tutorials/jit.md, "Under other transformations": the gradient of a jitted
    function is a compiled forward pass that saves residuals and a compiled backward pass."""
    def f(x):
        return jnp.sum(jnp.exp(x) * 2.0 + x)

    fast = jax.jit(f)
    return jax.make_jaxpr(jax.grad(lambda v: fast(v)))(jnp.arange(3.0)).to_dot()


def autodiff_grad() -> str:
    """docs/tutorials/autodiff.md, "Gradients": the program ``grad`` traces."""
    def f(x):
        return jnp.sum(x ** 3)

    return jax.make_jaxpr(jax.grad(f))(jnp.array([1.0, 2.0])).to_dot()


def control_flow_cond() -> str:
    """docs/tutorials/control_flow.md, "cond and switch"."""
    def f(x):
        return lax.cond(x > 0, lambda v: v ** 2, lambda v: -v, x)

    return jax.make_jaxpr(f)(1.0).to_dot()


def control_flow_while() -> str:
    """docs/tutorials/control_flow.md, "while_loop and fori_loop"."""
    def halve_until_small(x):
        return lax.while_loop(lambda v: v > 1.0, lambda v: v / 2.0, x)

    return jax.make_jaxpr(halve_until_small)(10.0).to_dot()


def control_flow_scan_grad() -> str:
    """docs/tutorials/control_flow.md, "scan": the reverse-mode derivative of a cumulative
    sum, a forward scan and a scan that runs the steps backwards."""
    def cumulative(xs):
        def step(carry, x):
            carry = carry + x
            return carry, carry
        return lax.scan(step, 0.0, xs)

    def loss(xs):
        return jnp.sum(cumulative(xs)[1])

    return jax.make_jaxpr(jax.grad(loss))(jnp.array([1.0, 2.0, 3.0])).to_dot()


PICTURES: dict[str, Callable[[], str]] = {
    "jit_staged": jit_staged,
    "jit_fused_kernels": jit_fused_kernels,
    "jit_under_grad": jit_under_grad,
    "autodiff_grad": autodiff_grad,
    "control_flow_cond": control_flow_cond,
    "control_flow_while": control_flow_while,
    "control_flow_scan_grad": control_flow_scan_grad,
}


def dot_text(name: str) -> str:
    """The DOT text of picture ``name``, as a JAX user's default session traces it (32-bit
    mode, whatever the caller's mode is)."""
    with enable_x64(False):
        return PICTURES[name]()


def svg_of(dot: str) -> bytes:
    """Render DOT text to SVG with the graphviz package and its ``dot`` program."""
    try:
        import graphviz  # noqa: PLC0415 - the viz extra is optional
    except ImportError:
        raise SystemExit("rendering needs the graphviz package: pip install -e '.[viz]' "
                         "(or run with --dot-only)") from None
    try:
        return bytes(graphviz.Source(dot).pipe(format="svg"))
    except graphviz.ExecutableNotFound:
        raise SystemExit("rendering needs the Graphviz 'dot' program (apt-get install "
                         "graphviz, brew install graphviz), or run with --dot-only") from None


def dot_digest(dot: str) -> str:
    """The SVG names the DOT text it was drawn from: the test can tell a stale SVG."""
    return "dot sha256 " + hashlib.sha256(dot.encode()).hexdigest()


def stamped_svg(dot: str) -> bytes:
    """The SVG of ``dot`` with a comment naming the digest of ``dot`` after its XML
    declaration."""
    svg = svg_of(dot)
    head, sep, rest = svg.partition(b"?>\n")
    if not sep:  # no XML declaration: the comment opens the file
        head, rest = b"", svg
    return head + sep + f"<!-- {dot_digest(dot)} -->\n".encode() + rest


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help=f"pictures to write (default: all of "
                        f"{', '.join(PICTURES)})")
    parser.add_argument("--dot-only", action="store_true", help="write only the .dot files")
    parser.add_argument("--out", type=pathlib.Path, default=IMAGES, help="output folder")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(PICTURES))
    if unknown:
        parser.error(f"unknown picture(s) {', '.join(unknown)}; known: {', '.join(PICTURES)}")
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.names or list(PICTURES):
        dot = dot_text(name)
        (args.out / f"{name}.dot").write_text(dot)
        written = [f"{name}.dot"]
        if not args.dot_only:
            (args.out / f"{name}.svg").write_bytes(stamped_svg(dot))
            written.append(f"{name}.svg")
        print(f"wrote {', '.join(str(args.out / w) for w in written)}")


if __name__ == "__main__":
    main()
