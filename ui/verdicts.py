"""The reviewers' verdicts as the pages read them: every reviewer's current verdict on a run, the
final verdict per row (human, judge, pending), and the whole-run summaries built on them.

Keyed by the verdicts' revision (:func:`scoring.review.revision`) and the judge's
(:func:`ui.judge_state.judge_revision`), so each is recomputed only after a new mark or judge
batch; above :mod:`ui.judge_state`, whose labels the final verdicts use.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from scoring import review
from scoring.store import database_url
from ui import judge_state, state


@state.per_run("current")
def current_at(url: str, run_id: int, verdict_rev: int) -> pd.DataFrame:
    """:func:`current_verdicts` of the database at ``url`` at verdict revision ``verdict_rev``."""
    return review.current_verdicts(state.engine_at(url), state.scored_at(url, run_id)["item_key"])


def current_verdicts(run_id: int) -> pd.DataFrame:
    """Every reviewer's current verdict on the run's items; re-read only after a new mark."""
    return current_at(database_url(), run_id, review.revision(state.engine()))


@state.per_run("final")
def final_at(url: str, run_id: int, verdict_rev: int, judge_rev: int, settles: bool) -> pd.DataFrame:
    """:func:`final_frame` of the database at ``url`` at the given revisions and judge switch: the
    run's verdict table (:mod:`scoring.review.verdict_table`), the one the estimate and export read."""
    table = review.verdict_table(
        state.engine_at(url), run_id, settles, scored=state.scored_at(url, run_id), revs=(verdict_rev, judge_rev)
    )
    return table.final


def final_frame(run_id: int) -> pd.DataFrame:
    """Scored rows with human, judge and final verdicts; recomputed only when verdicts change."""
    eng = state.engine()
    return final_at(
        database_url(), run_id, review.revision(eng), judge_state.judge_revision(), judge_state.judge_settles()
    )


@st.cache_resource(show_spinner=False, max_entries=8)
def _verdict_summary(url: str, run_id: int, verdict_rev: int, judge_rev: int, settles: bool) -> dict:
    # The table final_at reads (the same build), summed without building its per-row frame.
    return summed_table(url, run_id, (verdict_rev, judge_rev), settles).summaries()


def summed_table(url: str, run_id: int, revs: tuple[int, int], settles: bool = False) -> review.VerdictTable:
    """The run's verdict table for figures summed over its rows: a run just saved is built from
    its polars rows (the table keeps the few columns the sums read), its pandas copy left for later
    readers (the Overview's chart need not wait for a million rows' conversion); any other from
    the pages' rows."""
    engine = state.engine_at(url)
    saved = state.saved_rows(url, run_id)
    if saved is not None:
        return review.verdict_table(engine, run_id, settles, revs=revs, summary_rows=saved)
    return review.verdict_table(engine, run_id, settles, scored=state.scored_at(url, run_id), revs=revs)


def verdict_summary(run_id: int) -> dict:
    """Adjudicated accuracy, judge accuracy, metric precision and agreement with the human and
    judge verdicts: whole-run work, recomputed only when verdicts change."""
    eng = state.engine()
    return _verdict_summary(
        database_url(), run_id, review.revision(eng), judge_state.judge_revision(), judge_state.judge_settles()
    )
