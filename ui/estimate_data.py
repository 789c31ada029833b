"""Cached data of the True accuracy page and the Overview's estimate: a stored run's figures
(:func:`scoring.estimate.stored_run.stored_estimate`), the review plan for a half-width, the rows it
would put in the audit scope, the what-if rules, and the reasons analytics across runs.

Everything is computed by ``scoring.estimate``; this module only decides what is kept and under
which key. A run's figures change only through its verdicts (reviewers' marks, adjudications:
:func:`scoring.review.revision`) and its judge labels (:func:`ui.judge_state.judge_revision`), so they
are kept per (database, run, verdict revision, judge revision): a rerun of either page then costs
the same for 1,000 or 100,000 rows. The values live in the server's per-run cache
(:func:`ui.state.run_cache`, bounded by ``REVIEW_CACHE_MB``); an old revision's figures are
dropped first when it is full.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd
import polars as pl

from scoring import review, store
from scoring.core.metric_names import EXACT, JUDGE, OVERLAP, SHORT_TITLES
from scoring.core.stats import DEFAULT_HALF_WIDTH, wilson_interval
from scoring.estimate import (
    METRICS,
    ReviewPlan,
    RunEstimate,
    build_strata,
    golden_wrong_report,
    next_rows,
    plan_review,
    reason_counts,
    review_rank,
    what_if,
)
from scoring.estimate.judged import JudgeFigures, judge_figures
from scoring.estimate.ppi import judge_inputs
from scoring.estimate.stored_run import StoredRun, stored_estimate, stored_runs
from scoring.estimate.stored_run import planned_half_width as planned_half_width_of
from scoring.review import audit_half_width
from scoring.store import database_url
from ui import identity, judge_state, run_choice, state, verdicts

T = TypeVar("T")


def _cached(key: tuple[Hashable, ...], compute: Callable[[], T]) -> T:
    """In the server's per-run cache (:func:`ui.state.run_cache`, bounded by ``REVIEW_CACHE_MB``)."""
    return state.run_cache().get(("estimate", *key), compute)


def revisions() -> tuple[int, int]:
    """(verdict revision, judge revision): they change with every mark, decision or judge batch."""
    return review.revision(state.engine()), judge_state.judge_revision()


@dataclass(frozen=True)
class Reasons:
    """Reviewers' reasons per language, domain and verdict, and the "golden answer wrong" report,
    over the runs ``run_ids``."""

    run_ids: tuple[int, ...]
    counts: pl.DataFrame
    report: pl.DataFrame


@dataclass(frozen=True)
class Figures:
    """One run's figures at the default half-width and what the pages derive from them.

    ``rank`` is each sample row's place in the run's review order (the queue's seeded
    permutation), so the planner picks exactly the rows the queue serves next. ``raw`` holds the
    metrics' raw accuracy per domain and combined with 95% Wilson intervals (for the chart);
    ``reasons`` the reasons analytics of this run alone (computed from the same rows).
    """

    run_id: int
    revs: tuple[int, int]
    estimate: RunEstimate
    rank: np.ndarray
    raw: pd.DataFrame
    reasons: Reasons
    #: Whose judge labels the judge-assisted estimate uses (the run's chosen configuration, or any).
    judge_config: str = ""

    @property
    def sample(self) -> pl.DataFrame:
        return self.estimate.sample


RAW_SERIES = {key: SHORT_TITLES[key] for key in (EXACT, OVERLAP, JUDGE)}


def _raw_intervals(sample: pl.DataFrame) -> pd.DataFrame:
    """Per metric, domain (sorted) and combined: rows it bears on (judged rows for the judge),
    rows it passes, the share and its 95% Wilson interval. Counted in one pass per grouping (a
    filter per metric and domain took a third of a second on a million rows)."""
    counts = [
        expr
        for metric, column in METRICS.items()
        for expr in (
            pl.col(column).count().alias(f"{metric}:n"),
            pl.col(column).cast(pl.Int64).sum().alias(f"{metric}:k"),
        )
    ]
    per_domain = {row["Domain"]: row for row in sample.group_by("Domain").agg(counts).iter_rows(named=True)}
    combined = sample.select(counts).row(0, named=True)
    # A domain named "combined" reads as the whole run, as the figures always did (scope names).
    scopes = [(d, combined if d == "combined" else per_domain[d]) for d in sorted(per_domain, key=str)]
    scopes.append(("combined", combined))
    out = []
    for metric in METRICS:
        for scope, row in scopes:
            n, k = int(row[f"{metric}:n"]), int(row[f"{metric}:k"] or 0)
            if metric == "judge" and n == 0:
                continue
            low, high = wilson_interval(k, n)
            out.append(
                {
                    "metric": metric,
                    "scope": scope,
                    "n": n,
                    "correct": k,
                    "share": k / n if n else None,
                    "ci_low": low,
                    "ci_high": high,
                }
            )
    return pd.DataFrame(out, columns=["metric", "scope", "n", "correct", "share", "ci_low", "ci_high"])


