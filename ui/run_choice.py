"""Which run the pages show: the runs to choose from, the one selected (kept in the URL as
``?run=``, a link to an archived or missing run said so), and the stop on an empty database.

Apart from :mod:`ui.state` (which it reads the engine from) because every page and the sidebar's
picker share this choice, while the cached data below it knows nothing of a selection.
"""

from __future__ import annotations

import streamlit as st

from scoring import store
from ui import state

RUN_PARAM = "run"
#: The session's choice to see the sample runs beside its own (the sidebar's toggle).
SHOW_SAMPLES = "show_samples"
SHOW_SAMPLES_LABEL = "Show the sample runs"


def select_run(run_id: int) -> None:
    """Make ``run_id`` the selected run and put it in the URL so a refresh lands on it."""
    st.session_state["run_id"] = run_id
    st.query_params[RUN_PARAM] = str(run_id)


def resolve_run() -> tuple[int | None, str | None]:
    """The run to show: ``?run=`` if it exists, else the session's, else the newest. A link to a
    sample run the session hides opens it, and shows the samples for the session (the sidebar's
    toggle turned on).

    Returns the id and a warning when the URL named a run that does not exist. Every page calls
    this (through :func:`selected_run`), so a page works even when run on its own.
    """
    warning = None
    wanted: int | None = None
    raw = st.query_params.get(RUN_PARAM)
    if raw is not None:
        try:
            wanted = int(raw)
        except ValueError:
            wanted = None
        if wanted in {r.id for r in hidden_samples()}:  # a link to a sample opens it, samples shown
            st.session_state[SHOW_SAMPLES] = True
    ids = [r.id for r in known_runs()]
    if raw is not None and wanted not in ids:
        archived = wanted is not None and store.archived_at(state.engine(), wanted) is not None
        warning = (
            f"Run {raw} is archived (restore it on the Upload page); showing the newest run."
            if archived
            else f"Run {raw} does not exist; showing the newest run."
        )
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


def known_runs() -> list[store.RunInfo]:
    """Every page's choices: the complete runs not archived, through the one rule that leaves the
    bundled samples out once the database holds a run of the team's own, unless this session
    asked to see them (:func:`scoring.store.shown_runs`)."""
    return store.shown_runs(listed_runs(), bool(st.session_state.get(SHOW_SAMPLES)))


def hidden_samples() -> list[store.RunInfo]:
    """The sample runs :func:`known_runs` leaves out for this session (none while they are shown)."""
    shown = {r.id for r in known_runs()}
    return [r for r in listed_runs() if r.id not in shown]


def listed_runs() -> list[store.RunInfo]:
    """The complete runs not archived, samples included, read once per script run; while the
    database cannot be reached, the list read last (so the page still shows what it showed) and
    :func:`ui.state.unreachable` says so."""
    cached = st.session_state.get("_runs_this_run")
    if cached is not None and cached[0] == _run_counter():
        return cached[1]
    try:
        runs = store.listed_runs(state.engine())
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


def forget_runs() -> None:
    """Read the run list again on the next call (after this script run changed it)."""
    st.session_state.pop("_runs_this_run", None)


def _run_counter() -> int:
    """A number that changes on every script run of this session (set in app.py)."""
    return int(st.session_state.get("script_runs", 0))


def require_run() -> store.RunInfo:
    """The selected run; on an empty database the page says where to start and stops."""
    run = selected_run()
    if run is None:
        st.info("No run yet: upload a responses file on the Upload page.")
        st.stop()
    return run
