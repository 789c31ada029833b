"""The report's per-domain charts as plain inline SVG: one chart per domain, a horizontal bar per
model with its 95% interval as a whisker and its figure in words beside it.

Why hand-built SVG and not plotly: the report must open with no network and stay small. plotly's
HTML needs plotly.js (4.7 MB) inline or from a CDN, and a static image needs kaleido and a
Chromium at the moment the report is made; a few rectangles and lines need neither, draw in any
browser and print. Every label is the uploader's text: it is escaped here (``html.escape``), and
long names are cut with the whole name kept in the element's tooltip (``<title>``).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from scoring.core.formatting import percent
from scoring.estimate.evidence import has_interval
from scoring.team_report.table_cells import ESTIMATE, TableCell
from scoring.team_report.table_words import SHORT_MARKS

WIDTH = 760  #: the chart's width in CSS pixels (it scales down with the page)
LABEL_WIDTH = 190  #: the models' names on the left
BAR_WIDTH = 330  #: 0 to 100%
BAR_HEIGHT = 18
ROW_HEIGHT = 30
TOP = 34  #: room for the axis
FONT_PX = 13
NAME_CHARS = 26  #: a longer model name is cut (the whole name in its tooltip)
ESTIMATE_FILL = "#2563eb"
METRIC_FILL = "#9ca3af"


def _cut(text: str, chars: int = NAME_CHARS) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _words(cell: TableCell) -> str:
    """The figure beside a bar: ``64.2% [55.1%, 72.9%] · 20 reviewed`` or ``… · exact substr.``."""
    if cell.kind == ESTIMATE and not has_interval(cell):
        return f"no estimate yet · {cell.reviewed:,} reviewed"
    mark = f"{cell.reviewed:,} reviewed" if cell.kind == ESTIMATE else SHORT_MARKS.get(cell.kind, cell.kind)
    return f"{percent(cell.value)} [{percent(cell.ci_low)}, {percent(cell.ci_high)}] · {mark}"


def _x(share: float) -> float:
    return LABEL_WIDTH + BAR_WIDTH * max(0.0, min(1.0, share))


def _axis(height: int) -> list[str]:
    parts = []
    for tick in (0, 25, 50, 75, 100):
        x = _x(tick / 100)
        parts.append(f'<line x1="{x:.1f}" y1="{TOP - 6}" x2="{x:.1f}" y2="{height - 6}" class="grid"/>')
        parts.append(f'<text x="{x:.1f}" y="{TOP - 10}" text-anchor="middle" class="tick">{tick}%</text>')
    return parts


def _row(index: int, cell: TableCell) -> list[str]:
    y = TOP + index * ROW_HEIGHT
    middle = y + BAR_HEIGHT / 2
    name = html.escape(cell.model)
    parts = [
        f'<text x="{LABEL_WIDTH - 8}" y="{middle:.1f}" text-anchor="end" dominant-baseline="middle" class="name">'
        f"<title>{name}</title>{html.escape(_cut(cell.model))}</text>"
    ]
    words = html.escape(_words(cell))
    if cell.value is not None:
        kind = "estimate" if cell.kind == ESTIMATE else "metric"
        fill = ESTIMATE_FILL if kind == "estimate" else METRIC_FILL
        width = _x(cell.value) - LABEL_WIDTH
        parts.append(
            f'<rect class="bar {kind}" x="{LABEL_WIDTH}" y="{y}" width="{width:.1f}" height="{BAR_HEIGHT}" '
            f'fill="{fill}"><title>{name}: {words}</title></rect>'
        )
        if cell.ci_low is not None and cell.ci_high is not None:
            low, high = _x(cell.ci_low), _x(cell.ci_high)
            parts.append(
                f'<path class="whisker" d="M{low:.1f},{middle:.1f}H{high:.1f}M{low:.1f},{middle - 5:.1f}'
                f'V{middle + 5:.1f}M{high:.1f},{middle - 5:.1f}V{middle + 5:.1f}"/>'
            )
    parts.append(f'<text x="{_x(1) + 10}" y="{middle:.1f}" dominant-baseline="middle" class="figure">{words}</text>')
    return parts


def domain_chart(domain: str, cells: Sequence[TableCell]) -> str:
    """One domain's chart: ``cells`` (one per model, the domain in ``language``) as bars, a solid
    blue bar for an estimate, a grey one for a metric's accuracy, no bar without a figure."""
    height = TOP + ROW_HEIGHT * len(cells) + 6
    label = html.escape(domain)
    body = [*_axis(height)]
    for index, cell in enumerate(cells):
        body += _row(index, cell)
    return (
        f'<svg class="domain-chart" role="img" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg" font-size="{FONT_PX}">'
        f"<title>{label}: accuracy per model, with 95% intervals</title>" + "".join(body) + "</svg>"
    )


def domain_charts(models: Sequence[str], cells: Sequence[TableCell]) -> list[tuple[str, str]]:
    """(domain, its chart's SVG) for every domain of ``cells``, sorted, models in ``models``' order."""
    domains = sorted({c.language for c in cells}, key=lambda v: (v.startswith("("), v.casefold()))
    order = {m: i for i, m in enumerate(models)}
    charts = []
    for domain in domains:
        mine = sorted((c for c in cells if c.language == domain), key=lambda c: order.get(c.model, len(order)))
        charts.append((domain, domain_chart(domain, mine)))
    return charts
