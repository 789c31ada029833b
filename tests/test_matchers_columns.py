"""Each matcher's polars path equals its per-row definition on every row: seeded random rows of
adversarial characters (nukta forms, ZWJ/ZWNJ, dandas, odd whitespace, Σ, ß, unassigned code
points, self-overlapping n-grams) and hypothesis' own strings."""

from __future__ import annotations

import importlib
import random
import unicodedata

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.core.protocols import word_overlap
from scoring.match.chrf import chrf_column, chrf_correct, chrf_score, counts, golden_ngrams
from scoring.match.chrf_count import f_score, strip_whitespace
from scoring.match.norm_exact import column_patterns, norm_exact, norm_exact_column
from scoring.match.scorers import score_matchers
from scoring.match.stem_overlap import stem_overlap, stem_overlap_column

chrf_module = importlib.import_module("scoring.match.chrf")

PIECES = [
    "a", "A", "l", "ll", "ab", "aba", " ", "  ", "\u00a0", "\x1c", "\t", ".", ",", "।", "॥", "“", "”", "-",
    "क", "\u093c", "\u0958", "\u0928", "\u0929", "न\u093c", "ा", "ों", "ें", "\u200d", "\u200c", "\u00ad",
    "\ufeff", "\u2060", "Σ", "ς", "σ", "ß", "İ", "\u0378", "\u0ece", "கெ", "ா", "கள்", "\u0bcd", "e\u0301",
    "é", "paint", "ings", "किताब", "लड़क", "Ꭰ", "ﬁ",
]  # fmt: skip
#: What Python must handle (casefold unlike lower, Σ/ς, unassigned): left out, rows take the polars path.
SPECIAL = {"Σ", "ς", "ß", "\u0378", "\u0ece", "Ꭰ", "ﬁ"}
PLAIN = [p for p in PIECES if p not in SPECIAL]
LANGUAGES = ["English", "Hindi", "Tamil", "Nepali", "Bengali", "Devanagari", None, "hi-IN"]


def _text(rng: random.Random, most: int, pieces: list[str]) -> str:
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, most)))


def _rows(seed: int, n: int, pieces: list[str] = PIECES) -> tuple[list[str], list[str | None], list[str | None]]:
    rng = random.Random(seed)
    answers, responses, languages = [], [], []
    for _ in range(n):
        answer = _text(rng, 4, pieces)
        response = _text(rng, 12, pieces)
        if rng.random() < 0.3:  # the golden answer inside the response, maybe inflected
            ending = rng.choice(["", "s", "ों", "கள்", "a"])
            response = _text(rng, 3, pieces) + answer + ending + _text(rng, 3, pieces)
        answers.append(answer)
        responses.append(None if rng.random() < 0.03 else response)
        languages.append(rng.choice(LANGUAGES))
    return answers, responses, languages


@pytest.mark.parametrize("pieces", [PIECES, PLAIN], ids=["with special characters", "polars path"])
def test_norm_exact_column_equals_the_row_function_on_random_rows(pieces: list[str]) -> None:
    answers, responses, _ = _rows(11, 4000, pieces)
    got = norm_exact_column(pl.Series(answers), pl.Series(responses, dtype=pl.String)).to_list()
    want = [norm_exact(a, r) for a, r in zip(answers, responses)]
    assert got == want
    assert 0.1 < sum(want) / len(want) < 0.9  # both verdicts well represented
    special = pl.Series([a + (r or "") for a, r in zip(answers, responses)]).str.contains(column_patterns()["python"])
    assert (special.mean() > 0.5) if pieces is PIECES else not special.any()


@pytest.mark.parametrize("pieces", [PIECES, PLAIN], ids=["with special characters", "polars path"])
def test_stem_overlap_column_equals_the_row_function_on_random_rows(pieces: list[str]) -> None:
    answers, responses, languages = _rows(12, 4000, pieces)
    got = stem_overlap_column(
        pl.Series(answers), pl.Series(responses, dtype=pl.String), pl.Series(languages, dtype=pl.String)
    ).to_list()
    want = [stem_overlap(a, r, lang) for a, r, lang in zip(answers, responses, languages)]
    assert got == want
    # ... and with the spec's overlap given (the rows it passes are not tokenised again)
    overlap = pl.Series([word_overlap(a, r).is_correct for a, r in zip(answers, responses)])
    again = stem_overlap_column(
        pl.Series(answers), pl.Series(responses, dtype=pl.String), pl.Series(languages, dtype=pl.String), overlap
    ).to_list()
    assert again == want
    assert any(w and not o for w, o in zip(want, overlap.to_list()))  # stems caught rows overlap missed


def test_chrf_column_equals_sacrebleu_on_random_rows_at_several_thresholds() -> None:
    answers, responses, _ = _rows(13, 3000, PLAIN)
    for threshold in (0.0, 12.5, 30.0, 50.0, 85.0, 100.0):
        got = chrf_column(pl.Series(answers), pl.Series(responses, dtype=pl.String), threshold).to_list()
        want = [chrf_correct(a, r, threshold) for a, r in zip(answers, responses)]
        assert got == want, threshold


