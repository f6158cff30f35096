"""Every example of the documentation site runs, and prints what the page shows.

Per page, the ```python blocks run in page order in one namespace (a page reads as one
session). A python block followed directly by a ```text block must print exactly that text;
```pycon blocks are doctest sessions (``>>>`` lines and their output). A block preceded by
the line ``<!-- skip -->`` is shown but not run (it needs what a test machine lacks).
"""

from __future__ import annotations

import contextlib
import doctest
import io
import pathlib
import re
from dataclasses import dataclass

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SKIP_MARK = "<!-- skip -->"
FENCE = re.compile(r"^(?P<indent>[ ]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ ]*$",
                   re.M | re.S)

# Examples show what a JAX user sees by default: 32-bit mode.
pytestmark = pytest.mark.x32


@dataclass
class Block:
    lang: str
    code: str
    line: int
    skip: bool
    expected: str | None = None  # the text block that follows, if any


def _dedent(body: str, indent: str) -> str:
    return "".join(line[len(indent):] if line.startswith(indent) else line
                   for line in body.splitlines(keepends=True))


def blocks(text: str) -> list[Block]:
    """The code blocks of a page, each python block with the output block right after it."""
    out: list[Block] = []
    prev_end = 0
    for m in FENCE.finditer(text):
        lang = (m.group("info").strip().split() or [""])[0]
        between = text[prev_end:m.start()]
        before = [ln.strip() for ln in between.splitlines() if ln.strip()]
        code = _dedent(m.group("body"), m.group("indent"))
        line = text.count("\n", 0, m.start()) + 1
        if lang == "text" and not before and out and out[-1].lang == "python":
            out[-1].expected = code
        else:
            out.append(Block(lang, code, line, skip=bool(before) and before[-1] == SKIP_MARK))
        prev_end = m.end()
    return out


def pages() -> list[pathlib.Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.relative_to(DOCS).parts)


def _run_doctest(block: Block, ns: dict, name: str) -> None:
    test = doctest.DocTestParser().get_doctest(block.code, ns, name, name, block.line)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report = io.StringIO()
    runner.run(test, out=report.write, clear_globs=False)
    assert runner.failures == 0, report.getvalue()


def run_page(path: pathlib.Path, root: pathlib.Path = ROOT) -> int:
    """Run a page's examples; returns how many blocks ran."""
    name = str(path.relative_to(root))
    ns: dict = {"__name__": "__docs__"}
    ran = 0
    for block in blocks(path.read_text()):
        if block.skip or block.lang not in ("python", "pycon"):
            continue
        where = f"{name}:{block.line}"
        if block.lang == "pycon":
            _run_doctest(block, ns, where)
        else:
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile(block.code, where, "exec"), ns)  # noqa: S102
            if block.expected is not None:
                assert printed.getvalue() == block.expected, (
                    f"{where} printed:\n{printed.getvalue()}\nthe page shows:\n"
                    f"{block.expected}")
        ran += 1
    return ran


@pytest.mark.parametrize("path", pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_page_examples_run(path: pathlib.Path, tmp_path: pathlib.Path,
                           monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
                           ) -> None:
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    ran = run_page(path)
    # Counted for the run's summary line (tests/conftest.py prints it).
    counts = request.config.__dict__.setdefault("_funcgrad_doc_blocks", {})
    counts[str(path)] = ran


def test_the_collector_pairs_output_blocks_and_skips_marked_ones() -> None:
    page = ("```python\nprint(1)\n```\n\n```text\n1\n```\n\n<!-- skip -->\n```python\n"
            "raise SystemExit\n```\n\n```pycon\n>>> 1 + 1\n2\n```\n")
    got = blocks(page)
    assert [(b.lang, b.skip, b.expected) for b in got] == [
        ("python", False, "1\n"), ("python", True, None), ("pycon", False, None)]


def test_a_wrong_output_block_fails(tmp_path: pathlib.Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```python\nprint(2 + 2)\n```\n```text\n5\n```\n")
    with pytest.raises(AssertionError, match="printed"):
        run_page(page, tmp_path)
    page.write_text("```pycon\n>>> 2 + 2\n5\n```\n")
    with pytest.raises(AssertionError):
        run_page(page, tmp_path)


def test_almost_every_block_runs() -> None:
    """Skipped blocks are the exception: at most a few on the whole site."""
    all_blocks = [b for p in pages() for b in blocks(p.read_text())
                  if b.lang in ("python", "pycon")]
    skipped = [b for b in all_blocks if b.skip]
    assert len(all_blocks) >= 40
    assert len(skipped) <= 3
