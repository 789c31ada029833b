"""What a model x language cell holds, in words, the same in every output (the page, the command
line, the CSV, the picture and the report).

Why a module of its own: a table's cells hold different things (an estimate of the true accuracy
where rows are reviewed, else a metric's accuracy, marked), and a title that names one of them
("True accuracy by model and language") over cells showing the other is read as the truth. So the
title is derived from what the cells hold (:func:`table_title`), and each cell names its source
(:func:`source_words`, :func:`source_sentence`).
"""

from __future__ import annotations

from collections.abc import Sequence

from scoring.core.formatting import percent
from scoring.core.metric_names import EXACT, JUDGE, OVERLAP
from scoring.estimate.evidence import has_interval
from scoring.team_report.table_cells import ESTIMATE, TableCell

#: A cell's source in a word or two: the CSV's ``source`` column and the report's.
SOURCE_WORDS = {
    ESTIMATE: "estimate",
    JUDGE: "judge",
    EXACT: "metric: exact substring",
    OVERLAP: "metric: word overlap",
}
#: Each metric's name inside a sentence, and as the owner of an accuracy in a title.
METRIC_PHRASES = {JUDGE: "the LLM judge's verdicts", EXACT: "exact substring", OVERLAP: "word overlap"}
METRIC_OWNERS = {JUDGE: "the LLM judge's", EXACT: "exact substring's", OVERLAP: "word overlap's"}


def source_words(cell: TableCell) -> str:
    """``estimate``, ``judge`` or ``metric: exact substring``."""
    return SOURCE_WORDS.get(cell.kind, cell.kind)


def source_sentence(cell: TableCell) -> str:
    """Where a cell's figure comes from, in a sentence a reader of the report understands."""
    if cell.kind == ESTIMATE:
        rows = f"{cell.reviewed:,} reviewed row{'s' if cell.reviewed != 1 else ''} of the random sample"
        return f"Estimated true accuracy from {rows}, over its {cell.rows:,} rows."
    n = next((m.n for m in cell.metrics if m.source == cell.kind), cell.rows)
    why = "reviews withheld during double-blind review" if cell.withheld else "no reviewed row"
    over = f"over the {n:,} rows it judged" if cell.kind == JUDGE else f"over {n:,} rows"
    return f"Accuracy by {METRIC_PHRASES.get(cell.kind, cell.kind)} {over} ({why}): not the true accuracy."


def figure_n(cell: TableCell) -> int:
    """The rows a cell's figure speaks for: all its rows for an estimate, the metric's for a metric."""
    if cell.kind == ESTIMATE:
        return cell.rows
    return next((m.n for m in cell.metrics if m.source == cell.kind), cell.rows)


def _metric_list(kinds: set[str]) -> str:
    names = [METRIC_OWNERS[k] for k in (JUDGE, EXACT, OVERLAP) if k in kinds]
    return " or ".join(names)


def table_title(cells: Sequence[TableCell], by: str = "model and language") -> str:
    """The title of a table or chart of ``cells``, naming what they hold: the estimated true
    accuracy, a metric's accuracy, or (most often) the one where rows are reviewed, else the other.
    An estimate still without an interval holds no figure (:func:`has_interval`): a title over
    such cells alone says so rather than promise figures the cells do not show."""
    kinds = {c.kind for c in cells}
    metrics = _metric_list(kinds - {ESTIMATE})
    if not cells:
        return f"Accuracy by {by}"
    if not any(c.kind != ESTIMATE or has_interval(c) for c in cells):
        return f"Estimated true accuracy by {by}: no figure yet (each cell says what to review)"
    if kinds == {ESTIMATE}:
        return f"Estimated true accuracy by {by} (95% intervals)"
    if ESTIMATE not in kinds:
        owner = metrics[:1].upper() + metrics[1:]
        return f"{owner} accuracy by {by} (no reviewed rows: a metric, not the true accuracy; 95% intervals)"
    return f"Accuracy by {by}: estimated true accuracy where rows are reviewed, else {metrics} (marked)"


#: A heatmap label's words for a cell without a figure yet.
NO_FIGURE = "no estimate yet"
#: A metric's mark in a heatmap label, short enough for a narrow cell.
SHORT_MARKS = {JUDGE: "judge", EXACT: "exact substr.", OVERLAP: "word overlap"}


def heat_label(cell: TableCell) -> list[str]:
    """A cell as the heatmap's few short lines: ``64.2%``, ``55–73``, ``20 reviewed`` (or the
    metric's mark); the whole cell in words is the chart's hover and the table above it."""
    if cell.kind == ESTIMATE and not has_interval(cell):
        return [NO_FIGURE, f"{cell.reviewed:,} reviewed"]
    interval = f"{100 * cell.ci_low:.0f}–{100 * cell.ci_high:.0f}" if cell.ci_low is not None else ""
    last = f"{cell.reviewed:,} reviewed" if cell.kind == ESTIMATE else SHORT_MARKS.get(cell.kind, cell.kind)
    return [percent(cell.value), interval, last]
