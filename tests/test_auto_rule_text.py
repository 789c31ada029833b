"""Issue 27: the automatic rule behind "auto" final verdicts is said in words where it is used,
and the words are the rule the code applies."""

from __future__ import annotations

import re

from apptest_support import open_page, texts

from scoring.core.verdict_rules import AUTO_RULE, AUTO_RULE_TEXT, PENDING

WORDS = {
    "both_pass": "both metrics pass",
    "exact_only": "only exact substring passes",
    "both_fail": "both fail",
    "overlap_only": "only word overlap passes",
}


def test_the_words_say_what_the_rule_does() -> None:
    said = {}
    for clause in re.split(r";\s*", AUTO_RULE_TEXT.split(": ", 1)[1]):
        cases, outcome = clause.rsplit(": ", 1)
        outcome = outcome.split(" ")[0].rstrip(".")
        for bucket, words in WORDS.items():
            if words in cases:
                said[bucket] = outcome
    assert said == {b: ("pending" if v == PENDING else v) for b, v in AUTO_RULE.items()}, said


def test_the_export_and_overview_pages_state_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("REVIEW_DB_URL", f"sqlite:///{tmp_path / 'review.db'}")
    for page in ("export", "overview"):
        at = open_page(page)
        assert any(AUTO_RULE_TEXT in t for t in texts(at)), (page, texts(at))
