"""Every row of every example table in the spec (evaluation-scripts.md), as a test.

The spec is the source of truth, so each row is checked twice: against the public functions
(reference per-pair functions and the fast column path) and end to end through the command-line
scorers, whose per-row output and JSON report must say the same. The tables are copied here:
tests must not read files outside the repository at run time.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from scoring.core.columnar import score_columns
from scoring.core.protocols import OverlapResult, bucket, exact_substring, word_overlap

# --- Spec section 1, exact substring: (golden, response, correct) --------------------------
EXACT_TABLE: list[tuple[str, str, bool]] = [
    ("Ruru Jataka", "The answer is the Ruru Jataka, depicted at Bharhut.", True),  # prose irrelevant
    ("ruru jataka", "RURU JATAKA", True),  # case-insensitive
    ("गंगा", "गंगा नदी", True),  # works for Devanagari
    ("Ruru Jataka", "Jataka Ruru", False),  # order matters
    ("Narmada valley", "the Narmada river valley", False),  # must be contiguous
    ("Delhi ", "Delhi", False),  # golden answer is not stripped
    ("amalak", "Amalaka", True),  # matches inside a longer word
    ("No", "There is **no** such temple", True),  # false positive: no word boundary
    ("Delhi", "Delhi is not the answer; it's Mumbai", True),  # false positive: mention != assertion
]

# --- Spec section 2, word overlap: (golden, response, correct, matching, total) -------------
OVERLAP_TABLE: list[tuple[str, str, bool, int, int]] = [
    ("Narmada valley", "valley Narmada", True, 2, 2),  # order is irrelevant
    ("Narmada valley", "the Narmada river valley in India", True, 2, 2),  # insertions are free
    ("Narmada valley", "Narmada", False, 1, 2),  # every golden word required
    ("1947 to 1947", "it was 1947", False, 1, 2),  # duplicates collapse to a set
    ("Amalaka", "amalak", False, 0, 1),  # whole-token match, no stemming
    ("Chola ideals", "Chola and Hoysala ideals", True, 2, 2),  # false positive: different claim
]

# --- "Real disagreements": exact passes, overlap fails ---------------------------------------
EXACT_ONLY_TABLE: list[tuple[str, str]] = [
    ("amalak", "Amalaka"),
    ("deul", "Deula"),
    ("mithun", "Mithuna"),
    ("Dipankar", "Dipankara Buddha"),
    ("scroll painting", "Scroll paintings"),
]

# --- "Real disagreements": overlap passes, exact fails ---------------------------------------
OVERLAP_ONLY_TABLE: list[tuple[str, str]] = [
    ("Narmada valley", "Narmada River valley"),
    ("Chola ideals", "Chola and Hoysala ideals"),
]

BUCKET_TABLE: list[tuple[str, str, str]] = [(g, r, "exact_only") for g, r in EXACT_ONLY_TABLE] + [
    (g, r, "overlap_only") for g, r in OVERLAP_ONLY_TABLE
]


def _ids(rows: list[tuple]) -> list[str]:
    return [f"{i}:{row[0]!r}|{row[1]!r}" for i, row in enumerate(rows)]


# ============================================================================ public functions


@pytest.mark.parametrize(("golden", "response", "correct"), EXACT_TABLE, ids=_ids(EXACT_TABLE))
def test_exact_table_reference(golden: str, response: str, correct: bool) -> None:
    assert exact_substring(golden, response) is correct


@pytest.mark.parametrize(("golden", "response", "correct"), EXACT_TABLE, ids=_ids(EXACT_TABLE))
def test_exact_table_columns(golden: str, response: str, correct: bool) -> None:
    scores = score_columns([golden], [response])
    assert bool(scores.exact_correct[0]) is correct
    assert not scores.is_blank[0]


@pytest.mark.parametrize(("golden", "response", "correct", "matching", "total"), OVERLAP_TABLE, ids=_ids(OVERLAP_TABLE))
def test_overlap_table_reference(golden: str, response: str, correct: bool, matching: int, total: int) -> None:
    assert word_overlap(golden, response) == OverlapResult(correct, matching, total)


@pytest.mark.parametrize(("golden", "response", "correct", "matching", "total"), OVERLAP_TABLE, ids=_ids(OVERLAP_TABLE))
def test_overlap_table_columns(golden: str, response: str, correct: bool, matching: int, total: int) -> None:
    scores = score_columns([golden], [response])
    assert bool(scores.overlap_correct[0]) is correct
    assert int(scores.matching_words[0]) == matching
    assert int(scores.total_golden_words[0]) == total


@pytest.mark.parametrize(("golden", "response", "expected"), BUCKET_TABLE, ids=_ids(BUCKET_TABLE))
def test_disagreement_tables_reference(golden: str, response: str, expected: str) -> None:
    exact = exact_substring(golden, response)
    overlap = word_overlap(golden, response).is_correct
    assert (exact, overlap) == ((True, False) if expected == "exact_only" else (False, True))
    assert bucket(exact, overlap) == expected


@pytest.mark.parametrize(("golden", "response", "expected"), BUCKET_TABLE, ids=_ids(BUCKET_TABLE))
def test_disagreement_tables_columns(golden: str, response: str, expected: str) -> None:
    scores = score_columns([golden], [response])
    assert scores.bucket[0] == expected
    assert bool(scores.exact_correct[0]) is (expected == "exact_only")
    assert bool(scores.overlap_correct[0]) is (expected == "overlap_only")


def test_spec_art_run_shape() -> None:
    """The spec's point: the two groups flip in opposite directions, so totals can look alike."""
    answers = [g for g, _ in EXACT_ONLY_TABLE + OVERLAP_ONLY_TABLE]
    responses = [r for _, r in EXACT_ONLY_TABLE + OVERLAP_ONLY_TABLE]
    scores = score_columns(answers, responses)
    assert int(scores.exact_correct.sum()) == len(EXACT_ONLY_TABLE)
    assert int(scores.overlap_correct.sum()) == len(OVERLAP_ONLY_TABLE)
    assert not (scores.exact_correct & scores.overlap_correct).any()


