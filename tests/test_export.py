"""Export of adjudicated verdicts: contents, CSV safety, JSONL, manifest, round trip and the CLI."""

from __future__ import annotations

import codecs
import csv
import io
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

import scoring
from scoring import ingest, store
from scoring import review as V
from scoring import verdict_export as E
from scoring.cli import main
from scoring.core.errors import InputError
from scoring.core.items import item_key
from scoring.core.loader import load_bytes
from scoring.store import judge_cache, make_engine, verdict_log
from scoring.store.orm_tables import VerdictEvent

ROOT = Path(__file__).resolve().parent.parent
HEADER = ("question", "answer", "Domain", "response", "note", "source")
ROWS = [
    ("=1+1", "Narmada valley", "Geography", "Narmada River valley", "has a note", "set A"),  # overlap_only
    ("q1", "-5 degrees", "Science", "it was -5 degrees", "", "set A"),  # both_pass
    ("q2", "Chola ideals", "Art", "@SUM(A1) Chola and Hoysala ideals", "", "set B"),  # overlap_only
    ("q3", "गंगा", "Geography", "\tगंगा नदी", "", "+cmd"),  # both_pass
    ("q4", "amalak", "Art", "Amalaka", "", ""),  # exact_only
    ("q5", "Delhi", "History", '\'=already quoted, "and" comma', "", ""),  # both_fail
    ("q6", "Ganga delta", "Geography", "delta of the Ganga\r\nsecond line", "", ""),  # overlap_only
    ("q7", "red fort", "History", "\rfort red", "", ""),  # overlap_only
]
EXTRAS = ["note", "source"]


def csv_bytes(rows, header=HEADER) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows([header, *rows])
    return buf.getvalue().encode("utf-8")


@pytest.fixture
def run(engine):
    return ingest.save_run(engine, csv_bytes(ROWS), "model_hindi.csv").run


@pytest.fixture
def keys(engine, run) -> list[str]:
    return store.load_scored(engine, run.id)["item_key"].tolist()


@pytest.fixture
def reviewed(engine, run, keys):
    """alice and bob agree on row 0 (different notes), conflict on row 2; carol marks row 6."""
    V.record_mark(engine, keys[0], run.id, "alice", "correct", "paraphrase", "=fine by me")
    V.record_mark(engine, keys[0], run.id, "bob", "correct", "paraphrase", "ok;\nreally")
    V.record_mark(engine, keys[2], run.id, "alice", "correct")
    V.record_mark(engine, keys[2], run.id, "bob", "wrong", "different claim")
    V.record_mark(engine, keys[6], run.id, "carol", "wrong", "golden answer wrong", "")
    V.record_mark(engine, keys[4], run.id, "carol", "correct", "inflection")
    return run


def parse_csv(data: bytes) -> list[list[str]]:
    text = data.decode("utf-8-sig")
    return list(csv.reader(io.StringIO(text, newline="")))


CURRENT = ["item_key", "reviewer", "verdict", "reason", "note", "reviewed_at"]  # current_verdicts may add more


def current_set(engine, exact: bool = False) -> set[tuple]:
    """Every reviewer's current verdict; times to the second unless ``exact``."""
    cur = V.current_verdicts(engine)[CURRENT]
    if not exact:
        cur["reviewed_at"] = cur["reviewed_at"].dt.floor("s")
    return set(map(tuple, cur.values.tolist()))


def event_count(engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(VerdictEvent)).scalar_one())


# --------------------------------------------------------------------------- contents


def test_export_columns_rows_and_verdicts(engine, reviewed, keys):
    frame = E.build_export(engine, reviewed.id)
    inputs = ["question", "answer", "Domain", "language", "response", "note_input", "source"]
    assert list(frame.columns) == [
        "row",  # the row's number as the pages show it, and the run's model (issue 37)
        "model",
        *inputs,
        *E.EXPORT_COLUMNS,
        E.VERDICTS_COLUMN,
        E.SEED_COLUMN,
        E.SKIPS_COLUMN,
        "adjudicator",
        "decision",
        "adjudication_note",
    ]
    assert frame[E.SEED_COLUMN].tolist() == [reviewed.review_seed] * len(ROWS)  # the run's seed on every row
    assert frame[E.SKIPS_COLUMN].tolist() == [""] * len(ROWS)  # nobody skipped a row
    assert len(frame) == len(ROWS)
    assert frame["question"].tolist() == [r[0] for r in ROWS]  # input order, raw text
    assert frame["response"].tolist() == [r[3] for r in ROWS]
    assert frame["note_input"].tolist() == [r[4] for r in ROWS]  # the input's own 'note' column kept
    assert frame["bucket"].tolist() == [
        "overlap_only",
        "both_pass",
        "overlap_only",
        "both_pass",
        "exact_only",
        "both_fail",
        "overlap_only",
        "overlap_only",
    ]
    assert frame["exact_correct"].tolist()[:2] == [False, True]
    assert frame["total_golden_words"].tolist()[0] == 2
    r0, r2, r6 = frame.iloc[0], frame.iloc[2], frame.iloc[6]
    assert (r0["human_verdict"], r0["reviewers"], r0["reason"]) == ("correct", "alice;bob", "paraphrase")
    assert r0["note"] == "alice: =fine by me\nbob: ok;\nreally"
    assert (r0["final_verdict"], r0["final_source"]) == ("correct", "human")
    assert (r2["human_verdict"], r2["final_verdict"], r2["final_source"]) == ("conflict", "pending", "pending")
    assert (r6["human_verdict"], r6["reason"], r6["final_verdict"]) == ("wrong", "golden answer wrong", "wrong")
    assert frame["final_source"].tolist() == ["human", "auto", "pending", "auto", "human", "auto", "human", "pending"]
    assert r0["reviewed_at"].endswith("Z") and len(r0["reviewed_at"]) == 20
    assert frame.iloc[1]["reviewed_at"] == ""
    # every reviewer's own verdict, reason, note and time (microseconds), the conflict included
    cur = V.current_verdicts(engine).set_index(["item_key", "reviewer"])
    stamp = cur.loc[(keys[2], "bob"), "reviewed_at"].strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert r2[E.VERDICTS_COLUMN] == [
        {
            "reviewer": "alice",
            "verdict": "correct",
            "reason": "",
            "note": "",
            "reviewed_at": cur.loc[(keys[2], "alice"), "reviewed_at"].strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "via": "queue",
        },
        {
            "reviewer": "bob",
            "verdict": "wrong",
            "reason": "different claim",
            "note": "",
            "reviewed_at": stamp,
            "via": "queue",
        },
    ]
    assert [d["note"] for d in r0[E.VERDICTS_COLUMN]] == ["=fine by me", "ok;\nreally"]
    assert frame.iloc[1][E.VERDICTS_COLUMN] == []


