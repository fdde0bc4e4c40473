"""The report's templates (``reprokit/report/templates/``): the page of a run, the runs index, each kind's sections.

One environment for all of them (``draw/templating.py``: autoescape on, strict names), so a kind's section and the
page it lands in escape alike.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment
from markupsafe import Markup

from reprokit.draw import templating


def environment() -> Environment:
    return templating.environment("reprokit.report")


def render_page(name: str, **context: Any) -> str:
    """A whole page (``report.html``, ``index.html``)."""
    return environment().get_template(name).render(**context)


def render_part(name: str, **context: Any) -> list[Markup]:
    """A kind's section (``kind_sections/<kind>.html``): one element of the page, or nothing."""
    return templating.render_part(environment(), name, **context)
