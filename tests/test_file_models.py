"""Issue 37, point 1: files holding several models. One run per model, matched on questions as
separate uploads are; the model's name from the file's column, else the harness's metadata, else
the file's name; identical bytes and the same rows in another encoding or order open the stored
runs instead of storing a new one. Real SQLite (and PostgreSQL where the columns are new), the
real harness files in tests/harness_files/, the real CLI.
"""

from __future__ import annotations

import codecs
import json
import random
from pathlib import Path

import polars as pl
import pytest
from sqlalchemy import Engine, text

from scoring import compare, ingest, store
from scoring.compare.database_runs import stored_run
from scoring.core.content_hash import content_columns, content_hash
from scoring.core.errors import InputError
from scoring.core.file_models import FILE_ROW, models_line, models_of
from scoring.store import runs
from scoring.team_report import team_table

HARNESS = Path(__file__).resolve().parent / "harness_files"
HEADER = "question,answer,Domain,response,model"
#: two models' answers to the same six questions: A right on 5, B right on 2 (and a row of A's
#: whose cells hold the separators a naive hash would confuse)
ROWS = [
    ("Capital of France?", "Paris", "Geography", "It is Paris", "A"),
    ("Capital of France?", "Paris", "Geography", "Lyon", "B"),
    ("Largest planet?", "Jupiter", "Science", "Jupiter", "A"),
    ("Largest planet?", "Jupiter", "Science", "Saturn", "B"),
    ("Author of Gitanjali?", "Tagore", "Literature", "Tagore", "A"),
    ("Author of Gitanjali?", "Tagore", "Literature", "Tagore wrote it", "B"),
    ("Longest river?", "गंगा", "Geography", "गंगा नदी", "A"),
    ("Longest river?", "गंगा", "Geography", "यमुना", "B"),
    ("Year of independence?", "1947", "History", "1950", "A"),
    ("Year of independence?", "1947", "History", "1947", "B"),
    ('Say "a,b"?', "a,b", "Art", "a,b", "A"),
    ('Say "a,b"?', "a,b", "Art", "no", "B"),
]


def csv_bytes(rows: list[tuple[str, ...]], header: str = HEADER, newline: str = "\n") -> str:
    def cell(value: str) -> str:
        return f'"{value.replace(chr(34), chr(34) * 2)}"' if any(c in value for c in ',"\n') else value

    return newline.join([header, *(",".join(cell(v) for v in row) for row in rows)]) + newline


def utf16(text_: str) -> bytes:
    return codecs.BOM_UTF16_LE + text_.encode("utf-16-le")


def shuffled(rows: list[tuple[str, ...]], seed: int = 37) -> list[tuple[str, ...]]:
    out = rows[:]
    random.Random(seed).shuffle(out)
    return out


def exact_accuracy(engine: Engine, run_id: int) -> float:
    return float(store.load_table(engine, run_id)["exact_correct"].mean())


# --- the split --------------------------------------------------------------------------------


