"""Export adjudicated verdicts as CSV or JSONL, with a manifest; built when the button is clicked."""

from __future__ import annotations

import json

import streamlit as st

from scoring import export
from ui import state

run = state.require_run()

engine = state.engine()
url_run = run.id
st.title(f"Export: {run.name}")
st.write(
    "Every row with both metrics, the human verdicts and the final verdict. The column "
    "`human_verdicts` holds every reviewer's own verdict, reason, note and time as a JSON list "
    "(a JSON array in JSONL), conflicts included. Cells that start with `=`, `+`, `-`, `@`, tab "
    "or carriage return are prefixed with `'` in the CSV so a spreadsheet never runs them; JSONL "
    "keeps the raw text. Uploading an exported CSV (on the Upload page) restores every reviewer's "
    "verdict; uploading it again adds nothing."
)
bom = st.checkbox("UTF-8 BOM (for Excel)", key="export_bom")
judge_settles = state.judge_settles()
# Captured here, in the script thread: the download callbacks run where session state is absent.
judge_args = {"judge_labels": state.judge_labels(run.id) or None, "judge_settles": judge_settles}
stem = f"run{run.id}_adjudicated"


def _csv() -> bytes:
    # Runs on click, outside the script thread: read everything from the database, not the session.
    return export.to_csv_bytes(export.build_export(engine, url_run, **judge_args), bom=bom)


def _jsonl() -> bytes:
    return export.to_jsonl_bytes(export.build_export(engine, url_run, **judge_args))


def _manifest() -> bytes:
    frame = export.build_export(engine, url_run, **judge_args)
    info = export.manifest(engine, url_run, frame, judge_settles=judge_settles)
    return json.dumps(info, ensure_ascii=False, indent=2).encode("utf-8")


c1, c2, c3 = st.columns(3)
c1.download_button("Download CSV", _csv, file_name=f"{stem}.csv", mime="text/csv", key="dl_csv")
c2.download_button("Download JSONL", _jsonl, file_name=f"{stem}.jsonl", mime="application/jsonl", key="dl_jsonl")
c3.download_button("Download manifest", _manifest, file_name=f"{stem}.manifest.json", mime="application/json",
                   key="dl_manifest")
final = state.final_frame(run.id)
st.subheader("Final verdicts")
st.dataframe(final["final_source"].value_counts().rename_axis("final source").reset_index(), hide_index=True,
             key="final_counts")