def figures(run_id: int, revs: tuple[int, int] | None = None) -> Figures:
    """Run ``run_id``'s figures (those of ``python -m scoring estimate --run ID``), kept per revisions."""
    revs = revs or revisions()
    url = database_url()

    def compute() -> Figures:
        scored = state.scored(run_id)  # the run's rows, kept per run: they never change
        table = review.verdict_table(state.engine(), run_id, scored=scored, revs=revs)  # shared with the summaries
        rank = run_rank(run_id, table.keys["item_key"])
        run, est = stored_estimate(state.engine(), run_id, scored=scored, rank=rank, table=table)
        # The stored run ranked its rows once for the random-sample rule: the queue's order.
        rank = run.rank if run.rank is not None else review_rank(est.sample["item_key"], run.info.review_seed)
        return Figures(
            run_id, revs, est, rank, _raw_intervals(est.sample), _reasons((run_id,), [run]), run.judge_config
        )

    return _cached(("figures", url, run_id, *revs), compute)


def run_rank(run_id: int, keys: pl.Series) -> np.ndarray:
    """Each row's place in the run's seeded review order, from its item ``keys`` (polars: no
    conversion of a million strings): fixed per run (its rows and seed never change), so kept
    per run rather than per verdict revision (a second on a million rows)."""
    key, compute = _rank_job(run_id, keys)
    return state.run_cache().get(key, compute)


def start_ranking(run_id: int) -> None:
    """Start :func:`run_rank` on another thread, unless it is kept: hashing a million keys (half a
    second, mostly outside the GIL) then overlaps the page's other figures instead of preceding
    its estimate. :func:`figures` takes the result, or waits for it."""
    keys = pl.from_pandas(state.scored(run_id)["item_key"])
    key, compute = _rank_job(run_id, keys)
    cache = state.run_cache()
    if key not in cache:
        threading.Thread(target=cache.get, args=(key, compute), name="run_rank", daemon=True).start()


def _rank_job(run_id: int, keys: pl.Series) -> tuple[tuple[Hashable, ...], Callable[[], np.ndarray]]:
    """(cache key, computation) of :func:`run_rank`."""
    run = store.get_run(state.engine(), run_id)
    seed = run.review_seed if run is not None else 0
    return ("estimate", "rank", database_url(), run_id, seed), lambda: review_rank(keys, seed)


def judged(fig: Figures, half_width: float = DEFAULT_HALF_WIDTH) -> JudgeFigures | None:
    """The judge-assisted estimate and plan (:func:`scoring.estimate.judged.judge_figures`), None
    when the judge labelled no row of the run; per revisions."""
    inputs = _cached(("judge_inputs", database_url(), fig.run_id, *fig.revs), lambda: judge_inputs(fig.sample))
    key = ("judged", database_url(), fig.run_id, *fig.revs, half_width)
    return _cached(key, lambda: judge_figures(inputs, half_width))


def plan(fig: Figures, half_width: float) -> ReviewPlan:
    """The review plan for an interval of +-``half_width`` (a share), per revisions: the
    judge-assisted one (residual spread) when the judge has labelled the run (at least half of it:
    :data:`scoring.estimate.judged.PLANS_FROM`), else the human-only one."""
    with_judge = judged(fig, half_width)
    if with_judge is not None and with_judge.plans:
        return with_judge.plan.plan
    key = ("plan", database_url(), fig.run_id, *fig.revs, half_width)
    return _cached(key, lambda: plan_review(build_strata(fig.sample), half_width))


def may_have_evidence(run_id: int) -> bool:
    """False when no reviewer holds a verdict on any of the run's rows and no adjudicator decided
    one: then no row is reviewed (:func:`scoring.estimate.reviewed_sample`), :func:`has_evidence`
    is False whatever the sample, and a page need not wait for :func:`figures` to draw its chart."""
    table = verdicts.summed_table(database_url(), run_id, revisions())
    return not (table.current.empty and table.decisions.empty)


def has_evidence(fig: Figures) -> bool:
    """Whether any reviewed row of the random sample is in the estimate: until one is, no page
    shows an estimated true accuracy (no number before its evidence)."""
    return fig.estimate.random_sample["in_estimate"] > 0


