"""Tables, figures and titled blocks for both reports: the primitives the step kinds' sections draw with.

Nothing here knows a step kind or a record: the report and the kinds' sections (``reprokit/report/kind_sections/``) draw
with this and ``svg``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reprokit.draw.svg import esc, is_number

Block = str | tuple[list[str], list[list[Any]]]  # a paragraph, or (headers, rows)


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown table; no cell is cut, pipes and newlines are escaped."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def html_table(headers: list[str] | None, rows: list[list[Any]], table_id: str | None = None,
               row_classes: list[str] | None = None) -> str:
    """Cells are escaped text, or ``(text, class)`` pairs."""
    head = f"<thead><tr>{''.join(f'<th>{esc(h)}</th>' for h in headers)}</tr></thead>" if headers else ""
    body = []
    for index, row in enumerate(rows):
        cells = []
        for cell in row:
            text, cls = cell if isinstance(cell, tuple) else (cell, "")
            cls_attr = f' class="{esc(cls)}"' if cls else ""
            cells.append(f"<td{cls_attr}>{esc('' if text is None else text)}</td>")
        row_cls = row_classes[index] if row_classes and row_classes[index] else ""
        body.append(f'<tr class="{esc(row_cls)}">' + "".join(cells) + "</tr>" if row_cls else "<tr>" + "".join(cells) + "</tr>")
    id_attr = f' id="{esc(table_id)}"' if table_id else ""
    return f"<table{id_attr}>{head}<tbody>{''.join(body)}</tbody></table>"


def figure(svg: str, caption: str) -> list[str]:
    return [f"<figure>{svg}<figcaption>{esc(caption)}</figcaption></figure>"] if svg else []


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


def html_blocks(title: str, blocks: list[Block]) -> list[str]:
    return [f"<h2>{esc(title)}</h2>"] + [html_table(*block) if isinstance(block, tuple) else f"<p>{esc(block)}</p>"
                                         for block in blocks]


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
