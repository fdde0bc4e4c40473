"""HTML is written in templates, where escaping is the default: no Python module of the reports writes an element,
no template turns escaping off, and only the drawing primitives make markup of a string.

The hand SVG (``draw/svg.py``) is the one place Python writes elements: each value there goes through its ``esc``.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "reprokit"
SVG = "reprokit/draw/svg.py"
MAKES_MARKUP = {"reprokit/draw/templating.py", "reprokit/draw/svg.py", "reprokit/draw/tables.py"}
ELEMENT = re.compile(r"""["']<(/?)(html|head|body|h[1-6]|p|table|thead|tbody|tr|th|td|ul|li|div|span|strong|code|pre|"""
                     r"""figure|figcaption|a|br|style|meta|title)[ >]""")


def python_modules() -> list[tuple[str, str]]:
    return [(path.relative_to(REPO).as_posix(), path.read_text()) for path in sorted(PACKAGE.rglob("*.py"))]


def test_no_module_but_the_svg_writes_an_html_element():
    found = [f"{rel}:{n}" for rel, text in python_modules() if rel != SVG
             for n, line in enumerate(text.splitlines(), 1) if ELEMENT.search(line)]
    assert found == []


def test_only_the_svg_escapes_by_hand():
    found = [f"{rel}:{n}" for rel, text in python_modules() if rel != SVG
             for n, line in enumerate(text.splitlines(), 1) if re.search(r"\besc\(|html\.escape\(", line)
             and rel != "reprokit/draw/templating.py"]
    assert found == []


def test_markup_is_made_only_by_the_drawing_primitives_and_no_template_turns_escaping_off():
    makers = sorted(rel for rel, text in python_modules() if "Markup(" in text)
    assert makers == sorted(MAKES_MARKUP)
    templates = sorted(PACKAGE.rglob("templates/**/*.html"))
    off = [f"{path.relative_to(REPO)}:{n}" for path in templates
           for n, line in enumerate(path.read_text().splitlines(), 1)
           if re.search(r"\|\s*safe\b|autoescape\s+false|\bmarkup\b", line, re.IGNORECASE)]
    assert (len(templates), off) == (9, [])