def pilot_plan(fig: Figures) -> ReviewPlan:
    """The pilot: the planner's plan for the default +-5 points (:data:`DEFAULT_HALF_WIDTH`), the
    rows to review before the estimate is worth showing."""
    return plan(fig, DEFAULT_HALF_WIDTH)


def start_pilot(fig: Figures, by: str) -> int:
    """Put the pilot's rows (:func:`planned_rows` at :data:`DEFAULT_HALF_WIDTH`, the planner's own
    choice, in the queue's order) in the run's audit scope; returns the scope's size. Double-blind
    is left as it is (None)."""
    keys = planned_rows(fig, DEFAULT_HALF_WIDTH)["item_key"].to_list()
    return put_in_audit(fig.run_id, keys, by, None, DEFAULT_HALF_WIDTH)


def planned_half_width(run_id: int) -> float | None:
    """The half-width (a share) the run's audit scope was planned for; None before any plan."""
    return audit_half_width(state.engine(), run_id)


def kept_half_width(run_id: int) -> float:
    """The half-width (a share) the planner offers for the run: the one its audit scope was last
    planned for (kept in the database, so it survives a refresh and holds in every session), else
    the default +-5 points; ``python -m scoring estimate`` plans for the same
    (:func:`scoring.estimate.stored_run.planned_half_width`, the one rule)."""
    return planned_half_width_of(state.engine(), run_id)


def overlap_waiting(run_id: int) -> int:
    """Rows of the run's overlap-only queue (all domains) with no current verdict by anyone: what
    the Review queue's progress bar leaves there, counted on the run's verdict table (the one
    :func:`figures` builds: :func:`scoring.review.unreviewed_in`), not on a queue scope of its own."""
    table = review.verdict_table(state.engine(), run_id, scored=state.scored(run_id), revs=revisions())
    return review.unreviewed_in(table, "overlap_only")


def planned_rows(fig: Figures, half_width: float) -> pl.DataFrame:
    """The rows the plan still wants reviewed, in the queue's order (:func:`scoring.estimate.next_rows`)."""
    key = ("next", database_url(), fig.run_id, *fig.revs, half_width)
    return _cached(key, lambda: next_rows(fig.sample, plan(fig, half_width), rank=fig.rank))


def what_if_table(fig: Figures) -> pl.DataFrame:
    """The what-if rules on the run's reviewed rows (diagnostic only)."""
    return _cached(("whatif", database_url(), fig.run_id, *fig.revs), lambda: what_if(fig.sample))


def reasons(run_ids: Sequence[int], revs: tuple[int, int] | None = None) -> Reasons:
    """The reasons analytics over ``run_ids`` (their current verdicts and rows), per revisions:
    every run is read again after a mark, so the page asks for it only when chosen."""
    ids = tuple(run_ids)
    revs = revs or revisions()
    return _cached(("reasons", database_url(), ids, *revs), lambda: _reasons(ids, stored_runs(state.engine(), ids)))


def _reasons(ids: tuple[int, ...], runs: Sequence[StoredRun]) -> Reasons:
    current = (
        pd.concat([r.current for r in runs], ignore_index=True)
        if runs
        else pd.DataFrame(columns=["item_key", "reviewer", "verdict", "reason", "note"])
    )
    rows = [r.rows() for r in runs]
    return Reasons(ids, reason_counts(current, rows), golden_wrong_report(current, rows))


def audit_size(run_id: int) -> int:
    """How many rows the run's audit scope holds now."""
    return len(review.audit_keys(state.engine(), run_id))


def put_in_audit(
    run_id: int, item_keys: Sequence[str], by: str, blind: bool | None, half_width: float | None = None
) -> int:
    """Make ``item_keys`` the run's audit scope, planned for ``half_width`` (kept with it: see
    :func:`kept_half_width`); with ``blind`` True/False turn double-blind on or off for that scope
    (None: leave it). Returns the scope's size."""
    engine = state.engine()
    count = review.set_audit(engine, run_id, item_keys, by, half_width)
    if blind is not None:
        review.set_blind(engine, run_id, review.BlindSpec(review.AUDIT), by, on=blind)
    return count


def audit_blind(run_id: int) -> tuple[bool, bool]:
    """(any scope of the run is double-blind, the audit scope is)."""
    scopes = review.blind_scopes(state.engine(), run_id)
    audit = review.BlindSpec(review.AUDIT)
    return bool(scopes), any(review.covers(s, audit) for s in scopes)


def visible_runs() -> tuple[list[int], int]:
    """Every run whose reviewers' verdicts this reviewer may see, and how many others were left
    out because they are under double-blind review."""
    ids = [r.id for r in run_choice.known_runs()]
    shown = identity.visibility().shown(ids)
    return shown, len(ids) - len(shown)
