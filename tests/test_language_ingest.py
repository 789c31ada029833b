"""A row's language through ingest, storage, export and back (issue 29, section 1): a 719-row file
with a ``language`` column (English, Hindi, Tamil, spelled as people spell them) saved, loaded,
exported in every format and restored; harness logs' metadata written by the real tools
(``tests/harness_files``); ``--columns language=FIELD`` on the command line and the Upload page's
mapping; a run stored before rows had a language; the run's label when it is mixed; the review
card showing the row's language as text."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from apptest_support import open_page, shown_row, text_with
from sqlalchemy import Engine

from scoring import ingest, review, store
from scoring import verdict_export as export
from scoring.core.row_language import row_languages
from scoring.store import make_engine, run_table, runs
from scoring.store.runs import NewRun

HARNESS = Path(__file__).resolve().parent / "harness_files"
#: How the file spells each row's language, and the language it means.
SPELLINGS = [("English", "English"), ("hi", "Hindi"), ("TAMIL", "Tamil"), (" en ", "English"), ("hin", "Hindi")]
QUESTIONS = {
    "English": ("Which Jataka is shown at Bharhut, item {i}?", "Ruru Jataka", "It is the Ruru Jataka."),
    "Hindi": ("भरहुत में कौन सी जातक कथा है, प्रश्न {i}?", "रुरु जातक", "यह रुरु जातक है"),
    "Tamil": ("தமிழ்நாட்டின் தலைநகரம் எது, கேள்வி {i}?", "சென்னை", "மதுரை"),
}


def mixed_file(rows: int = 719) -> tuple[bytes, list[str]]:
    """A responses CSV with a per-row ``language`` column, and each row's language as stored."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["question", "answer", "Domain", "response", "language", "qid"])
    expected = []
    for i in range(rows):
        typed, name = SPELLINGS[i % len(SPELLINGS)]
        question, answer, response = QUESTIONS[name]
        writer.writerow([question.format(i=i), answer, "Art" if i % 2 else "History", response, typed, f"q{i}"])
        expected.append(name)
    return buffer.getvalue().encode("utf-8"), expected


def _column(data: bytes, fmt: str) -> tuple[list[str], list[str]]:
    """(the column names, the language column) of an exported file."""
    if fmt == "csv":
        table = pl.read_csv(io.BytesIO(data), infer_schema=False)
    elif fmt == "jsonl":
        table = pl.DataFrame([json.loads(line) for line in data.decode().splitlines()])
    else:
        table = pl.read_parquet(io.BytesIO(data))
    return table.columns, table["language"].to_list()


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_a_mixed_file_round_trips_save_load_export_restore(tmp_path: Path, engine: Engine, fmt: str) -> None:
    data, expected = mixed_file()
    run = ingest.save_run(engine, data, "indic_qa_mixed.csv").run
    assert run.n_rows == 719 and run.extra_columns == ["qid"]  # the language column is not an extra
    assert run.language == "" and run.languages == ("English", "Hindi", "Tamil")  # mixed: no one language
    assert store.language_source(engine, run.id) == "column:language"
    assert store.run_label(run).endswith("· English, Hindi, Tamil (719 rows)")
    assert "language English, Hindi, Tamil" in store.run_caption(run)
    table = store.load_table(engine, run.id)
    assert table["language"].to_list() == expected
    assert table.columns[:7] == ["row_idx", "item_key", "question", "answer", "Domain", "language", "response"]
    key = table["item_key"][2]
    review.record_mark(engine, key, run.id, "alice", "wrong", reason="", note="Tamil city")

    exported = export.export_file(engine, run.id, fmt)
    columns, languages = _column(exported.data, fmt)
    assert columns[:8] == ["row", "model", "question", "answer", "Domain", "language", "response", "qid"]
    assert languages == expected

    fresh = make_engine(f"sqlite:///{tmp_path / 'fresh.db'}")
    back = ingest.save_run(fresh, exported.data, f"indic_qa_mixed_export.{fmt}")
    assert back.created and back.restored == 1
    assert back.run.extra_columns == ["qid"] and back.run.languages == ("English", "Hindi", "Tamil")
    assert store.language_source(fresh, back.run.id) == "column:language"
    restored = store.load_table(fresh, back.run.id)
    assert restored["language"].to_list() == expected and restored["item_key"].to_list() == table["item_key"].to_list()
    assert review.current_verdicts(fresh)["item_key"].tolist() == [key]
    fresh.dispose()