def test_export_judge_label_column_and_settling(engine, reviewed, keys):
    labels = {keys[7]: "CORRECT", keys[2]: "INCORRECT"}
    frame = E.build_export(engine, reviewed.id, judge_labels=labels, judge_settles=True)
    assert list(frame.columns)[-1] == "judge_label"
    assert frame["judge_label"].tolist()[7] == "CORRECT"
    assert (frame.iloc[7]["final_verdict"], frame.iloc[7]["final_source"]) == ("correct", "judge")
    assert frame.iloc[2]["final_source"] == "pending"  # reviewers in conflict: the judge does not settle it


def test_unknown_run_is_an_input_error(engine):
    with pytest.raises(InputError, match="No run with id 42"):
        E.build_export(engine, 42)


# --------------------------------------------------------------------------- CSV and JSONL


def test_csv_neutralises_formula_cells_only(engine, reviewed):
    frame = E.build_export(engine, reviewed.id)
    data = E.to_csv_bytes(frame)
    assert not data.startswith(codecs.BOM_UTF8)
    table = parse_csv(data)
    header, body = table[0], table[1:]
    assert header == [str(c) for c in frame.columns]
    col = {name: [row[i] for row in body] for i, name in enumerate(header)}
    assert col["question"][0] == "'=1+1"
    assert col["answer"][1] == "'-5 degrees"
    assert col["response"][1] == "it was -5 degrees"  # a '-' inside the text is harmless
    assert col["response"][2] == "'@SUM(A1) Chola and Hoysala ideals"
    assert col["response"][3] == "'\tगंगा नदी"
    assert col["source"][3] == "'+cmd"
    assert col["response"][5] == "''=already quoted, \"and\" comma"  # one more quote: reversible
    assert col["response"][6] == "delta of the Ganga\r\nsecond line"
    assert col["response"][7] == "'\rfort red"
    assert col["note"][0] == "alice: =fine by me\nbob: ok;\nreally"  # starts with 'a': untouched
    assert col["exact_correct"][:2] == ["False", "True"]
    for row in body:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell


def test_csv_bom_for_excel(engine, reviewed):
    frame = E.build_export(engine, reviewed.id)
    data = E.to_csv_bytes(frame, bom=True)
    assert data.startswith(codecs.BOM_UTF8)
    assert data[3:] == E.to_csv_bytes(frame)
    assert parse_csv(data)[0][0] == "row"  # the BOM is not part of the first header


def test_jsonl_keeps_raw_text_and_types(engine, reviewed):
    frame = E.build_export(engine, reviewed.id)
    data = E.to_jsonl_bytes(frame)
    assert "गंगा".encode() in data  # ensure_ascii=False: the text itself, not \u escapes
    lines = data.decode("utf-8").splitlines()
    assert len(lines) == len(ROWS)
    records = [json.loads(line) for line in lines]
    assert records[0]["question"] == "=1+1"
    assert records[3]["response"] == "\tगंगा नदी"
    assert records[5]["response"] == '\'=already quoted, "and" comma'
    assert records[6]["response"] == "delta of the Ganga\r\nsecond line"
    assert records[0]["exact_correct"] is False and records[1]["exact_correct"] is True
    assert records[0]["matching_words"] == 2
    assert list(records[0]) == [str(c) for c in frame.columns]
    assert records[2]["final_verdict"] == "pending"
    assert [d["reviewer"] for d in records[2]["human_verdicts"]] == ["alice", "bob"]  # a JSON array, not text
    assert records[1]["human_verdicts"] == []


@settings(deadline=None)  # a property of the text, not a speed: a loaded machine missed the 200 ms default
@given(st.lists(st.text(alphabet=st.sampled_from(list("'=+-@\t\r\n a\"é,;")), max_size=8), max_size=20))
def test_neutralise_and_restore_are_inverse(cells):
    series = pd.Series(cells, dtype=object)
    safe = E.neutralise(series)
    assert not any(c.startswith(("=", "+", "-", "@", "\t", "\r")) for c in safe)
    assert E.unneutralise(safe).tolist() == cells


