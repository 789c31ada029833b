"""The command-line scorers end to end, as real subprocesses: exit codes, stdout versus stderr,
``--out`` columns, ``--json`` structure and the ``--normalize`` label.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from scoring.core.loader import load_path
from scoring.core.report import accuracy_by_domain, bucket_counts, mcnemar, score_frame

EXACT = ["scoring.exact_substring"]
OVERLAP = ["scoring.word_overlap"]
SCORE = ["scoring", "score"]
COMMANDS = [
    pytest.param(EXACT, id="exact_substring"),
    pytest.param(OVERLAP, id="word_overlap"),
    pytest.param(SCORE, id="score"),
]

OUT_COLUMNS = {
    "scoring.exact_substring": ["is_correct", "is_blank"],
    "scoring.word_overlap": ["is_correct", "is_blank", "matching_words", "total_golden_words"],
    "scoring": ["exact_correct", "overlap_correct", "matching_words", "total_golden_words", "is_blank", "bucket"],
}
BOOL_COLUMNS = {"is_correct", "is_blank", "exact_correct", "overlap_correct"}


def _write(path: Path, rows: list[list[str]], header: list[str] | None = None) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header or ["question", "answer", "Domain", "response"])
        writer.writerows(rows)
    return path


def _read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


def _assert_bad_input(proc: Any, *words: str) -> str:
    """Exit code 2, exactly one line on stderr naming the problem, nothing on stdout, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# ------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("command", COMMANDS)
def test_missing_file(tmp_path: Path, run_cli: Any, command: list[str]) -> None:
    _assert_bad_input(run_cli(*command, "--responses", tmp_path / "nope.csv"), "nope.csv", "error")


@pytest.mark.parametrize("command", COMMANDS)
def test_missing_column(tmp_path: Path, run_cli: Any, command: list[str]) -> None:
    src = _write(tmp_path / "in.csv", [["q", "Art", "x"]], header=["question", "Domain", "response"])
    _assert_bad_input(run_cli(*command, "--responses", src), "'answer'", "'question'", "'Domain'")


@pytest.mark.parametrize("command", COMMANDS)
def test_cp1252_file(tmp_path: Path, run_cli: Any, command: list[str]) -> None:
    data = "question,answer,Domain,response\nq,café,Art,café au lait\n".encode("cp1252")
    src = tmp_path / "in.csv"
    src.write_bytes(data)
    _assert_bad_input(run_cli(*command, "--responses", src), "UTF-8", f"offset {data.index(bytes([0xE9]))}")


@pytest.mark.parametrize(
    ("content", "word"),
    [(b"", "empty"), (b"question,answer,Domain,response\n", "no data rows"), (b"\x00\x01\x02binary", "binary")],
    ids=["empty", "header-only", "binary"],
)
def test_not_a_table(tmp_path: Path, run_cli: Any, content: bytes, word: str) -> None:
    src = tmp_path / "in.csv"
    src.write_bytes(content)
    _assert_bad_input(run_cli(*SCORE, "--responses", src), word)


def test_directory_instead_of_file(tmp_path: Path, run_cli: Any) -> None:
    _assert_bad_input(run_cli(*EXACT, "--responses", tmp_path))


def test_unwritable_out(tmp_path: Path, run_cli: Any) -> None:
    src = _write(tmp_path / "in.csv", [["q", "Delhi", "Art", "Delhi"]])
    out = tmp_path / "no" / "dir" / "out.csv"
    _assert_bad_input(run_cli(*OVERLAP, "--responses", src, "--out", out), "Cannot write")


# ------------------------------------------------------------------------------- streams


@pytest.mark.parametrize("command", COMMANDS)
def test_warnings_on_stderr_report_on_stdout(tmp_path: Path, run_cli: Any, command: list[str]) -> None:
    src = _write(
        tmp_path / "in.csv",
        [["", "Delhi"], ["Delhi", "  "], ["Delhi", "Delhi."]],
        header=["answer", "response"],  # no Domain, no question
    )
    proc = run_cli(*command, "--responses", src)
    assert proc.returncode == 0, proc.stderr
    warnings = proc.stderr.strip().splitlines()
    assert all(line.startswith("warning:") for line in warnings)
    joined = "\n".join(warnings)
    assert "Domain" in joined and "question" in joined
    assert "1 row(s) have an empty golden" in joined and "1 row(s) have a blank response" in joined
    assert "warning" not in proc.stdout
    assert "combined" in proc.stdout and "3" in proc.stdout


