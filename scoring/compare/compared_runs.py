"""Runs to compare and their verdicts: one boolean column per verdict source, null = unknown.

A :class:`Run` is a label plus a scored polars table (``question``, ``answer``, ``Domain``,
``response``, ``exact_correct``, ``overlap_correct``; optionally ``judge_label`` and
``final_verdict``). Every source becomes one Boolean column ``verdict:<source>`` where null means
"not known": a judge label that is not a verdict (UNPARSED, ERROR, unjudged) or an adjudicated
row still pending. Per-run accuracy counts unknown rows both ways, as a range (the rule of
:class:`scoring.core.verdict_rules.AdjudicatedRow`), never as wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import polars as pl

from scoring.core.columnar import OUTPUT_COLUMNS
from scoring.core.errors import InputError
from scoring.core.metric_names import ADJUDICATED, EXACT, JUDGE, OVERLAP, TITLES
from scoring.core.report import COMBINED, score_table
from scoring.core.stats import range_with_unknowns
from scoring.core.verdict_rules import judge_correct

#: Verdict sources in the order reports list them.
SOURCES: tuple[str, ...] = (EXACT, OVERLAP, JUDGE, ADJUDICATED)
#: The input column each source is read from.
SOURCE_COLUMNS: dict[str, str] = {
    EXACT: "exact_correct",
    OVERLAP: "overlap_correct",
    JUDGE: "judge_label",
    ADJUDICATED: "final_verdict",
}
SOURCE_TITLES: dict[str, str] = {source: TITLES[source] for source in SOURCES}
VERDICT_PREFIX = "verdict:"
REQUIRED_COLUMNS = ("question", "answer", "Domain", "response", "exact_correct", "overlap_correct")
#: How per-run accuracy treats unknown verdicts (pending, unjudged); printed beside the figures.
UNKNOWN_RULE = "unknown verdicts (pending, unjudged) counted wrong for the low end and right for the high end"


def verdict_column(source: str) -> str:
    """The Boolean column of a :class:`Run` table holding ``source``'s verdicts."""
    return f"{VERDICT_PREFIX}{source}"


def _boolean(table: pl.DataFrame, name: str) -> pl.Expr:
    """A metric column as Boolean, whether it arrives as Boolean or as the text True/False."""
    if table.schema[name] == pl.Boolean:
        return pl.col(name)
    return (
        pl.col(name)
        .cast(pl.String)
        .str.strip_chars()
        .str.to_lowercase()
        .replace_strict({"true": True, "false": False, "1": True, "0": False}, default=None, return_dtype=pl.Boolean)
    )


def _verdicts(table: pl.DataFrame) -> list[pl.Expr]:
    """One Boolean expression per source the table carries (null = unknown)."""
    exprs = [
        _boolean(table, "exact_correct").alias(verdict_column(EXACT)),
        _boolean(table, "overlap_correct").alias(verdict_column(OVERLAP)),
    ]
    if "judge_label" in table.columns:
        exprs.append(judge_correct(pl.col("judge_label")).alias(verdict_column(JUDGE)))
    if "final_verdict" in table.columns:
        final = pl.col("final_verdict").cast(pl.String).str.strip_chars().str.to_lowercase()
        exprs.append(
            pl.when(final == "correct")
            .then(True)
            .when(final == "wrong")
            .then(False)
            .otherwise(None)
            .alias(verdict_column(ADJUDICATED))
        )
    return exprs


@dataclass(frozen=True)
class Run:
    """One run to compare: a unique label and its rows with ``verdict:<source>`` columns.

    ``sources`` lists the sources this run has: exact and overlap always, judge when at least one
    row has a judge verdict, adjudicated when the table carries ``final_verdict``.
    """

    label: str
    table: pl.DataFrame = field(repr=False)
    sources: tuple[str, ...] = ()
    #: A stored run's: whose judge labels the judge source holds (the run's chosen configuration,
    #: else the latest label of each row; :func:`scoring.verdict_export.stored_run_labels`); "" for a file.
    judge: str = ""

    @property
    def n_rows(self) -> int:
        return self.table.height