def test_a_file_of_two_models_is_one_run_per_model_matched_on_questions(engine: Engine) -> None:
    data = csv_bytes(ROWS).encode()
    a, b = ingest.save_file(engine, data, "mixed_hindi.csv")
    assert (a.found, b.found, a.model, b.model) == ("created", "created", "A", "B")
    assert (a.run.name, a.run.model, a.run.language, a.run.n_rows) == ("A (mixed_hindi)", "A", "Hindi", 6)
    assert (b.run.name, b.run.model, b.run.n_rows) == ("B (mixed_hindi)", "B", 6)
    # each run's figure is its own model's, never the two pooled (7 of 12)
    assert (exact_accuracy(engine, a.run.id), exact_accuracy(engine, b.run.id)) == (5 / 6, 2 / 6)
    # each run numbers its rows 1..6 in file order; file_row keeps the row's place in the file
    rows_b = store.load_table(engine, b.run.id)
    assert rows_b["row_idx"].to_list() == list(range(6))
    assert rows_b[FILE_ROW].to_list() == ["2", "4", "6", "8", "10", "12"]
    assert rows_b["response"].to_list() == [r[3] for r in ROWS if r[4] == "B"]
    assert b.run.extra_columns == ["model", FILE_ROW]
    # the same file's runs share its sha256; each has its own, and its own review order
    assert a.run.file_sha256 == b.run.file_sha256 == store.sha256_bytes(data) != a.run.sha256 != b.run.sha256
    assert a.run.review_seed != b.run.review_seed
    # Compare matches them on the questions, as it matches two separate uploads
    match = compare.match_runs([stored_run(engine, a.run.id), stored_run(engine, b.run.id)])
    assert match.n_matched == 6 and match.unmatched.height == 0
    assert match.matched["row_1"].to_list() == list(range(1, 7))
    # Model x language: a row per model, each cell the model's own 6 rows
    table = team_table(engine, [a.run.id, b.run.id])
    assert table.models == ["A", "B"] and {(c.model, c.rows) for c in table.cells} == {("A", 6), ("B", 6)}


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_split_is_said_before_anything_is_stored_and_a_file_of_one_model_is_one_run(engine: Engine) -> None:
    data = csv_bytes(ROWS).encode()
    with pytest.raises(ingest.SeveralModels) as asked:
        ingest.save_file(engine, data, "mixed.csv", split=None)
    assert asked.value.line == "2 models: A (6 rows), B (6 rows)" and asked.value.source == "the file's column 'model'"
    assert store.count_runs(engine) == 0
    (whole,) = ingest.save_file(engine, data, "mixed.csv", split=False)  # the column does not name models
    assert (whole.run.n_rows, whole.run.model, whole.model) == (12, "mixed", None)
    # one model in the column: one run, named for it (the column before the file's name)
    (one,) = ingest.save_file(engine, csv_bytes([r for r in ROWS if r[4] == "A"]).encode(), "llama_tamil.csv")
    assert (one.run.name, one.run.model, one.run.language, one.model) == ("llama_tamil", "A", "Tamil", None)
    assert FILE_ROW not in one.run.extra_columns


def test_rows_without_a_model_are_a_run_of_their_own_named_by_the_file() -> None:
    table = pl.DataFrame({"question": list("abcde"), "Model": [" A", "B", "", "A ", None]})
    models = models_of(table)
    assert [(m.model, m.rows.to_list()) for m in models] == [("A", [0, 3]), ("B", [1]), ("", [2, 4])]
    assert models_line([m.named for m in models]) == "3 models: A (2 rows), B (1 row), (no model) (2 rows)"
    many = [(f"m{i}", 10) for i in range(9)]
    assert models_line(many).endswith("m5 (10 rows) and 3 more") and models_line(many).startswith("9 models: m0")


def test_the_model_name_comes_from_the_column_then_the_harness_then_the_file_name(app_engine: Engine) -> None:
    engine = app_engine
    # a harness log's metadata names the model, whatever the file is called
    samples = (HARNESS / "lm_eval_samples_indic_qa.jsonl").read_bytes()
    results = {"results_2026-12-02T01-18-30.123456.json": (HARNESS / "lm_eval_results.json").read_bytes()}
    lm = ingest.save_run(engine, samples, "gpt_hindi.jsonl", companions=results)
    assert lm.run.model == "stub-indic-1"
    # promptfoo with two providers: two models, one run each, named by their labels
    two = (HARNESS / "promptfoo_two_models.json").read_bytes()
    with pytest.raises(ingest.SeveralModels) as asked:
        ingest.save_file(engine, two, "eval_out.json", split=None)
    assert asked.value.line == "2 models: echo-bare (3 rows), echo-full (3 rows)"
    assert asked.value.source == "the harness log's metadata"
    bare, full = ingest.save_file(engine, two, "eval_out.json")
    assert (bare.run.model, full.run.model) == ("echo-bare", "echo-full")
    assert (bare.run.name, bare.run.n_rows) == ("echo-bare (eval_out)", 3)
    assert exact_accuracy(engine, full.run.id) > exact_accuracy(engine, bare.run.id)  # echo-full repeats the answer
    # a table without a model column: the file's name; a column named Model (any case): the column
    plain = csv_bytes([r[:4] for r in ROWS[:2]], "question,answer,Domain,response")
    assert ingest.save_run(engine, plain.encode(), "gemma_hindi.csv").run.model == "gemma"
    cased = csv_bytes(ROWS[:1], "question,answer,Domain,response, Model ")
    assert ingest.save_run(engine, cased.encode(), "gemma_hindi.csv").run.model == "A"
    # a name given by the caller (the bundled samples) comes first; for several models it cannot
    with pytest.raises(InputError, match="holds 2 models"):
        ingest.save_file(engine, csv_bytes(ROWS[2:]).encode(), "x.csv", model="mine")


