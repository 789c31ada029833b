"""scoring.core.search: literal, case-insensitive text search over question/answer/response, and row numbers."""

from __future__ import annotations

import time
import unicodedata

import numpy as np
import pandas as pd
import pytest

from scoring.core import search
from scoring.core.search import build_index, parse_row_number, search_rows

FRAME = pd.DataFrame(
    {
        "row_idx": [0, 1, 2, 3, 4, 5, 6],
        "question": [
            "Capital of India?",
            "भारत की राजधानी?",
            "Longest river?",
            "Price (in $)?",
            "Who wrote it?",
            "தமிழ்நாட்டின் தலைநகரம்?",
            "Row 12 question",
        ],
        "answer": ["New Delhi", "नई दिल्ली", "Ganga", "1.5*2", "Tagore", "சென்னை", "twelve"],
        "response": [
            "The capital is NEW DELHI.",
            "राजधानी नई दिल्ली है",
            "The Godavari",
            "about 3",
            None,
            "சென்னை நகரம்",
            "x",
        ],
        "Domain": ["Geography", "Hindi", "Geography", "Maths", "Literature", "Tamil", "Misc"],
    }
)


def hits(query: str, frame: pd.DataFrame = FRAME) -> list[int]:
    return search_rows(frame, query).tolist()


def test_empty_query_returns_every_row() -> None:
    assert hits("") == list(range(len(FRAME)))
    assert hits("   ") == list(range(len(FRAME)))


def test_case_insensitive_over_all_three_columns() -> None:
    assert hits("new delhi") == [0]  # answer and response, one row once
    assert hits("CAPITAL") == [0]  # question
    assert hits("godavari") == [2]  # response only
    assert hits("tagore") == [4]  # answer only; the missing response counts as empty


def test_result_is_sorted_positions_without_repeats() -> None:
    found = search_rows(FRAME, "e")
    assert found.dtype == np.int64
    assert found.tolist() == sorted(set(found.tolist()))


def test_indic_text() -> None:
    assert hits("दिल्ली") == [1]
    assert hits("राजधानी") == [1]
    assert hits("சென்னை") == [5]
    assert hits("தமிழ்") == [5]


def test_query_in_another_normal_form_still_matches() -> None:
    frame = pd.DataFrame({"question": ["café"], "answer": ["x"], "response": ["y"]})
    decomposed = unicodedata.normalize("NFD", "CAFÉ")
    assert decomposed != unicodedata.normalize("NFC", "CAFÉ")
    assert hits(decomposed, frame) == [0]


def test_regex_metacharacters_are_literal() -> None:
    assert hits("1.5*2") == [3]
    assert hits("(in $)") == [3]
    assert hits(".*") == []
    assert hits("[") == []


def test_no_match_across_cells() -> None:
    # "Ganga" ends the answer and "The" starts the response: no cell holds "gangathe".
    assert hits("gangathe") == []
    assert hits("ganga the") == []


def test_row_numbers_are_one_based() -> None:
    assert parse_row_number("#12") == (12, True)
    assert parse_row_number(" 12 ") == (12, False)
    assert parse_row_number("# 3") == (3, True)
    assert parse_row_number("12a") == (None, False)
    assert hits("#3") == [2]  # third row
    assert hits("#1") == [0]
    assert hits("#99") == []
    assert hits("#0") == []


def test_bare_number_matches_the_row_and_the_text() -> None:
    assert hits("3") == [2, 3]  # row 3 by its number, and row 4 for its text "about 3"
    assert hits("12") == [6]  # no row 12 in 7 rows; row 7's question says "Row 12"


def test_row_numbers_follow_row_idx_not_position() -> None:
    frame = FRAME.iloc[[4, 2]]  # a scope: rows 5 and 3 of the run
    assert search_rows(frame, "#3").tolist() == [1]
    assert search_rows(frame, "#5").tolist() == [0]
    assert search_rows(frame, "#1").tolist() == []


def test_frame_without_row_idx_uses_positions() -> None:
    frame = FRAME.drop(columns=["row_idx"])
    assert search_rows(frame, "#2").tolist() == [1]


def test_index_gives_the_same_answers_as_the_frame() -> None:
    index = build_index(FRAME)
    for query in ("", "new", "#3", "3", "दिल्ली", "e", "zzz"):
        assert search_rows(index, query).tolist() == hits(query), query


def test_columns_can_be_narrowed() -> None:
    assert search_rows(FRAME, "godavari", columns=("question", "answer")).tolist() == []
    assert search_rows(FRAME, "capital", columns=("response",)).tolist() == [0]


def test_common_query_switches_strategy_and_stays_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the switch point the rest is found by one bounded find per row: same answer."""
    n = 2_000
    rng = np.random.default_rng(0)
    words = np.array(["river", "temple", "raga", "fort", "RIVER bank", "delta"])
    frame = pd.DataFrame(
        {"question": rng.choice(words, n), "answer": rng.choice(words, n), "response": rng.choice(words, n)}
    )
    cells = frame[["question", "answer", "response"]].apply(lambda c: c.str.lower())
    expected = np.flatnonzero(cells.apply(lambda c: c.str.contains("river", regex=False)).any(axis=1).to_numpy())
    assert len(expected) > 1_000
    assert search_rows(frame, "River").tolist() == expected.tolist()
    monkeypatch.setattr(search, "_SWITCH", 10**9)
    assert search_rows(frame, "River").tolist() == expected.tolist()


def test_search_cost_does_not_grow_with_matches() -> None:
    """A one-letter query matching all 100k rows costs about one scan, like a rare one."""
    n = 100_000
    frame = pd.DataFrame(
        {"question": [f"Q{i}: which river?" for i in range(n)], "answer": ["Ganga"] * n, "response": ["the ganga"] * n}
    )
    index = build_index(frame)

    def timed(query: str) -> float:
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            search_rows(index, query)
            best = min(best, time.perf_counter() - start)
        return best

    assert len(search_rows(index, "e")) == n
    assert search_rows(index, "q4242:").tolist() == [4242]
    # Generous: a shared machine; the point is "not 100k Python steps" (that took ~10x longer).
    assert timed("e") < 0.5
    assert timed("q4242:") < 0.5
