"""The model x language table as a picture: a plotly heatmap whose every cell says what it is
(an estimate with its interval and reviewed rows, or a metric's accuracy marked as such), written
as PNG/SVG/PDF through plotly's image export (kaleido, which needs a Chromium on the machine),
else as a self-contained HTML file, with the reason said. Its text is drawn in the app's font stack
(:mod:`scoring.core.fonts`), the bundled fonts made visible to kaleido's Chromium, so a model or
language named in Tamil reads in the picture on a machine with no Indic font."""

from __future__ import annotations

import html
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import plotly.graph_objects as go

from scoring.core.fonts import FONT_STACK, fonts_visible_to_subprocesses
from scoring.core.formatting import percent
from scoring.estimate.evidence import has_interval
from scoring.team_report.table_cells import ESTIMATE, TableCell
from scoring.team_report.table_words import heat_label

IMAGE_SUFFIXES = (".png", ".svg", ".pdf")
HTML_SUFFIX = ".html"
#: kaleido's Chromium goes online by itself (Google's update, time and sign-in services, the default
#: search engine, MathJax from a public CDN) though a picture needs only local files (plotly.js comes
#: from the plotly package): it is given a proxy at a port of this machine where nothing listens, so
#: each of those requests fails here instead of telling another host that a picture was drawn.
DEAD_END_PROXY = "http://127.0.0.1:9"


#: A cell's words where its estimate has no interval yet (what to review follows them).
NO_ESTIMATE = "no estimate yet"


def cell_text(cell: TableCell) -> str:
    """A cell in words: ``83.1% [78.0%, 87.5%] · 120 reviewed`` or ``exact 71.2% [..] · metric``;
    an estimate without an interval shows no figure: ``no estimate yet · 13 reviewed · Review at
    least 7 more rows ...`` (:func:`scoring.estimate.evidence.has_interval`)."""
    if cell.kind == ESTIMATE:
        if not has_interval(cell):
            return f"{NO_ESTIMATE} · {cell.reviewed:,} reviewed · {cell.what_to_review}"
        return f"{percent(cell.value)} [{percent(cell.ci_low)}, {percent(cell.ci_high)}] · {cell.reviewed:,} reviewed"
    why = "reviews withheld (double-blind)" if cell.withheld else "no review"
    return f"{cell.title}: {percent(cell.value)} [{percent(cell.ci_low)}, {percent(cell.ci_high)}] · {why}"


#: The cell labels' size in CSS pixels: read at 1280x720 with 6 models x 8 languages (they were
#: drawn at 4 px when plotly fitted whole sentences into the cells).
LABEL_PX = 13
#: Each model's row in the chart, and the room for the title, axes and colour bar.
ROW_PX = 62
_SMALLER = '<span style="font-size:13px">'
FRAME_PX = 170