def test_manifest_counts_and_provenance(engine, reviewed):
    frame = E.build_export(engine, reviewed.id)
    data = E.to_csv_bytes(frame)
    info = E.manifest(engine, reviewed.id, frame, data=data)
    assert info["tool_version"] == scoring.__version__
    assert info["run"]["sha256"] == reviewed.sha256 == store.sha256_bytes(csv_bytes(ROWS))
    assert (info["run"]["name"], info["run"]["model"], info["run"]["language"]) == ("model_hindi", "model", "Hindi")
    assert info["counts"]["final_source"] == {"human": 3, "adjudicated": 0, "auto": 3, "judge": 0, "pending": 2}
    assert info["counts"]["final_verdict"] == {"correct": 4, "wrong": 2, "pending": 2}
    assert info["counts"]["human_verdict"] == {"correct": 2, "wrong": 1, "conflict": 1}
    assert info["rows"] == 8
    assert "answer.lower() in response.lower()" in info["protocols"]["exact_substring"]
    assert "set(golden_words) <= set(response_words)" in info["protocols"]["word_overlap"]
    assert info["export_sha256"] == store.sha256_bytes(data)
    assert info["human_verdicts"]["column"] == E.VERDICTS_COLUMN == "human_verdicts"
    assert info["human_verdicts"]["fields"] == ["reviewer", "verdict", "reason", "note", "reviewed_at"]
    assert info["exported_at"].endswith("Z")
    json.dumps(info)  # serialisable as is


# --------------------------------------------------------------------------- round trip

T1 = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
T2 = datetime(2026, 2, 3, 4, 5, 6, 654321, tzinfo=UTC)


@pytest.fixture
def conflicted(engine, reviewed, keys):
    """``reviewed`` plus a conflict on the both_fail row 5, with different reasons, notes and times."""
    V.record_mark(engine, keys[5], reviewed.id, "alice", "correct", "paraphrase", "=SUM(A1) says so", T1)
    V.record_mark(engine, keys[5], reviewed.id, "@bob", "wrong", "different claim", "-1 for this\nsecond line", T2)
    return reviewed


def old_format(frame: pd.DataFrame) -> pd.DataFrame:
    """An export as it was before the per-reviewer column."""
    return frame.drop(columns=[E.VERDICTS_COLUMN])


def jsonl_part(data: bytes) -> pd.DataFrame:
    """The export-derived columns of a JSONL export, values as JSON gives them (lists stay lists)."""
    frame = pd.DataFrame.from_records([json.loads(line) for line in data.decode("utf-8").splitlines()])
    return frame[[c for c in frame.columns if c in E.DERIVED_COLUMNS]]


def final_of(engine, run_id: int) -> pd.DataFrame:
    return E.build_export(engine, run_id)[["human_verdict", "reviewers", "final_verdict", "final_source"]]


@pytest.mark.parametrize("bom", [False, True])
def test_round_trip_restores_verdicts_on_a_fresh_database(tmp_path, engine, conflicted, keys, bom):
    exported = E.to_csv_bytes(E.build_export(engine, conflicted.id), bom=bom)
    fresh = make_engine(f"sqlite:///{tmp_path}/fresh.db")
    result = ingest.save_run(fresh, exported, "run_export.csv")
    assert result.created
    assert result.restored == 8  # alice+bob on rows 0, 2 and 5 (two conflicts), carol on rows 4 and 6
    assert result.run.extra_columns == ["note_input", "source"]  # no export column stored as an extra
    assert result.table.columns == ["question", "answer", "Domain", "language", "response", "note_input", "source"]
    scored = store.load_scored(fresh, result.run.id)
    assert scored["question"].tolist() == [r[0] for r in ROWS]  # the neutralising quote is undone
    assert scored["response"].tolist() == [r[3] for r in ROWS]
    assert scored["source"].tolist() == [r[5] for r in ROWS]
    assert scored["item_key"].tolist() == [item_key(r[0], r[1], r[3]) for r in ROWS]
    # every reviewer's verdict, reason, note and time, to the microsecond, conflicts included
    assert current_set(fresh, exact=True) == current_set(engine, exact=True)
    cur = V.current_verdicts(fresh).set_index(["item_key", "reviewer"])
    assert cur.loc[(keys[5], "alice"), ["verdict", "reason", "note"]].tolist() == [
        "correct",
        "paraphrase",
        "=SUM(A1) says so",  # not "'=SUM...": the JSON cell is never neutralised
    ]
    assert cur.loc[(keys[5], "@bob"), ["verdict", "note"]].tolist() == ["wrong", "-1 for this\nsecond line"]
    assert cur.loc[(keys[5], "alice"), "reviewed_at"] == T1 and cur.loc[(keys[5], "@bob"), "reviewed_at"] == T2
    # conflicts stay conflicts: the both_fail row stays pending instead of turning wrong
    again = final_of(fresh, result.run.id)
    assert tuple(again.iloc[5]) == ("conflict", "@bob;alice", "pending", "pending")
    assert tuple(again.iloc[2]) == ("conflict", "alice;bob", "pending", "pending")
    pd.testing.assert_frame_equal(again, final_of(engine, conflicted.id))
    assert len(V.conflicts(fresh)) == 2
    # idempotent: restoring the same file again records nothing
    events = event_count(fresh)
    _, part = E.split_exported(load_bytes(exported, "x.csv").frame)
    assert E.restore_verdicts(fresh, result.run.id, scored, part) == 0
    assert event_count(fresh) == events


