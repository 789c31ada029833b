"""The server's database engine and per-run cache, and what is built from a run's rows alone.

The lowest of the page-state modules (``ui.run_choice``, ``ui.identity``, ``ui.judge_state``,
``ui.verdicts``, ``ui.judge_data``, ``ui.queue_state`` import it; it imports none of them): the
one engine per database URL, the byte-bounded cache everything that grows with a run lives in,
the rows themselves and what never changes with them (summaries, search index, rows per item),
and whether the database could be reached.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import TypeVar

import pandas as pd
import polars as pl
import streamlit as st
from sqlalchemy import Engine

from scoring import ingest, store
from scoring.core import search
from scoring.core.memo import DEFAULT_BUDGET, ByteBudgetCache
from scoring.core.report import METRICS, accuracy_by_domain, bucket_counts, mcnemar
from scoring.core.settings import lookup
from scoring.store import database_url, make_engine

T = TypeVar("T")


@st.cache_resource(show_spinner=False)
def engine_at(url: str) -> Engine:
    """The engine of ``url``, made once per server; the sample set loaded on the first start of
    the embedded default (:func:`scoring.store.samples_on_first_start`)."""
    engine = make_engine(url)
    if store.samples_on_first_start():
        ingest.ensure_sample(engine)
    return engine


def engine() -> Engine:
    """One engine per database URL for the whole server (the URL is re-read so tests can switch)."""
    return engine_at(database_url())


CACHE_SETTING = "REVIEW_CACHE_MB"


def cache_budget() -> int:
    """Bytes the per-run cache may hold: ``REVIEW_CACHE_MB`` (environment, then secrets), else 1 GiB."""
    raw = lookup(CACHE_SETTING)
    try:
        return int(float(raw) * 1024**2) if raw not in (None, "") else DEFAULT_BUDGET
    except (TypeError, ValueError):
        return DEFAULT_BUDGET


@st.cache_resource(show_spinner=False)
def run_cache() -> ByteBudgetCache:
    """One byte-bounded cache per server for everything that grows with a run's size (rows,
    adjudicated frames, verdicts, scopes, search indexes): many runs open never exceed it."""
    return ByteBudgetCache(cache_budget())


def per_run(kind: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Cache a function of (url, run_id, ...) in :func:`run_cache` under ``kind``."""

    def wrap(func: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(func)
        def cached(*args: Hashable) -> T:
            return run_cache().get((kind, *args), lambda: func(*args))

        return cached

    return wrap


@per_run("scored")
def scored_at(url: str, run_id: int) -> pd.DataFrame:
    """:func:`scored` of the database at ``url`` (for the cached functions keyed by URL)."""
    saved = _just_saved.pop((url, run_id), None)
    return as_pandas(saved if saved is not None else store.load_table(engine_at(url), run_id))


#: The rows of the run this server saved last, until its first reader takes them (one run at
#: most: a save that is never opened holds nothing more than the next save replaces).
_just_saved: dict[tuple[str, int], pl.DataFrame] = {}


def hand_over_saved(run_id: int, rows: pl.DataFrame) -> None:
    """Give the run just saved (``rows``: :func:`scoring.store.load_table`'s frame, from the save
    itself) to the first :func:`scored` of it, which then need not read the whole run back from
    the database (most of a second on a million rows, on the way to the Overview's chart)."""
    _just_saved.clear()
    _just_saved[(database_url(), run_id)] = rows


def as_pandas(rows: pl.DataFrame) -> pd.DataFrame:
    """``rows.to_pandas()`` (:func:`scoring.store.load_scored`'s frame, the same dtypes), one
    column at a time, each polars column let go once converted, so the two whole copies of a run
    never coexist (600 MB at once on a million rows, when an Overview first loads them).
    ``rows`` is emptied: pass a frame nothing else needs."""
    if not rows.width:
        return rows.to_pandas()
    return pd.DataFrame({name: rows.drop_in_place(name).to_pandas() for name in list(rows.columns)}, copy=False)


def scored(run_id: int) -> pd.DataFrame:
    """A run's scored rows, loaded once per run and shared read-only (rows never change).

    Shared, not copied per rerun (so a click costs the same for 1,000 or 100,000 rows), and held
    in :func:`run_cache`, whose byte budget bounds how many runs stay in memory.
    """
    return scored_at(database_url(), run_id)


def saved_rows(url: str, run_id: int) -> pl.DataFrame | None:
    """The stored rows of the run this server just saved, while no reader has taken them
    (:func:`hand_over_saved`), else None: what is summed from polars need not wait for pandas."""
    return _just_saved.get((url, run_id))


def just_saved(run_id: int) -> bool:
    """Whether ``run_id`` is the run this server just saved, its rows not yet read by any page."""
    return saved_rows(database_url(), run_id) is not None


@st.cache_resource(show_spinner=False, max_entries=32)
def _summary(url: str, run_id: int) -> dict:
    # A run just saved is summed from its polars rows, before (not after) their pandas copy: the
    # Overview's first chart waits for these figures alone.
    saved = saved_rows(url, run_id)
    frame = saved if saved is not None else scored_at(url, run_id)
    return {
        "accuracy": {m: accuracy_by_domain(frame, col) for m, col in METRICS.items()},
        "buckets": bucket_counts(frame),
        "mcnemar": mcnemar(frame),
        "domains": _values(frame, "Domain"),
        **_by_language(frame),
    }


def _values(frame: pd.DataFrame | pl.DataFrame, column: str) -> list:
    """The distinct values of ``frame[column]`` sorted as text (a pandas or a polars frame)."""
    return sorted(list(frame[column].unique()), key=str)


def _by_language(frame: pd.DataFrame | pl.DataFrame) -> dict:
    """For a run whose rows are in more than one language: the languages, each metric's accuracy
    and the buckets per language (Agreement and the Overview show them beside the domains)."""
    languages = _values(frame, "language") if "language" in frame.columns else []
    if len(languages) < 2:
        return {"languages": languages}
    return {
        "languages": languages,
        "accuracy_by_language": {m: accuracy_by_domain(frame, col, "language") for m, col in METRICS.items()},
        "buckets_by_language": bucket_counts(frame, "language"),
    }


def summary(run_id: int) -> dict:
    """Deterministic-metric summaries of a run (accuracy per domain, buckets, McNemar)."""
    return _summary(database_url(), run_id)


@per_run("search")
def _search_index(url: str, run_id: int) -> search.SearchIndex:
    return search.build_index(scored_at(url, run_id))


def search_index(run_id: int) -> search.SearchIndex:
    """The run's rows prepared for text search, built once per run (rows never change)."""
    return _search_index(database_url(), run_id)


@per_run("rows_of_item")
def _rows_of_item(url: str, run_id: int) -> dict[str, list[int]]:
    rows: dict[str, list[int]] = {}
    for pos, key in enumerate(scored_at(url, run_id)["item_key"].to_numpy(dtype=object)):
        rows.setdefault(key, []).append(pos)
    return rows


def rows_of_item(run_id: int) -> dict[str, list[int]]:
    """Item key -> the run's rows holding it (positions in file order; identical rows share a
    key), built once per run."""
    return _rows_of_item(database_url(), run_id)


#: What every page says while the database cannot be reached (a stopped server, a lost network).
UNREACHABLE = (
    "The database cannot be reached right now, so nothing can be saved or read. What is on screen "
    "stays; a mark given now is not saved. Once the database is back, press or click again: no "
    "restart is needed."
)


def unreachable() -> bool:
    """Whether the last read of the database in this session failed to reach it."""
    return bool(st.session_state.get("db_unreachable"))
