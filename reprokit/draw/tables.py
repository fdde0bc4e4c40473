"""Tables, figures and titled blocks for both reports: the primitives the step kinds' sections draw with.

Nothing here knows a step kind or a record: the report and the kinds' sections (``reprokit/report/kind_sections/``) draw
with this and ``svg``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from markupsafe import Markup

from reprokit.draw.svg import is_number
from reprokit.draw.templating import environment

Block = str | tuple[list[str], list[list[Any]]]  # a paragraph, or (headers, rows)


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown table; no cell is cut, pipes and newlines are escaped."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def _blocks() -> Any:
    """The macros of ``templates/blocks.html``, callable from Python."""
    return environment().get_template("blocks.html").module


def html_table(headers: list[str] | None, rows: list[list[Any]], table_id: str | None = None,
               row_classes: list[str] | None = None) -> Markup:
    """Cells are text, or ``(text, class)`` pairs; the template escapes them."""
    return _blocks().table(headers, rows, table_id, row_classes)


def figure(svg: str, caption: str) -> list[Markup]:
    return [_blocks().figure(svg, caption)] if svg else []


def grouped_bytes(value: float) -> str:
    return f"{int(value):,}".replace(",", " ")


def html_bytes(value: Any) -> Any:
    """A byte count grouped by thousands (``101 376``); anything else as it is."""
    return grouped_bytes(value) if is_number(value) else value


def md_blocks(title: str, blocks: list[Block]) -> list[str]:
    """A ``##`` section of paragraphs and tables."""
    lines = ["", f"## {title}"]
    for block in blocks:
        lines += [""] + (md_table(*block) if isinstance(block, tuple) else [block])
    return lines


def html_blocks(title: str, blocks: list[Block]) -> list[Markup]:
    return [Markup(_blocks().titled(title, blocks).removesuffix("\n"))]


def drawn_blocks(blocks: Callable[[Any], tuple[str, list[Block]] | None]) -> tuple[Callable[[Any], list[str]],
                                                                                    Callable[[Any], list[str]]]:
    """The Markdown and the HTML drawing of a section that a kind gives as its title and blocks (or None: no
    section for that step)."""
    def markdown(step: Any) -> list[str]:
        section = blocks(step)
        return md_blocks(*section) if section else []

    def html(step: Any) -> list[str]:
        section = blocks(step)
        return html_blocks(*section) if section else []

    return markdown, html
