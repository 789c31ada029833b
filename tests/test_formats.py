"""Issue 19: responses files in JSON lines, JSON arrays and Parquet (and gzipped), the format found
from the content, every cell text, and the column mapping (``--columns`` and the loader's)."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from scoring.compare import shared_id_column
from scoring.core.errors import InputError
from scoring.core.loader import MissingColumns, load_bytes, load_path, parse_columns
from scoring.core.text_tables import read_jsonl, read_jsonl_fast

ROOT = Path(__file__).resolve().parents[1]
CSV = 'question,answer,response,Domain,score\nराजधानी?,दिल्ली,यह दिल्ली है,Geo,1.50\nq2,"a, b",c,Art,2\n'


def _table(data: bytes, name: str, columns: dict | None = None) -> list[dict]:
    return load_bytes(data, name, columns).table.to_dicts()


def test_jsonl_cells_are_text_as_the_csv_reader_keeps_them() -> None:
    lines = [
        {"question": "राजधानी?", "answer": "दिल्ली", "response": "यह दिल्ली है", "Domain": "Geo", "score": 1.50},
        {"question": "q2", "answer": "a, b", "response": "c", "Domain": "Art", "score": 2},
    ]
    data = "\n".join(json.dumps(r, ensure_ascii=False) for r in lines).replace("1.5", "1.50").encode()
    run = load_bytes(data, "run.jsonl")
    assert run.format == "jsonl"
    assert run.table.to_dicts() == load_bytes(CSV.encode(), "run.csv").table.to_dicts()  # 1.50 stays 1.50


_TEXT = hs.text(hs.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)
_FIELDS = ("answer", "response", "Domain", "x:y", 'q"uote')


@settings(max_examples=150, deadline=None)
@given(
    rows=hs.lists(
        hs.dictionaries(hs.sampled_from(_FIELDS), hs.one_of(_TEXT, hs.none()), min_size=0), min_size=1, max_size=6
    ),
    ascii_only=hs.booleans(),
    spaced=hs.booleans(),
)
def test_the_fast_json_lines_reader_reads_what_the_line_reader_reads(rows, ascii_only, spaced) -> None:
    """Whatever pyarrow's strict reader accepts reads exactly as the line-by-line reader does
    (every field, every cell, the field order), and every file of strings whose fields are all in
    its first line is taken by it. Text with quotes, colons, backslashes and any character."""
    rows[0] = {f: rows[0].get(f, "") or "" for f in _FIELDS} if not rows[0] else rows[0]
    separators = (", ", ": ") if spaced else (",", ":")
    body = "\n".join(json.dumps(r, ensure_ascii=ascii_only, separators=separators) for r in rows).encode()
    fast = read_jsonl_fast(body)
    slow = read_jsonl(body.decode())
    strings_only = all(v is not None for v in rows[0].values()) and all(set(r) <= set(rows[0]) for r in rows)
    if strings_only:
        assert fast is not None
    if fast is not None:
        assert fast.columns == slow.columns and fast.to_dicts() == slow.to_dicts()


@pytest.mark.parametrize(
    "body",
    [
        b'{"answer": "a", "response": "b"}\n{"answer": 1.50, "response": "b"}\n',  # a number later
        b'{"answer": "a", "response": "b"}\n{"answer": "a", "response": "b", "extra": "c"}\n',  # a field not in line 1
        b'{"answer": "a", "response": "b"}\n{"answer": "a", "answer": "c", "response": "b"}\n',  # a repeated field
        b'{"answer": "a", "response": "b"}\n{"answer": "\\ud800", "response": "b"}\n',  # a lone surrogate
        b'{"answer": "a", "response": "b"}\n{"answer": {"k": "v"}, "response": "b"}\n',  # nested
        b'{"answer": "a", "response": "b"}\nnot json\n',
    ],
    ids=["number", "new field", "repeated", "surrogate", "nested", "not json"],
)
def test_anything_but_declared_strings_goes_to_the_line_reader(body: bytes) -> None:
    assert read_jsonl_fast(body) is None


def test_a_line_longer_than_the_fast_readers_block_reads_whole() -> None:
    body = b'{"answer": "a", "response": "b"}\n{"answer": "' + "क".encode() * (3 << 20) + b'", "response": "b"}\n'
    fast = read_jsonl_fast(body)
    assert fast is not None and fast.to_dicts() == read_jsonl(body.decode()).to_dicts()
    assert len(fast["answer"][1]) == 3 << 20


def test_json_values_become_their_literal_or_compact_json_text() -> None:
    data = (
        b'{"answer": "x", "response": "y", "n": 10000000000000000000001, "f": -0.0e1, "t": true, '
        b'"z": null, "nested": {"k": [1, 2.50, "\xe0\xa4\x85", false]}}\n\n{"answer": "x2", "response": "y2"}\n'
    )
    rows = _table(data, "a.jsonl")
    assert rows[0] | {"question": ""} == {
        "question": "",
        "answer": "x",
        "Domain": "(all)",
        "response": "y",
        "n": "10000000000000000000001",
        "f": "-0.0e1",
        "t": "true",
        "z": "",
        "nested": '{"k":[1,2.50,"अ",false]}',
    }
    assert rows[1]["n"] == "" and rows[1]["nested"] == ""  # a field absent from a line is an empty cell


def test_a_json_array_of_records_and_a_gzipped_file_read_the_same() -> None:
    records = [{"answer": "a", "response": "b", "Domain": "D"}]
    as_json = _table(json.dumps(records).encode(), "rows.json")
    assert as_json == _table(gzip.compress(json.dumps(records).encode()), "rows.json.gz")
    assert as_json == _table(gzip.compress(b"answer,response,Domain\na,b,D\n"), "rows.csv.gz")
    assert as_json == _table(gzip.compress(b'{"answer":"a","response":"b","Domain":"D"}\n'), "rows.jsonl.gz")


def test_parquet_is_read_as_text_and_mapped() -> None:
    frame = pl.DataFrame(
        {
            "target": ["दिल्ली", None],
            "output": ["यह दिल्ली है", "x"],
            "category": ["Geo", "Art"],
            "n": [1, 2],
            "ok": [True, False],
            "tags": [["a"], []],
        }
    )
    buf = io.BytesIO()
    frame.write_parquet(buf)
    run = load_bytes(buf.getvalue(), "run.parquet", {"answer": "target", "response": "output", "Domain": "category"})
    assert run.format == "parquet" and run.columns == {"answer": "target", "response": "output", "Domain": "category"}
    assert run.table.to_dicts() == [
        {
            "question": "",
            "answer": "दिल्ली",
            "Domain": "Geo",
            "response": "यह दिल्ली है",
            "n": "1",
            "ok": "true",
            "tags": '["a"]',
        },
        {"question": "", "answer": "", "Domain": "Art", "response": "x", "n": "2", "ok": "false", "tags": "[]"},
    ]
    pandas_written = io.BytesIO()
    pd.DataFrame({"answer": ["a"], "response": ["b"]}).to_parquet(pandas_written)  # pyarrow's writer too
    assert _table(pandas_written.getvalue(), "p.parquet")[0]["answer"] == "a"


def test_the_content_decides_and_a_contradicting_name_is_refused() -> None:
    assert load_bytes(b'{"answer":"a","response":"b"}\n', "no_extension").format == "jsonl"
    assert load_bytes(b'{"answer":"a","response":"b"}\n', "rows.json").format == "jsonl"
    for data, name, said in [
        (CSV.encode(), "run.parquet", "named as PARQUET but its content is text"),
        (b'{"answer":"a","response":"b"}\n', "run.csv", "named as CSV but its content is JSON lines"),
        (CSV.encode(), "run.jsonl", "named as JSONL but its content is text"),
        (CSV.encode(), "run.csv.gz", "named .gz but is not gzip-compressed"),
    ]:
        with pytest.raises(InputError, match=said):
            load_bytes(data, name)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b'{"answer":"a","response":"b"}\n{"answer": "a",\n', "Line 2 is not valid JSON"),
        (b'{"answer":"a","response":"b"}\n[1, 2]\n', "Line 2 is a JSON array, not an object"),
        (b'[{"answer":"a","response":"b"}, 3]', "Row 2 of the JSON array is a JSON number"),
        (b'{\n"answer": 1\n}', "one object, not a list of rows"),
        (b"PAR1 not really", "The Parquet file cannot be read"),
        (gzip.compress(CSV.encode())[:-12], "cut short"),
        (b"\x1f\x8b\x09" + bytes(12), "gzip-compressed but damaged"),
        (b'{"answer":"a"}\n', "Missing required column 'response'"),
    ],
)
def test_bad_files_are_refused_with_what_and_where(data: bytes, said: str) -> None:
    with pytest.raises(InputError, match=said):
        load_bytes(data, "upload")


def test_missing_columns_offer_the_fields_with_examples() -> None:
    data = b"target,prediction,category\nDelhi,It is Delhi,Geo\n,x,Art\n"
    with pytest.raises(MissingColumns) as caught:
        load_bytes(data, "run.csv")
    assert caught.value.missing == ["answer", "response"]
    examples = {"target": ["Delhi"], "prediction": ["It is Delhi", "x"], "category": ["Geo", "Art"]}
    assert caught.value.examples == examples
    assert "--columns answer=FIELD" in str(caught.value)


def test_a_mapping_keeps_a_displaced_column_and_refuses_what_it_cannot_do() -> None:
    data = b"answer,gold,response\nold,new,the new one\n"
    run = load_bytes(data, "run.csv", parse_columns("answer=gold"))
    assert run.table.to_dicts() == [
        {"question": "", "answer": "new", "Domain": "(all)", "response": "the new one", "answer_original": "old"}
    ]
    assert run.source_fields == ["answer", "gold", "response"]
    refusals = [
        ("answer=nope", "the file has no field 'nope'"),
        ("golden=gold", "'golden' is not a field"),
        ("answer", "is not NAME=FIELD"),
        ("answer=gold,response=gold", "mapped to two names"),
    ]
    for spec, said in refusals:
        with pytest.raises(InputError, match=said):
            load_bytes(data, "run.csv", parse_columns(spec))


def test_every_cli_takes_columns_and_compare_names_the_file(tmp_path: Path) -> None:
    harness = tmp_path / "harness.jsonl"
    harness.write_text('{"target": "Delhi", "output": "It is Delhi", "category": "Geo"}\n', encoding="utf-8")
    spec = "answer=target,response=output,Domain=category"
    cli = [sys.executable, "-m", "scoring"]
    done = subprocess.run(
        [*cli, "score", "--responses", str(harness), "--columns", spec, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["metrics"]["exact_substring"]["combined"]["correct"] == 1
    refused = subprocess.run(
        [sys.executable, "-m", "scoring.exact_substring", "--responses", str(harness)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "Missing required columns 'answer' and 'response'" in refused.stderr
    good = tmp_path / "good.csv"
    good.write_text("answer,response\na,a\n", encoding="utf-8")
    compared = subprocess.run(
        [*cli, "compare", str(good), str(harness)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert compared.returncode == 2 and f"error: {harness}: Missing required columns" in compared.stderr
    assert f"warning: {good}: No 'Domain' column" in compared.stderr
    assert load_path(harness, parse_columns(spec)).table["Domain"].to_list() == ["Geo"]


def test_a_harness_logs_sample_id_is_offered_as_the_compare_id_column() -> None:
    """Issue 19: two runs imported from lm-evaluation-harness logs share ``sample_id`` (its doc_id),
    which Compare offers as the id column to match on."""
    harness = ROOT / "tests" / "harness_files" / "lm_eval_samples_indic_qa.jsonl"
    table = load_path(harness).table
    assert "sample_id" in table.columns and table["sample_id"].n_unique() == table.height
    assert shared_id_column([table.columns, ["question", "answer", "response", "sample_id"]]) == "sample_id"