def test_text_report_lists_domains_and_combined(run_cli: Any, sample_csv: Path) -> None:
    proc = run_cli(*SCORE, "--responses", sample_csv)
    assert proc.returncode == 0, proc.stderr
    for needle in ("Exact substring", "Word overlap", "Agreement buckets", "McNemar", "combined", "95% CI"):
        assert needle in proc.stdout
    assert "DIAGNOSTIC" not in proc.stdout


def test_a_tiny_mcnemar_p_value_prints_as_below_the_floor(run_cli: Any, tmp_path: Path) -> None:
    """30 overlap_only rows against none the other way: p = 1.9e-09, printed "p < 0.0001" (issue 8)."""
    rows = ["question,answer,Domain,response"] + [f"Q{i}?,alpha{i} beta,Art,beta alpha{i}" for i in range(30)]
    path = tmp_path / "lopsided.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    proc = run_cli(*SCORE, "--responses", path)
    assert proc.returncode == 0, proc.stderr
    assert "McNemar exact test (exact_only=0, overlap_only=30): p < 0.0001" in proc.stdout
    assert "e-0" not in proc.stdout and "p = 0\n" not in proc.stdout


# ------------------------------------------------------------------------------- --out


MIXED = [
    ["q0", "Delhi", "History", "Delhi."],
    ["q1", "गंगा", "Geography", "गंगा नदी"],
    ["q2", "amalak", "Art", "Amalaka"],
    ["q3", "Narmada valley", "Art", "Narmada River valley"],
    ["q4", "Chola", "History", ""],
    ["q5", "Ruru Jataka", "Art", "Jataka"],
]


@pytest.mark.parametrize("command", COMMANDS)
def test_out_columns_order_and_booleans(tmp_path: Path, run_cli: Any, command: list[str]) -> None:
    src = _write(tmp_path / "in.csv", MIXED)
    out = tmp_path / "out.csv"
    proc = run_cli(*command, "--responses", src, "--out", out)
    assert proc.returncode == 0, proc.stderr
    header, rows = _read(out)
    added = OUT_COLUMNS[command[0]]
    assert header == ["question", "answer", "Domain", "response", *added]
    assert [r["question"] for r in rows] == [row[0] for row in MIXED]  # input order, one row each
    assert [[r["question"], r["answer"], r["Domain"], r["response"]] for r in rows] == MIXED
    for column in BOOL_COLUMNS & set(added):
        assert {r[column] for r in rows} == {"True", "False"}, column
    assert out.read_bytes().decode("utf-8")  # UTF-8, no BOM needed to read it back
    blank = [r["is_blank"] for r in rows]
    assert blank == ["False", "False", "False", "False", "True", "False"]


def test_out_values_per_command(tmp_path: Path, run_cli: Any) -> None:
    src = _write(tmp_path / "in.csv", MIXED)
    outs = {}
    for name, command in (("exact", EXACT), ("overlap", OVERLAP), ("score", SCORE)):
        outs[name] = tmp_path / f"{name}.csv"
        assert run_cli(*command, "--responses", src, "--out", outs[name]).returncode == 0
    exact = _read(outs["exact"])[1]
    overlap = _read(outs["overlap"])[1]
    score = _read(outs["score"])[1]
    assert [r["is_correct"] for r in exact] == ["True", "True", "True", "False", "False", "False"]
    assert [r["is_correct"] for r in overlap] == ["True", "True", "False", "True", "False", "False"]
    assert [(r["matching_words"], r["total_golden_words"]) for r in overlap] == [
        ("1", "1"),
        ("1", "1"),
        ("0", "1"),
        ("2", "2"),
        ("0", "1"),
        ("1", "2"),
    ]
    assert [r["bucket"] for r in score] == [
        "both_pass",
        "both_pass",
        "exact_only",
        "overlap_only",
        "both_fail",
        "both_fail",
    ]
    assert [r["exact_correct"] for r in score] == [r["is_correct"] for r in exact]
    assert [r["overlap_correct"] for r in score] == [r["is_correct"] for r in overlap]


# ------------------------------------------------------------------------------- --json


ACCURACY_KEYS = {"domain", "n", "correct", "blank", "accuracy", "ci_low", "ci_high"}


