"""Griffe extension: docstring examples (``>>>`` sessions) become ``pycon`` code blocks.

funcgrad's docstrings are plain text with doctest sessions (run by tests/test_docstrings.py);
as Markdown, ``>>>`` would read as nested block quotes. A session runs from its first ``>>>``
line to the next blank line, as doctest reads it.
"""

from __future__ import annotations

from typing import Any

import griffe


def fence_doctests(text: str) -> str:
    out: list[str] = []
    in_fence = in_session = False
    indent = ""
    for line in text.splitlines():
        stripped = line.lstrip()
        if in_session and not stripped:
            out.append(f"{indent}```")
            in_session = False
        elif not in_session and stripped.startswith("```"):
            in_fence = not in_fence
        elif not in_session and not in_fence and (stripped.startswith(">>> ")
                                                  or stripped == ">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
            in_session = True
        out.append(line)
    if in_session:
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    def on_instance(self, *, node: Any, obj: griffe.Object, agent: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
