"""The team's report as one self-contained HTML file: it asks nothing of any host when opened.

No script, no stylesheet, font or image from elsewhere: the styles are inline, the charts are inline
SVG (:mod:`scoring.team_report.svg_bars`), the fonts of the scripts its text uses are inside it when
they fit (:func:`scoring.core.fonts.embedded_fonts`, else the app's stack is named), and a Content
Security Policy forbids every fetch, so a file edited or opened from a mail keeps that promise.
Every piece of text from the data (model, run, language, domain, file and reviewer names, the
sentences that quote them) is escaped with ``html.escape`` before it is placed.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from scoring.core.fonts import FONT_STACK, embedded_fonts
from scoring.core.formatting import percent
from scoring.estimate.evidence import has_interval
from scoring.team_report.report_content import RunSource, TeamReport
from scoring.team_report.svg_bars import ESTIMATE_FILL, METRIC_FILL, domain_charts
from scoring.team_report.table_cells import ESTIMATE, TableCell
from scoring.team_report.table_words import NO_FIGURE, figure_n, source_sentence, source_words

#: Nothing may be fetched: no script runs, styles and fonts come from the file itself.
CSP = "default-src 'none'; style-src 'unsafe-inline'; font-src data:; img-src data:"

STYLE = """
body { font-family: %(stack)s; color: #111827; margin: 24px auto; max-width: 1240px; padding: 0 16px;
       line-height: 1.45; font-size: 15px; }
