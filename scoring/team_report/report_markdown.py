"""The team's report as Markdown, the HTML file's twin: the same table, sentences, per-domain
figures (as tables with a bar of block characters instead of SVG, which Markdown readers strip),
method and provenance.

Every piece of data text is escaped (:func:`scoring.core.markdown_text.md_text`): a model named
``![x](http://host/p.png)`` stays text in any Markdown reader and makes it fetch nothing; a ``|``
cannot break a table.
"""

from __future__ import annotations

from scoring.core.markdown_text import md_text
from scoring.estimate.evidence import has_interval
from scoring.team_report.report_content import RunSource, TeamReport
from scoring.team_report.table_cells import ESTIMATE, TableCell
from scoring.team_report.table_picture import cell_text
from scoring.team_report.table_words import figure_n, source_words

BAR_CHARS = 20  #: a bar's length at 100%


def _m(text: object) -> str:
    return md_text(str(text))


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _cell(cell: TableCell | None) -> str:
    if cell is None:
        return "—"
    figure, *rest = cell_text(cell).split(" · ")
    sub = f"{source_words(cell)}, n = {figure_n(cell):,}, {cell.reviewed:,} reviewed"
    if rest and cell.kind == ESTIMATE and not has_interval(cell):
        sub += f"; {rest[-1]}"
    return f"**{_m(figure)}**<br>{_m(sub)}"


def _bar(cell: TableCell) -> str:
    if cell.value is None:
        return ""
    full = round(BAR_CHARS * max(0.0, min(1.0, cell.value)))
    return ("█" if cell.kind == ESTIMATE else "▒") * full + "·" * (BAR_CHARS - full)


def _table(report: TeamReport) -> list[str]:
    table = report.table
    lines = [f"## {_m(report.title)}", ""]
    lines.append("Each cell: the figure with its 95% interval; its source (estimate, judge or metric), n and the")
    lines.append("reviewed rows behind it.")
    lines += ["", _row(["model", *(_m(v) for v in table.languages)]), _row(["---"] * (len(table.languages) + 1))]
    for model in table.models:
        lines.append(_row([_m(model), *(_cell(table.cell(model, lang)) for lang in table.languages)]))
    return lines


def _pairs(report: TeamReport) -> list[str]:
    lines = ["", "## Who is ahead, per language", ""]
    if not report.table.pairs:
        return [*lines, "No two models share a question in any language."]
    return lines + [f"- {_m(p.sentence)}" for p in report.table.pairs]


def _charts(report: TeamReport) -> list[str]:
    cells = report.table.domains
    if not cells:
        return []
    lines = ["", "## By domain", "", "█ estimated true accuracy (reviewed), ▒ a metric's accuracy (no review)."]
    order = {m: i for i, m in enumerate(report.table.models)}
    for domain in sorted({c.language for c in cells}, key=lambda v: (v.startswith("("), v.casefold())):
        mine = sorted((c for c in cells if c.language == domain), key=lambda c: order.get(c.model, len(order)))
        lines += ["", f"### {_m(domain)}", "", _row(["model", "figure", "0 to 100%"]), _row(["---"] * 3)]
        lines += [_row([_m(c.model), _m(cell_text(c)), _bar(c)]) for c in mine]
    return lines


def _method(report: TeamReport) -> list[str]:
    table = report.table.as_dict()
    lines = ["", "## How the figures were made", ""]
    for paragraph in report.plain_method:
        lines += [_m(paragraph), ""]
    lines += ["### In technical terms", "", f"Cells: {_m(table['cell_method'])}", ""]
    return [*lines, f"Pairs: {_m(table['pairs_method'])}"]


def _run(run: RunSource) -> str:
    reviewers = "withheld (double-blind review)" if run.withheld else (", ".join(run.reviewers) or "nobody yet")
    return _row(
        [
            f"\\#{run.id}",
            _m(run.name),
            _m(run.model),
            _m(run.language or "—"),
            f"{run.rows:,}",
            f"{run.sample_reviewed:,} of the random sample; {run.with_verdict:,} with a verdict",
            _m(reviewers),
            str(run.review_seed),
            f"`{run.file_sha256}` ({_m(run.filename)})",
            f"`{run.rows_sha256}`",
            _m(run.uploaded_at),
        ]
    )


def _provenance(report: TeamReport) -> list[str]:
    head = ["run", "name", "model", "language", "rows", "reviewed rows", "reviewers (of its rows)", "review seed"]
    head += ["file sha256 (as uploaded)", "rows sha256 (item keys in order)", "uploaded"]
    lines = ["", "## Provenance", "", f"Made {_m(report.made_at)} by answer-review scoring {report.tool_version}.", ""]
    lines += [_row(head), _row(["---"] * len(head)), *(_run(r) for r in report.runs), "", _m(report.recompute)]
    return lines + [f"\n{_m(note)}" for note in report.notes]


def report_markdown(report: TeamReport) -> str:
    """The whole file."""
    table = report.table
    estimated = sum(1 for c in table.cells if c.kind == ESTIMATE and has_interval(c))
    lead = (
        f"{len(table.models)} models x {len(table.languages)} languages over {len(report.runs)} runs: {estimated} "
        f"of {len(table.cells)} cells are estimated true accuracy from reviewed rows."
    )
    lines = ["# Model x language report", "", lead, "", *_table(report), *_pairs(report), *_charts(report)]
    return "\n".join([*lines, *_method(report), *_provenance(report)]) + "\n"
