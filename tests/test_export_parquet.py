"""Parquet out (issue 19): ``python -m scoring export --format parquet`` and the Export page's
Parquet download carry the CSV export's columns, rows and manifest; read back with polars and with
pandas (pyarrow)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest
from apptest_support import download, open_page, record_media_managers, sample_database
from sqlalchemy import Engine

from scoring import ingest, store
from scoring import review as V
from scoring import verdict_export as E
from scoring.cli import main
from scoring.store import make_engine

ROOT = Path(__file__).resolve().parent.parent
ROWS = [
    ("question", "answer", "Domain", "response", "note", "source"),
    ("=1+1", "Narmada valley", "Geography", "Narmada River valley", "has a note", "set A"),
    ("q1", "-5 degrees", "Science", "it was -5 degrees", "", "set A"),
    ("q2", "Chola ideals", "Art", "@SUM(A1) Chola and Hoysala ideals", "", "+cmd"),
    ("q3", "गंगा", "Geography", "\tगंगा नदी", "", ""),
    ("q4", "amalak", "Art", "Amalaka", "", ""),
    ("q5", "Delhi", "History", '\'=already quoted, "and" comma', "", ""),
]
TYPED = {
    "row": "int64",
    "exact_correct": "bool",
    "overlap_correct": "bool",
    "matching_words": "int64",
    "total_golden_words": "int64",
}


def _csv_bytes(rows) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)
    return buffer.getvalue().encode("utf-8")


@pytest.fixture
def reviewed(tmp_path: Path) -> Iterator[tuple[str, Engine, int]]:
    """A run with a conflict, an agreement and a formula-like note (SQLite: the format is the test)."""
    url = f"sqlite:///{tmp_path / 'review.db'}"
    engine = make_engine(url)
    run = ingest.save_run(engine, _csv_bytes(ROWS), "model_hindi.csv").run
    keys = store.load_scored(engine, run.id)["item_key"].tolist()
    V.record_mark(engine, keys[0], run.id, "alice", "correct", "paraphrase", "=fine by me")
    V.record_mark(engine, keys[0], run.id, "bob", "correct", "paraphrase", "ok;\nreally")
    V.record_mark(engine, keys[2], run.id, "alice", "correct")
    V.record_mark(engine, keys[2], run.id, "bob", "wrong", "different claim")
    yield url, engine, run.id
    engine.dispose()


def _csv_as_text(data: bytes) -> pd.DataFrame:
    """The CSV export as text, its ``'`` neutralisation undone (Parquet keeps the raw text)."""
    frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    clean = pd.DataFrame({i: E.unneutralise(frame.iloc[:, i]) for i in range(frame.shape[1])})
    clean.columns = [c[1:] if c.startswith("'") else c for c in frame.columns]
    return clean


def _as_csv_text(frame: pd.DataFrame) -> pd.DataFrame:
    """A Parquet export read by pandas, each cell as the CSV writes it."""
    out = frame.copy()
    for name in out.columns:
        if out[name].dtype == bool:
            out[name] = out[name].map({True: "True", False: "False"})
        out[name] = out[name].astype(str)
    return out


