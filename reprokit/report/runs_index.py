"""``index.html``: every run of a directory in one self-contained page, with a trend chart per kit and host.

The trend is the share of a kit's expectations that held, run after run on one host, each point coloured by
the verdict (a kit judged on a host without its GPU stays INCONCLUSIVE, visibly). Same rules as
``report.html``: inline CSS (``templates/index.css`` after the report's) and SVG, no script, a
Content-Security-Policy that forbids every load; each run links to its own report, relative to the index.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

from reprokit.draw.svg import Linear, Svg
from reprokit.records.atomic import write_text_atomic
from reprokit.report.html import CSP, VERDICT_CLASS
from reprokit.report.templating import render_page


def trend_chart(kit: str, host: str, runs: list) -> str:
    """Expectations held (share) per run, oldest to newest; one point per run."""
    left, top, plot_w, plot_h = 48, 24, max(160, 36 * len(runs)), 120
    chart_id = f"trend-{kit}-{host}"
    svg = Svg(chart_id, left + plot_w + 24, top + plot_h + 40, f"{kit} on {host}: share of expectations held, per run")
    y = Linear(0, 1, top + plot_h, top)
    x = Linear(0, max(len(runs) - 1, 1), left + 12, left + plot_w - 12)
    svg.text(left, 14, f"{kit} on {host}", "chart-title")
    for tick in (0, 0.5, 1):
        svg.line(left, y(tick), left + plot_w, y(tick), "grid")
        svg.text(left - 6, y(tick) + 4, f"{tick:.0%}", "tick", "end")
    points = [(x(i), y(r.held / r.judged if r.judged else 0)) for i, r in enumerate(runs)]
    if len(points) > 1:
        svg.polyline(points, "trend")
    for (px, py), run in zip(points, runs):
        cls = VERDICT_CLASS.get(run.verdict, "other")
        svg.circle(px, py, 5, f"point {cls}", f"{run.run_id}: {run.verdict}, {run.held}/{run.judged} held, {run.started}",
                   run=run.run_id, verdict=run.verdict)
    svg.text(left, top + plot_h + 16, runs[0].started[:10], "tick", "start")
    svg.text(left + plot_w, top + plot_h + 16, runs[-1].started[:10], "tick", "end")
    svg.text(left + plot_w / 2, top + plot_h + 32, "runs, oldest to newest", "axis-label", "middle")
    return svg.render()


def render_index(index_dir: Path, runs: list) -> str:
    groups: dict[tuple[str, str], list] = {}
    for run in runs:
        groups.setdefault((run.kit, run.host), []).append(run)
    rows = []
    for run in reversed(runs):  # newest first
        report = Path(run.dir) / "report.html"
        link = quote(os.path.relpath(report, index_dir), safe="/") if report.is_file() else None
        rows.append((run, link, VERDICT_CLASS.get(run.verdict, "")))
    return render_page("index.html", csp=CSP, runs=rows, groups=len(groups),
                       charts=[trend_chart(kit, host, group) for (kit, host), group in sorted(groups.items())])


def write_index(path: Path, runs: list) -> Path:
    path = Path(path)
    write_text_atomic(path, render_index(path.parent.resolve(), runs))
    return path
