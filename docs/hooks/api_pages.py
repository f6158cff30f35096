"""MkDocs hook: one API reference page per module listed in the nav.

A nav entry ``reference/<module>.md`` that has no file gets a generated page holding
``::: <module>`` (mkdocstrings renders it from the docstrings), so documenting a new module
is one line in mkdocs.yml.
"""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files

PREFIX = "reference/"


def _nav_paths(items: Any) -> list[str]:
    out: list[str] = []
    if isinstance(items, str):
        out.append(items)
    elif isinstance(items, dict):
        for v in items.values():
            out.extend(_nav_paths(v))
    elif isinstance(items, list):
        for v in items:
            out.extend(_nav_paths(v))
    return out


def on_files(files: Files, config: Any) -> Files:
    for path in _nav_paths(config["nav"]):
        if path.startswith(PREFIX) and path.endswith(".md") and files.get_file_from_path(
                path) is None:
            module = path[len(PREFIX):-len(".md")]
            content = (f"# `{module}`\n\n::: {module}\n"
                       "    options:\n      show_root_heading: false\n")
            files.append(File.generated(config, path, content=content))
    return files