@pytest.mark.parametrize("command", [EXACT, OVERLAP], ids=["exact_substring", "word_overlap"])
def test_metric_json_structure(run_cli: Any, sample_csv: Path, command: list[str]) -> None:
    proc = run_cli(*command, "--responses", sample_csv, "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)  # stdout is nothing but the JSON document
    metric = command[0].split(".")[1]
    column = {"exact_substring": "exact_correct", "word_overlap": "overlap_correct"}[metric]
    assert set(report) == {"metric", "normalized", "rows", "domains", "combined"}
    assert (report["metric"], report["normalized"]) == (metric, False)
    expected = accuracy_by_domain(score_frame(load_path(sample_csv).frame), column)
    assert report["rows"] == expected[-1].n
    assert report["domains"] == [r.as_dict() for r in expected[:-1]]
    assert report["combined"] == expected[-1].as_dict()
    for row in [*report["domains"], report["combined"]]:
        assert set(row) == ACCURACY_KEYS


def test_score_json_structure(run_cli: Any, sample_csv: Path) -> None:
    proc = run_cli(*SCORE, "--responses", sample_csv, "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert set(report) == {"normalized", "rows", "metrics", "buckets", "mcnemar"}
    assert set(report["metrics"]) == {"exact_substring", "word_overlap"}
    scored = score_frame(load_path(sample_csv).frame)
    assert report["buckets"] == bucket_counts(scored)
    test = mcnemar(scored)
    assert report["mcnemar"] == {
        "exact_only": test.exact_only,
        "overlap_only": test.overlap_only,
        "p_value": test.p_value,
    }
    combined = report["buckets"]["combined"]
    assert set(combined) == {"both_pass", "both_fail", "exact_only", "overlap_only"}
    assert all(count > 0 for count in combined.values()), "the bundled sample has rows in every bucket"
    assert sum(combined.values()) == report["rows"] == len(scored)
    for metric, body in report["metrics"].items():
        assert body["metric"] == metric
        assert body["combined"]["n"] == report["rows"]


# ------------------------------------------------------------------------------- --normalize


NORMALIZE_ROWS = [
    ["q0", "Delhi ", "Art", "Delhi"],  # golden stripped only under --normalize
    ["q1", "१९४७", "History", "In 1947."],  # native digits folded
    ["q2", "गंगा", "Geography", "गंगा नदी"],  # unaffected
]


@pytest.mark.parametrize("command", COMMANDS)
def test_normalize_is_labelled_in_text(tmp_path: Path, run_cli: Any, command: list[str]) -> None:
    src = _write(tmp_path / "in.csv", NORMALIZE_ROWS)
    plain = run_cli(*command, "--responses", src)
    normed = run_cli(*command, "--responses", src, "--normalize")
    assert plain.returncode == normed.returncode == 0
    assert "DIAGNOSTIC" not in plain.stdout
    first = normed.stdout.splitlines()[0]
    assert "DIAGNOSTIC" in first and "--normalize" in first and "not the spec protocol" in first
    assert "flipped by normalisation" in normed.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_normalize_is_labelled_in_json(tmp_path: Path, run_cli: Any, command: list[str]) -> None:
    src = _write(tmp_path / "in.csv", NORMALIZE_ROWS)
    plain = json.loads(run_cli(*command, "--responses", src, "--json").stdout)
    normed = json.loads(run_cli(*command, "--responses", src, "--json", "--normalize").stdout)
    assert plain["normalized"] is False and "diagnostic" not in plain
    assert normed["normalized"] is True
    assert "not the spec protocol" in normed["diagnostic"]
    if command == SCORE:
        assert normed["flipped_by_normalize"] == {"exact_substring": 2, "word_overlap": 1}
        assert normed["metrics"]["exact_substring"]["combined"]["correct"] == 3
        assert plain["metrics"]["exact_substring"]["combined"]["correct"] == 1
    else:
        flips = 2 if command == EXACT else 1
        assert normed["flipped_by_normalize"] == flips
        assert normed["combined"]["correct"] - plain["combined"]["correct"] == flips


# ------------------------------------------------------------------------------- domains


DOMAINS = ["इतिहास", "Art", "கலை", "ভূগোল", "History", "art", "भूगोल"]


@pytest.mark.parametrize("command", COMMANDS)
def test_non_latin_domains_sorted(tmp_path: Path, run_cli: Any, command: list[str]) -> None:
    rows = [[f"q{i}", "गंगा", domain, "गंगा" if i % 2 else "नदी"] for i, domain in enumerate(DOMAINS * 2)]
    src = _write(tmp_path / "in.csv", rows)
    report = json.loads(run_cli(*command, "--responses", src, "--json").stdout)
    metric_reports = list(report["metrics"].values()) if command == SCORE else [report]
    for body in metric_reports:
        assert [d["domain"] for d in body["domains"]] == sorted(DOMAINS)
        assert all(d["n"] == 2 and d["correct"] == 1 for d in body["domains"])
    if command == SCORE:
        assert list(report["buckets"]) == [*sorted(DOMAINS), "combined"]
    text = run_cli(*command, "--responses", src).stdout
    positions = [text.index(f"\n{d} ") for d in sorted(DOMAINS)]
    assert positions == sorted(positions)


def test_module_group_requires_a_command(run_cli: Any) -> None:
    proc = run_cli("scoring")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "score" in proc.stderr
