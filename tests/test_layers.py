"""The layers import one way: base, core, engine, transforms and backends, the JAX face, the
PyTorch face. Every import counts, those inside functions too (a lazy import is still a
dependency), and no two packages import each other.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
FOLDERS = {"funcgrad": ROOT / "funcgrad", "funcgrad.transforms": ROOT / "transforms",
           "funcgrad.backends": ROOT / "backends"}

# The lowest layer a module (prefix) belongs to; a module may import only its own layer
# or lower ones.
LAYERS: list[tuple[int, tuple[str, ...]]] = [
    (0, ("funcgrad.errors", "funcgrad.config", "funcgrad.dtypes", "funcgrad.ir",
         "funcgrad.source_info", "funcgrad.tree_util", "funcgrad.array", "funcgrad.devices",
         "funcgrad.wrappers", "funcgrad.visualize", "funcgrad.processes",
         "funcgrad.var_names", "funcgrad.monitoring", "funcgrad.sharding",
         "funcgrad.numba_switch", "funcgrad.allocator", "funcgrad.float_warnings")),
    (1, ("funcgrad.core", "funcgrad.leak_check")),
    (2, ("funcgrad.primitives", "funcgrad.staging", "funcgrad.conversion")),
    (3, ("funcgrad.transforms", "funcgrad.backends", "funcgrad.check_rules")),
    (4, ("funcgrad.numpy", "funcgrad.lax", "funcgrad.nn", "funcgrad.api", "funcgrad.tree",
         "funcgrad.experimental", "funcgrad.testing", "funcgrad.test_util",
         "funcgrad.random", "funcgrad.debug", "funcgrad.scipy", "funcgrad.distributed",
         "funcgrad.api_extras", "funcgrad.ad_checkpoint", "funcgrad.custom_derivatives",
         "funcgrad.custom_batching", "funcgrad.image", "funcgrad.stages",
         "funcgrad.dlpack", "funcgrad.ops", "funcgrad.typing", "funcgrad.version",
         "funcgrad.config_flags", "funcgrad.sharded_arrays", "funcgrad.shard_map",
         "funcgrad.profiler", "funcgrad.api_runtime", "funcgrad._dtypes_api",
         "funcgrad.flatten_util", "funcgrad.scans")),
    (5, ("funcgrad.torch",)),
]
# The devices registry loads backend modules by name (importlib): a plugin lookup, not an
# import of the backends' code by the core.


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for pkg, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([pkg, *parts])] = path
    return out


def _layer(module: str) -> int:
    best, best_len = None, -1
    for layer, prefixes in LAYERS:
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = layer, len(p)
    if module == "funcgrad":
        return 4
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best


def _imports(module: str, path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text())
    pkg = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    # Imports only for type checking never run.
    typing_only = {id(n) for top in ast.walk(tree) if isinstance(top, ast.If)
                   and getattr(top.test, "id", "") == "TYPE_CHECKING" for n in ast.walk(top)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = pkg.split(".")
                base = ".".join(up[:len(up) - node.level + 1] + ([base] if base else []))
            found.update(f"{base}.{a.name}" for a in node.names)
    return {m for m in found if m == "funcgrad" or m.startswith("funcgrad.")}


def _known(name: str, modules: dict[str, pathlib.Path]) -> str | None:
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def test_no_module_imports_a_higher_layer() -> None:
    modules = _modules()
    bad = []
    for mod, path in modules.items():
        for imp in _imports(mod, path):
            target = _known(imp, modules)
            if target is None or target == mod:
                continue
            if _layer(target) > _layer(mod):
                bad.append(f"{mod} (layer {_layer(mod)}) imports {target} "
                           f"(layer {_layer(target)})")
    assert not bad, "\n".join(sorted(bad))


def test_no_package_cycles() -> None:
    """Between the subpackages (and top-level modules), imports form no cycle."""
    modules = _modules()

    def unit(m: str) -> str:
        parts = m.split(".")
        return ".".join(parts[:3]) if parts[1] in ("transforms", "backends", "torch") \
            else ".".join(parts[:2])

    graph: dict[str, set[str]] = {}
    for mod, path in modules.items():
        u = unit(mod) if mod != "funcgrad" else "funcgrad"
        for imp in _imports(mod, path):
            target = _known(imp, modules)
            if target is None or target == "funcgrad":
                continue
            v = unit(target)
            if v != u:
                graph.setdefault(u, set()).add(v)
    # Strongly connected components of more than one unit are cycles.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles between: {cycles}"
