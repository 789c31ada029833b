"""Issue 27, defect 8: a JSON-lines file whose FIRST line nests 1,000 levels deep (about 3 KB) ended
in a RecursionError traceback, on the command line and on the Upload page, while the same line
second was refused naming line 2. The first line is now read like any other: one message naming
line 1, no traceback, nothing stored. A value deep enough to pass ``json.loads`` but too deep for
the cell writer's recursion (500 levels) is read, its cell the compact JSON as written.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from apptest_support import alerts, ok, open_page
from sqlalchemy import Engine

from scoring import ingest, store
from scoring.core.errors import InputError
from scoring.core.loader import load_bytes

ROOT = Path(__file__).resolve().parent.parent
GOOD = b'{"question":"q","answer":"a","response":"b","Domain":"D"}'


def _deep(levels: int) -> bytes:
    """One JSON-lines row whose golden answer is ``levels`` nested arrays."""
    return b'{"question":"q","answer":' + b"[" * levels + b"]" * levels + b',"response":"x","Domain":"D"}'


DEEP = _deep(1000)


def test_the_deep_line_is_the_issue_s_3_kb() -> None:
    assert 2_000 < len(DEEP) < 4_000
    with pytest.raises(RecursionError):
        json.loads(DEEP)


@pytest.mark.parametrize("first", [True, False], ids=["first-line", "second-line"])
@pytest.mark.parametrize("name", ["rows.jsonl", "rows.jsonl.gz", None])
def test_a_line_nested_too_deeply_is_named_wherever_it_is(first: bool, name: str | None) -> None:
    data = (DEEP + b"\n" + GOOD + b"\n") if first else (GOOD + b"\n" + DEEP + b"\n")
    if name and name.endswith(".gz"):
        data = gzip.compress(data)
    with pytest.raises(InputError) as caught:
        load_bytes(data, name)
    assert str(caught.value) == f"Line {1 if first else 2} is nested too deeply to read."


def test_a_json_array_or_harness_log_nested_too_deeply_is_one_message() -> None:
    with pytest.raises(InputError, match="nested too deeply"):
        load_bytes(b"[" + DEEP + b"]", "rows.json")
    lm_eval = b'{"doc_id":0,"doc":{"q":1},"target":' + b"[" * 1000 + b"]" * 1000 + b',"resps":[],"filtered_resps":[]}\n'
    with pytest.raises(InputError, match="nested too deeply"):
        load_bytes(lm_eval, "samples_task.jsonl")


@pytest.mark.parametrize("first", [True, False], ids=["first-line", "second-line"])
def test_a_value_500_levels_deep_is_read_as_its_json_text(first: bool) -> None:
    """Deep enough that writing the cell recursively ran out of stack (two frames a level)."""
    deep = _deep(500)
    run = load_bytes((deep + b"\n" + GOOD + b"\n") if first else (GOOD + b"\n" + deep + b"\n"), "rows.jsonl")
    assert run.table["answer"].to_list()[0 if first else 1] == "[" * 500 + "]" * 500


@pytest.mark.parametrize("first", [True, False], ids=["first-line", "second-line"])
def test_the_cli_says_one_line_naming_the_line(tmp_path: Path, first: bool) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_bytes((DEEP + b"\n" + GOOD + b"\n") if first else (GOOD + b"\n" + DEEP + b"\n"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "scoring", "score", "--responses", str(path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == [f"error: Line {1 if first else 2} is nested too deeply to read."]


def test_the_upload_function_and_page_name_line_1_and_store_nothing(app_engine: Engine) -> None:
    data = DEEP + b"\n" + GOOD + b"\n"
    with pytest.raises(InputError, match="^Line 1 is nested too deeply"):
        ingest.save_run(app_engine, data, "deep.jsonl")
    at = open_page("upload", reviewer=None)
    runs = store.list_runs(app_engine)
    at.file_uploader(key="uploads").set_value(("deep.jsonl", data, "application/x-ndjson"))
    ok(at.run())  # no exception box
    assert any(a.startswith("deep.jsonl: ") and "Line 1 is nested too deeply to read." in a for a in alerts(at)), (
        alerts(at)
    )
    assert store.list_runs(app_engine) == runs
