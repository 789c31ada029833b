"""Loading a responses file: every input case listed in issue 2.

Cells stay text, the encoding is never guessed, header names are forgiving, and every refusal
is an ``InputError`` whose message says what is wrong and where.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from scoring.core.errors import InputError
from scoring.core.loader import load_bytes, load_path, load_text
from scoring.core.protocols import exact_substring
from scoring.core.report import accuracy_by_domain, score_frame

HEADER = "question,answer,Domain,response\n"


def _csv_bytes(rows: list[list[str]], header: list[str] | None = None, newline: str = "\n") -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator=newline)
    writer.writerow(header or ["question", "answer", "Domain", "response"])
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


def _error(data: bytes, filename: str | None = None) -> str:
    with pytest.raises(InputError) as info:
        load_bytes(data, filename)
    message = str(info.value)
    assert message and "\n" not in message.strip()
    return message


# ------------------------------------------------------------------------------- cells stay text


TEXTY = ["NA", "None", "null", "nan", "NaN", "N/A", "n/a", "#N/A", "NULL", "TRUE", "FALSE", "007", "1.0", "-1e3", "0"]


@pytest.mark.parametrize("value", TEXTY)
def test_cells_that_look_like_values_stay_strings(value: str) -> None:
    data = (HEADER + f"{value},{value},{value},{value}\n").encode()
    run = load_bytes(data)
    row = run.frame.iloc[0]
    assert [row["question"], row["answer"], row["Domain"], row["response"]] == [value] * 4
    assert all(isinstance(row[c], str) for c in ("question", "answer", "Domain", "response"))
    assert run.empty_golden == 0 and run.blank_responses == 0
    assert exact_substring(row["answer"], f"answer: {value}")


def test_only_a_truly_empty_cell_is_missing() -> None:
    run = load_bytes((HEADER + 'q1,,Art,""\nq2," ",Art,NA\n').encode())
    assert run.frame["answer"].tolist() == ["", " "]
    assert run.frame["response"].tolist() == ["", "NA"]
    assert not run.frame.isna().any().any()
    assert run.empty_golden == 1
    assert run.blank_responses == 1


# ------------------------------------------------------------------------------- encodings


ROWS = [
    ["मधुबनी चित्रकला किस राज्य से है?", "बिहार", "कला", "यह बिहार राज्य की चित्रकला है।"],
    ["திருக்குறளை எழுதியவர் யார்?", "திருவள்ளுவர்", "இலக்கியம்", "திருவள்ளுவர் எழுதினார்."],
    ["গীতাঞ্জলি কে লিখেছেন?", "রবীন্দ্রনাথ ঠাকুর", "সাহিত্য", "ঠাকুর রবীন্দ্রনাথ।"],
    ["Who wrote Anandamath?", "Bankim Chandra", "Literature", "Bankim Chandra, in 1882."],
]


def _frame_rows(run: Any) -> list[list[str]]:
    return run.frame[["question", "answer", "Domain", "response"]].values.tolist()


@pytest.mark.parametrize(
    "encode",
    [
        pytest.param(lambda text: text.encode("utf-8"), id="utf-8"),
        pytest.param(lambda text: codecs.BOM_UTF8 + text.encode("utf-8"), id="utf-8-bom"),
        pytest.param(lambda text: codecs.BOM_UTF16_LE + text.encode("utf-16-le"), id="utf-16-le-bom"),
        pytest.param(lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"), id="utf-16-be-bom"),
    ],
)
@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["LF", "CRLF"])
def test_supported_encodings_and_newlines_round_trip(encode: Any, newline: str) -> None:
    text = _csv_bytes(ROWS, newline=newline).decode("utf-8")
    run = load_bytes(encode(text))
    assert list(run.frame.columns[:4]) == ["question", "answer", "Domain", "response"]  # no BOM in a name
    assert _frame_rows(run) == ROWS
    assert not any("\r" in cell for row in _frame_rows(run) for cell in row)


def test_utf16_without_bom_is_refused() -> None:
    message = _error(_csv_bytes(ROWS).decode().encode("utf-16-le"))
    assert "binary" in message or "UTF" in message


@pytest.mark.parametrize(
    ("text", "bad_byte"),
    [("café", "E9"), ("“Delhi”", "93"), ("naïve", "EF")],
)
def test_cp1252_bytes_are_refused_with_encoding_and_offset(text: str, bad_byte: str) -> None:
    data = (HEADER + "q1,Delhi,Art," + text + "\n").encode("cp1252")
    offset = data.index(bytes.fromhex(bad_byte))
    message = _error(data)
    assert "UTF-8" in message
    assert f"offset {offset}" in message
    assert f"0x{bad_byte}" in message
    assert "cp1252" in message  # tells the user what to do about it


def test_cp1252_offset_counts_the_bom() -> None:
    data = codecs.BOM_UTF8 + (HEADER + "q1,Delhi,Art,café\n").encode("cp1252")
    offset = data.index(bytes([0xE9]))
    assert offset == 3 + len(HEADER) + len("q1,Delhi,Art,caf")
    assert f"offset {offset}" in _error(data)


# ------------------------------------------------------------------------------- quoting


def test_quoted_cells_with_commas_quotes_and_line_breaks() -> None:
    rows = [
        ["Which city?", "Delhi, India", "Art", 'He said "Delhi", twice'],
        ["Multi-line?", "गंगा\nनदी", "Art", 'पहली पंक्ति\nदूसरी पंक्ति, "उद्धरण"\n'],
        ["CRLF inside?", "a", "Art", "line one\r\nline two"],
    ]
    run = load_bytes(_csv_bytes(rows))
    assert _frame_rows(run) == rows


def test_multiline_indic_cells_round_trip_through_a_file(tmp_path: Path) -> None:
    rows = [
        ["பல வரி\nகேள்வி", "திருவள்ளுவர்", "இலக்கியம்", "முதல் வரி\nதிருவள்ளுவர்."],
        ["দুই লাইন", "রবীন্দ্রনাথ", "সাহিত্য", "প্রথম লাইন\nরবীন্দ্রনাথ ঠাকুর।"],
        ["दो पंक्तियाँ", "गंगा", "भूगोल", "गंगा\nनदी"],
    ]
    path = tmp_path / "run.csv"
    path.write_bytes(codecs.BOM_UTF8 + _csv_bytes(rows, newline="\r\n"))
    run = load_path(path)
    assert _frame_rows(run) == rows
    scored = score_frame(run.frame)
    assert scored["overlap_correct"].tolist() == [True, True, True]


# ------------------------------------------------------------------------------- headers


def test_header_names_match_after_trimming_and_ignoring_case() -> None:
    data = b" Question ,ANSWER, domain ,Response \nq,a,d,r\n"
    run = load_bytes(data)
    assert list(run.frame.columns) == ["question", "answer", "Domain", "response"]
    assert run.frame.iloc[0].tolist() == ["q", "a", "d", "r"]
    assert run.warnings == []


def test_extra_columns_are_kept_in_order() -> None:
    data = b"id,response,Answer,model,Domain,question\n7,r,a,m1,d,q\n"
    run = load_bytes(data)
    assert list(run.frame.columns) == ["question", "answer", "Domain", "response", "id", "model"]
    assert run.extra_columns == ["id", "model"]
    assert run.frame.iloc[0].tolist() == ["q", "a", "d", "r", "7", "m1"]


@pytest.mark.parametrize(
    ("command", "added"),
    [
        (["scoring.exact_substring"], ["is_correct", "is_blank"]),
        (["scoring.word_overlap"], ["is_correct", "is_blank", "matching_words", "total_golden_words"]),
        (
            ["scoring", "score"],
            ["exact_correct", "overlap_correct", "matching_words", "total_golden_words", "is_blank", "bucket"],
        ),
    ],
)
def test_extra_columns_reach_every_cli_output(
    tmp_path: Path, run_cli: Any, command: list[str], added: list[str]
) -> None:
    src = tmp_path / "in.csv"
    src.write_bytes(b"id,question,answer,Domain,response,model\n7,q1,Delhi,Art,Delhi.,m1\n8,q2,x,Art,y,m2\n")
    out = tmp_path / "out.csv"
    proc = run_cli(*command, "--responses", src, "--out", out)
    assert proc.returncode == 0, proc.stderr
    with out.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["id"], r["model"]) for r in rows] == [("7", "m1"), ("8", "m2")]
    assert list(rows[0])[-len(added) :] == added


def test_duplicate_canonical_columns_are_refused() -> None:
    message = _error(b"answer,Answer,response\na,b,c\n")
    assert "answer" in message.lower() and "Answer" in message


# ------------------------------------------------------------------------------- required columns


@pytest.mark.parametrize(
    ("header", "missing"),
    [
        ("question,answer,Domain", ["'response'"]),
        ("question,Domain,response", ["'answer'"]),
        ("question,Domain,notes", ["'answer'", "'response'"]),
    ],
)
def test_missing_required_columns_are_named_with_the_columns_found(header: str, missing: list[str]) -> None:
    found = header.split(",")
    data = (header + "\n" + ",".join("x" for _ in found) + "\n").encode()
    message = _error(data)
    for name in missing:
        assert name in message
    assert "found" in message.lower()
    for name in found:
        assert repr(name) in message


def test_missing_domain_puts_every_row_in_one_domain_and_warns() -> None:
    run = load_bytes(b"question,answer,response\nq1,a,a\nq2,b,c\n")
    assert run.frame["Domain"].nunique() == 1
    assert any("Domain" in w for w in run.warnings)
    table = accuracy_by_domain(score_frame(run.frame), "exact_correct")
    assert [(r.n, r.correct) for r in table] == [(2, 1), (2, 1)]  # one domain, then combined


def test_missing_question_warns() -> None:
    run = load_bytes(b"answer,Domain,response\na,Art,a\n")
    assert run.frame["question"].tolist() == [""]
    assert any("question" in w for w in run.warnings)
    assert not any("Domain" in w for w in run.warnings)


# ------------------------------------------------------------------------------- not a table


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"", ["empty"]),
        (b"   \n\n", ["empty"]),
        (codecs.BOM_UTF8, ["empty"]),
        (HEADER.encode(), ["no data rows"]),
        (b"answer,response\r\n", ["no data rows"]),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ["UTF-8", "offset 0"]),
        (b"PK\x03\x04\x14\x00\x00\x00\x08\x00", ["binary"]),
        (bytes(range(256)), ["UTF-8", "offset 128"]),
    ],
    ids=["empty", "blank-lines", "bom-only", "header-only", "header-only-crlf", "png", "zip", "all-bytes"],
)
def test_empty_header_only_and_binary_inputs_give_clear_errors(data: bytes, words: list[str]) -> None:
    message = _error(data)
    for word in words:
        assert word in message


def test_ragged_rows_are_refused_with_the_line() -> None:
    message = _error(b"answer,response\na,b\nc,d,e\n")
    assert "line 3" in message


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="Cannot read"):
        load_path(tmp_path / "nope.csv")


def test_tsv_files_load_by_extension() -> None:
    run = load_bytes("answer\tresponse\tDomain\nगंगा\tगंगा नदी, पवित्र\tभूगोल\n".encode(), "run.tsv")
    assert run.frame[["answer", "response", "Domain"]].values.tolist() == [["गंगा", "गंगा नदी, पवित्र", "भूगोल"]]


# ------------------------------------------------------------------------------- counts and warnings


def test_empty_golden_answers_warn_with_their_count() -> None:
    run = load_bytes((HEADER + "q1,,Art,x\nq2,,Art,y\nq3,a,Art,a\n").encode())
    assert run.empty_golden == 2
    warning = next(w for w in run.warnings if "empty golden" in w)
    assert warning.startswith("2 ")
    # ...and, as the spec says, they score correct in both protocols.
    scored = score_frame(run.frame)
    assert scored["exact_correct"].tolist()[:2] == [True, True]
    assert scored["overlap_correct"].tolist()[:2] == [True, True]


def test_blank_responses_are_counted_apart() -> None:
    responses = ["", "   ", "\t", "a"]
    data = _csv_bytes([[f"q{i}", "a", "Art", r] for i, r in enumerate(responses)])
    run = load_bytes(data)
    assert run.blank_responses == 3
    warning = next(w for w in run.warnings if "blank response" in w)
    assert warning.startswith("3 ")
    table = accuracy_by_domain(score_frame(run.frame), "overlap_correct")
    assert [(r.n, r.correct, r.blank) for r in table] == [(4, 1, 3), (4, 1, 3)]


def test_no_warnings_for_a_clean_file(sample_csv: Path) -> None:
    run = load_path(sample_csv)
    assert len(run.frame) > 0
    assert not any("empty golden" in w or "Domain" in w or "question" in w for w in run.warnings)


def test_load_text_matches_load_bytes() -> None:
    text = _csv_bytes(ROWS).decode()
    assert _frame_rows(load_text(text)) == _frame_rows(load_bytes(text.encode())) == ROWS


def test_loaded_frame_serialises_to_json() -> None:
    """Every cell is a plain str (no NaN sneaks in), so records survive JSON unchanged."""
    run = load_bytes(_csv_bytes(ROWS))
    records = run.frame.to_dict("records")
    assert json.loads(json.dumps(records, ensure_ascii=False)) == records
