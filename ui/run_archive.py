"""The Upload page's tidying of runs: archive the selected run (a confirmation naming it), the
archived runs with Restore, and Delete for good behind its own, stronger confirmation (type the
run's id or name; it says what is lost). Run names are the uploader's text: shown with
``st.text`` only, never in a label or Markdown.

After an archive the page moves to the next run: its confirmation starts closed and unticked (the
expander and the checkbox are keyed by run id, so nothing of the archived run's open confirmation
carries over to the next), and the message naming the archived run is a toast and the first thing
of this section, above that run's confirmation."""

from __future__ import annotations

import streamlit as st
from sqlalchemy import Engine

from scoring import store
from scoring.core.errors import InputError
from ui import run_choice

NOTICE = "archive_notice"


def _done(message: str) -> None:
    """Say ``message`` (ids only, no dataset text) after the rerun that shows the change."""
    st.session_state[NOTICE] = message
    st.rerun()


def show_notice() -> None:
    """The message of the last archive, restore or delete, once: a toast (seen wherever the page is
    scrolled) and a success line where this section starts. Shown by whichever of
    :func:`archive_controls` and :func:`archived_runs` runs first."""
    notice = st.session_state.pop(NOTICE, None)
    if notice:
        st.toast(notice, icon=":material/check_circle:", duration="long")
        st.success(notice)


def archive_controls(engine: Engine, run: store.RunInfo) -> None:
    """ "Archive this run" for the selected run, after a checked confirmation naming it; closed
    whenever a run is newly shown (its key is the run's), so no run is left one click from it."""
    show_notice()
    with st.expander("Archive this run", icon=":material/archive:", key=f"archive_open_{run.id}", on_change="rerun"):
        st.text(store.archive_prompt(run))
        sure = st.checkbox("Yes, archive this run", key=f"archive_sure_{run.id}")
        if st.button("Archive this run", key="archive_run", disabled=not sure):
            try:
                store.archive_run(engine, run.id)
            except InputError as exc:
                st.error(str(exc))  # names an id only
                return
            others = [r.id for r in run_choice.known_runs() if r.id != run.id]
            if others:
                run_choice.select_run(others[0])
            else:
                st.session_state.pop("run_id", None)
                st.query_params.pop(run_choice.RUN_PARAM, None)
            _done(f"Run #{run.id} archived: it is in the archived runs below, its verdicts kept.")


def archived_runs(engine: Engine) -> None:
    """The archived runs, each with Restore and Delete for good."""
    show_notice()
    archived = store.archived_runs(engine)
    if not archived:
        return
    st.subheader("Archived runs")
    st.caption("Not in the run list nor in any page's choices. Their rows and verdicts are kept.")
    for item in archived:
        info = item.run
        with st.container(border=True, key=f"archived_{info.id}"):
            st.text(
                f"{store.run_label(info)}\nfile {info.filename}, uploaded "
                f"{info.uploaded_at:%Y-%m-%d %H:%M}, archived {item.archived_at:%Y-%m-%d %H:%M}"
            )
            if st.button("Restore", key=f"restore_run_{info.id}", icon=":material/unarchive:"):
                try:
                    store.restore_run(engine, info.id)
                except InputError as exc:
                    st.error(str(exc))
                    continue
                run_choice.select_run(info.id)
                _done(f"Run #{info.id} restored to the run list.")
            if st.checkbox("Delete for good…", key=f"delete_open_{info.id}"):
                _delete_form(engine, info)


def _delete_form(engine: Engine, info: store.RunInfo) -> None:
    try:
        summary = store.delete_summary(engine, info.id)
    except InputError as exc:
        st.error(str(exc))
        return
    st.text(store.delete_warning(summary))
    typed = st.text_input("Type the run's id or its name to confirm", key=f"delete_confirm_{info.id}")
    ok = store.confirms_delete(info, typed)
    if st.button("Delete for good", key=f"delete_run_{info.id}", type="primary", disabled=not ok):
        try:
            store.delete_run(engine, info.id)
        except InputError as exc:
            st.error(str(exc))
            return
        _done(f"Run #{info.id} deleted for good; its verdicts stay in the verdict log.")
