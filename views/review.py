"""The review queue: one row at a time, marked Correct or Wrong, saved the moment it is given.

Which review mode applies, which row is handed out (claimed, held, let go, resumed) and what each
press or click does are decided by :class:`scoring.review.session.ReviewSession`, one method per
action; this page only lays out the scope controls, the row, the buttons, the messages, the end of
a scope and "My verdicts".
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from scoring import review, store
from scoring.core import search
from scoring.core.protocols import BUCKETS
from scoring.core.report import COMBINED
from scoring.review import DOUBLE_BLIND, SECOND_OPINION, SPLIT, Shown, address, job_sentence, my_verdicts
from ui import guidelines_panel as guidelines
from ui import identity, judge_state, keys, queue_state, run_choice, state
from ui.display import alert, compact_queue_page, md_escape, show_row, verdict_caption
from ui.queue_state import ALL_DOMAINS, ALL_LANGUAGES

VIEWS = (queue_state.VIEW_LABELS[address.QUEUE], queue_state.VIEW_LABELS[address.MY_VERDICTS])
ALERTS = {"saved": "success", "info": "info", "refused": "warning", "error": "error"}
MY_LABELS = {"reviewed_at": "marked at (UTC)", "marked_in_run": "marked in run", "answer": "golden answer"}

run = run_choice.require_run()
engine = state.engine()
frame = state.scored(run.id)
summary = state.summary(run.id)
reviewer = identity.reviewer()
session = queue_state.review_session(run.id)

st.title(md_escape(f"Review queue: {run.name}"))
session.cannot_mark = "" if reviewer else identity.why_cannot_mark()
try:  # how long a row must be on screen before a verdict pressed on it counts (REVIEW_MIN_SHOWN_MS)
    session.min_shown_ms = review.min_shown_ms(store.read_secrets())
except ValueError as exc:
    alert("error", f"{exc} Until it is mended, a press counts from {session.min_shown_ms:.0f} ms.")
compact_queue_page()
if not reviewer:
    st.warning(md_escape(session.cannot_mark))

# The place (scope, filters, mode, view) lives in the page's address: a refresh, a sidebar round trip
# and a link open the same place (ui.queue_state.restore_address puts it into the controls below).
# The audit rows last read while the database is out: the audit scope stays offered (the queue says so).
audit = session.audit(engine)
audit_size = len(audit)
scopes = [*BUCKETS, review.AUDIT] if audit_size else list(BUCKETS)
languages = summary["languages"]
for problem in queue_state.restore_address(run.id, address.Offered(scopes, summary["domains"], languages)):
    alert("warning", problem)  # a hand-edited or stale address: named, then the default

# A row opened from another page (``?row=N``, 1-based): shown next, once.
wanted = st.query_params.get("row")
if wanted is not None:
    del st.query_params["row"]
    try:
        number = int(wanted)
    except ValueError:
        number = 0
    if 1 <= number <= len(frame):
        session.open_row(number - 1)
        st.session_state["q_view"] = "Queue"
    else:
        alert("warning", f"There is no row {wanted} in this run (rows 1 to {len(frame)}).")

# One compact row of scope controls, so the row, its buttons and its fields fit a 1280x720 window
# unscrolled; the review mode's switches sit in a popover (the progress line says the mode in force).
# "Show" gets the width its two segments need (narrower, "My verdicts" was cut off at 1280 wide).
# The filters show "All" for no filter (their labels say what): "All domains" was cut to "All doma".
# The sample (estimating one bucket, rarely changed) sits in the Review mode popover, so every
# control here shows its whole text at 1280 wide; the line under them names a sample in force.
if len(languages) > 1:  # a language filter beside the domain's
    c1, c2, c6, c4, c5 = st.columns([2.5, 1.1, 1.1, 1.75, 1.3], vertical_alignment="bottom")
else:
    c1, c2, c4, c5 = st.columns([2.7, 1.4, 1.8, 1.3], vertical_alignment="bottom")
    c6 = None
mode = c5.popover("Review mode", use_container_width=True)
if st.session_state.get("q_bucket") not in scopes:
    st.session_state["q_bucket"] = address.DEFAULT_SCOPE  # first visit, or the audit set was removed
bucket_rows = summary["buckets"][COMBINED]  # rows per bucket in the run, counted once per run
bucket = c1.selectbox(
    "Scope (bucket)",
    scopes,
    key="q_bucket",
    format_func=lambda b: queue_state.scope_option(b, bucket_rows, audit_size),
    help="Two jobs. Triage: work through a bucket to settle its rows. Estimate: the audit sample, "
    "the rows the True accuracy page's planner chose, which estimate the run's true "
    "accuracy.",
)
domain = c2.selectbox(
    "Domain", [ALL_DOMAINS, *summary["domains"]], key="q_domain", format_func=lambda d: "All" if d == ALL_DOMAINS else d
)
language = (
    c6.selectbox(
        "Language",
        [ALL_LANGUAGES, *languages],
        key="q_language",
        format_func=lambda x: "All" if x == ALL_LANGUAGES else x,
        help="Only this scope's rows in one language (a sample is drawn first, then narrowed).",
    )
    if c6 is not None
    else ALL_LANGUAGES
)
sample = mode.number_input(
    "Sample of the bucket (0 = all its rows)",
    0,
    address.MAX_SAMPLE,
    step=10,
    key="q_sample",
    help="Estimate a bucket's accuracy: review a reproducible random sample of it (0 = every row).",
)
st.caption(job_sentence(bucket, sample or None))  # which job these marks serve (our words, no dataset text)


def _toggle_key(spec: review.BlindSpec) -> str:
    """``q_double_<run>_<bucket>``, then ``_<domain>`` and ``_s<k>`` for narrower scopes."""
    return (
        f"q_double_{run.id}_{spec.bucket}"
        + (f"_{spec.domain}" if spec.domain else "")
        + (f"_s{spec.sample}" if spec.sample else "")
    )


blind_scope = review.BlindSpec(bucket, None if domain == ALL_DOMAINS else domain, sample or None)
# The mode in force (the run's double-blind scopes; while unreachable, the ones last seen here).
review_mode = session.mode(engine, blind_scope, blind_audit=identity.identity_config().blind_audit)
if reviewer and identity.identity_config().may_adjudicate(reviewer):
    wider = review_mode.wider
    wanted = mode.toggle(
        md_escape(f"Double-blind for this scope ({blind_scope.label()}): each item to two reviewers, claimed in turn"),
        value=review_mode.double_blind,
        disabled=bool(wider),
        help=md_escape(f"Blind because {wider[0]} is.") if wider else None,
        key=_toggle_key(blind_scope),
    )
    if wanted != review_mode.double_blind:  # claims nothing until the adjudicator starts reviewing
        review_mode = session.set_double_blind(engine, review_mode, reviewer, wanted)
double_blind = review_mode.double_blind
elsewhere = review_mode.elsewhere
if elsewhere and not double_blind:
    mode.caption(
        md_escape(
            "Double-blind elsewhere in this run: " + "; ".join(elsewhere) + ". Choose that scope to review it blind."
        )
    )
if double_blind:
    mode.caption(
        "Double-blind review: each item goes to two reviewers, one at a time; the metrics, the judge "
        "and the other reviewer's verdict are hidden. The item shown is held for you for "
        f"{int(review.CLAIM_TTL.total_seconds() // 60)} minutes."
    )
    chose_blind = queue_state.last_switch(run.id, "blind")  # kept in the address for when it is off again
else:
    chose_blind = mode.toggle("Blind review (hide metric verdicts and judge suggestion)", key="q_blind")
    review_mode = review_mode.chosen(blind=chose_blind)
blind = review_mode.blind
# Blind means blind everywhere: a row of any double-blind scope (the audit, a bucket, a sample) is
# shown blind in every scope that serves it, opened by a link, and in My verdicts.
# And, unless REVIEW_BLIND_AUDIT is off, the random sample is blind: the audit scope's rows wherever
# they are served, and the rows of a sampled scope; triage scopes keep the verdicts.
blind_view = review_mode.blind_rows(frame, run.review_seed, audit)
audited = review_mode.audited
if audited:
    mode.caption(
        "Blind audit: this scope is a random sample that estimates the true accuracy, so its rows are "
        "shown without the metrics' verdicts, highlighting and judge label (REVIEW_BLIND_AUDIT)."
    )
second = (
    not double_blind
    and bool(reviewer)
    and mode.toggle(
        "Second opinion: review rows another reviewer has already marked",
        key="q_second",
        help="Off (the default), reviewers of a scope get different rows, so the team's reviews add up. On, you are "
        "handed rows marked once by someone else and not by you, so agreement (kappa on the Reviewers page) can "
        "be measured on purpose.",
    )
)
# The languages the reviewer reads (sidebar): a claiming queue hands them only rows in those.
review_mode = review_mode.chosen(second_opinion=second, languages=identity.reads())
rule = review_mode.rule
minutes = int(review.CLAIM_TTL.total_seconds() // 60)
if reviewer and rule == SPLIT:
    mode.caption(
        f"Team review: reviewers of this scope get different rows, claimed in turn along the same random "
        f"order, so nobody reviews a row twice by accident; the row shown is held for you for {minutes} "
        "minutes."
    )
elif rule == SECOND_OPINION:
    mode.caption(
        "Second opinion: you are handed rows one other reviewer has marked (their verdict is not shown), "
        f"each held for you for {minutes} minutes."
    )
MODE_NAMES = {DOUBLE_BLIND: "double-blind", SECOND_OPINION: "second opinion", SPLIT: "team split"}
READS = f"   {review_mode.reads_line}" if review_mode.reads_line else ""  # on the card: the languages you read
audit_note = ", blind audit" if audited else ""
# Said on the progress line (in the fragment), not on a line of its own: one line less above the card.
MODE_LINE = f"Mode: {MODE_NAMES[rule]}{', blind' if blind and not double_blind else ''}{audit_note}"
view = c4.segmented_control("Show", VIEWS, default=VIEWS[0], key="q_view") or VIEWS[0]
scope_domain = None if domain == ALL_DOMAINS else domain
scope_language = None if language == ALL_LANGUAGES else language
second_on = second if not double_blind and reviewer else queue_state.last_switch(run.id, "second")
queue_state.keep_address(
    run.id,
    address.QueueAddress(
        bucket,
        scope_domain,
        scope_language,
        int(sample or 0),
        bool(chose_blind),
        bool(second_on),
        address.MY_VERDICTS if view == VIEWS[1] else address.QUEUE,
    ),
)


def _scope() -> review.QueueScope:
    return queue_state.queue_scope(run.id, bucket, scope_domain, sample or None, scope_language)


def _row_of(item_key: str) -> int | None:
    """The item's first row in this run (the whole-run scope index is cached per run)."""
    found = state.rows_of_item(run.id).get(item_key)
    return int(found[0]) if found else None