# ============================================================================ command line


def _write_table(path: Path, pairs: list[tuple[str, str]]) -> Path:
    """A responses CSV with one row per example, questions numbering the rows."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "answer", "Domain", "response"])
        for i, (golden, response) in enumerate(pairs):
            writer.writerow([f"q{i}", golden, "Spec", response])
    return path


def _read_out(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _run_table(tmp_dir: Path, run_cli: Any, command: list[str], pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Run one CLI command on the table; return its per-row output and parsed JSON report."""
    src = _write_table(tmp_dir / "in.csv", pairs)
    out = tmp_dir / "out.csv"
    proc = run_cli(*command, "--responses", src, "--out", out, "--json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    rows = _read_out(out)
    assert [r["question"] for r in rows] == [f"q{i}" for i in range(len(pairs))]
    # The input cells come back unchanged, trailing spaces included.
    assert [(r["answer"], r["response"]) for r in rows] == pairs
    return {"rows": rows, "report": json.loads(proc.stdout)}


@pytest.fixture(scope="module")
def exact_cli(tmp_path_factory: pytest.TempPathFactory, run_cli: Any) -> dict[str, Any]:
    pairs = [(g, r) for g, r, _ in EXACT_TABLE]
    return _run_table(tmp_path_factory.mktemp("exact"), run_cli, ["scoring.exact_substring"], pairs)


@pytest.fixture(scope="module")
def overlap_cli(tmp_path_factory: pytest.TempPathFactory, run_cli: Any) -> dict[str, Any]:
    pairs = [(g, r) for g, r, *_ in OVERLAP_TABLE]
    return _run_table(tmp_path_factory.mktemp("overlap"), run_cli, ["scoring.word_overlap"], pairs)


@pytest.fixture(scope="module")
def score_exact_cli(tmp_path_factory: pytest.TempPathFactory, run_cli: Any) -> dict[str, Any]:
    pairs = [(g, r) for g, r, _ in EXACT_TABLE]
    return _run_table(tmp_path_factory.mktemp("score_exact"), run_cli, ["scoring", "score"], pairs)


@pytest.fixture(scope="module")
def score_overlap_cli(tmp_path_factory: pytest.TempPathFactory, run_cli: Any) -> dict[str, Any]:
    pairs = [(g, r) for g, r, *_ in OVERLAP_TABLE]
    return _run_table(tmp_path_factory.mktemp("score_overlap"), run_cli, ["scoring", "score"], pairs)


@pytest.fixture(scope="module")
def bucket_cli(tmp_path_factory: pytest.TempPathFactory, run_cli: Any) -> dict[str, Any]:
    pairs = [(g, r) for g, r, _ in BUCKET_TABLE]
    return _run_table(tmp_path_factory.mktemp("buckets"), run_cli, ["scoring", "score"], pairs)


@pytest.mark.parametrize("index", range(len(EXACT_TABLE)), ids=_ids(EXACT_TABLE))
def test_exact_table_cli(exact_cli: dict[str, Any], score_exact_cli: dict[str, Any], index: int) -> None:
    correct = EXACT_TABLE[index][2]
    row = exact_cli["rows"][index]
    assert row["is_correct"] == str(correct)
    assert row["is_blank"] == "False"
    assert score_exact_cli["rows"][index]["exact_correct"] == str(correct)


def test_exact_table_cli_json(exact_cli: dict[str, Any]) -> None:
    report = exact_cli["report"]
    expected = sum(correct for *_, correct in EXACT_TABLE)
    assert report["metric"] == "exact_substring"
    assert report["rows"] == len(EXACT_TABLE)
    assert (report["combined"]["n"], report["combined"]["correct"]) == (len(EXACT_TABLE), expected)
    assert [(d["domain"], d["n"], d["correct"]) for d in report["domains"]] == [("Spec", len(EXACT_TABLE), expected)]


@pytest.mark.parametrize("index", range(len(OVERLAP_TABLE)), ids=_ids(OVERLAP_TABLE))
def test_overlap_table_cli(overlap_cli: dict[str, Any], score_overlap_cli: dict[str, Any], index: int) -> None:
    _, _, correct, matching, total = OVERLAP_TABLE[index]
    row = overlap_cli["rows"][index]
    assert (row["is_correct"], row["matching_words"], row["total_golden_words"]) == (
        str(correct),
        str(matching),
        str(total),
    )
    scored = score_overlap_cli["rows"][index]
    assert (scored["overlap_correct"], scored["matching_words"], scored["total_golden_words"]) == (
        str(correct),
        str(matching),
        str(total),
    )


def test_overlap_table_cli_json(overlap_cli: dict[str, Any]) -> None:
    report = overlap_cli["report"]
    expected = sum(row[2] for row in OVERLAP_TABLE)
    assert report["metric"] == "word_overlap"
    assert (report["combined"]["n"], report["combined"]["correct"]) == (len(OVERLAP_TABLE), expected)


@pytest.mark.parametrize("index", range(len(BUCKET_TABLE)), ids=_ids(BUCKET_TABLE))
def test_disagreement_tables_cli(bucket_cli: dict[str, Any], index: int) -> None:
    expected = BUCKET_TABLE[index][2]
    row = bucket_cli["rows"][index]
    assert row["bucket"] == expected
    assert row["exact_correct"] == str(expected == "exact_only")
    assert row["overlap_correct"] == str(expected == "overlap_only")


def test_disagreement_tables_cli_json(bucket_cli: dict[str, Any]) -> None:
    report = bucket_cli["report"]
    b, c = len(EXACT_ONLY_TABLE), len(OVERLAP_ONLY_TABLE)
    assert report["buckets"]["combined"] == {"both_pass": 0, "both_fail": 0, "exact_only": b, "overlap_only": c}
    assert report["buckets"]["Spec"] == report["buckets"]["combined"]
    assert (report["mcnemar"]["exact_only"], report["mcnemar"]["overlap_only"]) == (b, c)
    # Exact two-sided binomial test on 5 vs 2 discordant rows: 2 * P(X <= 2 | n=7, 1/2) = 58/128.
    assert report["mcnemar"]["p_value"] == pytest.approx(58 / 128)
    assert report["metrics"]["exact_substring"]["combined"]["correct"] == b
    assert report["metrics"]["word_overlap"]["combined"]["correct"] == c
