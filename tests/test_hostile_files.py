"""Issue 19: hostile files in every new format get a message naming the line or field, never a
traceback, and nothing already stored is touched.

The loader (``load_bytes`` / ``load_path``) on a truncated zip, a JSON-lines file with a line that
is not JSON, Parquet with nested columns, mixed types in one field, a 200 KB cell; a file of one
1 GiB line (the CLI as a process, and gzipped through the Upload page while runs exist); the
Upload page with JSON lines, Parquet and gzip; ``--columns`` on the word_overlap and llm_judge
command lines.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import subprocess
import sys
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from apptest_support import alerts, ok, open_page
from openai_stub import StubOpenAI, blocks
from sqlalchemy import Engine, inspect, text
from streamlit.testing.v1 import AppTest

from scoring import store
from scoring.core import formats
from scoring.core.errors import InputError
from scoring.core.loader import load_bytes, load_path
from scoring.core.report import score_table
from scoring.store import ENV_VAR

ROOT = Path(__file__).resolve().parent.parent
MiB = 1 << 20
BLOCK = b"a" * (16 * MiB)
BLOCKS_PER_GIB = 64
#: Seconds an upload of the 1 GiB gzip may take in AppTest (unpacking alone is several seconds).
BIG_UPLOAD_TIMEOUT = 240
#: Address space a child process reading the 1 GiB line gets. A loader that splits the line into
#: Python objects (as it did before MAX_LINE) dies here of a MemoryError in seconds instead of
#: taking all of the machine's memory (it took 23 GB and was OOM-killed, the test process too).
CHILD_MEMORY = 8 << 30
#: ``python -c CAPPED <module> <args>``: ``python -m <module> <args>`` under CHILD_MEMORY.
CAPPED = (
    f"import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, ({CHILD_MEMORY}, {CHILD_MEMORY})); "
    "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)"
)


def _cli(*args: str | os.PathLike[str], **kwargs) -> subprocess.CompletedProcess[str]:
    """``python -m <args>`` from the project root, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", *(str(a) for a in args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=180,
        check=False,
        **kwargs,
    )


