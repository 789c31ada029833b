"""Who is reviewing: the way reviewers are known here (sign-in, a proxy's header, a typed name),
the name marks are saved under, the languages they read, why a session cannot mark, the sidebar's
identity panel, and what double-blind review hides from this reviewer.

Apart from :mod:`ui.state` (the engine, read only for double-blind) because it is about the
person, not the data: every page asks it who marks and what they may see (read once per page
run: :func:`visibility`), the sidebar draws it. Named ``identity``, not
``reviewer``, so that the pages' own ``reviewer`` (the name in force) does not hide it.
"""

from __future__ import annotations

import streamlit as st

from scoring import review, store
from scoring.core.language_names import CANONICAL_LANGUAGES
from scoring.review import Visibility, reader_languages
from scoring.review import roles as identity
from scoring.store import RunInfo, read_secrets
from ui import run_choice, state
from ui.display import md_escape

REVIEWER_PARAM = "reviewer"
REVIEWER_KEY = "reviewer"  # session key (not a widget): the name in force
REVIEWER_FIELD = "reviewer_name"  # the sidebar text field
REVIEWER_ERROR = "reviewer_error"
SCRIPT_RUNS = "script_runs"  #: session key app.py counts its runs under
READS_KEY = "reader_languages"  # session key (not a widget): (name, languages, script run) last read
READS_FIELD = "reader_languages_field"  # the sidebar's "Languages I read"
READS_ERROR = "reader_languages_error"


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
    """Why this session has no reviewer (:func:`scoring.review.roles.cannot_mark`)."""
    config = identity_config()
    if config.mode == "signin":
        return identity.cannot_mark(config, (signed_in_user() or "").strip())
    if config.mode == "header":
        name, problem = identity.from_header(dict(st.context.headers), config)
        return identity.cannot_mark(config, name, problem)
    return identity.cannot_mark(config, str(st.session_state.get(REVIEWER_KEY, "")))


VISIBILITY_KEY = "visibility"  #: session key: (the page run it was read in, the record)


def visibility() -> Visibility:
    """What this viewer may see during double-blind review (:mod:`scoring.review.visibility`, the
    one rule), read once per page run: app.py asks first, before the page; every later ask in the
    same run (a page asking per run, a fragment's rerun) gets the same record."""
    run = st.session_state.get(SCRIPT_RUNS)
    held = st.session_state.get(VISIBILITY_KEY)
    if run is not None and held is not None and held[0] == run:
        return held[1]
    name = reviewer()
    try:
        seen = review.read_visibility(state.engine(), identity_config(), name)
    except store.DatabaseError as exc:  # unreachable: the record read last for this viewer, as the run list does
        found = store.describe_failure(exc)
        if held is None or held[1].viewer != name or found is None or not found.outage:
            raise  # app.py names it; nothing is shown on a guess
        seen = held[1]
    st.session_state[VISIBILITY_KEY] = (run, seen)
    return seen


def others_hidden(run_id: int) -> bool:
    """Whether this reviewer may not see other reviewers' verdicts on this run, nor any figure
    built on them: some of it is under double-blind review and they are not an adjudicator (with
    no adjudicators configured, everyone is one, as on one machine)."""
    return visibility().others_hidden(run_id)


BLIND_NOTE = (
    "Double-blind review is on for this run: other reviewers' verdicts (and, row by row, the "
    "metrics' and the judge's) are shown to adjudicators only, so that no reviewer is swayed."
)
WITHHELD = " Everything on this page is built on reviewers' verdicts, so it is shown to adjudicators only until then."


def withhold_page(title: str, run: RunInfo | None, applies_rule: bool) -> bool:
    """The navigation's gate (app.py): whether the page is withheld whole from this viewer
    (:meth:`~scoring.review.visibility.Visibility.withholds`); if so its title and why are shown
    in its place. A page that does not say it applies the rule itself is withheld on a run whose
    verdicts the viewer may not see: a page added later is blind by default."""
    if not visibility().withholds(run.id if run is not None else None, applies_rule):
        return False
    st.title(md_escape(f"{title}: {run.name}" if run is not None else title))  # a run's name is dataset text
    st.info(BLIND_NOTE + WITHHELD)
    return True


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
    if name:
        languages_field(name)
    role = " · adjudicator" if name and config.adjudicators is not None and config.may_adjudicate(name) else ""
    st.caption(f"Identity: {config.label}{role}")


def reads() -> tuple[str, ...]:
    """The languages the reviewer in force reads (kept per reviewer in the database, so in every
    session): in team review they are handed only rows in those; none, any row. Read once per
    script run; while the database cannot be reached, the ones read last."""
    name = reviewer()
    if not name:
        return ()
    runs = st.session_state.get(SCRIPT_RUNS, 0)
    kept = st.session_state.get(READS_KEY)
    if kept and kept[0] == name and kept[2] == runs:
        return kept[1]
    try:
        found = reader_languages.reviewer_languages(state.engine(), name)
    except store.DatabaseError:
        found = kept[1] if kept and kept[0] == name else ()
    st.session_state[READS_KEY] = (name, found, runs)
    return found


def _on_languages_set() -> None:
    """Sidebar field callback: keep the languages for the reviewer (a bad name is refused, named)."""
    name = reviewer()
    try:
        kept = reader_languages.set_reviewer_languages(state.engine(), name, st.session_state.get(READS_FIELD) or [])
    except ValueError as exc:
        st.session_state[READS_ERROR] = f"{exc} Your languages stay as they were."
        return
    except store.DatabaseError:
        st.session_state[READS_ERROR] = "The database cannot be reached: your languages were not saved."
        return
    st.session_state[READS_KEY] = (name, kept, st.session_state.get(SCRIPT_RUNS, 0))


def languages_field(name: str) -> None:
    """The sidebar's "Languages I read" for ``name``: the languages kept for them (any spelling of a
    language the table knows is offered by its name; another can be typed)."""
    mine = reads()
    known = {lang for run in run_choice.known_runs() for lang in run.languages}
    options = sorted({*CANONICAL_LANGUAGES.values(), *known, *mine}, key=str.casefold)
    st.session_state[READS_FIELD] = list(mine)
    st.multiselect(
        "Languages I read",
        options,
        key=READS_FIELD,
        on_change=_on_languages_set,
        accept_new_options=True,
        placeholder="Any language",
        help=md_escape(
            f"In team review {name} is handed only rows in these languages (a Tamil row goes to people who "
            "read Tamil); none: any row. Kept for this name in the database, on every device."
        ),
    )
    error = st.session_state.pop(READS_ERROR, None)
    if error:
        st.error(md_escape(error))


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
        "Reviewer name",
        key=REVIEWER_FIELD,
        on_change=on_reviewer_typed,
        help="Marks in the review queue are saved under this name (kept for the whole session and in the URL).",
    )
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
