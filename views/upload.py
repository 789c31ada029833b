"""Upload one or more responses files; each becomes a run (or opens the identical one)."""

from __future__ import annotations

import streamlit as st

from scoring import store
from scoring.core.errors import InputError
from scoring.core.formatting import phase_progress
from ui import state
from ui.display import alert, md_escape

st.title("Upload a model run")
st.write(
    "A CSV or TSV with `answer` and `response` columns (plus `question` and `Domain`), "
    "UTF-8 or UTF-16 with a BOM. Each file becomes a run; uploading identical bytes opens the "
    "existing run."
)

engine = state.engine()
files = st.file_uploader("Responses files", type=["csv", "tsv"], accept_multiple_files=True, key="uploads")

# Each upload is processed once (by its file id); reruns only show the stored outcome.
processed: dict[str, dict] = st.session_state.setdefault("processed_uploads", {})
newest = None
for upload in files or []:
    if upload.file_id not in processed:
        messages: list[tuple[str, str]] = []
        run_id = None
        # Each phase shows as it starts (reading, scoring, saving k of n rows): a million rows
        # take several seconds, and a bar that moves says the upload is alive.
        shown = md_escape(upload.name)  # a file name is untrusted text; labels render Markdown
        with st.status(f"Saving {shown}", expanded=True) as status:
            bar = st.progress(*phase_progress("upload", "reading", 0, 0))

            def show(phase: str, done: int, total: int, bar=bar) -> None:
                fraction, text = phase_progress("upload", phase, done, total)
                bar.progress(min(fraction, 1.0), text=text)

            try:
                result = store.save_run(engine, upload.getvalue(), upload.name, progress=show)
            except InputError as exc:
                status.update(label=f"{shown}: not saved", state="error", expanded=False)
                result = None
                messages.append(("error", f"{upload.name}: {exc}"))
            else:
                status.update(label=f"{shown}: saved ({result.run.n_rows:,} rows)", state="complete",
                              expanded=False)
        if result is not None:
            run_id = result.run.id
            if result.created:
                messages.append(("success", f"{upload.name}: saved as run #{run_id} ({result.run.n_rows} rows)."))
            else:
                messages.append(("info", f"{upload.name}: identical to run #{run_id}, which is opened instead."))
            if result.restored or result.decisions:
                messages.append(("info", f"{upload.name}: restored {result.restored} human verdict(s) and "
                                         f"{result.decisions} adjudication(s) from the file."))  # fmt: skip
            messages.extend(("warning", f"{upload.name}: {w}") for w in result.warnings)
            st.session_state.setdefault("upload_notes", {})[run_id] = [m for m in messages if m[0] == "warning"]
            newest = run_id
        processed[upload.file_id] = {"messages": messages, "run_id": run_id}
    for kind, text in processed[upload.file_id]["messages"]:
        alert(kind, text)

if newest is not None:
    state.select_run(newest)
    current = [processed[f.file_id] for f in files or []]
    if any(kind == "error" for item in current for kind, _ in item["messages"]):
        st.rerun()
    st.switch_page("views/overview.py")

run = state.selected_run()
if run is not None:
    st.subheader(f"Run #{run.id}")
    with st.form("run_meta"):
        name = st.text_input("Name", value=run.name)
        model = st.text_input("Model", value=run.model)
        language = st.text_input("Language", value=run.language)
        if st.form_submit_button("Save details"):
            store.update_run_meta(engine, run.id, name.strip() or run.name, model.strip(), language.strip())
            st.rerun()
    st.text(f"File: {run.filename}\nUploaded: {run.uploaded_at:%Y-%m-%d %H:%M}\nsha256: {run.sha256}")
    st.page_link("views/overview.py", label="Open the overview", icon=":material/bar_chart:")