def table_figure(models: list[str], languages: list[str], cells: list[TableCell], title: str) -> go.Figure:
    """A heatmap, a row per model and a column per language. A cell's label is short (its figure,
    interval and reviewed rows, or its metric's mark: :func:`scoring.team_report.table_words.heat_label`)
    and drawn at :data:`LABEL_PX`; the whole cell in words is its hover (and the table beside the
    chart). ``title`` is said on two lines at its first ": " (say what the cells hold:
    :func:`scoring.team_report.table_words.table_title`). Every label from data is escaped: plotly
    reads a little HTML in labels."""
    by_key = {(c.model, c.language): c for c in cells}
    z, text, hover = [], [], []
    for model in models:
        row_z, row_text, row_hover = [], [], []
        for language in languages:
            cell = by_key.get((model, language))
            row_z.append(None if cell is None or cell.value is None else 100 * cell.value)
            row_text.append("—" if cell is None else "<br>".join(html.escape(line) for line in heat_label(cell)))
            row_hover.append("no rows" if cell is None else "<br>".join(_wrapped(html.escape(cell_text(cell)))))
        z.append(row_z)
        text.append(row_text)
        hover.append(row_hover)
    figure = go.Figure(
        go.Heatmap(
            z=z,
            x=[html.escape(v) for v in languages],
            y=[html.escape(v) for v in models],
            text=text,
            texttemplate="%{text}",
            textfont={"size": LABEL_PX, "family": FONT_STACK},
            customdata=hover,
            hovertemplate="%{y} · %{x}<br>%{customdata}<extra></extra>",
            colorscale="Blues",
            zmin=0,
            zmax=100,
            xgap=2,
            ygap=2,
            colorbar={"title": {"text": "%"}, "thickness": 12},
        )
    )
    if all(v is None for row in z for v in row):
        # plotly draws nothing of a heatmap, not even its labels, when no cell has a value (every
        # cell waiting for reviews): the labels are drawn as text at the cells instead, and no
        # cell is given a number it does not have.
        figure.add_trace(
            go.Scatter(
                x=[html.escape(v) for _ in models for v in languages],
                y=[html.escape(m) for m in models for _ in languages],
                text=[label for row in text for label in row],
                customdata=[h for row in hover for h in row],
                mode="text",
                textfont={"size": LABEL_PX, "family": FONT_STACK},
                hovertemplate="%{y} · %{x}<br>%{customdata}<extra></extra>",
                showlegend=False,
            )
        )
    head, _, rest = title.partition(": ")
    said = html.escape(head) + (f"<br>{_SMALLER}{html.escape(rest)}</span>" if rest else "")
    figure.update_layout(
        title={"text": said, "font": {"size": 16}},
        xaxis={"title": {"text": "language"}, "type": "category", "tickfont": {"size": LABEL_PX}},
        yaxis={"title": {"text": "model"}, "type": "category", "autorange": "reversed", "tickfont": {"size": LABEL_PX}},
        font={"family": FONT_STACK},
        height=FRAME_PX + ROW_PX * len(models),
        margin={"t": 80, "b": 50},
    )
    return figure


def _wrapped(text: str, width: int = 40) -> list[str]:
    """A cell's text as heatmap lines: one per `` · `` part, a long part (what to review) wrapped
    at ``width`` characters (textwrap would break an escaped entity: words are split on spaces)."""
    lines: list[str] = []
    for part in text.split(" · "):
        line = ""
        for word in part.split(" "):
            if line and len(line) + 1 + len(word) > width:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
    return lines


@dataclass(frozen=True)
class Written:
    """What was written where, and why it is HTML when a picture was asked for."""

    path: Path
    fallback_reason: str = ""


def write_picture(figure: go.Figure, path: Path) -> Written:
    """``figure`` to ``path``: an image by its suffix (:data:`IMAGE_SUFFIXES`), else HTML; an image
    that cannot be drawn here is written as ``<path>.html`` and the reason returned."""
    suffix = path.suffix.lower()
    if suffix == HTML_SUFFIX:
        figure.write_html(path, include_plotlyjs=True)
        return Written(path)
    if suffix not in IMAGE_SUFFIXES:
        raise ValueError(f"{path.name}: a picture is one of {', '.join((*IMAGE_SUFFIXES, HTML_SUFFIX))}.")
    try:
        # kaleido's Chromium draws with the system's fonts only, and goes online unless stopped
        with fonts_visible_to_subprocesses(), _no_network_for_subprocesses():
            figure.write_image(path, width=320 + 120 * len(figure.data[0].x or ()), height=figure.layout.height)
        return Written(path)
    except Exception as error:  # noqa: BLE001 - kaleido missing, no Chromium, a sandbox: say so, write HTML
        html = path.with_suffix(HTML_SUFFIX)
        figure.write_html(html, include_plotlyjs=True)
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return Written(html, f"could not draw {suffix[1:].upper()} here ({reason[:200]})")


@contextmanager
def _no_network_for_subprocesses() -> Iterator[None]:
    """While inside, kaleido's Chromium (choreographer reads ``CHOREO_PROXY_SERVER`` when it starts
    one) sends every request to :data:`DEAD_END_PROXY`. For the command line, like
    :func:`scoring.core.fonts.fonts_visible_to_subprocesses`: it sets a variable of the process."""
    before = os.environ.get("CHOREO_PROXY_SERVER")
    os.environ["CHOREO_PROXY_SERVER"] = DEAD_END_PROXY
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("CHOREO_PROXY_SERVER", None)
        else:
            os.environ["CHOREO_PROXY_SERVER"] = before