def test_round_trip_through_jsonl(tmp_path, engine, conflicted):
    """JSONL carries the verdicts as a JSON array; restoring it gives the same verdicts and conflicts."""
    data = E.to_jsonl_bytes(E.build_export(engine, conflicted.id))
    record = json.loads(data.decode("utf-8").splitlines()[5])
    assert [(d["reviewer"], d["verdict"], d["reviewed_at"]) for d in record[E.VERDICTS_COLUMN]] == [
        ("@bob", "wrong", "2026-02-03T04:05:06.654321Z"),
        ("alice", "correct", "2026-01-02T03:04:05.123456Z"),
    ]
    fresh = make_engine(f"sqlite:///{tmp_path}/fresh.db")
    run = ingest.save_run(fresh, csv_bytes(ROWS), "model_hindi.csv").run
    scored = store.load_scored(fresh, run.id)
    assert E.restore_verdicts(fresh, run.id, scored, jsonl_part(data)) == 8
    assert current_set(fresh, exact=True) == current_set(engine, exact=True)
    assert tuple(final_of(fresh, run.id).iloc[5]) == ("conflict", "@bob;alice", "pending", "pending")
    events = event_count(fresh)
    assert E.restore_verdicts(fresh, run.id, scored, jsonl_part(data)) == 0
    assert event_count(fresh) == events


def test_an_uploaded_jsonl_export_restores_every_verdict(tmp_path, engine, conflicted):
    """Issue 19: the tool's own JSONL export uploads back as CSV does: the same rows (raw text, no
    neutralising quote to undo), every reviewer's verdict and the conflicts."""
    data = E.to_jsonl_bytes(E.build_export(engine, conflicted.id))
    fresh = make_engine(f"sqlite:///{tmp_path}/fresh.db")
    result = ingest.save_run(fresh, data, "run_export.jsonl")
    assert result.created and result.restored == 8
    assert result.run.extra_columns == ["note_input", "source"]
    scored = store.load_scored(fresh, result.run.id)
    assert scored["question"].tolist() == [r[0] for r in ROWS]
    assert scored["response"].tolist() == [r[3] for r in ROWS]
    assert current_set(fresh, exact=True) == current_set(engine, exact=True)
    pd.testing.assert_frame_equal(final_of(fresh, result.run.id), final_of(engine, conflicted.id))


def test_uploading_the_export_twice_adds_nothing_the_second_time(tmp_path, engine, conflicted):
    exported = E.to_csv_bytes(E.build_export(engine, conflicted.id))
    fresh = make_engine(f"sqlite:///{tmp_path}/fresh.db")
    assert ingest.save_run(fresh, exported, "a.csv").restored == 8
    events, verdicts_before = event_count(fresh), current_set(fresh, exact=True)
    same = ingest.save_run(fresh, exported, "a.csv")  # identical bytes: the same run opens
    assert not same.created and event_count(fresh) == events
    # other bytes, the same rows (a BOM): the same run opens as the same content, nothing restored again
    other_bytes = ingest.save_run(fresh, codecs.BOM_UTF8 + exported, "b.csv")
    assert (other_bytes.created, other_bytes.found, other_bytes.run.id) == (False, "same_rows", same.run.id)
    assert other_bytes.restored == 0
    assert event_count(fresh) == events and current_set(fresh, exact=True) == verdicts_before


def test_round_trip_into_the_same_database_adds_nothing(engine, conflicted):
    before, events = current_set(engine, exact=True), event_count(engine)
    exported = E.to_csv_bytes(E.build_export(engine, conflicted.id))
    result = ingest.save_run(engine, exported, "again.csv")
    assert result.created and result.run.id != conflicted.id
    assert result.restored == 0
    assert event_count(engine) == events
    assert current_set(engine, exact=True) == before


def test_a_newer_verdict_is_not_reverted_by_an_older_export(tmp_path, engine, conflicted, keys):
    exported = E.to_csv_bytes(E.build_export(engine, conflicted.id))
    later = datetime(2026, 3, 1, tzinfo=UTC)
    V.record_mark(engine, keys[5], conflicted.id, "alice", "wrong", "", "changed my mind", later)
    V.record_mark(engine, keys[7], conflicted.id, "dave", "correct")  # not in the export: untouched
    before = current_set(engine, exact=True)
    assert ingest.save_run(engine, exported, "older.csv").restored == 0
    assert current_set(engine, exact=True) == before


def test_a_verdict_edited_in_the_export_is_recorded(engine, conflicted, keys):
    frame = E.build_export(engine, conflicted.id)
    carol = frame.loc[6, E.VERDICTS_COLUMN][0]
    carol.update(verdict="correct", reason="Paraphrase")  # same time, other verdict: the file's edit wins
    frame.loc[6, "human_verdict"] = "correct"
    result = ingest.save_run(engine, E.to_csv_bytes(frame), "edited.csv")
    assert result.restored == 1
    cur = V.current_verdicts(engine).set_index(["item_key", "reviewer"])
    assert cur.loc[(keys[6], "carol"), ["verdict", "reason"]].tolist() == ["correct", "paraphrase"]