def make_run(label: str, scored: pl.DataFrame) -> Run:
    """A :class:`Run` from a scored table (see the module docstring for its columns).

    Raises :class:`InputError` naming the run and the missing columns.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in scored.columns]
    if missing:
        raise InputError(f"{label}: missing column(s) {', '.join(repr(c) for c in missing)} for a comparison.")
    stale = [c for c in scored.columns if c.startswith(VERDICT_PREFIX)]
    table = scored.drop(stale).with_columns(
        pl.col("question", "answer", "Domain", "response").cast(pl.String).fill_null(""), *_verdicts(scored)
    )
    judged = verdict_column(JUDGE) in table.columns and table[verdict_column(JUDGE)].is_not_null().any()
    if not judged and verdict_column(JUDGE) in table.columns:  # a judge column without a verdict: no source
        table = table.drop(verdict_column(JUDGE))
    sources = [s for s in SOURCES if verdict_column(s) in table.columns]
    return Run(label, table, tuple(sources))


def scored_run(label: str, table: pl.DataFrame, normalize: bool = False) -> Run:
    """A :class:`Run` from a loaded responses file (:func:`scoring.core.loader.load_path`).

    The metrics are always recomputed by :func:`scoring.core.report.score_table`: a file that
    already carries them (an export, a ``score --out`` file) is scored afresh, its old columns
    dropped, so every run is judged by the same code.
    """
    fresh = table.drop([c for c in OUTPUT_COLUMNS if c in table.columns])
    return make_run(label, score_table(fresh, normalize=normalize))


def unique_labels(names: Sequence[str]) -> list[str]:
    """``names`` with repeats told apart (``a.csv``, ``a.csv (2)``): labels name columns and rows."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        label = name if seen[name] == 1 else f"{name} ({seen[name]})"
        while label in out:
            seen[name] += 1
            label = f"{name} ({seen[name]})"
        out.append(label)
    return out


@dataclass(frozen=True)
class SourceAccuracy:
    """Accuracy of one run, one verdict source, one domain (or ``combined``).

    ``accuracy_low`` counts the ``unknown`` rows wrong and ``accuracy_high`` counts them right;
    with nothing unknown they are equal. ``ci_low`` is the Wilson lower bound of ``correct/n`` and
    ``ci_high`` the Wilson upper bound of ``(correct+unknown)/n`` (sampling error and the unknown
    rows together, as :class:`scoring.core.verdict_rules.AdjudicatedRow`).
    """

    run: str
    source: str
    domain: str
    n: int
    correct: int
    wrong: int
    unknown: int
    accuracy_low: float
    accuracy_high: float
    ci_low: float
    ci_high: float

    def as_dict(self) -> dict:
        return asdict(self)


def _accuracy(run: str, source: str, domain: str, n: int, correct: int, unknown: int) -> SourceAccuracy:
    return SourceAccuracy(
        run, source, domain, n, correct, n - correct - unknown, unknown, *range_with_unknowns(correct, unknown, n)
    )


def run_accuracy(run: Run, source: str) -> list[SourceAccuracy]:
    """Per-domain rows of one run and source sorted by domain, then ``combined`` (all rows)."""
    if source not in run.sources:
        return []
    col = pl.col(verdict_column(source))
    counts = run.table.group_by("Domain").agg(n=pl.len(), correct=col.sum(), unknown=col.is_null().sum())
    rows = [
        _accuracy(run.label, source, str(dom), int(n), int(correct or 0), int(unknown))
        for dom, n, correct, unknown in sorted(counts.iter_rows(), key=lambda r: str(r[0]))
    ]
    total = run.table.select(correct=col.sum(), unknown=col.is_null().sum()).row(0)
    rows.append(_accuracy(run.label, source, COMBINED, run.n_rows, int(total[0] or 0), int(total[1])))
    return rows


ACCURACY_SCHEMA = {
    "run": pl.String,
    "source": pl.String,
    "domain": pl.String,
    "n": pl.Int64,
    "correct": pl.Int64,
    "wrong": pl.Int64,
    "unknown": pl.Int64,
    "accuracy_low": pl.Float64,
    "accuracy_high": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
}


def accuracy_table(runs: Sequence[Run], sources: Sequence[str] = SOURCES) -> pl.DataFrame:
    """Every run's accuracy per source and domain as one long frame (grouped bars with error
    bars plot straight from it): columns of :class:`SourceAccuracy`, runs in the given order,
    each run's domains sorted then ``combined``. Computed on all of each run's rows."""
    rows = [r.as_dict() for run in runs for source in sources for r in run_accuracy(run, source)]
    return pl.DataFrame(rows, schema=ACCURACY_SCHEMA)