def test_cli_parquet_has_the_csv_columns_rows_and_manifest(tmp_path: Path, reviewed) -> None:
    url, engine, run_id = reviewed
    csv_out, pq_out = tmp_path / "a.csv", tmp_path / "a.parquet"
    assert main(["export", "--run", str(run_id), "--out", str(csv_out), "--db", url]) == 0
    assert main(["export", "--run", str(run_id), "--out", str(pq_out), "--format", "parquet", "--db", url]) == 0
    expected = _csv_as_text(csv_out.read_bytes())

    by_pandas = pd.read_parquet(pq_out)  # pyarrow
    by_polars = pl.read_parquet(pq_out)
    assert list(by_pandas.columns) == list(by_polars.columns) == list(expected.columns)
    assert {c: str(by_pandas[c].dtype) for c in TYPED} == TYPED
    assert {c: by_polars.schema[c] for c in TYPED} == {
        "row": pl.Int64,
        "exact_correct": pl.Boolean,
        "overlap_correct": pl.Boolean,
        "matching_words": pl.Int64,
        "total_golden_words": pl.Int64,
    }
    others = [c for c in by_polars.columns if c not in TYPED]
    assert all(by_polars.schema[c] == pl.String for c in others) and by_polars.null_count().sum_horizontal()[0] == 0
    pd.testing.assert_frame_equal(_as_csv_text(by_pandas), expected, check_dtype=False)
    pd.testing.assert_frame_equal(_as_csv_text(by_polars.to_pandas()), expected, check_dtype=False)
    assert by_polars["question"][0] == "=1+1" and by_polars["source"][2] == "+cmd"  # raw text, as in JSONL
    verdicts = json.loads(by_polars["human_verdicts"][0])
    assert [(v["reviewer"], v["note"]) for v in verdicts] == [("alice", "=fine by me"), ("bob", "ok;\nreally")]

    side = json.loads((tmp_path / "a.parquet.manifest.json").read_text(encoding="utf-8"))
    csv_side = json.loads((tmp_path / "a.csv.manifest.json").read_text(encoding="utf-8"))
    inside = E.parquet_manifest(pq_out.read_bytes())
    raw = pq.read_metadata(pq_out).metadata[E.MANIFEST_KEY.encode()]  # the same, read by pyarrow
    assert json.loads(raw) == inside
    assert side["format"] == inside["format"] == "parquet" and "export_sha256" not in inside
    assert side["export_sha256"] == store.sha256_bytes(pq_out.read_bytes())
    assert {k: v for k, v in side.items() if k != "export_sha256"} == inside
    same = ("run", "rows", "columns", "counts", "protocols", "judge_labels", "judge_settles", "human_verdicts")
    assert {k: inside[k] for k in same} == {k: csv_side[k] for k in same}
    assert inside["counts"]["human_verdict"] == {"correct": 1, "wrong": 0, "conflict": 1}


def test_python_m_scoring_export_parquet(tmp_path: Path, reviewed) -> None:
    url, _, run_id = reviewed
    out = tmp_path / "e.parquet"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "scoring",
            "export",
            "--run",
            str(run_id),
            "--out",
            str(out),
            "--format",
            "parquet",
            "--db",
            url,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert f"wrote {len(ROWS) - 1} rows to {out}" in done.stdout
    assert pl.read_parquet(out).height == len(ROWS) - 1


def test_cli_parquet_refuses_bom_and_an_unknown_run(tmp_path: Path, reviewed, capsys) -> None:
    url, _, run_id = reviewed
    for args, message in (
        (["--run", str(run_id), "--bom"], "--bom applies to CSV only."),
        (["--run", "999"], "No run with id 999."),
    ):
        out = tmp_path / "x.parquet"
        assert main(["export", *args, "--out", str(out), "--format", "parquet", "--db", url]) == 2
        assert capsys.readouterr().err == f"error: {message}\n" and not out.exists()


def test_the_export_page_offers_the_parquet_download(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = next(gen := sample_database(tmp_path, monkeypatch))
    try:
        run = store.list_runs(engine)[0]  # the sample set's newest, "Sample run"
        managers = record_media_managers(monkeypatch)
        at = open_page("export", run_id=run.id)
        button = at.download_button(key="dl_parquet")
        assert button.proto.label == "Download Parquet"
        data = download(at, managers, "dl_parquet")
        frame = pl.read_parquet(data)
        table = E.export_table(engine, run.id)
        assert frame.columns == table.columns and frame.height == run.n_rows
        assert frame.select(pl.exclude(*TYPED)).equals(table.select(pl.exclude(*TYPED)))
        assert E.parquet_manifest(data)["run"]["id"] == run.id
    finally:
        gen.close()
