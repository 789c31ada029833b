"""Export adjudicated verdicts as CSV, JSONL or Parquet, with a manifest.

A run of ordinary size exports when a download button is clicked (the file is built on click).
A large run is prepared first, with its phases shown, then downloaded: building a million rows
takes seconds, and a button that seems to do nothing for that long gets clicked again.

Withheld whole by app.py, during double-blind review, from a reviewer who may not see the run's
verdicts (:mod:`scoring.review.visibility`).
"""

from __future__ import annotations

import json

import streamlit as st

from scoring import verdict_export as export
from scoring.core.formatting import phase_progress
from scoring.core.verdict_rules import AUTO_RULE_TEXT
from ui import judge_state, run_choice, state, verdicts
from ui.display import md_escape
from ui.downloads import download_button
from ui.tables import show_table

run = run_choice.require_run()

engine = state.engine()
url_run = run.id
st.title(md_escape(f"Export: {run.name}"))
st.write(
    "Every row with both metrics, the human verdicts and the final verdict. The column "
    "`human_verdicts` holds every reviewer's own verdict, reason, note and time as a JSON list "
    "(a JSON array in JSONL), conflicts included. Cells that start with `=`, `+`, `-`, `@`, tab "
    "or carriage return are prefixed with `'` in the CSV so a spreadsheet never runs them; JSONL "
    "and Parquet keep the raw text. Parquet keeps the metrics as booleans and integers and "
    "carries the manifest in its metadata. Uploading an exported CSV (on the Upload page) restores "
    "every reviewer's verdict; uploading it again adds nothing."
)
bom = st.checkbox("UTF-8 BOM (for Excel)", key="export_bom")
judge_settles = judge_state.judge_settles()
# Captured here, in the script thread: the download callbacks run where session state is absent.
# The run's judge labels under the one rule (its chosen configuration, else the latest label of each row).
judged = judge_state.run_labels(run.id)
judge_config = judged.name if judged.labels else None
with_judge = bool(judged.labels)  # a run without judge labels exports no judge column
if judge_config is not None:
    st.text(
        f"{judge_state.judge_line(run.id)} Its label of each row is in the column judge_label, and the "
        "manifest names it (judge_configuration)."
    )
stem = f"run{run.id}_adjudicated"
FILES = (
    ("csv", "CSV", "text/csv"),
    ("jsonl", "JSONL", "application/jsonl"),
    ("parquet", "Parquet", "application/vnd.apache.parquet"),
)


def _file(fmt: str, progress=None) -> export.ExportFile:
    # Runs on click, outside the script thread: read everything from the database, not the session.
    return export.export_file(
        engine, url_run, fmt, judge=with_judge, judge_settles=judge_settles and with_judge, bom=bom, progress=progress
    )


def _manifest() -> bytes:
    frame = export.export_table(engine, url_run, judged.labels if with_judge else None, judge_settles)
    info = export.manifest(engine, url_run, frame, judge_settles=judge_settles, judge_config=judge_config)
    return json.dumps(info, ensure_ascii=False, indent=2).encode("utf-8")


def _prepare(kind: str) -> dict:
    """Build the export of a large run with its phases on a progress bar; returns the files."""
    with st.status(f"Preparing the {kind} export of {run.n_rows:,} rows", expanded=True) as status:
        bar = st.progress(*phase_progress("export", "loading", 0, run.n_rows))

        def show(phase: str, done: int, total: int) -> None:
            fraction, text = phase_progress("export", phase, done, total)
            bar.progress(min(fraction, 1.0), text=text)

        written = _file(kind.lower(), show)
        status.update(label=f"{kind} export ready: {written.rows:,} rows", state="complete", expanded=False)
    manifest_bytes = json.dumps(written.manifest, ensure_ascii=False, indent=2).encode("utf-8")
    return {"run": run.id, "kind": kind, "bom": bom, "data": written.data, "manifest": manifest_bytes}


if run.n_rows < export.PREPARE_ROWS:
    c1, c2, c3, c4 = st.columns(4)
    for column, (fmt, title, mime) in zip((c1, c2, c3), FILES, strict=True):
        download_button(
            f"Download {title}",
            lambda fmt=fmt: _file(fmt).data,
            file_name=f"{stem}.{fmt}",
            mime=mime,
            key=f"dl_{fmt}",
            where=column,
        )
    download_button(
        "Download manifest",
        _manifest,
        file_name=f"{stem}.manifest.json",
        mime="application/json",
        key="dl_manifest",
        where=c4,
    )
else:
    kind = st.radio("Format", ["CSV", "JSONL", "Parquet"], horizontal=True, key="export_kind")
    if st.button(f"Prepare the {kind} export", key="prepare_export", type="primary"):
        st.session_state["prepared_export"] = _prepare(kind)
    ready = st.session_state.get("prepared_export")
    if ready and ready["run"] == run.id and ready["kind"] == kind and ready["bom"] == bom:
        suffix, mime = {
            "CSV": ("csv", "text/csv"),
            "JSONL": ("jsonl", "application/jsonl"),
            "Parquet": ("parquet", "application/vnd.apache.parquet"),
        }[kind]
        c1, c2 = st.columns(2)
        download_button(
            f"Download {kind}", ready["data"], file_name=f"{stem}.{suffix}", mime=mime, key="dl_prepared", where=c1
        )
        download_button(
            "Download manifest",
            ready["manifest"],
            file_name=f"{stem}.manifest.json",
            mime="application/json",
            key="dl_prepared_manifest",
            where=c2,
        )
    else:
        st.caption("Verdicts given after preparing are not in the file: prepare again to include them.")
final = verdicts.final_frame(run.id)
st.subheader("Final verdicts")
show_table(final["final_source"].value_counts().rename_axis("final source").reset_index(), key="final_counts")
st.text(AUTO_RULE_TEXT)
