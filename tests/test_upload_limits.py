"""Issue 27, defect 8: size once unpacked. A 131 KB gzip upload of short lines (5.6 million rows)
took the server from 1.0 to 4.7 GB, and 100,000 columns in a 0.9 MB file took 1.1 GB. Rows,
columns and unpacked bytes are now bounded by settings (``UPLOAD_MAX_ROWS``, ``UPLOAD_MAX_COLUMNS``,
``UPLOAD_MAX_UNPACKED_MB``; :mod:`scoring.core.limits`), checked while the gzip is unpacked and
before any parser builds rows or columns, and a refusal names the limit and its setting.

Peak memory is measured on the command line as a process (its maximum resident set, read by a
parent that waits for it alone), against the same command on the 40-row sample.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import polars as pl
import pytest
from apptest_support import alerts, ok, open_page
from sqlalchemy import Engine

from scoring import store
from scoring.core import formats, limits, settings
from scoring.core.errors import InputError
from scoring.core.loader import load_bytes

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "sample_run.csv"
MiB = 1 << 20
#: Address space of the measured command: a reader that builds every row dies here of a
#: MemoryError instead of taking the machine's memory (as in tests/test_hostile_files.py).
CHILD_MEMORY = 8 << 30
#: Run a command with its address space capped, wait for it, print its peak RSS (KiB), exit code
#: and stderr as JSON: RUSAGE_CHILDREN of this parent covers that one child only.
_MEASURE = """
import json, resource, subprocess, sys
cap = int(sys.argv[1])
def limit():
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
done = subprocess.run(sys.argv[2:], capture_output=True, text=True, preexec_fn=limit)
print(json.dumps([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, done.returncode, done.stderr]))
"""
#: What refusing may cost above scoring the 40-row sample (imports, the packed file, one piece).
REFUSAL_HEADROOM_MIB = 120


def _measured(args: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """(peak RSS in MiB, exit code, stderr) of ``python -m scoring <args>``."""
    command = [sys.executable, "-c", _MEASURE, str(CHILD_MEMORY), sys.executable, "-m", "scoring", *args]
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, env=full_env, check=True)
    rss_kib, code, stderr = json.loads(done.stdout)
    return rss_kib / 1024, code, stderr


@pytest.fixture(scope="module")
def baseline_mib() -> float:
    """Peak RSS of ``score`` on the 40-row sample: what any run of the command costs."""
    rss, code, stderr = _measured(["score", "--responses", str(SAMPLE)])
    assert code == 0, stderr
    return rss


def short_rows(rows: int) -> bytes:
    """The issue's bomb: a header and ``rows`` short lines (a few bytes each)."""
    return b"question,answer,Domain,response\n" + b"q,a,D,r\n" * rows


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """5.6 million short rows gzipped: under 200 KB (the issue's was 131 KB)."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.csv.gz"
    path.write_bytes(gzip.compress(short_rows(5_600_000), compresslevel=9))
    return path


def wide_csv(columns: int) -> bytes:
    """A header of ``columns`` names and one row: 100,000 columns take 0.9 MB, as in the issue."""
    head = "question,answer,Domain,response," + ",".join(f"c{i}" for i in range(columns - 4))
    row = "q,a,D,r," + ",".join("x" for _ in range(columns - 4))
    return f"{head}\n{row}\n".encode()


def wide_record(columns: int, value: object = "x") -> dict[str, object]:
    return {
        "question": "q",
        "answer": "a",
        "Domain": "D",
        "response": "r",
        **{f"c{i}": value for i in range(columns - 4)},
    }


def test_the_defaults_fit_the_machine_and_the_benchmarks() -> None:
    defaults = limits.Limits()
    assert (defaults.rows, defaults.columns, defaults.unpacked_bytes) == (2_000_000, 1_000, 2 << 30)
    assert formats.MAX_INFLATED == defaults.unpacked_bytes


def test_the_bomb_is_the_issue_s(bomb: Path) -> None:
    assert bomb.stat().st_size < 200_000


def test_a_gzip_bomb_is_refused_naming_the_row_limit_with_memory_bounded(bomb: Path, baseline_mib: float) -> None:
    rss, code, stderr = _measured(["score", "--responses", str(bomb)])
    lines = stderr.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in stderr, stderr[-2000:]
    assert lines[0] == (
        "error: The file has more than 2,000,000 rows, the most a file may have (UPLOAD_MAX_ROWS). "
        "Split it into smaller files, or raise the limit if the machine has the memory."
    )
    assert rss < baseline_mib + REFUSAL_HEADROOM_MIB, (rss, baseline_mib)


def test_100k_columns_in_a_small_file_are_refused_naming_the_column_limit(tmp_path: Path, baseline_mib: float) -> None:
    path = tmp_path / "wide.csv"
    path.write_bytes(wide_csv(100_000))
    assert path.stat().st_size < MiB
    rss, code, stderr = _measured(["score", "--responses", str(path)])
    lines = stderr.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in stderr, stderr[-2000:]
    assert lines[0].startswith(
        "error: The file has more than 1,000 columns, the most a file may have (UPLOAD_MAX_COLUMNS): 100,000 found."
    )
    assert rss < baseline_mib + REFUSAL_HEADROOM_MIB, (rss, baseline_mib)


def test_unpacking_stops_at_the_byte_limit_set(tmp_path: Path, baseline_mib: float) -> None:
    """A gzip of few, long rows (under the row limit) that unpacks to 512 MiB, with the limit set
    to 64 MiB: refused naming it, having held no more than about the limit."""
    block = (b"q,a,D," + b"r" * (64 * 1024 - 7) + b"\n") * 1024  # 1,024 rows of 64 KiB
    packer = zlib.compressobj(1, zlib.DEFLATED, 31)
    parts = [packer.compress(b"question,answer,Domain,response\n")]
    parts += [packer.compress(block) for _ in range(8)]  # 8 x 64 MiB
    parts.append(packer.flush())
    path = tmp_path / "long_rows.csv.gz"
    path.write_bytes(b"".join(parts))
    rss, code, stderr = _measured(["score", "--responses", str(path)], env={limits.UNPACKED_SETTING: "64"})
    assert code == 2 and stderr.strip().splitlines() == [
        "error: The gzip file unpacks to more than 64 MiB, the most a file may unpack to (UPLOAD_MAX_UNPACKED_MB). "
        "Split it first, or raise the limit."
    ], stderr[-2000:]
    assert rss < baseline_mib + 64 + REFUSAL_HEADROOM_MIB, (rss, baseline_mib)


def _parquet(frame: pl.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.write_parquet(buf)
    return buf.getvalue()


def _records(rows: int) -> list[dict[str, str]]:
    return [{"question": f"q{i}", "answer": "a", "Domain": "D", "response": "r"} for i in range(rows)]


FORMATS = {
    "rows.csv": lambda rows: short_rows(rows),
    "rows.csv.gz": lambda rows: gzip.compress(short_rows(rows)),
    "rows.tsv": lambda rows: short_rows(rows).replace(b",", b"\t"),
    "crlf.csv.gz": lambda rows: gzip.compress(short_rows(rows).replace(b"\n", b"\r\n")),
    "lone_cr.csv": lambda rows: short_rows(rows).replace(b"\n", b"\r"),  # pandas reads these; polars declines
    "lone_cr.csv.gz": lambda rows: gzip.compress(short_rows(rows).replace(b"\n", b"\r")),
    "rows.jsonl": lambda rows: "".join(json.dumps(r) + "\n" for r in _records(rows)).encode(),
    "rows.jsonl.gz": lambda rows: gzip.compress("".join(json.dumps(r) + "\n" for r in _records(rows)).encode()),
    "rows.json": lambda rows: json.dumps(_records(rows)).encode(),
    "rows.parquet": lambda rows: _parquet(pl.DataFrame(_records(rows))),
}


@pytest.mark.parametrize("name", list(FORMATS))
def test_the_row_limit_is_exact_in_every_format(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(limits.ROWS_SETTING, "1000")
    assert load_bytes(FORMATS[name](1000), name).table.height == 1000
    with pytest.raises(InputError, match=r"more than 1,000 rows.*\(UPLOAD_MAX_ROWS\)"):
        load_bytes(FORMATS[name](1001), name)


def test_quoted_line_breaks_and_blank_lines_are_not_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(limits.ROWS_SETTING, "1000")
    data = b"answer,response\n" + b'a,"three\nlines\n\nof text"\n\n\r\n' * 1000
    assert data.count(b"\n") > 5000
    assert load_bytes(data, "rows.csv").table.height == 1000
    assert load_bytes(gzip.compress(data), "rows.csv.gz").table.height == 1000
    with pytest.raises(InputError, match="more than 1,000 rows"):
        load_bytes(data + b"a,b\n", "rows.csv")


WIDE = {
    "wide.csv": lambda n: wide_csv(n),
    "wide.tsv": lambda n: wide_csv(n).replace(b",", b"\t"),
    "wide.jsonl": lambda n: (json.dumps(wide_record(n)) + "\n").encode(),
    "wide.json": lambda n: json.dumps([wide_record(n, 1)]).encode(),  # numbers: the line-by-line reader
    "wide.parquet": lambda n: _parquet(pl.DataFrame([wide_record(n)])),
}


@pytest.mark.parametrize("name", list(WIDE))
def test_the_column_limit_is_exact_in_every_format(name: str) -> None:
    assert load_bytes(WIDE[name](1000), name).table.width == 1000
    with pytest.raises(InputError, match=r"more than 1,000 columns.*\(UPLOAD_MAX_COLUMNS\): 1,001 found"):
        load_bytes(WIDE[name](1001), name)


def test_a_million_rows_the_benchmarks_size_are_read() -> None:
    data = short_rows(1_000_000)
    assert load_bytes(data, "million.csv").table.height == 1_000_000
    assert load_bytes(gzip.compress(data, compresslevel=1), "million.csv.gz").table.height == 1_000_000


def test_settings_come_from_the_environment_then_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text(
        "UPLOAD_MAX_ROWS = 50\nUPLOAD_MAX_COLUMNS = 20\nUPLOAD_MAX_UNPACKED_MB = 1.5\n", encoding="utf-8"
    )
    monkeypatch.setattr(settings, "PROJECT_ROOT", tmp_path)
    for name in (limits.ROWS_SETTING, limits.COLUMNS_SETTING, limits.UNPACKED_SETTING):
        monkeypatch.delenv(name, raising=False)
    assert limits.current() == limits.Limits(50, 20, int(1.5 * MiB))
    monkeypatch.setenv(limits.ROWS_SETTING, "70")
    monkeypatch.setenv(limits.COLUMNS_SETTING, "not a number")  # ignored, as the other numeric settings
    assert limits.current() == limits.Limits(70, limits.DEFAULT_COLUMNS, int(1.5 * MiB))
    with pytest.raises(InputError, match="more than 70 rows"):
        load_bytes(short_rows(71), "rows.csv")
    with pytest.raises(InputError, match=r"unpacks to more than 1\.5 MiB"):
        load_bytes(gzip.compress(b"answer,response\n" + b"a," + b"x" * (2 * MiB) + b"\n"), "rows.csv.gz")


# --- the Upload page ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("bomb.csv.gz", "The file has more than 2,000,000 rows, the most a file may have (UPLOAD_MAX_ROWS)."),
        (
            "wide.csv",
            "The file has more than 1,000 columns, the most a file may have (UPLOAD_MAX_COLUMNS): 100,000 found.",
        ),
    ],
)
def test_the_upload_page_refuses_naming_the_limit_and_stores_nothing(
    app_engine: Engine, bomb: Path, name: str, said: str
) -> None:
    data = bomb.read_bytes() if name == "bomb.csv.gz" else wide_csv(100_000)
    at = open_page("upload", reviewer=None)
    runs = store.list_runs(app_engine)
    at.file_uploader(key="uploads").set_value((name, data, "application/octet-stream"))
    ok(at.run(timeout=120))
    assert any(a.startswith(f"{name}: ") and said in a for a in alerts(at)), alerts(at)
    assert store.list_runs(app_engine) == runs
