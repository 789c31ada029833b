"""Cached data of the Compare page: stored runs as :class:`scoring.compare.Run`, which runs share
questions, the comparison of the chosen runs (matching, accuracy, paired statistics), the
heatmap's cells and the discordant questions of a pair. Everything is computed by
``scoring.compare``; this module only decides what is kept and under which key.

A stored run changes only through its verdicts (reviewers' marks, adjudications, judge labels), so
its :class:`Run` is kept per (database, run id, verdict revision, judge revision); the whole
comparison of a set of runs per those revisions plus the matching choice. A rerun of the page then
costs the same for runs of 1,000 or 100,000 rows. The values live in the server's per-run cache
(:func:`ui.state.run_cache`, ``REVIEW_CACHE_MB``), sized with polars' own estimate (a comparison
counts the runs it holds too: a run dropped from the cache stays in memory while a comparison
uses it).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

import polars as pl

from scoring import compare, review, store
from scoring.compare import (
    ADJUDICATED,
    ID_CANDIDATES,
    SOURCES,
    HeatCell,
    KeyChoice,
    MatchResult,
    PairedComparison,
    Run,
    accuracy_table,
    default_key,
    discordant_rows,
    match_runs,
    paired_comparisons,
    paired_table,
    shared_id_column,
)
from scoring.compare.database_runs import stored_run
from scoring.store import database_url
from ui import judge_state, state

T = TypeVar("T")
TEXT_COLUMNS = ("question", "answer", "Domain", "response")  #: what matching reads and lists besides a key


def _cached(key: tuple[Hashable, ...], compute: Callable[[], T]) -> T:
    """In the server's per-run cache (:func:`ui.state.run_cache`, bounded by ``REVIEW_CACHE_MB``)."""
    return state.run_cache().get(("compare", *key), compute)


def revisions() -> tuple[int, int]:
    """(verdict revision, judge revision): they change with every mark, decision or judge batch."""
    return review.revision(state.engine()), judge_state.judge_revision()


def loaded_run(run_id: int, revs: tuple[int, int]) -> Run:
    """Run ``run_id`` with its judge labels and final verdicts (``#id name``), per revisions."""
    url = database_url()
    return _cached(("run", url, run_id, *revs), lambda: stored_run(state.engine(), run_id))


def _key_run(run_id: int, label: str) -> Run:
    """Only what matching needs of a stored run (question, answer and any id column), from the
    run's rows the other pages already hold (:func:`ui.state.scored`)."""
    frame = state.scored(run_id)
    columns = [c for c in frame.columns if c in TEXT_COLUMNS or str(c).lower() in ID_CANDIDATES]
    return Run(label, pl.from_pandas(frame[columns]), ())


def shared_questions(a: int, b: int) -> int:
    """How many questions runs ``a`` and ``b`` share on their default key (the id column when
    both have one, else question and answer text). Rows never change: kept per pair. A damaged
    ``b`` shares none (:class:`scoring.store.DamagedRun` only for ``a``, the page's run)."""
    low, high = sorted((a, b))

    def compute() -> int:
        runs = [_key_run(low, "a"), _key_run(high, "b")]
        choice = default_key(runs)
        return match_runs(runs, choice.key, choice.by_id).shared[(0, 1)]

    try:
        return _cached(("shared", database_url(), low, high), compute)
    except store.DamagedRun as exc:
        if exc.run_id == a:
            raise  # the page's own run: app.py names it
        return 0  # another run damaged: not offered by default; choosing it names it


@dataclass(frozen=True)
class Comparison:
    """The chosen runs compared: how they were matched and every table the page shows."""

    ids: tuple[int, ...]
    revs: tuple[int, int]
    runs: tuple[Run, ...] = field(repr=False)
    sources: tuple[str, ...]
    choice: KeyChoice
    id_column: str | None
    match: MatchResult = field(repr=False)
    accuracy: pl.DataFrame = field(repr=False)
    comparisons: tuple[PairedComparison, ...] = field(repr=False)
    paired: pl.DataFrame = field(repr=False)
    domains: tuple[str, ...] = ()  #: the matched questions' domains, sorted

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(r.label for r in self.runs)


def comparison(
    infos: Sequence[store.RunInfo], prefer_id: bool, hide_adjudicated: bool, revs: tuple[int, int]
) -> Comparison:
    """The runs ``infos`` (in that order) compared, each labelled ``#id name`` with its current
    name; ``prefer_id`` matches on a shared id column when every run has one;
    ``hide_adjudicated`` leaves out the source built on reviewers' verdicts (double-blind
    review); ``revs`` from :func:`revisions`."""
    ids = tuple(i.id for i in infos)
    labels = tuple(f"#{i.id} {i.name}".strip() for i in infos)  # a name edited on the Upload page shows at once

    def compute() -> Comparison:
        runs = tuple(replace(loaded_run(i, revs), label=label) for i, label in zip(ids, labels))
        sources = tuple(s for s in SOURCES if not (hide_adjudicated and s == ADJUDICATED))
        choice = default_key(runs, prefer_id=prefer_id)
        match = match_runs(runs, choice.key, choice.by_id)
        paired_sources = [s for s in match.sources if s in sources]
        comparisons = tuple(paired_comparisons(match, sources=paired_sources))
        return Comparison(
            ids=ids,
            revs=revs,
            runs=runs,
            sources=sources,
            choice=choice,
            id_column=shared_id_column([r.table.columns for r in runs]),
            match=match,
            accuracy=accuracy_table(runs, sources),
            comparisons=comparisons,
            paired=paired_table(comparisons),
            domains=tuple(sorted(match.matched["Domain"].cast(pl.String).unique().to_list(), key=str)),
        )

    return _cached(("comparison", database_url(), ids, labels, *revs, prefer_id, hide_adjudicated), compute)


def heat_cells(cmp: Comparison, infos: Sequence[store.RunInfo], source: str) -> list[HeatCell]:
    """The heatmap's cells of the compared runs (``infos`` in the order of ``cmp.ids``), cached."""
    meta = tuple((i.model.strip(), i.language.strip()) for i in infos)
    key = ("heat", database_url(), cmp.ids, cmp.labels, *cmp.revs, cmp.sources, source, meta)
    return _cached(key, lambda: compare.heat_cells(cmp.runs, meta, source))


def discordant(cmp: Comparison, a: int, b: int, source: str | None, domain: str | None) -> pl.DataFrame:
    """The questions runs ``a`` and ``b`` disagree on, for one source and domain (None: all)."""
    key = (
        "discordant",
        database_url(),
        cmp.ids,
        cmp.labels,
        *cmp.revs,
        cmp.choice.key,
        cmp.sources,
        a,
        b,
        source,
        domain,
    )

    def compute() -> pl.DataFrame:
        sources = [source] if source else list(cmp.sources)
        return discordant_rows(cmp.match, a, b, sources=sources, domains=[domain] if domain else None)

    return _cached(key, compute)