def _field_key(name: str, screen: int) -> str:
    """The reason or note field of ``screen``; keyed by run too, as each run's screens count from 1
    (a note typed on one run's screen 3 must not appear on another run's screen 3)."""
    return f"q_{name}_{run.id}_{screen}"


def _details(screen: int) -> tuple[str, str]:
    """The reason and note typed on ``screen`` (their widgets are keyed by screen number)."""
    return (
        st.session_state.get(_field_key("reason", screen)) or "",
        st.session_state.get(_field_key("note", screen)) or "",
    )


def _on_press() -> None:
    """Keyboard callback: every press the browser reports, applied once, in order, each to the
    row it was pressed on (a press from a run shown just before this one goes to that run)."""
    for run_id, batch in keys.presses_by_run(keys.presses(), run.id).items():
        if run_id == run.id:
            session.take_presses(batch, engine, reviewer, _details, _row_of)
        else:  # that run's fields have left the page: its session keeps what they held
            queue_state.review_session(run_id).take_presses(batch, engine, reviewer)


def _keyboard() -> None:
    """The keyboard, acknowledging every press this tab's queues have taken; mounted last, so
    reaching it means this run drew what the presses did (the next action or row replaces it)."""
    keys.keyboard(queue_state.acked(), _on_press)
    session.feedback_drawn()