def test_old_format_export_restores_as_before(tmp_path, engine, conflicted, keys):
    """An export without the per-reviewer column: agreed rows restore, conflicts cannot."""
    exported = E.to_csv_bytes(old_format(E.build_export(engine, conflicted.id)))
    fresh = make_engine(f"sqlite:///{tmp_path}/fresh.db")
    result = ingest.save_run(fresh, exported, "old_export.csv")
    assert result.restored == 4  # alice+bob on row 0, carol on rows 4 and 6; the two conflicts are not restorable
    conflict_free = {row for row in current_set(engine) if row[0] not in (keys[2], keys[5])}
    assert current_set(fresh) == conflict_free
    assert result.run.extra_columns == ["note_input", "source"]
    events = event_count(fresh)
    assert ingest.save_run(fresh, codecs.BOM_UTF8 + exported, "old_again.csv").restored == 0
    assert event_count(fresh) == events


def test_old_format_records_a_changed_verdict(engine, reviewed, keys):
    frame = old_format(E.build_export(engine, reviewed.id))
    frame.loc[6, "human_verdict"] = "correct"
    frame.loc[6, "reason"] = "Paraphrase"
    frame.loc[1, ["human_verdict", "reviewers"]] = ["wrong", "dave"]
    result = ingest.save_run(engine, E.to_csv_bytes(frame), "edited.csv")
    assert result.restored == 2
    cur = V.current_verdicts(engine).set_index(["item_key", "reviewer"])
    assert cur.loc[(keys[6], "carol"), ["verdict", "reason"]].tolist() == ["correct", "paraphrase"]
    assert cur.loc[(keys[1], "dave"), "verdict"] == "wrong"


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("human_verdict", "maybe", "Data row 2.*human_verdict 'maybe'"),
        ("reviewers", "", "Data row 2.*no reviewer"),
        ("reason", "vibes", "Data row 2.*reason 'vibes'"),
    ],
)
def test_bad_verdict_cells_refuse_the_upload(engine, reviewed, column, value, message):
    frame = old_format(E.build_export(engine, reviewed.id))
    frame.loc[1, ["human_verdict", "reviewers"]] = ["correct", "dave"]
    frame.loc[1, column] = value
    runs = len(store.list_runs(engine))
    with pytest.raises(InputError, match=message):
        ingest.save_run(engine, E.to_csv_bytes(frame), "bad.csv")
    assert len(store.list_runs(engine)) == runs  # nothing stored


GOOD = {"reviewer": "dave", "verdict": "correct", "reason": "", "note": "", "reviewed_at": "2026-01-01T00:00:00Z"}


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ('[{"reviewer": "dave", "verdict": "correct"', r"not valid JSON \(Expecting"),
        ("not json at all", "not valid JSON"),
        ('{"reviewer": "dave"}', "expected a JSON list of verdicts, found a JSON object"),
        ('"correct"', "found a JSON string"),
        ("[1]", "verdict 1: expected an object"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply|not valid JSON"),
        ("1" * 5000, "not valid JSON"),
        (json.dumps([{**GOOD, "verdict": "maybe"}]), "verdict 1: Unknown verdict 'maybe'"),
        (json.dumps([{**GOOD, "verdict": None}]), "verdict 1: Unknown verdict"),
        (json.dumps([{**GOOD, "reviewer": ""}]), "verdict 1: A reviewer name is required"),
        (json.dumps([{**GOOD, "reviewer": "a;b"}]), "verdict 1: Reviewer name 'a;b' may not contain"),
        (json.dumps([{**GOOD, "reviewer": 7}]), "verdict 1: reviewer must be text, found a JSON number"),
        (json.dumps([{**GOOD, "note": ["x"]}]), "verdict 1: note must be text, found a JSON list"),
        (json.dumps([{**GOOD, "reason": "vibes"}]), "verdict 1: Unknown reason 'vibes'"),
        (json.dumps([{**GOOD, "reviewed_at": "yesterday"}]), "verdict 1: reviewed_at 'yesterday' is not an ISO"),
        (json.dumps([GOOD, {**GOOD, "verdict": "wrong"}]), "verdict 2: reviewer 'dave' is listed twice"),
    ],
)
def test_malformed_verdicts_cell_is_a_clear_error(engine, reviewed, cell, message):
    """The JSON cell is untrusted text: an InputError naming the row and the column, nothing stored."""
    frame = E.build_export(engine, reviewed.id)
    frame[E.VERDICTS_COLUMN] = frame[E.VERDICTS_COLUMN].astype(object)
    frame.loc[1, ["human_verdict", "reviewers"]] = ["correct", "dave"]
    frame.at[1, E.VERDICTS_COLUMN] = cell
    runs, events = len(store.list_runs(engine)), event_count(engine)
    with pytest.raises(InputError, match=f"^Data row 2 of the exported file, column 'human_verdicts'.*({message})"):
        ingest.save_run(engine, E.to_csv_bytes(frame), "bad.csv")
    assert len(store.list_runs(engine)) == runs and event_count(engine) == events


