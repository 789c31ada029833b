"""Cached engine and per-run data, the selected run and the reviewer's name."""

from __future__ import annotations

import pandas as pd
import streamlit as st
from sqlalchemy import Engine

from scoring import store
from scoring.db import database_url, make_engine
from scoring.report import METRICS, accuracy_by_domain, bucket_counts, mcnemar

RUN_PARAM = "run"


@st.cache_resource(show_spinner=False)
def _engine(url: str) -> Engine:
    engine = make_engine(url)
    store.ensure_sample(engine)
    return engine


def engine() -> Engine:
    """One engine per database URL for the whole server (the URL is re-read so tests can switch)."""
    return _engine(database_url())


@st.cache_resource(show_spinner=False, max_entries=16)
def _scored(url: str, run_id: int) -> pd.DataFrame:
    return store.load_scored(_engine(url), run_id)


def scored(run_id: int) -> pd.DataFrame:
    """A run's scored rows, loaded once per run and shared read-only (rows never change).

    ``cache_resource`` rather than ``cache_data``: no pickled copy per rerun, so a click costs
    the same for 1,000 or 100,000 rows.
    """
    return _scored(database_url(), run_id)


@st.cache_resource(show_spinner=False, max_entries=32)
def _summary(url: str, run_id: int) -> dict:
    frame = _scored(url, run_id)
    return {
        "accuracy": {m: accuracy_by_domain(frame, col) for m, col in METRICS.items()},
        "buckets": bucket_counts(frame),
        "mcnemar": mcnemar(frame),
        "domains": sorted(frame["Domain"].unique().tolist(), key=str),
    }


def summary(run_id: int) -> dict:
    """Deterministic-metric summaries of a run (accuracy per domain, buckets, McNemar)."""
    return _summary(database_url(), run_id)


def select_run(run_id: int) -> None:
    """Make ``run_id`` the selected run and put it in the URL so a refresh lands on it."""
    st.session_state["run_id"] = run_id
    st.query_params[RUN_PARAM] = str(run_id)


def selected_run() -> store.RunInfo | None:
    run_id = st.session_state.get("run_id")
    return store.get_run(engine(), run_id) if run_id is not None else None


def reviewer() -> str:
    """The reviewer's name: signed-in user when sign-in is configured, else the sidebar name."""
    return str(st.session_state.get("reviewer_name", "")).strip()