def _on_click(action: str, screen: int) -> None:
    """Button callback: the click carries the screen it was given on, like a key press."""
    session.act(engine, reviewer, action, screen, *_details(screen), row_of=_row_of)


def _go_to_scope(bucket_name: str, domain_name: str | None) -> None:
    st.session_state["q_bucket"] = bucket_name
    st.session_state["q_domain"] = domain_name or ALL_DOMAINS
    st.session_state["q_language"] = ALL_LANGUAGES
    st.session_state["q_sample"] = 0
    st.session_state["q_rerun_app"] = True  # the scope pickers live outside the fragment


def _open(row_idx: int) -> None:
    session.open_row(row_idx)
    st.session_state["q_view"] = "Queue"


def _show_feedback(said: list[review.loop.Feedback]) -> None:
    """Messages as boxes: every message when no card is shown, else the errors alone (the rest go
    on the card's status line, :func:`_status`)."""
    for item in said:
        alert(ALERTS.get(item.kind, "info"), item.text)


def _status(said: list[review.loop.Feedback]) -> tuple[str, str]:
    """The card's one status line: what the last presses did, a refusal first (it asks the reviewer
    to act), on the row where the reviewer is looking."""
    ordered = sorted(said, key=lambda f: f.kind != "refused")
    return (ordered[0].kind if ordered else "saved", "  ·  ".join(f.text for f in ordered))


