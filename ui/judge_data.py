"""The Judge page's cached data: the rows a judge run would cover (whole run, one bucket, the rows
still pending review), its preflight (count, cost, cached), and the judge's accuracy per domain.

Above :mod:`ui.verdicts` because the pending scope follows the reviewers' marks; nothing below
imports it.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from scoring import judge, review
from scoring.core.report import COMBINED
from scoring.store import database_url
from ui import judge_state, state, verdicts

JUDGE_SCOPES = ("Whole run", "One bucket", "Rows still pending review")


@state.per_run("judge_items")
def _judge_items(url: str, run_id: int, scope: str, bucket: str, verdict_rev: int) -> list:
    frame = state.scored_at(url, run_id)
    if scope == "One bucket":
        frame = frame[frame["bucket"] == bucket]
    elif scope == "Rows still pending review":
        final = verdicts.final_at(url, run_id, verdict_rev, 0, False)
        frame = frame[(final["final_source"] == "pending").to_numpy()]
    return judge.items_from_frame(frame)


def judge_items(run_id: int, scope: str, bucket: str) -> list:
    """The rows a judge run would cover; the pending scope follows the reviewers' marks."""
    rev = review.revision(state.engine()) if scope == "Rows still pending review" else 0
    return _judge_items(database_url(), run_id, scope, bucket, rev)


@st.cache_resource(show_spinner=False, max_entries=16)
def _judge_preflight(
    url: str, run_id: int, scope: str, bucket: str, verdict_rev: int, judge_rev: int, settings_key: str, _settings
):
    return judge.preflight(state.engine_at(url), _settings, _judge_items(url, run_id, scope, bucket, verdict_rev))


def judge_preflight(run_id: int, scope: str, bucket: str, settings):
    """Preflight of a judge run, recomputed only when the scope, settings or stored verdicts change.

    The key is left out of the cache key on purpose (it changes nothing the preflight reports).
    """
    rev = review.revision(state.engine()) if scope == "Rows still pending review" else 0
    key = json.dumps(
        {
            "model": settings.model,
            **settings.output_settings(),
            "prices": [settings.price_in_per_m, settings.price_out_per_m],
        },
        sort_keys=True,
    )
    return _judge_preflight(database_url(), run_id, scope, bucket, rev, judge_state.judge_revision(), key, settings)


@st.cache_resource(show_spinner=False, max_entries=8)
def _judge_table(url: str, run_id: int, model: str, judge_rev: int) -> pd.DataFrame:
    labelled = judge.attach_judge_labels(state.engine_at(url), state.scored_at(url, run_id), model=model)
    frame = pd.DataFrame([r.as_dict() for r in judge.judge_accuracy(labelled)])
    unknown = frame["n"] == 0  # no scored row: no accuracy to show ("—"), not 0.0% of nothing
    frame[["accuracy", "ci_low", "ci_high"]] = frame[["accuracy", "ci_low", "ci_high"]].astype(float).mask(unknown)
    return frame


def judge_table(run_id: int, model: str) -> pd.DataFrame:
    """Judge accuracy per domain for one model and the current prompt version (accuracy and its
    interval missing where no row is scored)."""
    return _judge_table(database_url(), run_id, model, judge_state.judge_revision())


def has_replies(table: pd.DataFrame) -> bool:
    """Whether the judge replied on any row of :func:`judge_table` (blank responses are labelled
    incorrect without being sent: they are no reply)."""
    combined = table[table["domain"] == COMBINED].iloc[0]
    return int(combined["n"]) - int(combined["blank"]) + int(combined["unparsed"]) > 0