@pytest.mark.parametrize(
    ("human_verdict", "reviewers"),
    [("wrong", "carol"), ("correct", "carol;dave"), ("", ""), ("conflict", "carol")],
)
def test_summary_columns_that_disagree_with_the_verdicts_column_are_refused(engine, reviewed, human_verdict, reviewers):
    frame = E.build_export(engine, reviewed.id)
    frame.loc[4, ["human_verdict", "reviewers"]] = [human_verdict, reviewers]  # row 4: carol, correct
    with pytest.raises(InputError, match="Data row 5 .*do not match column 'human_verdicts'.*carol: correct"):
        ingest.save_run(engine, E.to_csv_bytes(frame), "edited.csv")


def test_verdicts_column_survives_csv_neutralisation(tmp_path, engine, run, keys):
    """Notes and names a spreadsheet could run stay raw inside the JSON cell; the cell itself is safe."""
    tricky = ['=HYPERLINK("x")', "+1", "-2", "@SUM(A1)", "'=already quoted", '\u2028line\tsep"', "नोट"]
    for i, note in enumerate(tricky):
        V.record_mark(engine, keys[i], run.id, f"={i}", "correct", "", note)
        V.record_mark(engine, keys[i], run.id, "-x", "wrong", "other", note)
    data = E.to_csv_bytes(E.build_export(engine, run.id))
    table = parse_csv(data)
    col = table[0].index(E.VERDICTS_COLUMN)
    for row in table[1 : 1 + len(tricky)]:
        assert row[col].startswith('[{"reviewer":'), row[col]  # never neutralised
        assert "\n" not in row[col] and "\r" not in row[col]  # one line: JSON escapes them
    for row in table[1:]:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    fresh = make_engine(f"sqlite:///{tmp_path}/fresh.db")
    assert ingest.save_run(fresh, data, "tricky.csv").restored == 2 * len(tricky)
    assert current_set(fresh, exact=True) == current_set(engine, exact=True)
    notes = V.current_verdicts(fresh).set_index(["item_key", "reviewer"])["note"]
    assert [notes[(keys[i], f"={i}")] for i in range(len(tricky))] == [n.strip() for n in tricky]


def test_formula_like_header_is_neutralised_and_restored(tmp_path, engine):
    header = ("question", "answer", "Domain", "response", "=HYPERLINK(x)")
    run = ingest.save_run(engine, csv_bytes([("q", "a", "Art", "a", "-1")], header=header), "h.csv").run
    data = E.to_csv_bytes(E.build_export(engine, run.id))
    assert parse_csv(data)[0][7] == "'=HYPERLINK(x)"  # after row, model and the five inputs
    fresh = make_engine(f"sqlite:///{tmp_path}/fresh.db")
    back = ingest.save_run(fresh, data, "h_export.csv")
    assert back.run.extra_columns == ["=HYPERLINK(x)"]
    assert store.load_scored(fresh, back.run.id)["=HYPERLINK(x)"].tolist() == ["-1"]


def test_ordinary_file_with_a_bucket_column_is_not_an_export(engine):
    header = ("question", "answer", "Domain", "response", "bucket")
    data = csv_bytes([("q", "a", "Art", "'=kept as is", "x")], header=header)
    result = ingest.save_run(engine, data, "plain.csv")
    assert result.restored == 0
    assert result.run.extra_columns == ["bucket"]
    assert store.load_scored(engine, result.run.id)["response"].tolist() == ["'=kept as is"]


# --------------------------------------------------------------------------- CLI