def _parquet(frame: pl.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.write_parquet(buf)
    return buf.getvalue()


def _jsonl(records: list[dict], ensure_ascii: bool = False) -> bytes:
    return ("\n".join(json.dumps(r, ensure_ascii=ensure_ascii) for r in records) + "\n").encode("utf-8")


def _delimited(records: list[dict], delimiter: str) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(records[0]), delimiter=delimiter, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue().encode("utf-8")


def _refusal(data: bytes, name: str | None) -> str:
    with pytest.raises(InputError) as caught:
        load_bytes(data, name)
    return str(caught.value)


# --- 1. the loader ---------------------------------------------------------------------------------


def _zip_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("rows.csv", "answer,response,Domain\n" + "".join(f"a{i},r{i},D\n" for i in range(2000)))
    return buf.getvalue()


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("rows.zip", "The file is a zip archive"),
        (None, "The file is a zip archive"),
        ("rows.eval", "the .eval file is not a readable zip (truncated or damaged"),
        ("rows.csv", "'rows.csv' is named as CSV but its content is a zip archive"),
    ],
)
def test_a_truncated_zip_is_refused_with_a_message(tmp_path: Path, name: str | None, said: str) -> None:
    whole = _zip_bytes()
    cut = whole[: len(whole) // 2]
    assert cut.startswith(formats.ZIP_MAGIC) and len(cut) > 1000
    message = _refusal(cut, name)
    assert said in message and "Traceback" not in message and "\n" not in message
    if name:
        path = tmp_path / name
        path.write_bytes(cut)
        with pytest.raises(InputError, match=said.replace("(", r"\(")):
            load_path(path)


def test_a_truncated_zip_on_the_command_line_is_one_line_and_exit_2(tmp_path: Path) -> None:
    whole = _zip_bytes()
    path = tmp_path / "rows.zip"
    path.write_bytes(whole[: len(whole) // 2])
    done = _cli("scoring", "score", "--responses", path, "--out", tmp_path / "out.csv")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: The file is a zip archive") and done.stderr.count("\n") == 1
    assert not (tmp_path / "out.csv").exists()


def test_truncated_parquet_and_gzip_are_refused_with_what_is_wrong() -> None:
    parquet = _parquet(pl.DataFrame({"answer": [f"a{i}" for i in range(500)], "response": ["r"] * 500}))
    assert "The Parquet file cannot be read" in _refusal(parquet[: len(parquet) // 2], "rows.parquet")
    packed = gzip.compress(_jsonl([{"answer": f"a{i}", "response": "r"} for i in range(500)]))
    assert "The gzip file is cut short" in _refusal(packed[: len(packed) // 2], "rows.jsonl.gz")


GOOD_LINES = b'{"answer":"a","response":"b","Domain":"D"}\n{"answer":"c","response":"d","Domain":"D"}\n'


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (b'{"answer": nope, "response": "b"}', "Line 3 is not valid JSON"),
        (b'{"answer": "a", "response": "b"', "Line 3 is not valid JSON"),
        (b"this is not JSON at all", "Line 3 is not valid JSON"),
        (b'{"answer": "a", "response": "b"} trailing', "Line 3 is not valid JSON"),
        (b"{'answer': 'a', 'response': 'b'}", "Line 3 is not valid JSON"),
        (b'{"answer": "a", "response": "b",}', "Line 3 is not valid JSON"),
        (b'"a string, not a row"', "Line 3 is a JSON string, not an object"),
        (b"[1, 2]", "Line 3 is a JSON array, not an object"),
    ],
)
def test_a_jsonl_line_that_is_not_json_is_named(tmp_path: Path, line: bytes, said: str) -> None:
    data = GOOD_LINES + line + b"\n" + GOOD_LINES
    message = _refusal(data, "rows.jsonl")
    assert message.startswith(said), message
    assert _refusal(gzip.compress(data), "rows.jsonl.gz").startswith(said)  # gzipped: the same line
    path = tmp_path / "rows.ndjson"
    path.write_bytes(data)
    with pytest.raises(InputError, match=f"^{said}"):
        load_path(path)


def test_parquet_nested_columns_are_read_as_compact_json() -> None:
    frame = pl.DataFrame(
        {
            "answer": ["दिल्ली", "b", "c"],
            "response": ["यह दिल्ली है", "x", "y"],
            "meta": [{"k": 1, "v": "x"}, {"k": 2, "v": None}, None],
            "tags": [[1, 2], [], None],
            "words": [["a", "é", "अ"], ["b"], []],
            "deep": [[{"k": 1, "v": "x"}], [], [{"k": 3, "v": "z"}]],
            "score": [{"p": 1.5, "ok": True}, {"p": 0.25, "ok": False}, {"p": None, "ok": None}],
        }
    )
    run = load_bytes(_parquet(frame), "nested.parquet")
    assert run.format == "parquet"
    rows = run.table.to_dicts()
    assert [r["meta"] for r in rows] == ['{"k":1,"v":"x"}', '{"k":2,"v":null}', ""]
    assert [r["tags"] for r in rows] == ["[1,2]", "[]", ""]
    assert [r["words"] for r in rows] == ['["a","é","अ"]', '["b"]', "[]"]  # non-ASCII kept, not escaped
    assert [r["deep"] for r in rows] == ['[{"k":1,"v":"x"}]', "[]", '[{"k":3,"v":"z"}]']
    assert [r["score"] for r in rows] == ['{"p":1.5,"ok":true}', '{"p":0.25,"ok":false}', '{"p":null,"ok":null}']
    assert [r["answer"] for r in rows] == ["दिल्ली", "b", "c"]


def test_a_parquet_response_that_is_a_struct_is_its_json_and_scored_as_text() -> None:
    frame = pl.DataFrame({"answer": ['"v":"x"', "Delhi"], "response": [{"k": 1, "v": "x"}, {"k": 2, "v": "Agra"}]})
    run = load_bytes(_parquet(frame), "struct_response.parquet")
    assert run.table["response"].to_list() == ['{"k":1,"v":"x"}', '{"k":2,"v":"Agra"}']
    assert score_table(run.table)["exact_correct"].to_list() == [True, False]


MIXED_TEXT = ["1.50", "x", "true", "", '{"a":[1,2]}']
MIXED_JSON = ["1.50", '"x"', "true", "null", '{"a": [1, 2]}']  # as written in the file: 1.50 kept


def _mixed_lines(order: list[int]) -> list[str]:
    return [f'{{"answer": "a{i}", "response": "r{i}", "f": {MIXED_JSON[i]}}}' for i in order]


@pytest.mark.parametrize("order", [[0, 1, 2, 3, 4], [1, 0, 2, 3, 4], [3, 4, 2, 1, 0]])
def test_mixed_types_in_one_jsonl_field_are_each_their_text(order: list[int]) -> None:
    data = "\n".join(_mixed_lines(order)).encode("utf-8")
    run = load_bytes(data, "mixed.jsonl")
    assert run.format == "jsonl"
    assert run.table["f"].to_list() == [MIXED_TEXT[i] for i in order]
    assert run.table["answer"].to_list() == [f"a{i}" for i in order]


@pytest.mark.parametrize("order", [[0, 1, 2, 3, 4], [1, 0, 2, 3, 4]])
def test_mixed_types_in_one_json_array_field_are_each_their_text(order: list[int]) -> None:
    data = ("[\n" + ",\n".join(_mixed_lines(order)) + "\n]").encode("utf-8")
    run = load_bytes(data, "mixed.json")
    assert run.format == "json"
    assert run.table["f"].to_list() == [MIXED_TEXT[i] for i in order]
    one_line = ("[" + ",".join(_mixed_lines(order)) + "]").encode("utf-8")
    assert load_bytes(one_line, "mixed.json").table["f"].to_list() == [MIXED_TEXT[i] for i in order]


_PHRASE = 'भारत की राजधानी नई दिल्ली है, और "गंगा" सबसे लंबी नदी है।\n'
BIG_CELL = _PHRASE * (200_000 // len(_PHRASE.encode("utf-8")) + 1)
BIG_ROWS = [
    {"question": "लंबा उत्तर?", "answer": "नई दिल्ली", "response": BIG_CELL, "Domain": "Hindi"},
    {"question": "q2", "answer": "a", "response": "b", "Domain": "D"},
]


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("big.jsonl", _jsonl(BIG_ROWS)),
        ("big_escaped.jsonl", _jsonl(BIG_ROWS, ensure_ascii=True)),  # \u0915... : a 1.2 MB line
        ("big.json", json.dumps(BIG_ROWS, ensure_ascii=False).encode("utf-8")),
        ("big.parquet", _parquet(pl.DataFrame(BIG_ROWS))),
        ("big.csv", _delimited(BIG_ROWS, ",")),
        ("big.tsv", _delimited(BIG_ROWS, "\t")),
    ],
)
def test_a_200_kb_devanagari_cell_is_read_back_intact(name: str, data: bytes) -> None:
    assert len(BIG_CELL.encode("utf-8")) >= 200_000
    run = load_bytes(data, name)
    assert run.table.height == 2
    assert run.table["response"][0] == BIG_CELL
    assert run.table.row(1) == ("q2", "a", "D", "b")
    assert run.table["question"][0] == "लंबा उत्तर?"


# --- 2. a file of one 1 GiB line, and lines longer than MAX_LINE -----------------------------------


def test_the_line_and_gzip_limits_are_64_mib_and_2_gib() -> None:
    assert formats.MAX_LINE == 64 * MiB
    assert formats.MAX_INFLATED == 2 << 30


def test_a_1_gib_file_of_one_line_on_the_command_line(tmp_path: Path) -> None:
    """A real 1 GiB file without a line break: exit 2, one message naming line 1, no output file
    (``python -m scoring score``, with its memory capped at CHILD_MEMORY)."""
    path, out = tmp_path / "one_line.csv", tmp_path / "out.csv"
    try:
        with path.open("wb") as fh:
            for _ in range(BLOCKS_PER_GIB):
                fh.write(BLOCK)
        assert path.stat().st_size == 1 << 30
        with (tmp_path / "stdout").open("wb") as so, (tmp_path / "stderr").open("wb") as se:
            done = subprocess.run(
                [sys.executable, "-c", CAPPED, "scoring", "score", "--responses", str(path), "--out", str(out)],
                cwd=ROOT,
                stdout=so,
                stderr=se,
                timeout=240,
                check=False,
            )
    finally:
        path.unlink(missing_ok=True)
    assert (tmp_path / "stderr").stat().st_size < 4096  # the line is never echoed back
    stderr = (tmp_path / "stderr").read_text(encoding="utf-8")
    assert done.returncode == 2, stderr
    assert "Line 1 is longer than 64 MiB" in stderr and "Traceback" not in stderr
    assert stderr.startswith("error: ") and stderr.count("\n") == 1
    assert (tmp_path / "stdout").read_bytes() == b""
    assert not out.exists()


@pytest.fixture(scope="module")
def one_gib_line_gz() -> bytes:
    """1 GiB of ``a`` without a line break, gzip-compressed (about 4.5 MB), built once."""
    packer = zlib.compressobj(1, zlib.DEFLATED, 31)  # wbits 31: a gzip header and trailer
    parts = [packer.compress(BLOCK) for _ in range(BLOCKS_PER_GIB)]
    parts.append(packer.flush())
    return b"".join(parts)


def test_the_gzip_fixture_unpacks_to_1_gib(one_gib_line_gz: bytes) -> None:
    inflater = zlib.decompressobj(wbits=31)
    size = 0
    for start in range(0, len(one_gib_line_gz), MiB):
        size += len(inflater.decompress(one_gib_line_gz[start : start + MiB]))
    assert inflater.eof and size == 1 << 30 and len(one_gib_line_gz) < 16 * MiB


_HEAD, _TAIL = b'{"answer": "a", "response": "', b'", "Domain": "D"}'


def _jsonl_long_third_line(size: int) -> bytes:
    """Two good lines, then a good line of ``size`` bytes (its line break not counted)."""
    return GOOD_LINES + _HEAD + b"x" * (size - len(_HEAD) - len(_TAIL)) + _TAIL + b"\n"


def test_a_jsonl_third_line_of_65_mib_is_refused_naming_line_3() -> None:
    data = _jsonl_long_third_line(65 * MiB)
    assert data.count(b"\n") == 3
    message = _refusal(data, "rows.jsonl")
    assert message.startswith("Line 3 is longer than 64 MiB"), message[:300]
    assert len(message) < 1000
    assert _refusal(gzip.compress(data, compresslevel=1), "rows.jsonl.gz").startswith("Line 3 is longer than 64 MiB")


@pytest.mark.parametrize(("name", "sep"), [("rows.csv", b","), ("rows.tsv", b"\t")])
def test_a_csv_or_tsv_third_line_of_65_mib_is_refused_naming_line_3(name: str, sep: bytes) -> None:
    data = sep.join([b"answer", b"response", b"Domain"]) + b"\n" + sep.join([b"a", b"b", b"D"]) + b"\n"
    data += sep.join([b"a", b"x" * (65 * MiB), b"D"]) + b"\n" + sep.join([b"c", b"d", b"D"]) + b"\n"
    message = _refusal(data, name)
    assert message.startswith("Line 3 is longer than 64 MiB"), message[:300]


def test_the_line_length_is_checked_before_parsing() -> None:
    """A bad line 2 before the over-long line 3: the length is what is refused, found first."""
    data = _jsonl_long_third_line(65 * MiB).replace(b'{"answer":"c"', b'{"answer": nope', 1)
    assert b"nope" in data
    assert _refusal(data, "rows.jsonl").startswith("Line 3 is longer than 64 MiB")


def test_a_line_of_exactly_max_line_bytes_is_read() -> None:
    limit = formats.MAX_LINE
    run = load_bytes(_jsonl_long_third_line(limit), "rows.jsonl")
    assert run.table.height == 3 and len(run.table["response"][2]) == limit - len(_HEAD) - len(_TAIL)
    assert _refusal(_jsonl_long_third_line(limit + 1), "rows.jsonl").startswith("Line 3 is longer than 64 MiB")


def _csv_of(size: int) -> bytes:
    """A CSV of exactly ``size`` bytes (short lines)."""
    head = b"answer,response\n"
    rows = b"a,b\n" * ((size - len(head)) // 4 - 1)
    last = size - len(head) - len(rows) - 3
    return head + rows + b"a," + b"x" * last + b"\n"


@pytest.mark.parametrize(
    ("sizes", "refused"),
    [
        pytest.param([MiB], False, id="one-member-at-the-cap"),
        pytest.param([MiB + 1], True, id="one-member-a-byte-over"),
        pytest.param([300_000, 300_000], False, id="two-members-under"),  # as ``cat a.gz b.gz`` makes
        pytest.param([MiB, 8 * MiB], True, id="bomb-after-a-full-first-member"),  # must not be unpacked at all
        pytest.param([600_000, 600_000], True, id="over-in-the-second-member"),  # too large, not "cut short"
    ],
)
def test_gzip_unpacking_is_capped_over_all_members(
    monkeypatch: pytest.MonkeyPatch, sizes: list[int], refused: bool
) -> None:
    """The cap on what a gzip file unpacks to, set to 1 MiB here (``formats.MAX_INFLATED``, read
    when unpacking): a bomb in a second gzip member is refused like one in the first. ``sizes``:
    one CSV cut into gzip members of these unpacked sizes."""
    monkeypatch.setattr(formats, "MAX_INFLATED", MiB)
    body, cuts = _csv_of(sum(sizes)), [0]
    for size in sizes:
        cuts.append(cuts[-1] + size)
    data = b"".join(gzip.compress(body[a:b], compresslevel=1) for a, b in zip(cuts, cuts[1:]))
    if refused:
        message = _refusal(data, "rows.csv.gz")
        assert "unpacks to more than" in message, message
    else:
        assert load_bytes(data, "rows.csv.gz").table.height == body.count(b"\n") - 1


# --- the Upload page -------------------------------------------------------------------------------


def stored(engine: Engine) -> dict[str, list[str]]:
    """Every row of every table (as text, sorted): what "nothing stored is touched" compares."""
    with engine.connect() as conn:
        return {
            name: sorted(repr(tuple(row)) for row in conn.execute(text(f'SELECT * FROM "{name}"')))
            for name in inspect(conn).get_table_names()
        }


def upload_page() -> AppTest:
    """A first start of the app (the sample runs are loaded), then the Upload page."""
    return open_page("upload", reviewer=None)


def send(at: AppTest, name: str, data: bytes, mime: str, timeout: float = 60) -> AppTest:
    at.file_uploader(key="uploads").set_value((name, data, mime))
    return ok(at.run(timeout=timeout))


def selected(at: AppTest) -> str | None:
    value = at.query_params.get("run")
    return value[0] if isinstance(value, list) and value else value


def titles(at: AppTest) -> list[str]:
    return [str(t.value).replace("\\", "") for t in at.title]


def assert_refused_and_untouched(at: AppTest, engine: Engine, before: tuple, name: str, said: str) -> None:
    runs, rows, run_id = before
    errors = [a for a in alerts(at) if a.startswith(f"{name}: ")]
    assert any(said in e for e in errors), alerts(at)
    assert all(len(e) < 2000 for e in errors)  # a message, not the file echoed back
    assert not any(a.startswith(f"{name}: saved") for a in alerts(at))
    assert store.list_runs(engine) == runs
    assert stored(engine) == rows
    assert selected(at) == run_id
    assert titles(at) == ["Upload a model run"]


def _snapshot(at: AppTest, engine: Engine) -> tuple:
    runs = store.list_runs(engine)
    assert runs, "the sample runs should exist before the upload"
    return runs, stored(engine), selected(at)


_REFUSE = """
import sys
from scoring.core.errors import InputError
from scoring.core.loader import load_bytes
with open(sys.argv[1], "rb") as fh:
    data = fh.read()
try:
    load_bytes(data, "one_line.csv.gz")
except InputError as exc:
    print(exc)
else:
    sys.exit("read, not refused")
"""


def test_a_1_gib_line_gzipped_upload_is_refused_naming_line_1(
    app_engine: Engine, one_gib_line_gz: bytes, tmp_path: Path
) -> None:
    """Through the Upload page while runs exist: an error naming line 1, nothing stored touched.
    The loader is first tried on the file in a child process under CHILD_MEMORY, so a loader that
    would take all memory fails this test instead of the machine (AppTest runs in this process)."""
    packed = tmp_path / "one_line.csv.gz"
    packed.write_bytes(one_gib_line_gz)
    module = tmp_path / "refuse.py"
    module.write_text(_REFUSE, encoding="utf-8")
    sys_path = f"import sys; sys.path.insert(0, {str(ROOT)!r}); sys.path.insert(0, {str(tmp_path)!r}); "
    child = subprocess.run(
        [sys.executable, "-c", sys_path + CAPPED, "refuse", str(packed)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert child.returncode == 0 and child.stdout.startswith("Line 1 is longer than 64 MiB"), (
        f"the loader did not refuse the file under {CHILD_MEMORY >> 30} GiB: {child.stderr[-1500:]}"
    )
    at = upload_page()
    before = _snapshot(at, app_engine)
    send(at, "one_line.csv.gz", one_gib_line_gz, "application/gzip", timeout=BIG_UPLOAD_TIMEOUT)
    assert_refused_and_untouched(at, app_engine, before, "one_line.csv.gz", "Line 1 is longer than 64 MiB")


def test_a_bad_jsonl_upload_is_refused_naming_line_2(app_engine: Engine) -> None:
    at = upload_page()
    before = _snapshot(at, app_engine)
    data = b'{"answer":"a","response":"b","Domain":"D"}\n{"answer": "c", response: "d"}\n{"answer":"e"}\n'
    send(at, "bad_rows.jsonl", data, "application/x-ndjson")
    assert_refused_and_untouched(at, app_engine, before, "bad_rows.jsonl", "Line 2 is not valid JSON")


UPLOAD_ROWS = [
    {"question": "भारत की राजधानी?", "answer": "नई दिल्ली", "response": "राजधानी नई दिल्ली है", "Domain": "Hindi"},
    {"question": "Longest river?", "answer": "Ganga", "response": "The Godavari", "Domain": "Geography"},
    {"question": "Author of Godaan?", "answer": "Munshi Premchand", "response": "Premchand", "Domain": "Literature"},
    {"question": "Year of independence?", "answer": "1947", "response": "It was 1947", "Domain": "History"},
]


@pytest.mark.parametrize(
    ("name", "data", "mime", "rows"),
    [
        ("hostile_model_hindi.jsonl", _jsonl(UPLOAD_ROWS), "application/x-ndjson", 4),
        ("hostile_model_hindi.parquet", _parquet(pl.DataFrame(UPLOAD_ROWS[:3])), "application/octet-stream", 3),
        ("hostile_model_hindi.csv.gz", gzip.compress(_delimited(UPLOAD_ROWS[1:], ",")), "application/gzip", 3),
    ],
)
def test_jsonl_parquet_and_gzip_upload_as_runs(
    app_engine: Engine, name: str, data: bytes, mime: str, rows: int
) -> None:
    at = upload_page()
    before = store.list_runs(app_engine)
    send(at, name, data, mime)
    new = [r for r in store.list_runs(app_engine) if r.filename == name]
    assert len(new) == 1, alerts(at)
    run = new[0]
    assert run.n_rows == rows and store.count_runs(app_engine) == len(before) + 1
    assert selected(at) == str(run.id) and titles(at) == [f"Overview: {run.name}"]
    scored = store.load_scored(app_engine, run.id)
    expected = UPLOAD_ROWS[1:] if name.endswith(".gz") else UPLOAD_ROWS[:rows]
    assert scored["answer"].tolist() == [r["answer"] for r in expected]
    assert scored["Domain"].tolist() == [r["Domain"] for r in expected]
    assert scored["question"].tolist() == [r["question"] for r in expected]


# --- 4. --columns on the word_overlap and llm_judge command lines -----------------------------------

MAPPED_CSV = (
    "target,output,category\n"
    'New Delhi,"Delhi, the new capital",Geo\n'  # word overlap passes, exact substring fails
    "Ganga,the Ganga river,Rivers\n"  # both pass
    "Agra,Mumbai,Geo\n"  # both fail
)
SPEC = "answer=target,response=output,Domain=category"


@pytest.fixture
def mapped_csv(tmp_path: Path) -> Path:
    path = tmp_path / "harness_out.csv"
    path.write_text(MAPPED_CSV, encoding="utf-8")
    return path


def test_word_overlap_cli_takes_columns(mapped_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "verdicts.csv"
    done = _cli("scoring.word_overlap", "--responses", mapped_csv, "--columns", SPEC, "--json", "--out", out)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["metric"] == "word_overlap" and report["rows"] == 3
    domains = {d["domain"]: (d["n"], d["correct"]) for d in report["domains"]}
    assert domains == {"Geo": (2, 1), "Rivers": (1, 1)}
    assert (report["combined"]["n"], report["combined"]["correct"]) == (3, 2)
    with out.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["answer"] for r in rows] == ["New Delhi", "Ganga", "Agra"]
    assert [r["is_correct"] for r in rows] == ["True", "True", "False"]
    assert [r["matching_words"] for r in rows] == ["2", "1", "0"]
    plain = _cli("scoring.word_overlap", "--responses", mapped_csv, "--columns", SPEC)
    assert plain.returncode == 0 and "Word overlap: 3 rows" in plain.stdout
    refused = _cli("scoring.word_overlap", "--responses", mapped_csv)
    assert refused.returncode == 2 and refused.stdout == "" and "Traceback" not in refused.stderr
    assert "Missing required columns 'answer' and 'response'" in refused.stderr
    assert "--columns answer=FIELD" in refused.stderr
    wrong = _cli("scoring.word_overlap", "--responses", mapped_csv, "--columns", "answer=gold,response=output")
    assert wrong.returncode == 2 and "the file has no field 'gold'" in wrong.stderr


@pytest.fixture
def stub() -> Iterator[StubOpenAI]:
    with StubOpenAI() as server:
        yield server


def test_llm_judge_cli_takes_columns(mapped_csv: Path, tmp_path: Path, stub: StubOpenAI) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGE_"))}
    env.update({ENV_VAR: f"sqlite:///{tmp_path / 'judge.db'}", "OPENAI_API_KEY": "sk-test-hostile"})
    cmd = ["scoring.llm_judge", "--responses", mapped_csv, "--base-url", stub.base_url, "--model", "stub-judge"]
    refused = _cli(*cmd, env=env)
    assert refused.returncode == 2 and refused.stdout == "" and "Traceback" not in refused.stderr
    assert "Missing required columns 'answer' and 'response'" in refused.stderr
    assert stub.requests == 0
    done = _cli(*cmd, "--columns", SPEC, "--json", env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["metric"] == "llm_judge" and report["rows"] == 3
    domains = {d["domain"]: (d["n"], d["correct"]) for d in report["domains"]}
    assert domains == {"Geo": (2, 0), "Rivers": (1, 1)}  # the stub: golden answer inside the response
    assert (report["combined"]["n"], report["combined"]["correct"]) == (3, 1)
    sent = sorted((blocks(p)[0]["answer"], blocks(p)[0]["response"]) for p in stub.prompts())
    assert sent == [("Agra", "Mumbai"), ("Ganga", "the Ganga river"), ("New Delhi", "Delhi, the new capital")]
