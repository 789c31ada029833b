"""A run's verdict table, the one place it is built: every row with its reviewers' summary
(human verdict, reviewers, reason, note, when), the adjudicator's decision, the run's judge label
under the one rule (:func:`scoring.store.judge_choice.run_labels`), and the final verdict and its
source under :func:`scoring.review.final_verdicts`' rule.

Export (every format), the estimate, compare, the pages and the CLI read this table instead of
assembling their own, so they cannot drift apart. It is built in polars: rows nobody reviewed
(nearly all of a large run) get their verdict once per (bucket, judge label) pair; the reviewed
rows go through the rule as they are. Each row holds which of those outcomes is its own, so the
verdict columns of a million rows are not a million strings each until a reader asks for them.
:func:`verdict_table` keeps the newest builds per (database, run, verdict revision, judge
revision, judge switch), so a command or a page that asks twice builds once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property

import pandas as pd
import polars as pl
from sqlalchemy import Engine

from scoring.core.errors import InputError
from scoring.core.judge_accuracy import judge_accuracy, judge_comparisons
from scoring.core.verdict_rules import (
    ADJUDICATION_COLUMNS,
    METRIC_COLUMNS,
    adjudicated_accuracy,
    final_verdicts,
    human_summary,
    human_vs_metric,
    metric_precision,
)
from scoring.store import RunInfo, get_run, judge_cache, judge_choice, load_table
from scoring.store.adjudications import adjudications
from scoring.store.judge_choice import RunLabels
from scoring.store.verdict_log import current_verdicts, revision, served_keys

#: The reviewers' summary columns, in the order the rule adds them.
HUMAN_COLUMNS = ["human_verdict", "reviewers", "reason", "note"]
#: Every column the table adds to a run's rows, in the order :func:`final_verdicts` adds them.
VERDICT_COLUMNS = [*HUMAN_COLUMNS, "reviewed_at", "judge_label", *ADJUDICATION_COLUMNS, "final_verdict", "final_source"]
#: How many builds :func:`verdict_table` keeps (a million-row table holds its rows: keep few).
KEPT = 2
#: The rows' columns the whole-run summaries read (:attr:`VerdictTable.summary_frame`).
SUMMARY_ROW_COLUMNS = ["Domain", *METRIC_COLUMNS, "is_blank"]
#: The verdict columns they read.
SUMMARY_VERDICTS = ["human_verdict", "judge_label", "final_verdict"]


@dataclass(frozen=True, eq=False)
class VerdictTable:
    """A run's rows and, per row, the columns of :data:`VERDICT_COLUMNS` (``verdicts``, strings
    except ``reviewed_at``, UTC), with what they were built from."""

    info: RunInfo
    #: Each row's ``item_key`` and ``bucket``, in upload order: what the rule and the counts read.
    keys: pl.DataFrame
    #: The columns of :data:`VERDICT_COLUMNS` once per outcome of the rule: each (bucket, judge
    #: label) pair of the rows nobody reviewed, then each reviewed row (:attr:`verdicts` per row).
    values: pl.DataFrame
    #: Per row of ``keys``, its row of ``values`` (a million rows' ten text columns, mostly one
    #: value, held as 4 bytes a row rather than 170 MB of strings).
    pick: pl.Series
    #: Every reviewer's current verdict on the run's rows (:func:`scoring.review.current_verdicts`).
    current: pd.DataFrame
    #: The adjudicators' decisions in force, indexed by item key.
    decisions: pd.DataFrame
    #: The judge labels the table carries and whose they are.
    labels: RunLabels
    engine: Engine = field(repr=False)
    judge_settles: bool = False
    #: The run's rows as pandas, when the caller already holds them (else built from ``rows``).
    scored: pd.DataFrame | None = field(default=None, repr=False)
    #: The stored rows when the table was built from them (else :attr:`rows` converts ``scored``).
    loaded: pl.DataFrame | None = field(default=None, repr=False)
    #: The columns of :data:`SUMMARY_ROW_COLUMNS` when the table was built for its summaries
    #: (:func:`build`'s ``summary_rows``; polars).
    summary_rows: pl.DataFrame | None = field(default=None, repr=False)

    @cached_property
    def rows(self) -> pl.DataFrame:
        """The stored rows (:func:`scoring.store.load_table`), in upload order. Built from
        ``scored`` on first use when the table was built from it: the pages' figures never ask,
        so they do not hold a second copy of a million rows (260 MB); an export does. Read from
        the database when the table was built from the summaries' columns alone."""
        if self.loaded is not None:
            return self.loaded
        return pl.from_pandas(self.scored) if self.scored is not None else load_table(self.engine, self.info.id)

    @cached_property
    def verdicts(self) -> pl.DataFrame:
        """Per row of ``rows``, the columns of :data:`VERDICT_COLUMNS` (built on first use: the
        export writes them; the pages' frames take theirs from :attr:`values` directly)."""
        return self.values.select(pl.all().gather(self.pick))

    @property
    def judged(self) -> bool:
        """Whether any row has a judge label (without one, readers show no judge column)."""
        return bool(self.labels.labels)

    @cached_property
    def served(self) -> set[str]:
        """The items the run's queue served (the estimate's random sample; the export's ``via``)."""
        return served_keys(self.engine, self.info.id)

    @cached_property
    def final(self) -> pd.DataFrame:
        """The rows as pandas with the verdict columns, as :func:`scoring.review.final_verdicts`
        returns them (``judge_label`` only when the run has judge labels); for the estimate and the
        pages' summaries, which are written in pandas."""
        out = (self.rows.to_pandas() if self.scored is None else self.scored).copy(deep=False)
        values = self.values if self.judged else self.values.drop("judge_label")
        pick = self.pick.to_numpy()
        for col, column in values.to_pandas().items():  # each outcome converted once, then taken per row
            out[col] = column.take(pick).set_axis(out.index)
        return out

    @cached_property
    def summary_frame(self) -> pd.DataFrame:
        """:attr:`final` as the whole-run summaries read it (:meth:`summaries`): the same rows and
        values, only the columns of :data:`SUMMARY_ROW_COLUMNS` and :data:`SUMMARY_VERDICTS`, the
        verdicts as categoricals of the rule's outcomes. A million rows then cost a take of small
        codes where :attr:`final`'s ten columns of a million strings took most of a second."""
        if self.scored is not None:
            out = self.scored[SUMMARY_ROW_COLUMNS].copy(deep=False)
        else:
            source = self.summary_rows if self.summary_rows is not None else self.rows
            out = source.select(SUMMARY_ROW_COLUMNS).to_pandas()
        pick = self.pick.to_numpy()
        for col in SUMMARY_VERDICTS:
            if col == "judge_label" and not self.judged:
                continue
            codes, outcomes = pd.factorize(self.values[col].to_pandas())  # each outcome's value, coded
            out[col] = pd.Categorical.from_codes(codes[pick], categories=outcomes)
        return out

    def summaries(self) -> dict:
        """The whole-run summaries the pages show: adjudicated accuracy per domain, the judge's
        accuracy (None without judge labels), each metric's precision against the reviewers, and
        the agreement of the reviewers and the judge with the metrics."""
        final = self.summary_frame
        return {
            "adjudicated": adjudicated_accuracy(final),
            "judge": judge_accuracy(final) if "judge_label" in final.columns else None,
            "precision": metric_precision(final),
            "human_vs_metric": {col: human_vs_metric(final, col) for col in METRIC_COLUMNS},
            "judge_comparisons": judge_comparisons(final),
        }