def _start_fields(screen: int, item_key: str) -> None:
    """A new showing's reason and note start from what was typed on the row before (an undo took
    it off the screen, a skip kept the note, or a mark is being replaced): nothing typed is lost."""
    reason_key, note_key = _field_key("reason", screen), _field_key("note", screen)
    if reason_key in st.session_state or note_key in st.session_state:
        return
    reason, note = session.typed_before(engine, reviewer, item_key)
    st.session_state[reason_key] = reason if reason in review.REASONS else ""
    st.session_state[note_key] = note


def _finished(scope: review.QueueScope) -> None:
    """The end of a scope: counts, and the scopes that still have work. Nothing is marked."""
    mine = my_verdicts.my_verdicts(frame, scope, engine, reviewer)
    counts = my_verdicts.verdict_counts(mine)
    st.success(
        f"Done: every row of this scope has your verdict ({len(scope)} rows: {counts['correct']} correct, "
        f'{counts["wrong"]} wrong). Open "My verdicts" to revisit one.'
    )
    _scopes_left(team=False)


def _scopes_left(team: bool) -> None:
    """Buttons to the scopes of the run with work left (the audit sample first, while it has rows
    waiting): the rows without the reviewer's verdict, or, for a team splitting its scopes, without
    anyone's; only the rows in the reviewer's languages."""
    todo = my_verdicts.open_scopes(frame, engine, reviewer, audit, team=team, languages=review_mode.languages)
    if todo.empty:
        st.text("No row of this run is left without " + ("a verdict." if team else "your verdict."))
        return
    st.text(f"Scopes of this run with rows still waiting for {'a' if team else 'your'} verdict:")
    per_bucket = todo.groupby("bucket", sort=False)["remaining"].sum()
    # Button labels render Markdown: a domain's name is dataset text, shown literally.
    for i, (name, left) in enumerate(per_bucket.items()):
        label = "Estimate: audit sample" if name == review.AUDIT else f"{name}, all domains"
        text = md_escape(f"{label}: {left} rows left")
        st.button(text, key=f"q_todo_b{i}", on_click=_go_to_scope, args=(str(name), None))
    here = todo[(todo["bucket"] == bucket) & (todo["bucket"] != review.AUDIT)]
    for i, row in enumerate(here.itertuples(index=False)):
        st.button(
            md_escape(f"{row.bucket}, {row.Domain}: {row.remaining} rows left"),
            key=f"q_todo_d{i}",
            on_click=_go_to_scope,
            args=(str(row.bucket), str(row.Domain)),
        )


