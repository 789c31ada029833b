"""``python -m scoring compare`` end to end: text and JSON reports, ``--out``, ``--unmatched``,
``--id``, errors (one line, exit code 2), and stored runs (``--run``) from a real SQLite database
with human marks and judge labels."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from scoring import compare as C
from scoring import ingest, review, store
from scoring.cli import main
from scoring.compare.database_runs import stored_run
from scoring.store import judge_cache, make_engine

HEADER = ["qid", "question", "answer", "Domain", "response"]
# Model A: q1 overlap_only, q2 both_pass, q3 overlap_only, q4 exact_only, q5 both_fail; q6 twice.
ROWS_A = [
    ["1", "Where is the valley?", "Narmada valley", "Geography", "Narmada River valley"],
    ["2", "Coldest reading?", "-5 degrees", "Science", "it was -5 degrees"],
    ["3", "Which ideals?", "Chola ideals", "Art", "Chola and Hoysala ideals"],
    ["4", "Fruit?", "amalak", "Art", "Amalaka"],
    ["5", "Capital?", "Delhi", "History", "Mumbai"],
    ["6", "Dance?", "Kathakali", "Art", "Kathakali"],
    ["6", "Dance?", "Kathakali", "Art", "Mohiniyattam"],
]
# Model B: right on everything but q2; q7 only here.
ROWS_B = [
    ["2", "Coldest reading?", "-5 degrees", "Science", "minus five"],
    ["1", "Where is the valley?", "Narmada valley", "Geography", "Narmada valley"],
    ["3", "Which ideals?", "Chola ideals", "Art", "Chola ideals"],
    ["4", "Fruit?", "amalak", "Art", "amalak"],
    ["5", "Capital?", "Delhi", "History", "Delhi"],
    ["7", "Temple town?", "Madurai", "Art", "Madurai"],
]
# The same questions in Hindi: nothing matches by text, everything by qid.
ROWS_HI = [
    ["1", "घाटी कहाँ है?", "नर्मदा घाटी", "भूगोल", "नर्मदा घाटी"],
    ["2", "सबसे ठंडा?", "-5 डिग्री", "विज्ञान", "-5 डिग्री"],
    ["5", "राजधानी?", "दिल्ली", "इतिहास", "मुंबई"],
]


def csv_bytes(rows: list[list[str]], header: list[str] = HEADER) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([header, *rows])
    return buf.getvalue().encode("utf-8")


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, rows in (("model_a.csv", ROWS_A), ("model_b.csv", ROWS_B), ("model_a_hindi.csv", ROWS_HI)):
        out[name] = tmp_path / name
        out[name].write_bytes(csv_bytes(rows))
    return out


def run_main(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["compare", *(str(a) for a in args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


# --------------------------------------------------------------------------- files


def test_text_report_as_a_user_sees_it(run_cli, files) -> None:
    proc = run_cli("scoring", "compare", files["model_a.csv"], files["model_b.csv"])
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.splitlines()[0] == "Compared 2 runs matched on text (question, answer): 5 matched questions"
    assert "7 rows, 2 unmatched (duplicate key 2, not in every run 0, empty key 0); sources: exact, overlap" in out
    assert "6 rows, 1 unmatched (duplicate key 0, not in every run 1, empty key 0); sources: exact, overlap" in out
    assert "Exact substring" in out and "Word overlap" in out
    assert "interval: Newcombe hybrid score interval for paired data (Newcombe 1998, method 10)" in out
    assert "test: McNemar exact test" in out and "Holm" not in out
    # exact, q1..q5: A [F, T, F, T, F], B [T, F, T, T, T]: b = 1 (q2), c = 3 (q1, q3, q5).
    exact = next(line for line in out.splitlines() if line.startswith("exact ") and "model_a.csv" in line)
    assert exact.split()[3:6] == ["5", "1", "3"]  # n, b, c
    assert exact.split()[-1] == "0.625"  # McNemar exact, b=1 c=3: 2 * (1 + 4) / 2^4
    assert "model_a.csv row 6: duplicate key (2 rows of model_a.csv have this key)" in out
    assert "model_b.csv row 6: not in every run (not in model_a.csv): question 'Temple town?'" in out
    assert proc.stderr == ""


def test_json_report_carries_the_same_figures(capsys, files) -> None:
    code, out, _ = run_main(capsys, files["model_a.csv"], files["model_b.csv"], "--json")
    assert code == 0
    report = json.loads(out)
    assert report["key"] == {"columns": ["question", "answer"], "by_id": False, "text": "text (question, answer)"}
    assert report["matched"] == 5 and report["advice"] is None
    assert [r["label"] for r in report["runs"]] == ["model_a.csv", "model_b.csv"]
    assert report["runs"][0]["unmatched"] == {"duplicate key": 2, "not in every run": 0, "empty key": 0, "total": 2}
    assert report["runs"][1]["unmatched"] == {"duplicate key": 0, "not in every run": 1, "empty key": 0, "total": 1}
    assert report["methods"] == {"interval": C.INTERVAL_METHOD, "test": C.TEST_METHOD, "adjustment": None}
    exact = next(p for p in report["paired"] if p["source"] == "exact")
    assert (exact["n"], exact["b"], exact["c"], exact["both_right"], exact["both_wrong"]) == (5, 1, 3, 1, 0)
    assert exact["p_value"] == pytest.approx(0.625) and exact["p_holm"] is None
    assert exact["difference"] == pytest.approx((1 - 3) / 5)
    overlap = next(p for p in report["paired"] if p["source"] == "overlap")
    assert (overlap["b"], overlap["c"]) == (1, 2)  # A [T, T, T, F, F], B [T, F, T, T, T]
    combined = [a for a in report["accuracy"] if a["source"] == "exact" and a["domain"] == "combined"]
    assert [(a["run"], a["n"], a["correct"]) for a in combined] == [("model_a.csv", 7, 3), ("model_b.csv", 6, 5)]
    assert {u["reason"] for u in report["unmatched_shown"]} == {C.DUPLICATE, C.NOT_EVERYWHERE}


def test_out_writes_one_row_per_matched_question_and_unmatched_writes_the_rest(capsys, files, tmp_path) -> None:
    out, rest = tmp_path / "matched.csv", tmp_path / "unmatched.csv"
    code, _, _ = run_main(capsys, files["model_a.csv"], files["model_b.csv"], "--out", out, "--unmatched", rest)
    assert code == 0
    header, rows = read_csv(out)
    assert header == [
        "question",
        "answer",
        "Domain",
        "row[model_a.csv]",
        "response[model_a.csv]",
        "exact[model_a.csv]",
        "overlap[model_a.csv]",
        "row[model_b.csv]",
        "response[model_b.csv]",
        "exact[model_b.csv]",
        "overlap[model_b.csv]",
    ]
    assert [r["question"] for r in rows] == [
        "Where is the valley?",
        "Coldest reading?",
        "Which ideals?",
        "Fruit?",
        "Capital?",
    ]
    assert [r["exact[model_a.csv]"] for r in rows] == ["False", "True", "False", "True", "False"]
    assert [r["overlap[model_a.csv]"] for r in rows] == ["True", "True", "True", "False", "False"]
    assert [r["exact[model_b.csv]"] for r in rows] == ["True", "False", "True", "True", "True"]
    assert [r["row[model_b.csv]"] for r in rows] == ["2", "1", "3", "4", "5"]
    assert rows[1]["response[model_b.csv]"] == "minus five"
    header, rows = read_csv(rest)
    assert header[:5] == ["run", "run_index", "row", "reason", "detail"]
    assert [(r["run"], r["row"], r["reason"], r["response"]) for r in rows] == [
        ("model_a.csv", "6", C.DUPLICATE, "Kathakali"),
        ("model_a.csv", "7", C.DUPLICATE, "Mohiniyattam"),
        ("model_b.csv", "6", C.NOT_EVERYWHERE, "Madurai"),
    ]


def test_languages_share_no_text_and_match_by_id(capsys, files, tmp_path) -> None:
    code, out, _ = run_main(capsys, files["model_a.csv"], files["model_a_hindi.csv"])
    assert code == 0
    assert "0 matched questions" in out.splitlines()[0]
    assert "note: These runs share no questions by text (question, answer)" in out and "Try --id qid." in out
    out_file = tmp_path / "by_id.csv"
    code, out, _ = run_main(
        capsys, files["model_a.csv"], files["model_a_hindi.csv"], "--id", "qid", "--json", "--out", out_file
    )
    report = json.loads(out)
    assert report["key"]["text"] == "id column 'qid'" and report["matched"] == 3
    header, rows = read_csv(out_file)
    assert header[:4] == ["qid", "question", "answer", "Domain"]
    assert "answer[model_a_hindi.csv]" in header
    assert [r["qid"] for r in rows] == ["1", "2", "5"]
    assert [r["answer[model_a_hindi.csv]"] for r in rows] == ["नर्मदा घाटी", "-5 डिग्री", "दिल्ली"]
    on = json.loads(run_main(capsys, files["model_a.csv"], files["model_a_hindi.csv"], "--on", "qid", "--json")[1])
    assert on["matched"] == 3 and on["key"]["by_id"] is True


def test_three_runs_print_holm_adjusted_p_values(capsys, files) -> None:
    code, out, _ = run_main(capsys, files["model_a.csv"], files["model_b.csv"], files["model_b.csv"])
    assert code == 0
    assert "Compared 3 runs" in out and "model_b.csv (2)" in out
    assert "adjustment: Holm step-down across all pairs of runs, per verdict source (p Holm)" in out
    assert "shared keys model_b.csv & model_b.csv (2): 6" in out
    assert "shared keys model_a.csv & model_b.csv: 5" in out
    code, out, _ = run_main(capsys, files["model_a.csv"], files["model_b.csv"], files["model_b.csv"], "--json")
    report = json.loads(out)
    assert report["methods"]["adjustment"] == C.ADJUSTMENT_METHOD
    exact = [p for p in report["paired"] if p["source"] == "exact"]
    assert len(exact) == 3 and all(p["p_holm"] is not None and p["p_holm"] >= p["p_value"] for p in exact)
    assert exact[2]["b"] == 0 and exact[2]["c"] == 0 and exact[2]["p_holm"] == 1.0


def _one_error_line(code: int, out: str, err: str, *words: str) -> str:
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert out == ""
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def test_bad_input_is_one_line_and_exit_code_2(capsys, files, tmp_path) -> None:
    a, b = files["model_a.csv"], files["model_b.csv"]
    no_id = tmp_path / "no_id.csv"
    no_id.write_bytes(csv_bytes([r[1:] for r in ROWS_B], HEADER[1:]))
    _one_error_line(*run_main(capsys, a, no_id, "--id", "qid"), "--id column 'qid'", "no_id.csv")
    _one_error_line(*run_main(capsys, a, b, "--on", "question,Answer"), "'Answer'", "model_a.csv")
    _one_error_line(*run_main(capsys, a), "at least two runs")
    _one_error_line(*run_main(capsys, a, tmp_path / "missing.csv"), "Cannot read", "missing.csv")
    _one_error_line(*run_main(capsys, a, b, "--on", " , "), "--on needs")
    _one_error_line(*run_main(capsys, a, "--run", "1", "--db", f"sqlite:///{tmp_path / 'none.db'}"), "No database at")
    _one_error_line(*run_main(capsys, a, b, "--out", tmp_path / "no_dir" / "x.csv"), "Cannot write")


def test_conflicting_key_flags_are_refused_by_the_parser(run_cli, files) -> None:
    proc = run_cli("scoring", "compare", files["model_a.csv"], files["model_b.csv"], "--on", "qid", "--id", "qid")
    assert proc.returncode == 2
    assert "not allowed with argument" in proc.stderr and "Traceback" not in proc.stderr


# --------------------------------------------------------------------------- stored runs


@pytest.fixture
def database(tmp_path: Path):
    """Two stored runs of models A and B; A's q3 marked correct by a reviewer (q1 stays
    pending), judge labels on q1 in both runs."""
    url = f"sqlite:///{tmp_path / 'review.db'}"
    engine = make_engine(url)
    run_a = ingest.save_run(engine, csv_bytes(ROWS_A[:5]), "model_a_hindi.csv").run
    run_b = ingest.save_run(engine, csv_bytes(ROWS_B), "model_b_hindi.csv").run
    keys_a = store.load_table(engine, run_a.id)["item_key"].to_list()
    table_b = store.load_table(engine, run_b.id)
    q1_b = table_b.filter(table_b["qid"] == "1")["item_key"].item()
    review.record_mark(engine, keys_a[2], run_a.id, "alice", "correct", "paraphrase")
    judge_cache.save(
        engine,
        [
            {"cache_key": "a" * 64, "item_key": keys_a[0], "model": "m", "prompt_version": "v", "label": "CORRECT"},
            {"cache_key": "b" * 64, "item_key": q1_b, "model": "m", "prompt_version": "v", "label": "INCORRECT"},
        ],
    )
    yield url, engine, run_a, run_b
    engine.dispose()


def test_stored_runs_bring_judge_labels_and_final_verdicts(database) -> None:
    url, engine, run_a, run_b = database
    a = stored_run(engine, run_a.id)
    assert a.label == f"#{run_a.id} model_a_hindi"
    assert a.sources == (C.EXACT, C.OVERLAP, C.JUDGE, C.ADJUDICATED)
    # q1 overlap_only, nobody marked it: pending; q3 overlap_only marked correct; q4 exact_only: auto correct.
    assert a.table[C.verdict_column(C.ADJUDICATED)].to_list() == [None, True, True, True, False]
    assert a.table[C.verdict_column(C.JUDGE)].to_list() == [True, None, None, None, None]
    assert a.table["item_key"].to_list() == store.load_table(engine, run_a.id)["item_key"].to_list()


def test_cli_compares_stored_runs_with_adjudicated_and_judge_verdicts(capsys, database) -> None:
    url, _, run_a, run_b = database
    code, out, err = run_main(capsys, "--run", run_a.id, "--run", run_b.id, "--db", url, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["matched"] == 5
    assert report["runs"][0]["sources"] == ["exact", "overlap", "judge", "adjudicated"]
    adj = next(p for p in report["paired"] if p["source"] == "adjudicated")
    # Decided in both: q2 (A right, B wrong), q3 and q4 (both right), q5 (A wrong, B right); q1 pending in A.
    assert (adj["n"], adj["excluded"], adj["b"], adj["c"], adj["both_right"], adj["both_wrong"]) == (4, 1, 1, 1, 2, 0)
    assert adj["rows_used"] == C.DECIDED_IN_BOTH
    judge = next(p for p in report["paired"] if p["source"] == "judge")
    assert (judge["n"], judge["excluded"], judge["b"], judge["c"]) == (1, 4, 1, 0)
    acc = next(
        r
        for r in report["accuracy"]
        if r["run"].startswith(f"#{run_a.id}") and r["source"] == "adjudicated" and r["domain"] == "combined"
    )
    assert (acc["correct"], acc["unknown"], acc["accuracy_low"], acc["accuracy_high"]) == (3, 1, 0.6, 0.8)
    code, text, _ = run_main(capsys, "--run", run_a.id, "--run", run_b.id, "--db", url)
    assert "Adjudicated (final verdict)" in text and "LLM judge" in text
    assert "adjudicated" in text and "1 matched rows left out (matched rows with a verdict in both runs" in text
    assert "60.0%–80.0%" in text


def test_cli_mixes_a_file_with_a_stored_run(capsys, database, files, tmp_path) -> None:
    url, _, run_a, _ = database
    out_file = tmp_path / "mixed.csv"
    code, out, err = run_main(capsys, files["model_b.csv"], "--run", run_a.id, "--db", url, "--json", "--out", out_file)
    assert code == 0, err
    report = json.loads(out)
    assert [r["label"] for r in report["runs"]] == ["model_b.csv", f"#{run_a.id} model_a_hindi"]
    assert {p["source"] for p in report["paired"]} == {"exact", "overlap"}  # the file has no judge, no final verdict
    header, rows = read_csv(out_file)
    assert f"adjudicated[#{run_a.id} model_a_hindi]" in header and len(rows) == 5
    assert [r[f"adjudicated[#{run_a.id} model_a_hindi]"] for r in rows][1] == ""  # q1 pending: empty, not False
    code, out, err = run_main(capsys, files["model_b.csv"], "--run", "999", "--db", url)
    _one_error_line(code, out, err, "No run with id 999.")


def test_files_may_come_after_a_run_and_an_id_error_lists_the_files_columns(capsys, database, files) -> None:
    """Issue 20: ``--run 3 a.csv`` works as ``a.csv --run 3`` does; a missing ``--id`` column lists the
    file's own columns, not the scores the comparison adds."""
    url, _, run_a, _ = database
    code, out, err = run_main(capsys, "--run", run_a.id, "--db", url, files["model_b.csv"], "--json")
    assert code == 0, err
    assert [r["label"] for r in json.loads(out)["runs"]] == ["model_b.csv", f"#{run_a.id} model_a_hindi"]
    code, out, err = run_main(capsys, files["model_a.csv"], "--id", "ref", files["model_b.csv"])
    assert code == 2 and "--id column 'ref' is not in model_a.csv" in err
    listed = err.split("(columns: ", 1)[1]
    assert "'question'" in listed and not any(c in listed for c in ("exact_correct", "bucket", "matching_words"))