def test_blank_cells_fall_back_to_the_run_language_then_the_script(engine: Engine) -> None:
    data = "question,answer,response,lang\nCapital?,Delhi,Delhi,en\nराजधानी?,दिल्ली,x,\nதலைநகரம்?,சென்னை,y,\n"
    run = ingest.save_run(engine, data.encode(), "capitals.csv").run
    assert store.load_table(engine, run.id)["language"].to_list() == ["English", "Devanagari", "Tamil script"]
    assert store.language_source(engine, run.id) == "column:lang" and run.language == ""
    named = ingest.save_run(engine, data.encode(), "capitals_tamil.csv", language=None)  # same bytes: same run
    assert named.run.id == run.id
    other = ingest.save_run(engine, (data + "x,y,z,\n").encode(), "capitals_tamil.csv").run  # the name says Tamil
    assert store.load_table(engine, other.id)["language"].to_list() == ["English", "Tamil", "Tamil", "Tamil"]
    assert other.language == ""  # mixed (English and Tamil rows)


def test_without_a_column_rows_follow_the_run_language_or_show_their_script(engine: Engine) -> None:
    data = "question,answer,response\nCapital?,Delhi,Delhi\nराजधानी?,दिल्ली,x\n1947?,१९४७,1947\n".encode()
    run = ingest.save_run(engine, data, "capitals.csv").run
    assert store.language_source(engine, run.id) == "script" and run.language == ""
    assert store.load_table(engine, run.id)["language"].to_list() == ["Latin", "Devanagari", "Unknown script"]
    assert run.languages == ("Devanagari", "Latin", "Unknown script")
    # scripts are not languages: run lists name none (as before rows had a language)
    assert store.run_label(run).endswith("· capitals (3 rows)")
    store.update_run_meta(engine, run.id, run.name, run.model, "hi")  # named later on the Upload page
    assert store.load_table(engine, run.id)["language"].to_list() == ["Hindi"] * 3
    typed = ingest.save_run(engine, data + b"a,b,c\n", "other.csv", language="Hindi").run
    assert store.language_source(engine, typed.id) == "run" and typed.language == "Hindi"
    assert set(store.load_table(engine, typed.id)["language"]) == {"Hindi"}
    assert store.run_label(typed).endswith("· Hindi (4 rows)")


def test_a_run_stored_before_rows_had_a_language_reads_and_exports_its_language_column(
    tmp_path: Path, engine: Engine
) -> None:
    """Older code kept a ``language`` column as an extra and stored no row language: reading the
    run takes the rows' languages from it; the export carries both, the input's as ``language_input``,
    and uploads again as a run with the same languages."""
    table = pl.DataFrame(
        {
            "question": ["Capital?", "राजधानी?"],
            "answer": ["Delhi", "दिल्ली"],
            "Domain": ["Geo", "Geo"],
            "response": ["Delhi", "दिल्ली"],
            "language": ["en", "hi"],
        }
    )
    languages = row_languages(table).values
    rows = run_table.scored_rows(table, ["language"], languages).drop("language")  # as older code stored it
    new = NewRun("old", "m", "", "old.csv", "0" * 64, 2, ["language"], 7)
    run_id, _ = runs.insert_run(engine, new, run_table.to_parts(rows))
    assert store.language_source(engine, run_id) is None
    loaded = store.load_table(engine, run_id)
    assert loaded["language"].to_list() == ["English", "Hindi"] and loaded["extra:language"].to_list() == ["en", "hi"]
    frame = export.export_table(engine, run_id)
    assert frame.columns[:8] == [
        "row",
        "model",
        "question",
        "answer",
        "Domain",
        "language",
        "response",
        "language_input",
    ]
    fresh = make_engine(f"sqlite:///{tmp_path / 'fresh.db'}")
    back = ingest.save_run(fresh, export.table_csv_bytes(frame), "old_export.csv").run
    assert store.load_table(fresh, back.id)["language"].to_list() == ["English", "Hindi"]
    assert back.extra_columns == ["language_input"]
    fresh.dispose()