def build(
    engine: Engine,
    run_id: int,
    judge_labels: Mapping[str, str] | None = None,
    judge_settles: bool = False,
    rows: pl.DataFrame | None = None,
    scored: pd.DataFrame | None = None,
    summary_rows: pl.DataFrame | None = None,
) -> VerdictTable:
    """Build run ``run_id``'s table; :class:`InputError` when there is no such run.

    ``judge_labels`` replaces the one rule's labels (a caller that brings its own); ``rows`` and
    ``scored`` are the run's rows when the caller already holds them (they never change);
    ``summary_rows``, the run's rows (polars) when the caller holds them only for the summaries:
    the table keeps ``item_key``, ``bucket`` and :data:`SUMMARY_ROW_COLUMNS` of them, and reads
    the rows from the database only if asked for them."""
    info = get_run(engine, run_id)
    if info is None:
        raise InputError(f"No run with id {run_id}.")
    if rows is None and scored is None and summary_rows is None:
        rows = load_table(engine, run_id)
    if rows is not None:
        keyed = rows.select("item_key", "bucket")
    elif scored is not None:
        keyed = pl.from_pandas(scored[["item_key", "bucket"]])
    else:
        keyed = summary_rows.select("item_key", "bucket")
    keys = keyed["item_key"]
    current = current_verdicts(engine, keys)
    summary = human_summary(current)
    decisions = adjudications(engine, keys)
    if judge_labels is not None:
        found = RunLabels(dict(judge_labels), None)
    elif judge_cache.revision(engine) == 0:  # nothing ever judged: no need to read any label
        found = RunLabels({}, judge_choice.get_choice(engine, run_id))
    else:
        found = judge_choice.run_labels(engine, run_id, keys)
    values, pick = _verdict_values(keyed, summary, decisions, found.labels, judge_settles)
    narrow = summary_rows.select(SUMMARY_ROW_COLUMNS) if rows is None and scored is None else None
    return VerdictTable(
        info, keyed, values, pick, current, decisions, found, engine, judge_settles, scored, rows, narrow
    )


