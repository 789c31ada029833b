"""Upload one or more responses files; each becomes a run (or opens the identical one)."""

from __future__ import annotations

import streamlit as st

from scoring import ingest, store
from scoring.core.errors import InputError
from scoring.core.export_order import unordered_note
from scoring.core.formats import UPLOAD_TYPES
from scoring.core.formatting import phase_progress
from scoring.core.loader import (
    MissingColumns,
    field_examples,
    is_results_companion,
    mapping_text,
    suggest_columns,
)
from ui import charts, run_choice, state, uploads
from ui.display import alert, md_escape

st.title("Upload a model run")
st.write(
    "A CSV, TSV, JSON lines, JSON array or Parquet file (the text formats may be gzipped) with the golden answer "
    "and the response (plus the question and a domain), UTF-8 or UTF-16 with a BOM. When the fields have other "
    "names (`target`, `prediction`, `category`...), you say which is which. Each file becomes a run, one per model "
    "when its `model` column (or a harness log) names several; uploading identical bytes, or the same rows in "
    "another encoding or order, opens the existing run."
)

engine = state.engine()
choose = st.toggle(
    "Choose which field is which, even when the names match (another metadata field as the domain, say)",
    key="map_always",
)
files = uploads.uploaded_files("Responses files", UPLOAD_TYPES, key="uploads")
#: What the mapping form asks for: (canonical name, label, required).
MAPPED = (
    ("answer", "Golden answer", True),
    ("response", "Response", True),
    ("question", "Question", False),
    ("Domain", "Domain", False),
    ("language", "Language (per row)", False),
)
#: How the mapping step names what a file lacks (the loader's message quotes the command line's flag).
WANTED = {
    "answer": "the golden answer",
    "response": "the response",
    "question": "the question",
    "Domain": "the domain",
    "language": "the language",
}
FIELDS_SHOWN = 12  #: the file's field names the mapping step lists; the form's boxes hold every one


def mapping_step(name: str, exc: MissingColumns) -> str:
    """The mapping step in the page's words: which field holds what the file names otherwise.
    A normal step (an info line above the form), never an error, never a command-line flag."""
    wanted = " and which field holds ".join(WANTED.get(m, repr(m)) for m in exc.missing)
    named = " or ".join(repr(m) for m in exc.missing)
    fields = ", ".join(repr(f) for f in exc.fields[:FIELDS_SHOWN]) or "none"
    if len(exc.fields) > FIELDS_SHOWN:
        fields += f" and {len(exc.fields) - FIELDS_SHOWN} more"
    return (
        f"{name}: pick below which field holds {wanted} (none is named {named}; the file's fields: "
        f'{fields}), then press "Save with this mapping".'
    )


def save(upload, columns: dict[str, str] | None = None, split: bool | None = None) -> dict:
    """The outcome of one upload: a companion file is noted, any other saved (:func:`_save`).
    ``split``: the user's answer for a file holding several models (None: not asked yet)."""
    if upload.name in companions:
        return {
            "messages": [
                (
                    "info",
                    f"{upload.name}: read as the lm-evaluation-harness results beside the "
                    "samples file (the model's name), not as a run.",
                )
            ],
            "run_id": None,
            "ask": None,
        }
    return _save(upload, columns, split)