def test_chrf_f_score_equals_sacrebleus_float_for_float() -> None:
    """The counting path's score, not only its verdict: the same float as sacrebleu's."""
    answers, responses, _ = _rows(14, 500)
    for a, r in zip(answers, responses):
        h, g = "".join((r or "").split()), "".join(a.split())
        hyp, ref = counts(np.array([len(h)]), np.array([len(g)]))
        match = np.zeros((1, 6))
        for n, gram, times, _ in golden_ngrams(a):
            found = sum(1 for i in range(len(h) - n + 1) if h[i : i + n] == gram)
            match[0, n - 1] += min(found, times)
        assert f_score(hyp, ref, match)[0] == chrf_score(a, r or ""), (a, r)


def test_self_overlapping_ngrams_are_counted_overlapping() -> None:
    """``aa`` occurs three times in ``aaaa`` for chrF; polars counts two: such rows go to Python."""
    answers, responses = ["aaaa", "abab", "lll"], ["xaaaay", "ababab", "ll l"]
    for threshold in (0.0, 50.0, 80.0, 95.0):
        got = chrf_column(pl.Series(answers), pl.Series(responses), threshold).to_list()
        assert got == [chrf_correct(a, r, threshold) for a, r in zip(answers, responses)]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(max_size=8), st.one_of(st.none(), st.text(max_size=20)), st.sampled_from(LANGUAGES)),
        min_size=1,
        max_size=12,
    )
)
def test_every_matcher_column_equals_its_row_function_on_hypothesis_strings(rows: list) -> None:
    table = pl.DataFrame(
        {
            "answer": [r[0] for r in rows],
            "response": [r[1] for r in rows],
            "language": [r[2] for r in rows],
        },
        schema={"answer": pl.String, "response": pl.String, "language": pl.String},
    )
    got = score_matchers(table, ["norm_exact", "stem_overlap", "chrf"], threshold=30.0)
    assert got["norm_exact_correct"].to_list() == [norm_exact(a, r) for a, r, _ in rows]
    assert got["stem_overlap_correct"].to_list() == [stem_overlap(a, r, lang) for a, r, lang in rows]
    assert got["chrf_correct"].to_list() == [chrf_correct(a, r, 30.0) for a, r, _ in rows]


def test_chrf_column_in_small_chunks_with_huge_pairs_sent_to_sacrebleu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunk edges (each chunk a slice of the column) and the pairs too big to count in memory,
    which sacrebleu scores itself: the same verdicts."""
    answers, responses, _ = _rows(15, 1500, PIECES)
    monkeypatch.setattr(chrf_module, "CHUNK", 97)
    monkeypatch.setattr(chrf_module, "BIG", 20)
    sent: list[str] = []
    real = chrf_module.chrf_correct
    monkeypatch.setattr(chrf_module, "chrf_correct", lambda a, r, t: sent.append(a) or real(a, r, t))
    got = chrf_column(pl.Series(answers), pl.Series(responses, dtype=pl.String), 30.0).to_list()
    assert got == [chrf_correct(a, r, 30.0) for a, r in zip(answers, responses)]
    assert 100 < len(sent) < 1400  # both paths taken


def test_whitespace_is_stripped_from_utf8_as_str_split_does() -> None:
    texts = ["a b\u3000c\x1c", None, "", "क ख\u00a0𝔘 \u200b", "\U0001f600x\ty"]
    column = pl.Series(["pad", *texts], dtype=pl.String)[1:]  # a slice: Arrow offset not zero
    flat, at = strip_whitespace(column)
    got = ["".join(map(chr, flat[at[i] : at[i + 1]])) for i in range(len(texts))]
    assert got == ["".join((t or "").split()) for t in texts]


def test_text_nfc_might_change_is_always_flagged() -> None:
    """The quick check that spares most texts Python's NFC: a text it passes is one NFC leaves
    alone, on random strings of starters, marks that compose, reorder or do neither (Latin,
    Devanagari nukta and virama, Tamil and Bengali two-part vowels, Hangul jamo, Tibetan, Greek)."""
    codes = [0x41, 0x65, 0x301, 0x323, 0x334, 0x928, 0x93C, 0x94D, 0x930, 0x933, 0x958, 0x915, 0x93E, 0xB95, 0xBC6]
    codes += [0xBBE, 0xBD7, 0x1100, 0x1161, 0x11A8, 0xAC00, 0x929, 0xE9, 0x1E0B, 0x327, 0x5B0, 0x5B4, 0x591, 0x9C7]
    codes += [0x9BE, 0x9BC, 0x9A1, 0x3099, 0x304B, 0x1F00, 0x345, 0x308, 0x344, 0xF73, 0xF71, 0xF72, 0x212B, 0x2126]
    rng = random.Random(16)
    texts = ["".join(chr(rng.choice(codes)) for _ in range(rng.randint(0, 5))) for _ in range(60_000)]
    flagged = pl.Series(texts).str.contains(column_patterns()["nfc"]).to_list()
    assert [t for t, f in zip(texts, flagged) if not f and unicodedata.normalize("NFC", t) != t] == []
    assert 0.2 < sum(flagged) / len(flagged) < 0.9  # it does spare texts