h1 { font-size: 26px; margin-bottom: 4px; } h2 { font-size: 20px; margin-top: 32px; } h3 { font-size: 16px; }
.meta { color: #4b5563; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #d1d5db; padding: 5px 7px; vertical-align: top; text-align: left; }
th { background: #f3f4f6; }
td.cell { min-width: 96px; }
td.cell .fig { font-weight: 700; font-size: 16px; white-space: nowrap; }
td.cell .ci { white-space: nowrap; }
td.cell .src, td.cell .sub, td.cell .todo { color: #4b5563; font-size: 12.5px; }
td.cell.estimate .src { color: #1d4ed8; font-weight: 600; }
td.metric { background: #f3f4f6; } td.metric .fig { color: #374151; } td.none { color: #6b7280; }
.key span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; vertical-align: middle; }
svg.domain-chart { max-width: 100%%; height: auto; display: block; margin: 4px 0 16px; }
svg .name, svg .figure { fill: #111827; } svg .tick { fill: #6b7280; font-size: 11px; }
svg .grid { stroke: #e5e7eb; } svg .whisker { stroke: #111827; stroke-width: 1.5; fill: none; }
code, .hash { font-family: monospace; font-size: 12px; word-break: break-all; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _cell(cell: TableCell | None, model: str, language: str) -> str:
    """A cell: its figure, its interval, then its source, n and reviewed rows (what to review
    where it has no figure yet); its source in a sentence as its tooltip."""
    attrs = f'data-model="{_e(model)}" data-language="{_e(language)}"'
    if cell is None:
        return f'<td class="cell none" {attrs}><div class="fig">—</div><div class="sub">no rows</div></td>'
    counts = f"n = {figure_n(cell):,} · {cell.reviewed:,} reviewed"
    if cell.kind == ESTIMATE and not has_interval(cell):
        lines = [("fig", NO_FIGURE), ("sub", f"{source_words(cell)} · {counts}"), ("todo", cell.what_to_review or "")]
        kind = "none"
    else:
        interval = f"[{percent(cell.ci_low)}, {percent(cell.ci_high)}]"
        lines = [("fig", percent(cell.value)), ("ci", interval), ("src", source_words(cell)), ("sub", counts)]
        kind = "estimate" if cell.kind == ESTIMATE else "metric"
    body = "".join(f'<div class="{name}">{_e(text)}</div>' for name, text in lines)
    return f'<td class="cell {kind}" {attrs} title="{_e(source_sentence(cell))}">{body}</td>'


def _table(report: TeamReport) -> list[str]:
    table = report.table
    head = "".join(f"<th>{_e(language)}</th>" for language in table.languages)
    rows = []
    for model in table.models:
        cells = "".join(_cell(table.cell(model, language), model, language) for language in table.languages)
        rows.append(f"<tr><th>{_e(model)}</th>{cells}</tr>")
    return [
        f"<h2>{_e(report.title)}</h2>",
        '<p class="meta">Each cell: the figure, its 95% interval, its source (an estimate from reviewed rows, '
        "on white; the judge or a metric, on grey: not the true accuracy), n (the rows the figure speaks for) and "
        "the reviewed rows behind it. Hover a cell for its source in a sentence.</p>",
        f'<div class="scroll"><table class="cells"><thead><tr><th>model</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>",
    ]


def _pairs(report: TeamReport) -> list[str]:
    pairs = report.table.pairs
    if not pairs:
        return ["<h2>Who is ahead, per language</h2>", "<p>No two models share a question in any language.</p>"]
    out = ["<h2>Who is ahead, per language</h2>"]
    for language in dict.fromkeys(p.language for p in pairs):
        items = "".join(f"<li>{_e(p.sentence)}</li>" for p in pairs if p.language == language)
        out.append(f"<h3>{_e(language)}</h3><ul class='pairs'>{items}</ul>")
    return out


def _charts(report: TeamReport) -> list[str]:
    cells = report.table.domains
    if not cells:
        return []
    key = (
        f'<p class="key">Bars:<span style="background:{ESTIMATE_FILL}"></span>estimated true accuracy '
        f'(reviewed)<span style="background:{METRIC_FILL}"></span>a metric\'s accuracy (no review); the line '
        "across a bar is its 95% interval.</p>"
    )
    out = ["<h2>By domain</h2>", key]
    for domain, svg in domain_charts(report.table.models, cells):
        out += [f"<h3>{_e(domain)}</h3>", svg]
    return out


def _method(report: TeamReport) -> list[str]:
    table = report.table.as_dict()
    return [
        "<h2>How the figures were made</h2>",
        *(f"<p>{_e(p)}</p>" for p in report.plain_method),
        "<h3>In technical terms</h3>",
        f"<p>Cells: {_e(table['cell_method'])}</p>",
        f"<p>Pairs: {_e(table['pairs_method'])}</p>",
    ]


def _run_row(run: RunSource) -> str:
    reviewers = "withheld (double-blind review)" if run.withheld else (", ".join(run.reviewers) or "nobody yet")
    cells = [
        f"#{run.id}",
        _e(run.name),
        _e(run.model),
        _e(run.language or "—"),
        f"{run.rows:,}",
        f"{run.sample_reviewed:,} of the random sample; {run.with_verdict:,} with a verdict",
        _e(reviewers),
        str(run.review_seed),
        f'<span class="hash">{_e(run.file_sha256)}</span><br><small>{_e(run.filename)}</small>',
        f'<span class="hash">{_e(run.rows_sha256)}</span>',
        _e(run.uploaded_at),
    ]
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _provenance(report: TeamReport) -> list[str]:
    head = (
        "run",
        "name",
        "model",
        "language",
        "rows",
        "reviewed rows",
        "reviewers (of its rows)",
        "review seed",
        "file sha256 (as uploaded)",
        "rows sha256 (item keys in order)",
        "uploaded",
    )
    return [
        "<h2>Provenance</h2>",
        f"<p>Made {_e(report.made_at)} by answer-review scoring {_e(report.tool_version)}.</p>",
        '<div class="scroll"><table class="runs"><thead><tr>'
        + "".join(f"<th>{_e(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(_run_row(r) for r in report.runs)
        + "</tbody></table></div>",
        f"<p>{_e(report.recompute)}</p>",
        *(f"<p>{_e(note)}</p>" for note in report.notes),
    ]


def _lead(report: TeamReport) -> str:
    table = report.table
    estimated = sum(1 for c in table.cells if c.kind == ESTIMATE and has_interval(c))
    return (
        f"{len(table.models)} models x {len(table.languages)} languages over {len(report.runs)} runs: "
        f"{estimated} of {len(table.cells)} cells are estimated true accuracy from reviewed rows; the others "
        "show a metric's accuracy (marked) or what to review."
    )


def _texts(report: TeamReport) -> Iterable[str]:
    """Every piece of data text the file shows (to choose the fonts it carries)."""
    yield from report.table.models
    yield from report.table.languages
    yield from (c.language for c in report.table.domains)
    yield from (p.sentence for p in report.table.pairs)
    for run in report.runs:
        yield from (run.name, run.language, run.filename, *run.reviewers)


def report_html(report: TeamReport) -> str:
    """The whole file."""
    fonts = embedded_fonts(" ".join(_texts(report)))
    note = ""
    if fonts.named_only:
        note = (
            f"<p class='meta'>Fonts not carried in this file (too large): {_e(', '.join(fonts.named_only))}; "
            "your machine's fonts draw those scripts.</p>"
        )
    body = [
        f"<h1>Model x language report</h1><p class='meta'>{_e(_lead(report))}</p>",
        *_table(report),
        *_pairs(report),
        *_charts(report),
        *_method(report),
        *_provenance(report),
        note,
    ]
    style = STYLE % {"stack": FONT_STACK}
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(report.title)}</title><style>{fonts.css}\n{style}</style></head>\n<body>\n"
        + "\n".join(part for part in body if part)
        + "\n</body></html>\n"
    )
