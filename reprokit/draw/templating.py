"""The one Jinja2 configuration of the HTML reports: autoescape on, escaping by ``html.escape``, strict names.

Host text (a log line, a tile name, a file name) reaches ``report.html`` in a template's ``{{ }}``, and every
``{{ }}`` is escaped unless the value is already markup: the code never has to remember to escape. The escaping
itself is ``html.escape(quote=True)`` (``&quot;``, ``&#x27;``) after ``hosttext.shown`` (an ESC byte or a
right-to-left override shows as its escape), applied by ``finalize``, so the kept reports keep
their bytes (markupsafe alone writes ``&#34;``, ``&#39;``); autoescape stays on behind it for anything finalize
hands on as markup. The only markup handed in is what this code built from escaped parts: a rendered template
(``render_part``) and the hand SVG (``draw/svg.py``, ``Svg.render``).

Host text is data to a template, never template source: nothing here compiles a string that came from a host, so
``{{ 7*7 }}`` in a log line is printed as it is.
"""

from __future__ import annotations

import html
from functools import cache
from typing import Any

from jinja2 import ChoiceLoader, Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from reprokit.output.hosttext import shown


def escaped_text(value: object) -> str:
    """Text for HTML or SVG: every control, bidi and invisible code point shown (``\\x1b``), then escaped (quotes
    included). None is no text."""
    return html.escape(shown("" if value is None else str(value), multiline=True), quote=True)


def escaped(value: Any) -> Markup:
    """A ``{{ }}``'s value as escaped text; markup passes as it is."""
    if hasattr(value, "__html__"):
        return Markup(value.__html__())
    return Markup(escaped_text(value))


def cell(value: Any) -> tuple[Any, str]:
    """A table cell as (text, class): cells are text, or ``(text, class)`` pairs."""
    return value if isinstance(value, tuple) else (value, "")


@cache
def environment(*packages: str) -> Environment:
    """The templates of ``packages`` (each one's ``templates/``), then this package's macros (``blocks.html``).

    ``trim_blocks`` and ``lstrip_blocks``: a line that holds only a ``{% %}`` tag leaves nothing, so a template
    reads as one element per line, as the reports are written.
    """
    loaders = [PackageLoader(package) for package in (*packages, "reprokit.draw")]
    env = Environment(loader=ChoiceLoader(loaders), autoescape=True, finalize=escaped, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["cell"] = cell
    return env


def render_part(env: Environment, name: str, **context: Any) -> list[Markup]:
    """A template that draws one part of a page: its text as markup, or nothing when it drew nothing."""
    text = env.get_template(name).render(**context).removesuffix("\n")
    return [Markup(text)] if text else []
