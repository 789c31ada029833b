"""Cached engine and per-run data, the selected run and the reviewer's name."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Hashable
from typing import TypeVar

import pandas as pd
import streamlit as st
from sqlalchemy import Engine

from scoring import judge, review, store
from scoring.core import search
from scoring.core.memo import DEFAULT_BUDGET, ByteBudgetCache
from scoring.core.report import METRICS, accuracy_by_domain, bucket_counts, mcnemar
from scoring.judge import judge_comparisons
from scoring.review import ReviewLoop, identity
from scoring.store import database_url, judge_cache, judge_choice, make_engine, read_secrets
from ui.display import md_escape

T = TypeVar("T")

RUN_PARAM = "run"
REVIEWER_PARAM = "reviewer"
REVIEWER_KEY = "reviewer"  # session key (not a widget): the name in force
REVIEWER_FIELD = "reviewer_name"  # the sidebar text field
REVIEWER_ERROR = "reviewer_error"


@st.cache_resource(show_spinner=False)
def _engine(url: str) -> Engine:
    engine = make_engine(url)
    store.ensure_sample(engine)
    return engine


def engine() -> Engine:
    """One engine per database URL for the whole server (the URL is re-read so tests can switch)."""
    return _engine(database_url())


CACHE_SETTING = "REVIEW_CACHE_MB"


def cache_budget() -> int:
    """Bytes the per-run cache may hold: ``REVIEW_CACHE_MB`` (environment, then secrets), else 1 GiB."""
    raw = os.environ.get(CACHE_SETTING) or read_secrets().get(CACHE_SETTING)
    try:
        return int(float(raw) * 1024**2) if raw not in (None, "") else DEFAULT_BUDGET
    except (TypeError, ValueError):
        return DEFAULT_BUDGET


@st.cache_resource(show_spinner=False)
def run_cache() -> ByteBudgetCache:
    """One byte-bounded cache per server for everything that grows with a run's size (rows,
    adjudicated frames, verdicts, scopes, search indexes): many runs open never exceed it."""
    return ByteBudgetCache(cache_budget())


def _per_run(kind: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Cache a function of (url, run_id, ...) in :func:`run_cache` under ``kind``."""

    def wrap(func: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(func)
        def cached(*args: Hashable) -> T:
            return run_cache().get((kind, *args), lambda: func(*args))

        return cached

    return wrap


@_per_run("scored")
def _scored(url: str, run_id: int) -> pd.DataFrame:
    return store.load_scored(_engine(url), run_id)


def scored(run_id: int) -> pd.DataFrame:
    """A run's scored rows, loaded once per run and shared read-only (rows never change).

    Shared, not copied per rerun (so a click costs the same for 1,000 or 100,000 rows), and held
    in :func:`run_cache`, whose byte budget bounds how many runs stay in memory.
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


def resolve_run() -> tuple[int | None, str | None]:
    """The run to show: ``?run=`` if it exists, else the session's, else the newest.

    Returns the id and a warning when the URL named a run that does not exist. Every page calls
    this (through :func:`selected_run`), so a page works even when run on its own.
    """
    runs = known_runs()
    ids = [r.id for r in runs]
    warning = None
    wanted: int | None = None
    raw = st.query_params.get(RUN_PARAM)
    if raw is not None:
        try:
            wanted = int(raw)
        except ValueError:
            wanted = None
        if wanted not in ids:
            archived = wanted is not None and store.archived_at(engine(), wanted) is not None
            warning = (f"Run {raw} is archived (restore it on the Upload page); showing the newest run." if archived
                       else f"Run {raw} does not exist; showing the newest run.")  # fmt: skip
            wanted = None
    if wanted is None and st.session_state.get("run_id") in ids and raw is None:
        wanted = st.session_state["run_id"]
    if wanted is None and ids:
        wanted = ids[0]
    if wanted is not None:
        select_run(wanted)
    return wanted, warning


def selected_run() -> store.RunInfo | None:
    run_id, _ = resolve_run()
    if run_id is None:
        return None
    return next((r for r in known_runs() if r.id == run_id), None)


#: What every page says while the database cannot be reached (a stopped server, a lost network).
UNREACHABLE = (
    "The database cannot be reached right now, so nothing can be saved or read. What is on screen "
    "stays; a mark given now is not saved. Once the database is back, press or click again: no "
    "restart is needed."
)


def known_runs() -> list[store.RunInfo]:
    """The complete runs not archived (every page's choices), read once per script run; while the
    database cannot be reached, the list read last (so the page still shows what it showed) and
    :func:`unreachable` says so."""
    cached = st.session_state.get("_runs_this_run")
    if cached is not None and cached[0] == _run_counter():
        return cached[1]
    try:
        runs = store.listed_runs(engine())
    except store.DatabaseError as exc:
        found = store.describe_failure(exc)
        if "known_runs" not in st.session_state or (found is not None and not found.outage):
            raise  # app.py names it (a damaged file is not an outage to wait out)
        st.session_state["db_unreachable"] = True
        return st.session_state["known_runs"]
    st.session_state["known_runs"] = runs
    st.session_state["db_unreachable"] = False
    st.session_state["_runs_this_run"] = (_run_counter(), runs)
    return runs


def _run_counter() -> int:
    """A number that changes on every script run of this session (set in app.py)."""
    return int(st.session_state.get("script_runs", 0))


def unreachable() -> bool:
    """Whether the last read of the database in this session failed to reach it."""
    return bool(st.session_state.get("db_unreachable"))


def identity_config() -> identity.Identity:
    """How reviewers are known here (sign-in, a proxy's header, a typed name) and the roles."""
    return identity.identity(read_secrets())


def _typed_mode() -> bool:
    return identity_config().mode == "typed"


def reviewer() -> str:
    """Who marks are saved under: the signed-in user when sign-in is configured (``[auth]`` in
    secrets; no typed name is accepted then), else the name typed in the sidebar.

    The typed name lives in the session (kept across page switches, uploads and
    ``st.switch_page``) and is put back into the URL on every page (:func:`keep_reviewer_in_url`),
    so a refresh or a shared link restores it. A page run on its own still finds it there.
    """
    config = identity_config()
    if config.mode != "typed":
        if config.mode == "signin":
            name, problem = (signed_in_user() or "").strip(), None
        else:
            name, problem = identity.from_header(dict(st.context.headers), config)
        problem = problem or identity.refusal(config, name)
        if problem:
            st.session_state[REVIEWER_ERROR] = problem
            return ""
        return name
    if REVIEWER_KEY not in st.session_state:
        raw = str(st.query_params.get(REVIEWER_PARAM, "")).strip()
        try:
            st.session_state[REVIEWER_KEY] = review.check_reviewer(raw) if raw else ""
        except ValueError as exc:
            st.session_state[REVIEWER_KEY] = ""
            st.session_state[REVIEWER_ERROR] = str(exc)
    name = str(st.session_state[REVIEWER_KEY])
    problem = identity.refusal(config, name)
    if problem:
        st.session_state[REVIEWER_ERROR] = problem
        return ""
    return name


def why_cannot_mark() -> str:
    """Why this session has no reviewer (:func:`scoring.review.identity.cannot_mark`)."""
    config = identity_config()
    if config.mode == "signin":
        return identity.cannot_mark(config, (signed_in_user() or "").strip())
    if config.mode == "header":
        name, problem = identity.from_header(dict(st.context.headers), config)
        return identity.cannot_mark(config, name, problem)
    return identity.cannot_mark(config, str(st.session_state.get(REVIEWER_KEY, "")))


def others_hidden(run_id: int) -> bool:
    """Whether this reviewer may not see other reviewers' verdicts on this run: some of it is
    under double-blind review and they are not an adjudicator (with no adjudicators configured,
    everyone is one, as on one machine)."""
    config = identity_config()
    if config.adjudicators is None or not review.blind_buckets(engine(), run_id):
        return False
    return not config.may_adjudicate(reviewer())


BLIND_NOTE = ("Double-blind review is on for this run: other reviewers' verdicts (and, row by row, the "
              "metrics' and the judge's) are shown to adjudicators only, so that no reviewer is swayed.")


def hide_if_blind(run_id: int) -> None:
    """Stop a page that shows other reviewers' verdicts when :func:`others_hidden`."""
    if others_hidden(run_id):
        st.info(BLIND_NOTE)
        st.stop()


def identity_panel() -> None:
    """The sidebar's "who is reviewing": the way in force, the name, and any problem with it."""
    config = identity_config()
    if config.mode == "typed":
        reviewer_field()
    else:
        name = reviewer()
        st.text(f"Reviewer: {name or '(none)'}")
        error = st.session_state.pop(REVIEWER_ERROR, None)
        if error:
            st.error(md_escape(error))
    name = reviewer()
    role = " · adjudicator" if name and config.adjudicators is not None and config.may_adjudicate(name) else ""
    st.caption(f"Identity: {config.label}{role}")


def keep_reviewer_in_url() -> None:
    """Put the session's typed reviewer back into the URL (page switches drop query params)."""
    if not _typed_mode():
        return
    name = reviewer()
    if name and st.query_params.get(REVIEWER_PARAM) != name:
        st.query_params[REVIEWER_PARAM] = name
    elif not name and REVIEWER_PARAM in st.query_params:
        del st.query_params[REVIEWER_PARAM]


def on_reviewer_typed() -> None:
    """Sidebar field callback: a valid name becomes the reviewer; an invalid one is refused with
    the reason and the field goes back to the name in force, so the field always shows it."""
    typed = str(st.session_state.get(REVIEWER_FIELD, "")).strip()
    try:
        name = review.check_reviewer(typed) if typed else ""
    except ValueError as exc:
        st.session_state[REVIEWER_ERROR] = f"{exc} Marks stay saved under the previous name."
        st.session_state[REVIEWER_FIELD] = reviewer()
        return
    st.session_state.pop(REVIEWER_ERROR, None)
    st.session_state[REVIEWER_KEY] = name
    st.session_state[REVIEWER_FIELD] = name
    keep_reviewer_in_url()


def reviewer_field() -> None:
    """The sidebar's name field, always showing the name marks are saved under."""
    st.session_state[REVIEWER_FIELD] = reviewer()
    st.text_input(
        "Reviewer name", key=REVIEWER_FIELD, on_change=on_reviewer_typed,
        help="Marks in the review queue are saved under this name (kept for the whole session and in the URL).",
    )  # fmt: skip
    error = st.session_state.pop(REVIEWER_ERROR, None)
    if error:
        st.error(md_escape(error))


def signed_in_user() -> str | None:
    """The signed-in user's name or email when sign-in (``[auth]`` in secrets) is configured."""
    try:
        if not st.user.is_logged_in:
            return None
    except (AttributeError, KeyError):
        return None
    return str(st.user.get("email") or st.user.get("name") or "") or None


def require_run() -> store.RunInfo:
    """The selected run; on an empty database the page says where to start and stops."""
    run = selected_run()
    if run is None:
        st.info("No run yet: upload a responses file on the Upload page.")
        st.stop()
    return run


@_per_run("judge_labels")
def _judge_labels(url: str, run_id: int, judge_rev: int) -> dict[str, str]:
    return judge.stored_labels(_engine(url), _scored(url, run_id)["item_key"], prompt_version=None)


def judge_revision() -> int:
    """Changes after every judge batch and every judge choice (the sum of two ids that only grow,
    so it grows whenever either does); 0 only while nothing was ever judged."""
    eng = engine()
    return judge_cache.revision(eng) + judge_choice.revision(eng)


def judge_labels(run_id: int) -> dict[str, str]:
    """Latest judge label per item of the run (any model); recomputed only after a judge run."""
    return _judge_labels(database_url(), run_id, judge_revision())


def judge_suggestion(key: str) -> str | None:
    """The judge's latest label for one item, shown as a suggestion in the review queue."""
    return judge.stored_labels(engine(), [key], prompt_version=None).get(key)


def judge_settles() -> bool:
    """Whether judge labels may settle overlap_only rows (a switch on the Judge page)."""
    return bool(st.session_state.get("judge_settles", False))


@_per_run("final")
def _final(url: str, run_id: int, verdict_rev: int, judge_rev: int, settles: bool) -> pd.DataFrame:
    frame = _scored(url, run_id)
    current = _current(url, run_id, verdict_rev)
    labels = _judge_labels(url, run_id, judge_rev) if judge_rev else None
    decisions = review.adjudications(_engine(url))  # every decision (few); only this run's rows match
    return review.final_verdicts(frame, review.human_summary(current), labels, settles, decisions=decisions)


def final_frame(run_id: int) -> pd.DataFrame:
    """Scored rows with human, judge and final verdicts; recomputed only when verdicts change."""
    eng = engine()
    return _final(database_url(), run_id, review.revision(eng), judge_revision(), judge_settles())


@st.cache_resource(show_spinner=False, max_entries=8)
def _verdict_summary(url: str, run_id: int, verdict_rev: int, judge_rev: int, settles: bool) -> dict:
    final = _final(url, run_id, verdict_rev, judge_rev, settles)
    return {
        "adjudicated": review.adjudicated_accuracy(final),
        "judge": judge.judge_accuracy(final) if "judge_label" in final.columns else None,
        "precision": review.metric_precision(final),
        "human_vs_metric": {col: review.human_vs_metric(final, col) for col in ("exact_correct", "overlap_correct")},
        "judge_comparisons": judge_comparisons(final),
    }


def verdict_summary(run_id: int) -> dict:
    """Adjudicated accuracy, judge accuracy, metric precision and agreement with the human and
    judge verdicts: whole-run work, recomputed only when verdicts change."""
    eng = engine()
    return _verdict_summary(database_url(), run_id, review.revision(eng), judge_revision(), judge_settles())


@_per_run("search")
def _search_index(url: str, run_id: int) -> search.SearchIndex:
    return search.build_index(_scored(url, run_id))


def search_index(run_id: int) -> search.SearchIndex:
    """The run's rows prepared for text search, built once per run (rows never change)."""
    return _search_index(database_url(), run_id)


def leave_queue() -> None:
    """Let go of the rows the review queue held for this session, once another page opens: a
    reviewer who walks away from the queue keeps nobody else from the row on their screen. Coming
    back starts at the scope's front (what is left of it)."""
    name = reviewer()
    for key in [k for k in st.session_state if str(k).startswith("q_loop_")]:
        loop = st.session_state[key]
        if name and loop.screen is not None:
            try:
                review.release(engine(), name, [loop.screen.item_key])
            except store.DatabaseError:
                return  # unreachable: the claim expires on its own
            loop.show_nothing()
        st.session_state.pop(f"q_claimed_in_{loop.run_id}", None)


def review_loop(run_id: int) -> ReviewLoop:
    """This tab's pass through the run's queue (screens, presses taken, messages)."""
    return st.session_state.setdefault(f"q_loop_{run_id}", ReviewLoop(run_id))


@_per_run("rows_of_item")
def _rows_of_item(url: str, run_id: int) -> dict[str, list[int]]:
    rows: dict[str, list[int]] = {}
    for pos, key in enumerate(_scored(url, run_id)["item_key"].to_numpy(dtype=object)):
        rows.setdefault(key, []).append(pos)
    return rows


def rows_of_item(run_id: int) -> dict[str, list[int]]:
    """Item key -> the run's rows holding it (positions in file order; identical rows share a
    key), built once per run."""
    return _rows_of_item(database_url(), run_id)


@_per_run("scope")
def _queue_scope(url: str, run_id: int, bucket: str | None, domain: str | None, sample: int | None,
                 audit: frozenset[str] | None):  # fmt: skip
    info = store.get_run(_engine(url), run_id)
    seed = info.review_seed if info is not None else 0
    return review.queue_scope(_scored(url, run_id), bucket, domain, sample, seed=seed, keys=audit)


def queue_scope(run_id: int, bucket: str | None, domain: str | None, sample: int | None) -> review.QueueScope:
    """The review scope's row index in review order (the run's seeded random permutation),
    built once per scope (rows never change; the audit scope once per planned set, which is
    part of the key since the planner can replace it)."""
    audit = frozenset(review.audit_keys(engine(), run_id)) if bucket == review.AUDIT else None
    return _queue_scope(database_url(), run_id, bucket, domain, sample, audit)


@_per_run("current")
def _current(url: str, run_id: int, verdict_rev: int) -> pd.DataFrame:
    return review.current_verdicts(_engine(url), _scored(url, run_id)["item_key"])


def current_verdicts(run_id: int) -> pd.DataFrame:
    """Every reviewer's current verdict on the run's items; re-read only after a new mark."""
    return _current(database_url(), run_id, review.revision(engine()))


JUDGE_SCOPES = ("Whole run", "One bucket", "Rows still pending review")


@_per_run("judge_items")
def _judge_items(url: str, run_id: int, scope: str, bucket: str, verdict_rev: int) -> list:
    frame = _scored(url, run_id)
    if scope == "One bucket":
        frame = frame[frame["bucket"] == bucket]
    elif scope == "Rows still pending review":
        final = _final(url, run_id, verdict_rev, 0, False)
        frame = frame[(final["final_source"] == "pending").to_numpy()]
    return judge.items_from_frame(frame)


def judge_items(run_id: int, scope: str, bucket: str) -> list:
    """The rows a judge run would cover; the pending scope follows the reviewers' marks."""
    rev = review.revision(engine()) if scope == "Rows still pending review" else 0
    return _judge_items(database_url(), run_id, scope, bucket, rev)


@st.cache_resource(show_spinner=False, max_entries=16)
def _judge_preflight(url: str, run_id: int, scope: str, bucket: str, verdict_rev: int, judge_rev: int,
                     settings_key: str, _settings):
    return judge.preflight(_engine(url), _settings, _judge_items(url, run_id, scope, bucket, verdict_rev))


def judge_preflight(run_id: int, scope: str, bucket: str, settings):
    """Preflight of a judge run, recomputed only when the scope, settings or stored verdicts change.

    The key is left out of the cache key on purpose (it changes nothing the preflight reports).
    """
    rev = review.revision(engine()) if scope == "Rows still pending review" else 0
    key = json.dumps({"model": settings.model, **settings.output_settings(),
                      "prices": [settings.price_in_per_m, settings.price_out_per_m]}, sort_keys=True)
    return _judge_preflight(database_url(), run_id, scope, bucket, rev, judge_revision(), key, settings)


@st.cache_resource(show_spinner=False, max_entries=8)
def _judge_table(url: str, run_id: int, model: str, judge_rev: int) -> pd.DataFrame:
    labelled = judge.attach_judge_labels(_engine(url), _scored(url, run_id), model=model)
    return pd.DataFrame([r.as_dict() for r in judge.judge_accuracy(labelled)])


def judge_table(run_id: int, model: str) -> pd.DataFrame:
    """Judge accuracy per domain for one model and the current prompt version."""
    return _judge_table(database_url(), run_id, model, judge_revision())
