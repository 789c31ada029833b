"""Scored frames and the per-domain summaries that the CLI prints and the dashboard charts."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import pandas as pd

from scoring.core.protocols import BUCKETS, score_columns_parallel
from scoring.core.stats import mcnemar_exact, wilson_interval

SCORE_COLUMNS = ["exact_correct", "overlap_correct", "matching_words", "total_golden_words", "is_blank", "bucket"]
METRICS = {"exact_substring": "exact_correct", "word_overlap": "overlap_correct"}
COMBINED = "combined"


def score_frame(frame: pd.DataFrame, normalize: bool = False, workers: int | None = None) -> pd.DataFrame:
    """A copy of ``frame`` with both protocols' verdicts and the agreement bucket added.

    ``workers`` caps the processes a large input is split over (default: the cores; 1: serial).
    """
    answers, responses = frame["answer"].tolist(), frame["response"].tolist()
    scores = score_columns_parallel(answers, responses, normalize=normalize, workers=workers)
    out = frame.copy(deep=False)  # copy-on-write: the caller's frame is never changed
    out["exact_correct"] = scores.exact_correct
    out["overlap_correct"] = scores.overlap_correct
    out["matching_words"] = scores.matching_words
    out["total_golden_words"] = scores.total_golden_words
    out["is_blank"] = scores.is_blank
    # object dtype as given: inferring Arrow strings for a million labels costs more than scoring them
    out["bucket"] = pd.Series(scores.bucket, index=out.index, dtype=object)
    return out


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


def accuracy_by_domain(scored: pd.DataFrame, correct_col: str) -> list[AccuracyRow]:
    """Per-domain rows sorted by domain name, then the combined (micro-average) row."""
    grouped = (
        scored.groupby("Domain", sort=False)
        .agg(n=(correct_col, "size"), correct=(correct_col, "sum"), blank=("is_blank", "sum"))
    )
    rows = [
        _row(str(dom), int(g.n), int(g.correct), int(g.blank))
        for dom, g in sorted(grouped.iterrows(), key=lambda item: str(item[0]))
    ]
    rows.append(_row(COMBINED, len(scored), int(scored[correct_col].sum()), int(scored["is_blank"].sum())))
    return rows


def bucket_counts(scored: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Counts of the four agreement buckets per domain (sorted) and combined."""
    table = pd.crosstab(scored["Domain"], scored["bucket"]).reindex(columns=list(BUCKETS), fill_value=0)
    out = {str(dom): {b: int(table.loc[dom, b]) for b in BUCKETS} for dom in sorted(table.index, key=str)}
    out[COMBINED] = {b: int((scored["bucket"] == b).sum()) for b in BUCKETS}
    return out


@dataclass(frozen=True)
class McNemar:
    """Discordant counts between the two metrics and the exact McNemar p-value."""

    exact_only: int
    overlap_only: int
    p_value: float


def mcnemar(scored: pd.DataFrame) -> McNemar:
    b = int((scored["bucket"] == "exact_only").sum())
    c = int((scored["bucket"] == "overlap_only").sum())
    return McNemar(b, c, mcnemar_exact(b, c))


def format_accuracy(rows: list[AccuracyRow]) -> str:
    """Plain-text table: domain, n, correct, blank, accuracy and 95% CI as percentages."""
    lines = [f"{'domain':<24} {'n':>7} {'correct':>8} {'blank':>6} {'accuracy':>9}  95% CI"]
    for r in rows:
        if r.domain == COMBINED:
            lines.append("-" * len(lines[0]))
        lines.append(
            f"{r.domain:<24} {r.n:>7} {r.correct:>8} {r.blank:>6} {r.accuracy:>8.1%}  "
            f"[{r.ci_low:.1%}, {r.ci_high:.1%}]"
        )
    return "\n".join(lines)