def _save(upload, columns: dict[str, str] | None = None, split: bool | None = None) -> dict:
    """Save one upload with its progress shown; the outcome as messages (and the run, or a mapping
    or the several models' question to ask)."""
    if choose and columns is None:  # the user names the fields: ask first, whatever the names
        try:
            examples = field_examples(upload.getvalue(), upload.name, companions)
        except InputError as exc:
            return {"messages": [("error", f"{upload.name}: {exc}")], "run_id": None, "ask": None}
        return {
            "messages": [("info", f"{upload.name}: choose which field is which, then save.")],
            "run_id": None,
            "ask": {"fields": list(examples), "examples": examples},
        }
    messages: list[tuple[str, str]] = []
    shown = md_escape(upload.name)  # a file name is untrusted text; labels render Markdown
    asked = models = None
    # Each phase shows as it starts (reading, scoring, saving k of n rows): a million rows
    # take several seconds, and a bar that moves says the upload is alive.
    with st.status(f"Saving {shown}", expanded=True) as status:
        bar = st.progress(*phase_progress("upload", "reading", 0, 0))

        def show(phase: str, done: int, total: int, bar=bar) -> None:
            fraction, text = phase_progress("upload", phase, done, total)
            bar.progress(min(fraction, 1.0), text=text)

        read = st.empty()

        def preview(counts: list[tuple[str, int]], read=read) -> None:
            with read.container():
                st.caption(f"Read {sum(n for _, n in counts):,} rows in {len(counts):,} domains; scoring them now.")
                st.plotly_chart(charts.rows_figure(counts), key=f"upload_preview_{upload.file_id}")  # one per file

        outcome = None
        try:
            outcome = ingest.save_upload(
                engine, upload.getvalue(), upload.name, columns, companions, show, preview, split=split
            )
        except ingest.SeveralModels as exc:  # what the file holds, said before anything is saved
            status.update(label=f"{shown}: read; {md_escape(exc.line)}", state="complete", expanded=False)
            messages.append(("info", models_step(upload.name, exc)))
            models = {"columns": exc.columns, "count": len(exc.models)}
        except MissingColumns as exc:  # the mapping step: a question to answer below, not a failure
            status.update(label=f"{shown}: read; which field is which?", state="complete", expanded=False)
            messages.append(("info", mapping_step(upload.name, exc)))
            asked = {"fields": exc.fields, "examples": exc.examples}
        except InputError as exc:
            status.update(label=f"{shown}: not saved", state="error", expanded=False)
            messages.append(("error", f"{upload.name}: {exc}"))
        else:
            status.update(label=f"{shown}: saved ({outcome.run.n_rows:,} rows)", state="complete", expanded=False)
    run_id = None
    if outcome is not None:
        run_id = outcome.run.id
        if outcome.rows is not None:
            state.hand_over_saved(run_id, outcome.rows)
        messages.extend(outcome_messages(upload.name, outcome))
        # The Overview opens at once, so the status label above is gone before anyone reads it:
        # what was saved or opened and every warning are said again there, on each run's Overview,
        # with a link to each of the file's other runs.
        made = outcome.runs or (ingest.ModelRun(outcome.run, "created"),)
        for each in made:
            st.session_state.setdefault("upload_notes", {})[each.run.id] = list(messages)
            st.session_state.setdefault("upload_runs", {})[each.run.id] = [
                (other.run.id, store.run_label(other.run)) for other in made if other.run.id != each.run.id
            ]
    return {"messages": messages, "run_id": run_id, "ask": asked, "models": models}


def models_step(name: str, exc: ingest.SeveralModels) -> str:
    """The question a file of several models asks before saving, in the page's words."""
    return (
        f"{name}: {exc.line}, named by {exc.source}. Each model is saved as a run of its own (their rows are "
        "never pooled into one figure); each run numbers its rows from 1 and keeps each row's place in the file "
        "in a column file_row. Remove the file above to save nothing."
    )


def ask_models(upload, asked: dict) -> dict | None:
    """The save of a file of several models, once the user has read what it holds and pressed the
    button (removing the file saves nothing). There is no "one run" answer: one figure over
    several models' rows is neither model's accuracy, so no page ever shows it."""
    count = asked["count"]
    if st.button(f"Save {count} runs, one per model", type="primary", key=f"models_{upload.file_id}_split"):
        return save(upload, asked["columns"] or None, split=True)
    return None


def outcome_messages(name: str, outcome: ingest.UploadOutcome) -> list[tuple[str, str]]:
    """What a saved upload says: the remembered mapping it was read with, the run (or runs) it
    became or opened, what was restored from an export, and every warning."""
    messages = []
    if outcome.remembered:
        messages.append(
            (
                "info",
                f"{name}: read with the column mapping remembered for these fields "
                f"({mapping_text(outcome.remembered)}).",
            )
        )
    messages.append(ingest.outcome_sentence(name, outcome))
    if outcome.restored or outcome.decisions or outcome.skips:
        skips = f", {outcome.skips} skip(s)" if outcome.skips else ""
        messages.append(
            (
                "info",
                f"{name}: restored {outcome.restored} human verdict(s){skips} and "
                f"{outcome.decisions} adjudication(s) from the file.",
            )
        )
    if outcome.unordered:  # an export without its review seed: say why the estimate leaves them out
        messages.append(("warning", f"{name}: {unordered_note(outcome.unordered)}"))
    messages.extend(("warning", f"{name}: {w}") for w in outcome.warnings)
    return messages