def _card(row: pd.Series, screen: int, offline: bool = False, said: list[review.loop.Feedback] | None = None) -> None:
    """The row on ``screen`` and its buttons. The row's block carries the screen a key press names
    (:func:`ui.keys.row_marker`); everything is read from the database before anything is drawn,
    and the lines above the row (its number among them) sit in the row's own block, so the redraw
    from one row to the next is one replacement: the number a reviewer reads and the row a key
    press names change together, never a moment without a row. Its first line says what the last
    presses did (``said``), one line high even when empty, so the row never moves; every line
    above the row is one line high. The keyboard, mounted right after, is the line under the
    buttons."""
    language = f"   Language: {row['language']}" if row.get("language") else ""  # text, escaped by show_row
    place = f"Row {int(row['row_idx']) + 1} of the run   Domain: {row['Domain']}{language}{READS}"
    row_blind = blind_view.hides(row["item_key"])
    # One line each (a longer one ends in "…", its whole text in the tooltip): the place, then the
    # metrics' verdicts or why they are hidden.
    lines = [place] if row_blind else [place, verdict_caption(row, with_domain=False)]
    if row_blind and not blind:
        lines.append(blind_view.why(row["item_key"]) or "")
    if not row_blind:
        suggestion = None if offline else judge_state.judge_suggestion(run.id, row["item_key"])
        if suggestion:
            lines.append(f"Judge suggests: {suggestion}")
    given = session.given(engine, reviewer, str(row["item_key"])) if reviewer and not offline else None
    if given is not None:
        where = (
            "" if given.other_run is None else (f" (marked in run #{given.other_run}, which holds the identical row)")
        )
        lines.append(f"Your current verdict: {given.verdict}{where}. Marking the row again replaces it.")
    if reviewer and not offline:
        _start_fields(screen, str(row["item_key"]))
    show_row(
        row,
        plain=row_blind,
        data=keys.row_marker(run.id, screen, str(row["item_key"])),
        lines=lines,
        status=_status(said or []),
    )
    # The buttons come right after the row, the reason and note beside them: one line, so all of it
    # is visible unscrolled on a 1280x720 window (the fields' labels are their placeholders).
    bar = st.container(horizontal=True, vertical_alignment="center", key="q_bar")
    disabled = not reviewer
    for label, action, key, kind in (
        ("Correct (Y)", "correct", "q_yes", "primary"),
        ("Wrong (N)", "wrong", "q_no", "secondary"),
        ("Skip (S)", "skip", "q_skip", "secondary"),
        ("Undo (U)", "undo", "q_undo", "secondary"),
    ):
        bar.button(label, key=key, type=kind, disabled=disabled, on_click=_on_click, args=(action, screen))
    bar.selectbox(
        "Reason (optional)",
        ["", *review.REASONS],
        key=_field_key("reason", screen),
        width=170,
        format_func=lambda r: r or "Reason (optional)",
        label_visibility="collapsed",
    )
    bar.text_input(
        "Note (optional)", key=_field_key("note", screen), placeholder="Note (optional)", label_visibility="collapsed"
    )


def _offline() -> None:
    """The database cannot be reached: say so, keep the row that was on screen (its verdict and
    the judge's are not read), and keep listening for presses, which will say "Not saved"."""
    st.session_state["db_unreachable"] = True
    st.error(state.UNREACHABLE)
    screen = session.offline_screen()
    said = session.feedback_to_show()
    if screen is None:
        _show_feedback(said)
    else:
        _show_feedback([f for f in said if f.kind == "error"])
        _card(frame.iloc[screen.row_idx], screen.number, offline=True, said=[f for f in said if f.kind != "error"])
    _keyboard()


def _nothing_free() -> str:
    """Why a claiming queue hands out no row now, per rule."""
    held = f"or is held by another reviewer (a held row comes back if it is not marked within {minutes} minutes)"
    if rule == DOUBLE_BLIND:
        return (
            f"No item of this scope needs your verdict right now: each has {review.VERDICTS_NEEDED} verdicts, "
            f"your own, {held}."
        )
    if rule == SECOND_OPINION:
        return (
            f"No row of this scope is waiting for a second opinion from you: none is marked by exactly one "
            f"other reviewer and free (each has no verdict yet, two, or yours, {held}). Turn Second opinion "
            "off to review rows nobody has marked."
        )
    reads = review_mode.languages
    mine = f" in your languages ({md_escape(', '.join(reads))}; set in the sidebar)" if reads else ""  # as typed
    return (
        f"No row of this scope{mine} is waiting for a reviewer: each has a verdict, yours or a teammate's, "
        f"{held}. Turn on Second opinion to review rows others marked, or choose another scope."
    )