def test_cli_export_writes_file_and_manifest(tmp_path, db_url, engine, reviewed, capsys):
    out = tmp_path / "out" / "adjudicated.csv"
    out.parent.mkdir()
    assert main(["export", "--run", str(reviewed.id), "--out", str(out), "--db", db_url]) == 0
    assert out.read_bytes() == E.to_csv_bytes(E.build_export(engine, reviewed.id))
    side = json.loads((tmp_path / "out" / "adjudicated.csv.manifest.json").read_text(encoding="utf-8"))
    assert side["counts"]["final_source"]["human"] == 3
    assert side["export_sha256"] == store.sha256_bytes(out.read_bytes())
    assert "wrote 8 rows" in capsys.readouterr().out

    jsonl = tmp_path / "a.jsonl"
    assert main(["export", "--run", str(reviewed.id), "--out", str(jsonl), "--format", "jsonl", "--db", db_url]) == 0
    assert json.loads(jsonl.read_text(encoding="utf-8").splitlines()[0])["question"] == "=1+1"
    assert json.loads((tmp_path / "a.jsonl.manifest.json").read_text())["format"] == "jsonl"

    bom = tmp_path / "b.csv"
    assert main(["export", "--run", str(reviewed.id), "--out", str(bom), "--bom", "--db", db_url]) == 0
    assert bom.read_bytes().startswith(codecs.BOM_UTF8)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--run", "999"], "No run with id 999"),
        (["--run", "1", "--db", "sqlite:///{tmp}/missing.db"], "No database at"),
        (["--run", "1", "--format", "jsonl", "--bom"], "--bom applies to CSV only"),
        (["--run", "1", "--out", "{tmp}/no/such/dir/x.csv"], "Cannot write"),
    ],
)
def test_cli_export_bad_input_exits_2_with_one_line(tmp_path, db_url, reviewed, capsys, args, message):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if "--out" not in args:
        args += ["--out", str(tmp_path / "x.csv")]
    if "--db" not in args:
        args += ["--db", db_url]
    assert main(["export", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err
    assert not (tmp_path / "x.csv").exists()
    assert not (tmp_path / "missing.db").exists()


def test_python_m_scoring_export_entry_point(tmp_path, db_url, reviewed):
    out = tmp_path / "e.csv"
    ok = subprocess.run(
        [sys.executable, "-m", "scoring", "export", "--run", str(reviewed.id), "--out", str(out), "--db", db_url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    assert parse_csv(out.read_bytes())[1][2] == "'=1+1"  # after the row and the model
    bad = subprocess.run(
        [sys.executable, "-m", "scoring", "export", "--run", "77", "--out", str(out), "--db", db_url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == ["error: No run with id 77."]


def test_cli_export_with_judge_labels_settles_only_when_asked(tmp_path, db_url, engine, run):
    """--judge adds judge_label; --judge-settles lets it settle pending overlap_only rows."""
    from scoring.store import judge_cache

    scored = store.load_scored(engine, run.id)
    pending = scored[scored["bucket"] == "overlap_only"]
    assert len(pending), "the fixture needs an overlap_only row"
    key = pending["item_key"].iloc[0]
    judge_cache.save(
        engine, [{"cache_key": "c" * 64, "item_key": key, "model": "m", "prompt_version": "v", "label": "INCORRECT"}]
    )
    plain, with_judge, settled = (tmp_path / f"{n}.csv" for n in ("plain", "judge", "settled"))
    assert main(["export", "--run", str(run.id), "--out", str(plain), "--db", db_url]) == 0
    assert main(["export", "--run", str(run.id), "--out", str(with_judge), "--db", db_url, "--judge"]) == 0
    assert main(["export", "--run", str(run.id), "--out", str(settled), "--db", db_url, "--judge-settles"]) == 0

    def row_of(path):
        rows = parse_csv(path.read_bytes())
        header = rows[0]
        found = [dict(zip(header, r)) for r in rows[1:] if r[header.index("response")] == pending["response"].iloc[0]]
        return header, found[0]

    header, row = row_of(plain)
    assert "judge_label" not in header and row["final_source"] == "pending"
    header, row = row_of(with_judge)
    assert row["judge_label"] == "INCORRECT" and row["final_source"] == "pending"
    _, row = row_of(settled)
    assert (row["final_verdict"], row["final_source"]) == ("wrong", "judge")
    side = json.loads((tmp_path / "settled.csv.manifest.json").read_text(encoding="utf-8"))
    assert side["counts"]["final_source"]["judge"] >= 1


# --- the polars export path (issue 10) ----------------------------------------------------------


@pytest.mark.parametrize("labels", ["none", "labels", "settles"])
@pytest.mark.parametrize("bom", [False, True])
def test_export_table_csv_equals_build_export_csv(engine, conflicted, keys, labels, bom) -> None:
    """The fast CSV (export_table + table_csv_bytes) is byte for byte the file build_export +
    to_csv_bytes give: reviewed rows, conflicts, untouched rows, judge labels settling or not."""
    judge = None if labels == "none" else {keys[1]: "CORRECT", keys[3]: "incorrect ", keys[5]: "NOT_ATTEMPTED"}
    settles = labels == "settles"
    slow = E.to_csv_bytes(E.build_export(engine, conflicted.id, judge_labels=judge, judge_settles=settles), bom=bom)
    table = E.export_table(engine, conflicted.id, judge_labels=judge, judge_settles=settles)
    assert E.table_csv_bytes(table, bom=bom) == slow
    assert parse_csv(slow)[1:] and len(parse_csv(slow)) == len(keys) + 1
    counts = E.manifest(engine, conflicted.id, table)["counts"]
    assert counts == E.manifest(engine, conflicted.id, E.build_export(engine, conflicted.id, judge, settles))["counts"]


def test_export_table_keeps_input_columns_named_like_stored_ones(engine) -> None:
    """Input columns called ``bucket``, ``item_key`` or ``note`` are exported with their own
    values (``bucket`` and ``note`` under ``<name>_input``), not the stored ones, on both paths."""
    data = b"question,answer,Domain,response,bucket,item_key,note\nq,a,D,a,mine,k1,n1\nq2,b,D,x,yours,k2,n2\n"
    run = ingest.save_run(engine, data, "named.csv").run
    frame = E.build_export(engine, run.id)
    assert frame["note_input"].tolist() == ["n1", "n2"]
    assert frame.columns.tolist()[7:10] == ["bucket_input", "item_key", "note_input"]
    assert frame["bucket_input"].tolist() == ["mine", "yours"] and frame["item_key"].tolist() == ["k1", "k2"]
    assert E.table_csv_bytes(E.export_table(engine, run.id)) == E.to_csv_bytes(frame)


def test_export_cli_uses_the_fast_path_and_writes_the_same_file(tmp_path, db_url, engine, conflicted) -> None:
    out = tmp_path / "fast.csv"
    assert main(["export", "--run", str(conflicted.id), "--out", str(out), "--db", db_url]) == 0
    assert out.read_bytes() == E.to_csv_bytes(E.build_export(engine, conflicted.id))


# --- adjudication (issue 11) --------------------------------------------------------------------


def test_an_adjudicated_conflict_is_final_and_exported_with_its_history(engine, conflicted, keys) -> None:
    """Row 2 (alice correct, bob wrong) is decided by ana: final verdict "wrong", source
    "adjudicated", with adjudicator and decision in the export on both paths; the reviewers'
    verdicts stay in human_verdicts; a later decision replaces the earlier and both stay logged."""
    V.record_adjudication(engine, keys[2], conflicted.id, "ana", "correct", "first look")
    V.record_adjudication(engine, keys[2], conflicted.id, "ana", "wrong", "golden answer is narrower")
    frame = E.build_export(engine, conflicted.id)
    row = frame.iloc[2]
    assert (row["human_verdict"], row["final_verdict"], row["final_source"]) == ("conflict", "wrong", "adjudicated")
    decided = (row["adjudicator"], row["decision"], row["adjudication_note"])
    assert decided == ("ana", "wrong", "golden answer is narrower")
    assert {v["reviewer"] for v in row[E.VERDICTS_COLUMN]} == {"alice", "bob"}
    assert frame.iloc[5]["final_source"] == "pending"  # the other conflict waits for its decision
    assert (frame["adjudicator"] != "").sum() == 1
    assert E.table_csv_bytes(E.export_table(engine, conflicted.id)) == E.to_csv_bytes(frame)
    assert E.manifest(engine, conflicted.id, frame)["counts"]["final_source"]["adjudicated"] == 1
    assert V.adjudications(engine).loc[keys[2], "decision"] == "wrong"
    events = verdict_log.read_events(engine, [keys[2]], actions=(V.ADJUDICATE,))
    assert events["verdict"].tolist() == ["correct", "wrong"]  # the history is kept
    assert set(V.current_verdicts(engine, [keys[2]])["reviewer"]) == {"alice", "bob"}  # not a reviewer's mark


def test_an_adjudication_is_refused_with_a_bad_decision(engine, keys) -> None:
    with pytest.raises(ValueError):
        V.record_adjudication(engine, keys[0], 1, "ana", "maybe")
    with pytest.raises(ValueError):
        V.record_adjudication(engine, keys[0], 1, "", "correct")


def test_an_uploaded_export_restores_its_adjudications_once_and_never_over_a_decision(
    tmp_path, engine, conflicted, keys
) -> None:
    """ana's decision on row 2 travels in the export: a fresh database gets it back (final source
    adjudicated, the same file as before), uploading the file again adds nothing, and a database
    where the item was decided otherwise keeps its own decision."""
    V.record_adjudication(engine, keys[2], conflicted.id, "ana", "wrong", "golden answer, =narrower")
    exported = E.to_csv_bytes(E.build_export(engine, conflicted.id))
    fresh = make_engine(f"sqlite:///{tmp_path}/fresh.db")
    result = ingest.save_run(fresh, exported, "adjudicated_export.csv")
    assert (result.restored, result.decisions) == (8, 1)
    decided = V.adjudications(fresh).loc[keys[2]]
    assert (decided["adjudicator"], decided["decision"], decided["adjudication_note"]) == (
        "ana",
        "wrong",
        "golden answer, =narrower",
    )
    pd.testing.assert_frame_equal(final_of(fresh, result.run.id), final_of(engine, conflicted.id))
    assert final_of(fresh, result.run.id).iloc[2]["final_source"] == "adjudicated"
    _, part = E.split_exported(load_bytes(exported, "x.csv").frame)
    assert V.restore_adjudications(fresh, result.run.id, keys, part) == 0  # idempotent
    # The source database: the same decision is not added twice; a different one is kept.
    V.record_adjudication(engine, keys[2], conflicted.id, "ana", "correct", "second look")
    assert V.restore_adjudications(engine, conflicted.id, keys, part) == 0
    assert V.adjudications(engine).loc[keys[2], "decision"] == "correct"
    fresh.dispose()


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [("decision", "maybe", "Data row 3 .*column 'decision'.*'maybe'"), ("adjudicator", "", "Data row 3 .*adjudicator")],
)
def test_a_bad_decision_cell_refuses_the_upload(engine, conflicted, keys, column, value, message) -> None:
    V.record_adjudication(engine, keys[2], conflicted.id, "ana", "wrong")
    frame = E.build_export(engine, conflicted.id)
    frame.loc[2, column] = value
    runs = len(store.list_runs(engine))
    with pytest.raises(InputError, match=message):
        ingest.save_run(engine, E.to_csv_bytes(frame), "bad_decision.csv")
    assert len(store.list_runs(engine)) == runs


def test_stored_judge_labels_with_or_without_the_runs_keys(engine, run) -> None:
    """Nothing judged: no labels (answered without reading the run). A label stored: the same
    labels whether the caller passes the run's keys or the run's rows are read."""
    scored = store.load_scored(engine, run.id)
    keys = scored["item_key"].tolist()
    assert E.stored_judge_labels(engine, run.id) == {} == E.stored_judge_labels(engine, run.id, keys)
    judge_cache.save(
        engine, [{"cache_key": "d" * 64, "item_key": keys[1], "model": "m", "prompt_version": "v", "label": "CORRECT"}]
    )
    assert E.stored_judge_labels(engine, run.id) == {keys[1]: "CORRECT"}
    assert E.stored_judge_labels(engine, run.id, keys) == {keys[1]: "CORRECT"}
    assert E.stored_judge_labels(engine, run.id, keys[:1]) == {}  # only the keys asked for