# --- the same content ----------------------------------------------------------------------------


def test_the_content_hash_ignores_order_and_encoding_but_not_a_cell() -> None:
    table = pl.DataFrame([list(r[:4]) for r in ROWS], schema=["question", "answer", "Domain", "response"], orient="row")
    base = content_hash(content_columns(table, [], False))
    assert content_hash(table.sample(fraction=1.0, shuffle=True, seed=1).select(reversed(table.columns))) == base
    assert content_hash(table.with_columns(pl.col("response").str.replace("Lyon", "Lyons"))) != base
    assert content_hash(pl.concat([table, table.head(1)])) != base  # a repeated row is more content
    # cells are length-prefixed: moving a character across a cell boundary is another row
    left = pl.DataFrame({"question": ["ab"], "answer": ["c"], "Domain": ["x"], "response": ["r"]})
    right = pl.DataFrame({"question": ["a"], "answer": ["bc"], "Domain": ["x"], "response": ["r"]})
    assert content_hash(left) != content_hash(right)
    # the model column is left out (it names the run), the language only when the file gave it
    with_model = table.with_columns(pl.lit("A").alias("model"))
    assert content_hash(content_columns(with_model, ["model"], False, ["model"])) == base
    assert content_columns(table.with_columns(pl.lit("Hindi").alias("language")), [], False).columns == table.columns


def test_the_same_rows_in_utf16_or_shuffled_open_the_stored_runs_and_nothing_is_stored(engine: Engine) -> None:
    first = ingest.save_file(engine, csv_bytes(ROWS).encode(), "mixed.csv")
    ids = [r.run.id for r in first]
    for data, name in (
        (utf16(csv_bytes(ROWS, newline="\r\n")), "mixed_utf16.csv"),  # UTF-16 with a BOM, CRLF
        (codecs.BOM_UTF8 + csv_bytes(shuffled(ROWS)).encode(), "mixed_bom.csv"),  # BOM, rows shuffled
        (utf16(csv_bytes(shuffled(ROWS, 5))), "other_name.csv"),
    ):
        again = ingest.save_file(engine, data, name, split=None)  # stored already: nothing to ask
        assert {(r.found, r.run.id, r.model) for r in again} == {("same_rows", ids[0], "A"), ("same_rows", ids[1], "B")}
    # the JSON lines of the same rows are the same content too
    jsonl = "".join(json.dumps(dict(zip(HEADER.split(","), r)), ensure_ascii=False) + "\n" for r in ROWS)
    assert {r.run.id for r in ingest.save_file(engine, jsonl.encode(), "mixed.jsonl")} == set(ids)
    # identical bytes: the same runs, as identical
    assert [(r.found, r.run.id) for r in ingest.save_file(engine, csv_bytes(ROWS).encode(), "m.csv", split=None)] == [
        ("identical", ids[0]),
        ("identical", ids[1]),
    ]
    assert store.count_runs(engine) == 2
    # one model's rows saved alone are that model's run; one cell changed is a new run
    only_b = [r[:4] for r in ROWS if r[4] == "B"]
    plain = csv_bytes(shuffled(only_b), "question,answer,Domain,response")
    alone = ingest.save_run(engine, utf16(plain), "B.csv")
    assert (alone.found, alone.run.id) == ("same_rows", ids[1])
    changed = ingest.save_run(engine, plain.replace("Lyon", "Lyons").encode(), "B.csv")
    assert changed.created and store.count_runs(engine) == 3