@st.fragment
def queue_view() -> None:
    """Only this fragment reruns on a mark, and it touches one row."""
    if st.session_state.pop("q_rerun_app", False):
        st.rerun()
    scope = _scope()
    try:
        prog = session.progress(engine, scope, reviewer, review_mode)
    except store.DatabaseError:
        _offline()
        return
    st.session_state["db_unreachable"] = False
    done, total = prog.done, prog.total
    who = "anyone: the team shares this scope" if prog.team else "you" if reviewer else "anyone"
    st.progress(
        done / total if total else 1.0,
        text=f"Reviewed {done} of {total} in this scope (rows marked by {who}) · {MODE_LINE}",
    )
    try:
        turn = session.next_row(engine, frame, scope, reviewer, review_mode, prog)
    except store.DatabaseError:
        _offline()
        return
    said = session.feedback_to_show()  # on the card's status line when a row is shown; else as boxes
    _show_feedback(said if turn.screen is None else [f for f in said if f.kind == "error"])
    if turn.shown is Shown.HELD_OFF:  # the row the old mode held is let go
        st.info("The review mode changed: no row is held for you until you start reviewing in it.")
        st.button("Start reviewing", key="q_start", type="primary", on_click=session.start_reviewing)
    if turn.busy:
        alert(
            "warning",
            "The database is busy: the row could not be held for you. The next press or a refresh tries again.",
        )
    if turn.shown is Shown.NOTHING_FREE:
        st.info(_nothing_free())
        if rule == SPLIT and reviewer:  # the team has finished this scope: where work is left
            _scopes_left(team=True)
    elif turn.shown is Shown.CANNOT_MARK:  # nothing is "done" for someone who cannot mark: say why instead
        st.info(
            md_escape(f"{session.cannot_mark} {total - done} of the {total} rows of this scope are still to review.")
        )
    elif turn.shown is Shown.FINISHED:
        _finished(scope)
    elif turn.shown is Shown.EMPTY:
        st.info("No rows in this scope.")
    if turn.screen is None:
        _keyboard()
        return
    _card(frame.iloc[turn.screen.row_idx], turn.screen.number, said=[f for f in said if f.kind != "error"])
    _keyboard()
    # Drawn only while open: a closed expander's table was redrawn by the browser on every press.
    per_domain = st.expander("Progress per domain", key="q_progress_open", on_change="rerun")
    if per_domain.open:
        per_domain.dataframe(prog.table, hide_index=True)


def my_verdicts_view() -> None:
    """The reviewer's verdicts in this scope; any row can be opened in the queue and changed."""
    if not reviewer:
        st.info(md_escape(session.cannot_mark))
        return
    mine = my_verdicts.my_verdicts(frame, _scope(), engine, reviewer, blind=blind_view)
    f1, f2 = st.columns([1, 3])
    which = f1.selectbox("Verdict", ["any", *review.VERDICTS], key="q_my_verdict")
    query = f2.text_input("Search question, golden answer, response, or a row number (#12)", key="q_my_search")
    shown = mine if which == "any" else mine[mine["verdict"] == which]
    if query.strip():
        hits = search.search_rows(state.search_index(run.id), query)
        shown = shown[shown["row_idx"].isin(hits)]
    st.text(
        f"{len(shown)} of the {len(mine)} rows of this scope with your verdict"
        f" ({int(my_verdicts.carried_over(mine, run.id).sum())} marked in another run holding the identical row)"
    )
    if mine.empty:
        st.info(
            "None of your verdicts is in this scope: choose another bucket or domain above, or review rows "
            "in the Queue."
        )
    hidden = ["bucket"] if (shown["bucket"] == my_verdicts.HIDDEN).all() else []  # blind rows only: no column
    table = shown.drop(columns=["row_idx", *hidden]).assign(
        marked_in_run=shown["marked_in_run"].map(lambda r: "" if r is None or r == run.id else f"#{r}")
    )
    event = st.dataframe(
        table.rename(columns=MY_LABELS),
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        key="q_my_table",
    )
    picked = event.selection.rows if event is not None else []
    if len(shown) == 1 or (picked and picked[0] < len(shown)):
        chosen = shown.iloc[picked[0] if picked else 0]
        st.button(
            f"Open row {int(chosen['row'])} in the queue",
            key="q_my_open",
            type="primary",
            on_click=_open,
            args=(int(chosen["row_idx"]),),
        )
    else:
        st.caption("Select a row (or narrow the list to one) to open it in the queue.")


guidelines.show_for_reviewer(engine, run.id, reviewer)  # above the card, outside the fragment: a mark keeps it
if view == "My verdicts":
    my_verdicts_view()
else:
    queue_view()
