"""The polars reading and writing paths against the references they replace (issue 10).

- Reading: :func:`scoring.core.loader.load_bytes` reads with polars and falls back to pandas'
  C parser (``load_text``, the reference) for files polars might read differently. On generated
  tables and on an adversarial corpus of malformed files the two must give the same table, or
  the same refusal.
- Writing: the CLI's polars writer gives the bytes pandas' ``to_csv`` gave, except that a cell
  holding a lone CR is now quoted (pandas left it bare, which broke re-reading the file).
- Item keys built by polars equal :func:`scoring.core.items.item_key` byte for byte.
- The cached Unicode tables equal a fresh computation, and a damaged cache is recomputed.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import sys
import unicodedata

import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.cli.common import csv_cells
from scoring.core import export_format as EF
from scoring.core import unicode_tables
from scoring.core.errors import InputError
from scoring.core.fast_csv import read_polars
from scoring.core.items import item_key, item_keys
from scoring.core.loader import load_bytes, load_text

HEADER = ["question", "answer", "Domain", "response"]


def outcome(load, data) -> tuple[str, object]:
    """("ok", columns and rows) or ("error", message): what a loader makes of ``data``."""
    try:
        run = load(data)
    except InputError as exc:
        return "error", str(exc)
    return "ok", (run.table.columns, run.table.rows(), run.warnings)


def same_as_reference(data: bytes, filename: str = "x.csv") -> None:
    fast = outcome(lambda d: load_bytes(d, filename), data)
    reference = outcome(lambda d: load_text(d.decode("utf-8-sig"), filename), data)
    assert fast == reference


def pieces(choices: list[str], max_size: int) -> st.SearchStrategy[str]:
    """Text made of the given pieces (some longer than one character)."""
    return st.lists(st.sampled_from(choices), max_size=max_size).map("".join)


cell = pieces(list("ab ,\"\n\r\t'=#;") + ["\r\n", "NA", "007", "मधु", "\u200c", "\xa0", "\x1c", "Σ"], 12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(st.lists(cell, min_size=4, max_size=4), min_size=1, max_size=8),
    quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC]),
    newline=st.sampled_from(["\n", "\r\n"]),
    bom=st.booleans(),
)
def test_generated_tables_read_the_same_as_the_reference(rows, quoting, newline, bom) -> None:
    out = io.StringIO()
    csv.writer(out, quoting=quoting, lineterminator=newline).writerows([HEADER, *rows])
    data = out.getvalue().encode("utf-8")
    same_as_reference(codecs.BOM_UTF8 + data if bom else data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=pieces(list('ab,"\n\r\t ') + ["\r\n", ",,", '""'], 60))
def test_arbitrary_bytes_after_a_header_read_the_same_as_the_reference(text: str) -> None:
    """Malformed text included: stray quotes, ragged rows, blank lines, lone CRs."""
    same_as_reference(("answer,response,x\n" + text).encode("utf-8"))


CORPUS = {
    "stray quote in a cell": b'answer,response\na"b,c\n',
    "stray quote in the header": b'answer,resp"onse\na,b\n',
    "text after a closing quote": b'answer,response\n"a"b,c\n',
    "quote before a delimiter": b'answer,response\nab",c\n',
    "lone CR rows": b"answer,response\ra,b\rc,d\r",
    "CR inside a quoted cell": b'answer,response\n"a\rb",c\n',
    "blank line between rows": b"answer,response\na,b\n\nc,d\n",
    "blank lines at the end": b"answer,response\na,b\n\n\n",
    "a row of delimiters": b"answer,response,x\na,b,c\n,,\n",
    "a row of delimiters and a blank line": b"answer,response,x\n,,\n\na,b,c\n",
    "empty header name": b"answer,,response\na,b,c\n",
    "repeated header name": b"answer,x,x,response\na,b,c,d\n",
    "too many cells": b"answer,response\na,b\nc,d,e\n",
    "too few cells": b"answer,response,x\na,b\n",
    "quoted empty vs empty": b'answer,response\n"",\n,""\n',
    "NA and 007": b"answer,response\nNA,007\n",
    "whitespace cells": b"answer,response,Domain\n ,\t, \n",
    "only a header": b"answer,response\n",
    "quoted header": b'"answer","response"\n"a","b"\n',
    "spaces around a quoted cell": b'answer,response\n "a" ,b\n',
    "doubled quotes": b'answer,response\n"he said ""hi""",""""\n',
    "no final newline": b"answer,response\na,b",
    "CRLF": b"answer,response\r\na,b\r\n",
    "TSV content": b"answer\tresponse\na\tb\n",
    "invalid UTF-8": b"answer,response\na,\xff\n",
    "a 200 KB cell": b"answer,response\na," + b"x" * 200_000 + b"\n",
}


@pytest.mark.parametrize("data", CORPUS.values(), ids=CORPUS.keys())
def test_adversarial_files_read_the_same_as_the_reference(data: bytes) -> None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        with pytest.raises(InputError, match="offset"):
            load_bytes(data, "x.csv")
        return
    fast = outcome(lambda d: load_bytes(d, "x.csv"), data)
    assert fast == outcome(lambda t: load_text(t, "x.csv"), text)


def test_polars_reads_the_common_files_itself() -> None:
    """The fast path is taken for ordinary files (else the speed-up is an illusion)."""
    for name in ("quoted empty vs empty", "NA and 007", "doubled quotes", "CRLF", "a 200 KB cell", "quoted header"):
        assert read_polars(CORPUS[name], ",") is not None, name
    for name in ("stray quote in a cell", "lone CR rows", "a row of delimiters", "empty header name"):
        assert read_polars(CORPUS[name], ",") is None, name


def test_a_blank_line_is_skipped_without_the_reference() -> None:
    table = read_polars(CORPUS["blank line between rows"], ",")
    assert table is not None and table.rows() == [("a", "b"), ("c", "d")]


# ----------------------------------------------------------------------------- writing


def polars_bytes(frame: pd.DataFrame) -> bytes:
    return csv_cells(pl.from_pandas(frame)).write_csv(quote_style="necessary", line_terminator="\n").encode()


write_cell = pieces(list("ab ,\"\n\t'=#") + ["मधु", "\u2028"], 8)


@settings(max_examples=120, deadline=None)
@given(rows=st.lists(st.tuples(write_cell, write_cell, st.booleans(), st.integers(0, 99)), min_size=1, max_size=6))
def test_polars_writer_gives_the_bytes_pandas_gave(rows) -> None:
    frame = pd.DataFrame(rows, columns=["answer", "response", "is_correct", "matching_words"]).astype(
        {"answer": object, "response": object}
    )
    assert polars_bytes(frame) == frame.to_csv(index=False).encode()


def test_a_lone_cr_is_quoted_so_the_file_reads_back() -> None:
    frame = pd.DataFrame({"answer": ["a\rb"], "response": ["c"]}, dtype=object)
    assert polars_bytes(frame) == b'answer,response\n"a\rb",c\n'
    assert load_bytes(polars_bytes(frame), "x.csv").table["answer"].to_list() == ["a\rb"]


# ----------------------------------------------------------------------------- item keys

key_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=10)


@settings(max_examples=120, deadline=None)
@given(rows=st.lists(st.tuples(key_text, key_text, key_text), min_size=1, max_size=10))
def test_item_keys_equal_the_python_definition(rows) -> None:
    table = pl.DataFrame(rows, schema=["question", "answer", "response"], orient="row")
    assert item_keys(table).to_list() == [item_key(*row) for row in rows]


def test_item_keys_of_every_character_json_escapes() -> None:
    text = "".join(map(chr, range(0, 0x100))) + '"\\\u2028\u2029\ufeff'
    rows = [(text, "", ""), ("", text, ""), ("", "", text), ('"', "\\", "\x00")]
    table = pl.DataFrame(rows, schema=["question", "answer", "response"], orient="row")
    assert item_keys(table).to_list() == [item_key(*row) for row in rows]


# ----------------------------------------------------------------------------- unicode tables


def test_cached_unicode_tables_equal_a_fresh_computation(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(unicode_tables.CACHE_ENV, str(tmp_path))
    path = unicode_tables.cache_path()
    fresh = unicode_tables.compute()
    assert not path.exists()
    unicode_tables.tables.cache_clear()
    try:
        assert unicode_tables.tables() == fresh and path.exists()
        assert unicode_tables._read(path) == fresh  # read back as written
        path.write_text(json.dumps({"punctuation": [[0, 1]]}), encoding="utf-8")  # damaged: a set missing
        assert unicode_tables._read(path) is None
        unicode_tables.tables.cache_clear()
        assert unicode_tables.tables() == fresh
    finally:
        unicode_tables.tables.cache_clear()


def test_the_cache_names_the_python_and_unicode_versions(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(unicode_tables.CACHE_ENV, str(tmp_path))
    name = unicode_tables.cache_path().name
    assert f"py{sys.version_info.major}.{sys.version_info.minor}" in name
    assert unicodedata.unidata_version in name


# ----------------------------------------------------------------------------- export CSV


def pandas_export_csv(frame: pd.DataFrame) -> bytes:
    """What ``to_csv_bytes`` wrote before it moved to polars (the reference)."""
    out = pd.DataFrame({i: EF.neutralise(EF._cell_text(frame.iloc[:, i])) for i in range(frame.shape[1])})
    out.columns = [EF._neutralise_name(str(c)) for c in frame.columns]
    return out.to_csv(index=False, lineterminator="\r\n").encode("utf-8")


export_cell = pieces(list("ab ,\"\n\r\t'=+-@#") + ["मधु", "\u2028"], 6)
verdict = st.fixed_dictionaries({f: pieces(list('ab ,"\n=') + ["मधु"], 4) for f in EF.VERDICT_FIELDS})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.tuples(
            export_cell,
            st.one_of(st.none(), export_cell),
            st.booleans(),
            st.integers(-5, 99),
            st.lists(verdict, max_size=2),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_export_csv_bytes_equal_the_pandas_writer(rows) -> None:
    frame = pd.DataFrame(
        {
            "question": pd.Series([r[0] for r in rows], dtype="str"),  # Arrow-backed, as loaded
            "=note": pd.Series([r[1] for r in rows], dtype=object),  # a neutralised header too
            "exact_correct": [r[2] for r in rows],
            "matching_words": pd.Series([r[3] for r in rows], dtype="int64"),
            EF.VERDICTS_COLUMN: pd.Series([r[4] for r in rows], dtype=object),
        }
    )
    assert EF.to_csv_bytes(frame) == pandas_export_csv(frame)
    assert EF.to_csv_bytes(frame, bom=True) == codecs.BOM_UTF8 + pandas_export_csv(frame)