def test_a_run_stored_before_content_hashes_is_recognised(tmp_path: Path) -> None:
    engine = store.make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    plain = csv_bytes([r[:4] for r in ROWS], "question,answer,Domain,response")
    old = ingest.save_run(engine, plain.encode(), "old.csv").run
    with engine.begin() as conn:  # as revision 0016 stored it
        conn.execute(text("UPDATE runs SET content_sha256 = NULL, file_sha256 = NULL"))
    assert store.get_run(engine, old.id).content_sha256 == ""
    again = ingest.save_run(
        engine, utf16(csv_bytes(shuffled([r[:4] for r in ROWS]), "question,answer,Domain,response")), "x.csv"
    )
    assert (again.found, again.run.id) == ("same_rows", old.id)
    assert store.get_run(engine, old.id).content_sha256 != "" and runs.unhashed_runs(engine, old.n_rows) == []
    engine.dispose()


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_upload_restores_an_archived_run_of_the_same_rows_and_says_so(engine: Engine) -> None:
    a, b = ingest.save_file(engine, csv_bytes(ROWS).encode(), "mixed.csv")
    store.archive_run(engine, b.run.id)
    outcome = ingest.save_upload(engine, utf16(csv_bytes(shuffled(ROWS))), "mixed16.csv")
    assert [(m.run.id, m.found, m.unarchived) for m in outcome.runs] in (
        [(a.run.id, "same_rows", False), (b.run.id, "same_rows", True)],
        [(b.run.id, "same_rows", True), (a.run.id, "same_rows", False)],
    )
    assert store.archived_at(engine, b.run.id) is None
    kind, said = ingest.outcome_sentence("mixed16.csv", outcome)
    assert kind == "info" and said.startswith("mixed16.csv: 2 models: ")
    assert (
        f"B: the same rows as the archived run #{b.run.id} 'B (mixed)' (in another encoding, order or format): "
        "restored from the archive and opened, nothing stored" in said
    )
    first = ingest.save_upload(engine, csv_bytes(ROWS).encode(), "mixed.csv")
    assert ingest.outcome_sentence("mixed.csv", first)[1] == (
        f"mixed.csv: 2 models: A (6 rows), B (6 rows), a run for each. A: the same bytes as run #{a.run.id} "
        f"'A (mixed)': opened it, nothing stored; B: the same bytes as run #{b.run.id} 'B (mixed)': opened it, "
        "nothing stored."
    )


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_file_is_saved_whole_or_not_at_all(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    real = runs.insert_run
    calls = []

    def second_fails(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(runs, "insert_run", second_fails)
    with pytest.raises(RuntimeError, match="disk full"):
        ingest.save_file(engine, csv_bytes(ROWS).encode(), "mixed.csv")
    assert store.count_runs(engine) == 0
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM runs")).scalar() == 0
        assert conn.execute(text("SELECT count(*) FROM run_parts")).scalar() == 0
    monkeypatch.setattr(runs, "insert_run", real)
    assert [r.found for r in ingest.save_file(engine, csv_bytes(ROWS).encode(), "mixed.csv")] == ["created"] * 2


# --- the command line ------------------------------------------------------------------------------


def test_score_reports_each_model_and_the_spec_scripts_keep_their_output(run_cli, tmp_path: Path) -> None:
    path = tmp_path / "mixed.csv"
    path.write_text(csv_bytes(ROWS), encoding="utf-8")
    shown = run_cli("scoring", "score", "--responses", path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("2 models: A (6 rows), B (6 rows); a report for each\n")
    a, b = shown.stdout.split("=== Model B: 6 rows ===")
    assert "=== Model A: 6 rows ===" in a and "combined                       6        5      0    83.3%" in a
    assert "combined                       6        2      0    33.3%" in b
    assert "12 rows" not in shown.stdout  # never pooled
    said = json.loads(run_cli("scoring", "score", "--responses", path, "--json").stdout)
    assert [
        (m["model"], m["rows"], m["metrics"]["exact_substring"]["combined"]["correct"]) for m in said["models"]
    ] == [
        ("A", 6, 5),
        ("B", 6, 2),
    ]
    # the spec's script prints what the spec says (every row pooled); a warning on stderr only
    spec = run_cli("scoring.exact_substring", "--responses", path)
    assert (
        spec.stdout.startswith("Exact substring: 12 rows\n")
        and "combined                      12        7" in spec.stdout
    )
    assert "the file holds 2 models: A (6 rows), B (6 rows); these figures pool them" in spec.stderr


def test_compare_takes_a_file_of_two_models_as_two_runs(run_cli, tmp_path: Path) -> None:
    path = tmp_path / "mixed.csv"
    path.write_text(csv_bytes(ROWS), encoding="utf-8")
    shown = run_cli("scoring", "compare", path, "--json")
    assert shown.returncode == 0, shown.stderr
    said = json.loads(shown.stdout)
    assert [r["label"] for r in said["runs"]] == ["mixed.csv: A", "mixed.csv: B"]
    assert said["matched"] == 6
