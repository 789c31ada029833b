"""Scored frames and the per-domain summaries that the CLI prints and the dashboard charts.

Scoring and the summaries run on polars; pandas frames (the pages') are accepted and converted
column by column where needed, so both kinds of caller get the same figures from one code path.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import polars as pl

from scoring.core.columnar import OUTPUT_COLUMNS, score_columns, score_polars
from scoring.core.metric_names import METRIC_COLUMNS, SPEC_NAMES
from scoring.core.protocols import BUCKETS
from scoring.core.stats import mcnemar_exact, wilson_interval

if TYPE_CHECKING:  # pandas frames are accepted, never built here: `score` need not import pandas
    import pandas as pd

    Frame = pd.DataFrame | pl.DataFrame

SCORE_COLUMNS = list(OUTPUT_COLUMNS)
METRICS = {SPEC_NAMES[key]: column for key, column in METRIC_COLUMNS.items()}
COMBINED = "combined"


def score_table(table: pl.DataFrame, normalize: bool = False) -> pl.DataFrame:
    """``table`` with both protocols' verdicts and the agreement bucket added (polars)."""
    return table.hstack(score_polars(table, normalize=normalize))


def score_frame(frame: pd.DataFrame, normalize: bool = False) -> pd.DataFrame:
    """A copy of ``frame`` with both protocols' verdicts and the agreement bucket added.

    For pandas callers; scored on polars (``normalize`` is the diagnostic, not the protocol).
    """
    scores = score_columns(frame["answer"].tolist(), frame["response"].tolist(), normalize=normalize)
    return frame.assign(**{col: getattr(scores, col) for col in SCORE_COLUMNS})


def _polars(scored: Frame, columns: list[str]) -> pl.DataFrame:
    """The named columns of a pandas or polars frame, as polars (no copy for polars)."""
    if isinstance(scored, pl.DataFrame):
        return scored.select(columns)
    return pl.from_pandas(scored[columns])  # pandas: the pages' frames


@dataclass(frozen=True)
class AccuracyRow:
    """Accuracy of one domain (or of all pooled rows) with its 95% Wilson interval."""

    domain: str
    n: int
    correct: int
    blank: int
    accuracy: float
    ci_low: float
    ci_high: float

    def as_dict(self) -> dict:
        return asdict(self)


def _row(domain: str, n: int, correct: int, blank: int) -> AccuracyRow:
    low, high = wilson_interval(correct, n)
    return AccuracyRow(domain, n, correct, blank, correct / n if n else 0.0, low, high)


def accuracy_by_domain(scored: Frame, correct_col: str, by: str = "Domain") -> list[AccuracyRow]:
    """Per-domain rows (or per value of ``by``, a row's language say) sorted by name, then the
    combined (micro-average) row."""
    table = _polars(scored, [by, correct_col, "is_blank"])
    grouped = table.group_by(by).agg(n=pl.len(), correct=pl.col(correct_col).sum(), blank=pl.col("is_blank").sum())
    rows = [
        _row(str(dom), int(n), int(correct), int(blank))
        for dom, n, correct, blank in sorted(grouped.iter_rows(), key=lambda row: str(row[0]))
    ]
    total = table.select(pl.col(correct_col).sum(), pl.col("is_blank").sum()).row(0)
    rows.append(_row(COMBINED, table.height, int(total[0] or 0), int(total[1] or 0)))
    return rows


def rows_per_domain(table: pl.DataFrame) -> list[tuple[str, int]]:
    """(domain, rows) sorted by name as :func:`accuracy_by_domain` sorts them: what a file holds,
    known as soon as it is read, seconds before its verdicts on a large run."""
    counts = table.group_by("Domain").len()
    return sorted(((str(dom), int(n)) for dom, n in counts.iter_rows()), key=lambda row: row[0])


def bucket_counts(scored: Frame, by: str = "Domain") -> dict[str, dict[str, int]]:
    """Counts of the four agreement buckets per domain (or per value of ``by``; sorted) and combined."""
    table = _polars(scored, [by, "bucket"])
    counts = table.group_by(by, "bucket").len()
    out: dict[str, dict[str, int]] = {}
    for dom, buck, n in sorted(counts.iter_rows(), key=lambda row: str(row[0])):
        out.setdefault(str(dom), dict.fromkeys(BUCKETS, 0))[buck] = int(n)
    combined = dict(table.group_by("bucket").len().iter_rows())
    out[COMBINED] = {b: int(combined.get(b, 0)) for b in BUCKETS}
    return out


@dataclass(frozen=True)
class McNemar:
    """Discordant counts between the two metrics and the exact McNemar p-value."""

    exact_only: int
    overlap_only: int
    p_value: float


def mcnemar(scored: Frame) -> McNemar:
    buckets = _polars(scored, ["bucket"])["bucket"]
    b = int((buckets == "exact_only").sum())
    c = int((buckets == "overlap_only").sum())
    return McNemar(b, c, mcnemar_exact(b, c))


def format_accuracy(rows: list[AccuracyRow], label: str = "domain") -> str:
    """Plain-text table: domain (or ``label``), n, correct, blank, accuracy and 95% CI as percentages."""
    lines = [f"{label:<24} {'n':>7} {'correct':>8} {'blank':>6} {'accuracy':>9}  95% CI"]
    for r in rows:
        if r.domain == COMBINED:
            lines.append("-" * len(lines[0]))
        lines.append(
            f"{r.domain:<24} {r.n:>7} {r.correct:>8} {r.blank:>6} {r.accuracy:>8.1%}  [{r.ci_low:.1%}, {r.ci_high:.1%}]"
        )
    return "\n".join(lines)


def format_buckets(counts: dict[str, dict[str, int]], label: str = "domain") -> str:
    """Plain-text table of :func:`bucket_counts`: one row per domain (or ``label``), one column per bucket."""
    width = max(len(label), *(len(dom) for dom in counts))
    lines = [f"{label:<{width}} " + " ".join(f"{b:>12}" for b in BUCKETS)]
    lines += [f"{dom:<{width}} " + " ".join(f"{row[b]:>12}" for b in BUCKETS) for dom, row in counts.items()]
    return "\n".join(lines)