def ask_mapping(upload, asked: dict) -> dict | None:
    """The form that names the fields; the save's outcome once submitted (None until then)."""
    fields, examples = asked["fields"], asked["examples"]
    guess = suggest_columns(fields)

    def label(field: str | None) -> str:
        if field is None:
            return "(none)"
        seen = examples.get(field) or []
        return f"{field}  (e.g. {' | '.join(seen)})" if seen else f"{field}  (empty)"

    with st.form(f"map_{upload.file_id}"):
        st.text(f"{upload.name}: which field is which?")
        chosen = {}
        for canon, title, required in MAPPED:
            options = fields if required else [None, *fields]
            default = guess.get(canon)
            index = options.index(default) if default in options else (None if required else 0)
            chosen[canon] = st.selectbox(
                title, options, index=index, format_func=label, key=f"map_{upload.file_id}_{canon}"
            )
        if not st.form_submit_button("Save with this mapping", type="primary"):
            return None
    mapping = {canon: field for canon, field in chosen.items() if field is not None}
    missing = [title for canon, title, required in MAPPED if required and canon not in mapping]
    if missing:
        alert("error", f"Choose the field for: {', '.join(missing)}.")
        return None
    return save(upload, mapping)


# lm-evaluation-harness's results_*.json, uploaded beside a samples file, names its model.
companions = {
    u.name: u.getvalue()
    for u in files or []
    if "results" in u.name and u.name.endswith(".json") and is_results_companion(u.getvalue(), u.name)
}
if len(companions) == len(files or []):
    companions = {}  # a results file alone is refused as what it is
# Each upload is processed once (by its file id); reruns only show the stored outcome.
processed: dict[str, dict] = st.session_state.setdefault("processed_uploads", {})
newest = None
for upload in files or []:
    if upload.file_id not in processed:
        processed[upload.file_id] = save(upload)
        newest = processed[upload.file_id]["run_id"] or newest
    outcome = processed[upload.file_id]
    for kind, text in outcome["messages"]:
        alert(kind, text)
    # A file waiting for an answer: which models to save, or how its columns map.
    for field, ask in (("models", ask_models), ("ask", ask_mapping)):
        if not outcome.get(field) or outcome["run_id"] is not None:
            continue
        done = ask(upload, outcome[field])
        if done is not None:
            processed[upload.file_id] = done
            newest = done["run_id"] or newest
            if done["run_id"] is None:
                st.rerun()

if newest is not None:
    run_choice.select_run(newest)
    current = [processed[f.file_id] for f in files or []]
    waiting = [item for item in current if item["run_id"] is None]  # refused, or a mapping to ask for
    if any(
        item.get("ask") or item.get("models") or any(kind == "error" for kind, _ in item["messages"])
        for item in waiting
    ):
        st.rerun()
    uploads.let_go("uploads", files)  # saved: the server need not hold the files' bytes any longer
    st.switch_page("views/overview.py")

run = run_choice.selected_run()
if run is not None:
    st.subheader(f"Run #{run.id}")
    if store.is_sample(run):
        st.caption(
            md_escape(
                f"A bundled sample ({store.SAMPLE_PATH.parent.name}/{run.filename}), loaded on first "
                "start: once your own runs are in, Start here removes every sample at once."
            )
        )
    with st.form("run_meta"):
        name = st.text_input("Name", value=run.name)
        model = st.text_input("Model", value=run.model)
        language = st.text_input("Language", value=run.language)
        if st.form_submit_button("Save details"):
            store.update_run_meta(engine, run.id, name.strip() or run.name, model.strip(), language.strip())
            if language.strip() != run.language:  # rows without a language of their own follow it
                state.run_cache().clear()
            st.rerun()
    st.text(f"File: {run.filename}\nUploaded: {run.uploaded_at:%Y-%m-%d %H:%M}\nsha256: {run.sha256}")
    mapped = store.run_column_map(engine, run.id)
    if mapped:
        st.text(f"Column mapping: {mapping_text(mapped)}")
    st.page_link("views/overview.py", label="Open the overview", icon=":material/bar_chart:")

# Tidying runs (issue 19): archive the selected run; the archived runs, restored or deleted for good.
# Imported here, not at the top, to keep this part apart from the upload code above.
from ui import run_archive  # noqa: E402

if run is not None:
    run_archive.archive_controls(engine, run)
run_archive.archived_runs(engine)
