"""The table a team reports: a row per model, a column per language, each cell the model's true
accuracy in that language with its 95% interval where its runs have a reviewed random sample
there, else each metric's accuracy with its Wilson interval, marked as such.

Why the cell is built this way: a model's runs in one language (two Hindi files of one model) are
pooled with each run's strata kept apart (:func:`scoring.estimate.group_estimate.stack_runs`),
so every run's random sample stays one; the language is then estimated as a run of its own rows
(:mod:`scoring.estimate.group_estimate`, whose coverage is simulated). A cell with reviewed rows
but too few for an interval shows no figure (:func:`scoring.estimate.evidence.has_interval`: its
point estimate would be mostly the prior 0.5) and says what to review to get one.
A metric's figure is never dressed as the truth: its ``kind`` says which it is, and every output
(text, CSV, JSON, picture) carries it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import polars as pl

from scoring.compare.compared_runs import SOURCE_TITLES, SOURCES, Run, verdict_column
from scoring.core.metric_names import ADJUDICATED, EXACT, JUDGE
from scoring.core.stats import wilson_interval
from scoring.estimate.evidence import TO_REVIEW, has_interval
from scoring.estimate.group_estimate import LANGUAGE, NO_LANGUAGE, group_estimate, groups_key, stack_runs
from scoring.estimate.wording import to_get_one

ESTIMATE = "estimate"  #: a cell's kind: estimated true accuracy from reviewed rows
#: The metric a cell without reviewed rows shows first found first (the judge where it labelled
#: the rows, else the spec's stricter exact substring), as Compare leads.
METRIC_ORDER = (JUDGE, EXACT)
CELL_METHOD = (
    "A cell is the model's estimated true accuracy in that language when its runs have reviewed rows of the random "
    "sample there (each language estimated as a run of its own rows; a model's runs pooled with their strata kept "
    "apart), shown only with its 95% interval (until the reviews there give one, the cell says what to review); "
    "with no reviewed row there, the LLM judge's accuracy, else the exact-substring metric's, with a Wilson 95% "
    "interval, marked as the metric's (the judge's over the rows it judged)."
)


@dataclass(frozen=True)
class ModelRuns:
    """One model's runs for the table: each as a compare :class:`Run` (every verdict source, a
    ``language`` column) and its estimator sample (:func:`scoring.estimate.reviewed_sample`, random
    sample rule applied, a ``language`` column), keyed by run id."""

    model: str
    runs: Sequence[tuple[int, Run, pl.DataFrame]]
    #: some run's human verdicts are withheld from the viewer (double-blind review,
    #: :mod:`scoring.review.visibility`): every cell shows a metric, never an estimate built on them
    withheld: bool = False


@dataclass(frozen=True)
class MetricFigure:
    """A metric's accuracy over the rows it has a verdict on (``n``; the judge's unjudged rows
    are left out, as the Overview's raw judge accuracy does) with its Wilson 95% interval."""

    source: str
    n: int
    correct: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True)
class TableCell:
    """One model x language cell; ``kind`` is :data:`ESTIMATE` or the metric shown."""

    model: str
    language: str
    runs: tuple[str, ...]
    rows: int
    reviewed: int
    kind: str
    #: None for an estimate without an interval (:func:`scoring.estimate.evidence.has_interval`)
    value: float | None
    ci_low: float | None
    ci_high: float | None
    #: False when reviewed rows are too few for an interval (``needed`` more would give one)
    shown: bool = True
    needed: int = 0
    metrics: tuple[MetricFigure, ...] = field(default=())
    withheld: bool = False  #: reviewed rows exist but are withheld from the viewer (double-blind)
    #: buckets with no reviewed row among this cell's rows (each needs some: part of ``needed``)
    review_buckets: tuple[str, ...] = ()

    @property
    def what_to_review(self) -> str | None:
        """What to review to get an estimate here (None when it has its interval, or is a metric's)."""
        return None if has_interval(self) else to_get_one(self.language, self.needed, self.review_buckets)

    @property
    def title(self) -> str:
        return "estimated true accuracy" if self.kind == ESTIMATE else SOURCE_TITLES[self.kind]

    def as_dict(self) -> dict:
        out = asdict(self)
        out["runs"] = list(self.runs)
        out["metrics"] = {m["source"]: {k: v for k, v in m.items() if k != "source"} for m in out["metrics"]}
        return {**out, "title": self.title, TO_REVIEW: self.what_to_review}


def with_language(table: pl.DataFrame, fallback: str) -> pl.DataFrame:
    """``table`` with a ``language`` column: its own where a row has one, else ``fallback`` (the
    run's language), else :data:`NO_LANGUAGE`."""
    fill = fallback.strip() or NO_LANGUAGE
    if LANGUAGE not in table.columns:
        return table.with_columns(pl.lit(fill).alias(LANGUAGE))
    blank = pl.col(LANGUAGE).cast(pl.String).str.strip_chars().fill_null("") == ""
    return table.with_columns(pl.when(blank).then(pl.lit(fill)).otherwise(pl.col(LANGUAGE)).alias(LANGUAGE))


def _metrics(runs: Sequence[Run], language: str) -> tuple[MetricFigure, ...]:
    parts = [(r, r.table.filter(groups_key(r.table) == language)) for r in runs]  # each run filtered once
    out = []
    for source in (s for s in SOURCES if s != ADJUDICATED):
        values = [rows[verdict_column(source)] for r, rows in parts if source in r.sources and rows.height]
        if not values:
            continue
        column = pl.concat(values)
        n, correct = int(column.is_not_null().sum()), int(column.sum() or 0)
        low, high = wilson_interval(correct, n) if n else (None, None)
        out.append(MetricFigure(source, n, correct, correct / n if n else None, low, high))
    return tuple(out)


def model_cells(model: ModelRuns) -> list[TableCell]:
    """Every language cell of one model (languages sorted, blank last)."""
    stacked = stack_runs([(run_id, sample) for run_id, _, sample in model.runs])
    runs = [run for _, run, _ in model.runs]
    languages = sorted(set(groups_key(stacked).to_list()), key=lambda v: (v == NO_LANGUAGE, v))
    cells = []
    for language in languages:
        part = stacked.filter(groups_key(stacked) == language)
        labels = tuple(run.label for (_, run, sample) in model.runs if (groups_key(sample) == language).any())
        metrics = _metrics(runs, language)
        base = {"model": model.model, "language": language, "runs": labels, "rows": part.height, "metrics": metrics}
        reviewed = 0 if model.withheld else int(part["reviewed"].sum())
        if reviewed:
            est = group_estimate(part, language)
            shown = has_interval(est)  # no figure before its evidence: neither the value nor an interval
            cell = TableCell(
                **base,
                reviewed=reviewed,
                kind=ESTIMATE,
                value=est.estimate if shown else None,
                ci_low=est.ci_low if shown else None,
                ci_high=est.ci_high if shown else None,
                shown=shown,
                needed=est.needed,
                review_buckets=est.review_buckets,
            )
        else:
            by_source = {m.source: m for m in metrics if m.n}
            m = by_source[next(s for s in METRIC_ORDER if s in by_source)]
            cell = TableCell(
                **base,
                reviewed=0,
                kind=m.source,
                value=m.accuracy,
                ci_low=m.ci_low,
                ci_high=m.ci_high,
                withheld=model.withheld,
            )
        cells.append(cell)
    return cells


def table_cells(models: Sequence[ModelRuns]) -> list[TableCell]:
    """Every model's cells, models in the given order."""
    return [cell for model in models for cell in model_cells(model)]