@pytest.mark.parametrize(
    ("name", "companion", "languages"),
    [
        (
            "inspect_indic_qa.eval",
            None,
            ["English", "English", "Hindi", "Hindi", "English", "English", "Latin", "Latin", "Hindi", "Hindi"],
        ),
        ("inspect_indic_qa.json", None, ["English", "Latin", "Hindi"]),
        ("lm_eval_samples_indic_qa.jsonl", "lm_eval_results.json", ["English", "Hindi", "English", "Latin"]),
        ("promptfoo_out.json", None, ["English", "Hindi", "Latin"]),
        ("promptfoo_out.jsonl", None, ["English", "Hindi", "Latin"]),
    ],
)
def test_harness_logs_give_each_row_its_metadata_language(
    engine: Engine, name: str, companion: str | None, languages: list[str]
) -> None:
    """Files written by the real tools (Inspect AI sample metadata, lm-eval doc field, promptfoo
    var ``language``; see tests/harness_files/generate.py): codes normalised, a sample without
    one named by its script."""
    companions = {companion: (HARNESS / companion).read_bytes()} if companion else None
    run = ingest.save_run(engine, (HARNESS / name).read_bytes(), name, companions=companions).run
    assert store.language_source(engine, run.id) == "metadata"
    table = store.load_table(engine, run.id)
    assert sorted(table["language"].to_list()) == sorted(languages)
    assert not any(c.endswith("_language") for c in table.columns)  # not also kept as metadata_language
    assert run.language == ""  # English and Hindi: mixed


def test_the_command_line_maps_the_language_field(tmp_path: Path, run_cli: Any) -> None:
    src = tmp_path / "in.csv"
    src.write_text("question,golden,reply,lang_field\nq1,a,a,hi\nq2,b,x,TAM\nq3,c,c,\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    proc = run_cli(
        "scoring",
        "score",
        "--responses",
        src,
        "--columns",
        "answer=golden,response=reply,language=lang_field",
        "--out",
        out,
    )
    assert proc.returncode == 0, proc.stderr
    with out.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0])[:5] == ["question", "answer", "Domain", "language", "response"]
    assert [r["language"] for r in rows] == ["Hindi", "Tamil", ""]  # a blank cell stays blank: no run here
    bad = run_cli("scoring", "score", "--responses", src, "--columns", "answer=golden,response=reply,lingo=lang_field")
    assert bad.returncode == 2 and "map question, answer, response, Domain or language" in bad.stderr
    missing = run_cli("scoring", "score", "--responses", src, "--columns", "answer=golden,response=reply,language=nope")
    assert missing.returncode == 2 and "the file has no field 'nope'" in missing.stderr


def test_the_upload_mapping_names_the_language_field(engine: Engine) -> None:
    data = b"prompt,target,output,locale\nq,a,a,ta-IN\nr,b,c,bn\n"
    with pytest.raises(Exception, match="the file has no field"):
        ingest.save_upload(engine, data, "mapped.csv", {"answer": "target", "response": "output", "language": "nope"})
    outcome = ingest.save_upload(
        engine, data, "mapped.csv", {"answer": "target", "response": "output", "language": "locale"}
    )
    assert store.language_source(engine, outcome.run.id) == "column:locale"
    assert store.load_table(engine, outcome.run.id)["language"].to_list() == ["Tamil", "Bengali"]
    assert store.run_column_map(engine, outcome.run.id) == {
        "answer": "target",
        "response": "output",
        "language": "locale",
    }


def test_the_review_card_shows_the_row_language_as_text(app_engine: Engine) -> None:
    hostile = "<img src=x onerror=alert(1)>"
    data = (
        "question,answer,response,language\n"
        "Which Jataka?,Ruru Jataka,It is the Ruru Jataka,hi\n"  # both pass: not in the queue
        f"Where?,Narmada valley,valley Narmada,{hostile}\n"  # overlap passes, exact fails: the queue's row
    ).encode()
    run = ingest.save_run(app_engine, data, "card.csv").run
    table = store.load_table(app_engine, run.id)
    assert table["language"].to_list() == ["Hindi", hostile]  # unknown values kept as typed
    at = open_page("review", run_id=run.id)
    assert shown_row(at) == 1
    assert f"Domain: (all)   Language: {hostile}" in text_with(at, "Row ")  # the card's line, unescaped
    html_bodies = "".join(str(h.proto.body) for h in at.main.get("html"))
    assert "<img src=x" not in html_bodies  # escaped inside the card's HTML block