def _verdict_values(
    keyed: pl.DataFrame, summary: pd.DataFrame, decisions: pd.DataFrame, labels: Mapping[str, str], settles: bool
) -> tuple[pl.DataFrame, pl.Series]:
    """:data:`VERDICT_COLUMNS` per outcome of the rule, and per row of ``keyed`` (item_key, bucket)
    which outcome is its (:attr:`VerdictTable.values`, :attr:`VerdictTable.pick`).

    The rule is not restated here: every row nobody reviewed has a final verdict that depends only
    on its bucket and judge label, so :func:`final_verdicts` runs once per distinct pair; the
    reviewed rows go through it as they are, one outcome each."""
    label = keyed["item_key"].replace_strict(dict(labels), default="", return_dtype=pl.String) if labels else None
    keyed = keyed.with_columns(_label=label if label is not None else pl.lit("", dtype=pl.String))
    touched = [*summary.index.astype(str), *decisions.index.astype(str)]
    reviewed = keyed["item_key"].is_in(pl.Series(touched, dtype=pl.String).implode())
    text = [c for c in VERDICT_COLUMNS if c != "reviewed_at"]
    combos = keyed.filter(~reviewed).select("bucket", "_label").unique(maintain_order=True)
    combos = combos.with_columns(item_key=pl.format("combo:{}", pl.int_range(pl.len())))
    ruled = final_verdicts(
        combos.to_pandas(),
        summary.iloc[:0],
        dict(zip(combos["item_key"], combos["_label"])),
        settles,
        decisions.iloc[:0],
    )
    ruled_pl = pl.from_pandas(ruled[["bucket", "_label", *text]].astype(str))
    outcomes = ruled_pl.select("bucket", "_label").with_row_index("_pick")
    pick = keyed.join(outcomes, on=["bucket", "_label"], how="left", maintain_order="left")["_pick"]
    values = ruled_pl.select(text).with_columns(pl.lit(None, dtype=pl.Datetime("us", "UTC")).alias("reviewed_at"))
    where = reviewed.arg_true()
    if not where.is_empty():  # the reviewed rows (a few), through the rule as they are
        part = final_verdicts(keyed.filter(reviewed).to_pandas(), summary, labels, settles, decisions)
        stamps = pl.Series(pd.to_datetime(part["reviewed_at"], utc=True)).cast(pl.Datetime("us", "UTC"))
        own = pl.DataFrame({col: pl.Series(part[col].astype(str).tolist(), dtype=pl.String) for col in text})
        own = own.with_columns(stamps.alias("reviewed_at"))
        first = values.height
        values = pl.concat([values, own])
        pick = pick.scatter(where, pl.int_range(first, first + len(where), dtype=pick.dtype, eager=True))
    return values.select(VERDICT_COLUMNS), pick


def revisions(engine: Engine) -> tuple[int, int]:
    """(verdict revision, judge revision): a table is current while neither changes."""
    return revision(engine), judge_cache.revision(engine) + judge_choice.revision(engine)


_KEPT: OrderedDict[Hashable, VerdictTable] = OrderedDict()
_LOCK = threading.Lock()


def verdict_table(
    engine: Engine,
    run_id: int,
    judge_settles: bool = False,
    scored: pd.DataFrame | None = None,
    revs: tuple[int, int] | None = None,
    summary_rows: pl.DataFrame | None = None,
) -> VerdictTable:
    """Run ``run_id``'s table under the one rule, built once per (database, run, revisions, judge
    switch): the newest :data:`KEPT` builds are kept. ``scored``: the run's rows when the caller
    holds them; ``summary_rows``: :func:`build`'s, when the caller holds no more; ``revs``:
    :func:`revisions` when the caller just read them.

    A table built from ``summary_rows`` takes the ``scored`` of a later caller (the same build,
    now with the rows the pages hold, so that its readers never read them again)."""
    key = (str(engine.url), run_id, *(revs or revisions(engine)), bool(judge_settles))
    with _LOCK:
        if key in _KEPT:
            _KEPT.move_to_end(key)
            kept = _KEPT[key]
            if scored is not None and kept.scored is None and kept.loaded is None:
                kept = _KEPT[key] = replace(kept, scored=scored, summary_rows=None)
            return kept
    table = build(engine, run_id, judge_settles=judge_settles, scored=scored, summary_rows=summary_rows)
    with _LOCK:
        _KEPT[key] = table
        while len(_KEPT) > KEPT:
            _KEPT.popitem(last=False)
    return table
