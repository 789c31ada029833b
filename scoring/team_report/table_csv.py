"""The model x language table as CSV files a person opens in a spreadsheet: the cells in
percentages with their 95% intervals, the rows behind each and its source in words; the pairs per
language with their differences in points and their sentences.

Why percentages and not the fractions the JSON keeps: a CSV is read by people first, and
0.5537037037037037 beside 55.4% in the page invites a mistake. The figures are rounded to one
decimal, as the page prints them; the JSON download (``TeamTable.as_dict``) keeps full precision
for a program that recomputes.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from scoring.estimate.evidence import TO_REVIEW
from scoring.team_report.language_pairs import LanguagePair
from scoring.team_report.table_cells import TableCell
from scoring.team_report.table_picture import cell_text
from scoring.team_report.table_words import figure_n, source_sentence, source_words

#: The cells CSV's columns, in order (each metric's three after them).
CELL_COLUMNS = (
    "model",
    "language",
    "source",
    "accuracy_pct",
    "ci_low_pct",
    "ci_high_pct",
    "n",
    "reviewed",
    "rows",
    "cell",
    "source_in_words",
    TO_REVIEW,
    "kind",
    "withheld",
    "runs",
)
METRIC_SOURCES = ("exact", "overlap", "judge")


def pct(x: float | None) -> float | None:
    """A share as a percentage with one decimal (None stays None)."""
    return None if x is None else round(100 * float(x), 1)


def _rounded(p: float | None) -> float | None:
    """A p-value to four decimals, as a reader compares it with 0.05."""
    return None if p is None else round(float(p), 4)


def cells_csv_frame(cells: Sequence[TableCell]) -> pl.DataFrame:
    """One row per cell: :data:`CELL_COLUMNS`, then ``<metric>_pct``, its interval's ends and its
    ``n`` for each metric (the judge's over the rows it judged). A cell without an interval has no
    figure (``accuracy_pct`` empty) and says what to review."""
    rows = []
    for c in cells:
        row = {
            "model": c.model,
            "language": c.language,
            "source": source_words(c),
            "accuracy_pct": pct(c.value),
            "ci_low_pct": pct(c.ci_low),
            "ci_high_pct": pct(c.ci_high),
            "n": figure_n(c),
            "reviewed": c.reviewed,
            "rows": c.rows,
            "cell": cell_text(c),
            "source_in_words": source_sentence(c),
            TO_REVIEW: c.what_to_review,
            "kind": c.kind,
            "withheld": c.withheld,
            "runs": "; ".join(c.runs),
        }
        for m in c.metrics:
            row |= {
                f"{m.source}_pct": pct(m.accuracy),
                f"{m.source}_ci_low_pct": pct(m.ci_low),
                f"{m.source}_ci_high_pct": pct(m.ci_high),
                f"{m.source}_n": m.n,
            }
        rows.append(row)
    schema: dict[str, type[pl.DataType] | pl.DataType] = {name: pl.String for name in CELL_COLUMNS}
    schema |= {name: pl.Float64 for name in ("accuracy_pct", "ci_low_pct", "ci_high_pct")}
    schema |= {"n": pl.Int64, "reviewed": pl.Int64, "rows": pl.Int64, "withheld": pl.Boolean}
    for source in METRIC_SOURCES:
        schema |= {f"{source}_{part}": pl.Float64 for part in ("pct", "ci_low_pct", "ci_high_pct")}
        schema[f"{source}_n"] = pl.Int64
    return pl.DataFrame(rows, schema=schema)


def pairs_csv_frame(pairs: Sequence[LanguagePair]) -> pl.DataFrame:
    """One row per pair of models in a language: the difference A - B in points with its 95%
    interval, the questions it is on, the source, the p-values and the sentence the page prints."""
    rows = [
        {
            "language": p.language,
            "model_a": p.model_a,
            "model_b": p.model_b,
            "difference_points": pct(p.difference),
            "ci_low_points": pct(p.ci_low),
            "ci_high_points": pct(p.ci_high),
            "n": p.n,
            "source": p.source,
            "p_value": _rounded(p.p_value),
            "p_holm": _rounded(p.p_holm),
            "sentence": p.sentence,
        }
        for p in pairs
    ]
    schema = {
        "language": pl.String,
        "model_a": pl.String,
        "model_b": pl.String,
        "difference_points": pl.Float64,
        "ci_low_points": pl.Float64,
        "ci_high_points": pl.Float64,
        "n": pl.Int64,
        "source": pl.String,
        "p_value": pl.Float64,
        "p_holm": pl.Float64,
        "sentence": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)
