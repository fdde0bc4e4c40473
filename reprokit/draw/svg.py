"""A few SVG primitives for the HTML report's charts: escaped text, linear and log scales, nice ticks.

Charts are drawn server-side as inline ``<svg>`` so the report needs no script
and makes no request. Every mark a chart draws for a data point carries a
class (``bar``, ``point``, ``span``, ``series``) so tests can count them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from markupsafe import Markup

from reprokit.draw.templating import escaped_text


def esc(value: object) -> str:
    """Text or attribute value, escaped for SVG (quotes included), as the report's templates escape theirs.

    The charts stay hand-written rather than templated: each mark is one line of Python beside its scale, the
    elements are a closed set (rect, line, circle, polyline, text, title) with no script, link or style, and
    every value reaches them through this function or ``num``.
    """
    return escaped_text(value)


def num(value: float) -> str:
    """A coordinate: short, no exponent."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


def is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def nice_ticks(high: float, count: int = 5) -> list[float]:
    """0 and round steps up to at least ``high``: 0, 50000, 100000, ..."""
    if high <= 0:
        return [0.0, 1.0]
    raw = high / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(int(math.ceil(high / step - 1e-9)) + 1)]


def decade_ticks(low: float, high: float) -> list[float]:
    return [10.0 ** e for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
            if low <= 10.0 ** e <= high]


@dataclass
class Linear:
    lo: float
    hi: float
    out_lo: float
    out_hi: float

    def __call__(self, value: float) -> float:
        span = (self.hi - self.lo) or 1.0
        return self.out_lo + (value - self.lo) / span * (self.out_hi - self.out_lo)


@dataclass
class Log:
    lo: float
    hi: float
    out_lo: float
    out_hi: float

    def __call__(self, value: float) -> float:
        span = (math.log10(self.hi) - math.log10(self.lo)) or 1.0
        return self.out_lo + (math.log10(value) - math.log10(self.lo)) / span * (self.out_hi - self.out_lo)


@dataclass
class Svg:
    """An ``<svg>`` under construction; ``render`` gives the element with a title for screen readers."""

    chart_id: str
    width: float
    height: float
    title: str
    parts: list[str] = field(default_factory=list)

    def add(self, markup: str) -> None:
        self.parts.append(markup)

    def rect(self, x: float, y: float, w: float, h: float, cls: str, tip: str | None = None, **data: object) -> None:
        self.add(f'<rect class="{esc(cls)}" x="{num(x)}" y="{num(y)}" width="{num(max(w, 0))}" height="{num(max(h, 0))}"'
                 f'{_data(data)}>{_tip(tip)}</rect>')

    def line(self, x1: float, y1: float, x2: float, y2: float, cls: str, **data: object) -> None:
        self.add(f'<line class="{esc(cls)}" x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}"{_data(data)}/>')

    def circle(self, x: float, y: float, r: float, cls: str, tip: str | None = None, **data: object) -> None:
        self.add(f'<circle class="{esc(cls)}" cx="{num(x)}" cy="{num(y)}" r="{num(r)}"{_data(data)}>{_tip(tip)}</circle>')

    def polyline(self, points: list[tuple[float, float]], cls: str, tip: str | None = None, **data: object) -> None:
        coords = " ".join(f"{num(x)},{num(y)}" for x, y in points)
        self.add(f'<polyline class="{esc(cls)}" points="{coords}"{_data(data)}>{_tip(tip)}</polyline>')

    def text(self, x: float, y: float, text: object, cls: str = "", anchor: str = "start", rotate: float | None = None) -> None:
        transform = f' transform="rotate({num(rotate)} {num(x)} {num(y)})"' if rotate is not None else ""
        cls_attr = f' class="{esc(cls)}"' if cls else ""
        self.add(f'<text{cls_attr} x="{num(x)}" y="{num(y)}" text-anchor="{anchor}"{transform}>{esc(text)}</text>')

    def render(self) -> Markup:
        """The element, markup built here from escaped parts: the report's templates insert it as it is."""
        return Markup(f'<svg id="{esc(self.chart_id)}" class="chart" role="img" '
                f'width="{num(self.width)}" height="{num(self.height)}" viewBox="0 0 {num(self.width)} {num(self.height)}">'
                      f"<title>{esc(self.title)}</title>" + "".join(self.parts) + "</svg>")


def _tip(tip: str | None) -> str:
    """A native tooltip (SVG ``<title>``): details on hover without any script."""
    return f"<title>{esc(tip)}</title>" if tip else ""


def _data(data: dict[str, object]) -> str:
    return "".join(f' data-{esc(k.replace("_", "-"))}="{esc(v)}"' for k, v in data.items() if v is not None)


def legend(svg: Svg, x: float, y: float, items: list[tuple[str, str]]) -> None:
    """A row of swatches with their labels, from (x, y)."""
    for index, (cls, label) in enumerate(items):
        svg.add(f'<rect class="legend {esc(cls)}" x="{x + index * 90}" y="{y - 9}" width="10" height="10"/>')
        svg.text(x + index * 90 + 14, y, label, "legend-label")
