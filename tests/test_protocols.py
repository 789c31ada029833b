"""The protocols on the cases the spec's tables do not show: Unicode punctuation and spaces,
empty golden answers, blank responses, the ``--normalize`` diagnostic, and agreement of the
fast column path with the per-pair reference functions.
"""

from __future__ import annotations

import string
import unicodedata

import pytest

from scoring.core.columnar import score_columns
from scoring.core.protocols import (
    BUCKETS,
    PUNCTUATION,
    OverlapResult,
    bucket,
    exact_substring,
    is_blank,
    normalize_pair,
    normalize_text,
    word_overlap,
    word_set,
)

# ------------------------------------------------------------------------------- punctuation


@pytest.mark.parametrize(
    ("golden", "response"),
    [
        ("दिल्ली", "भारत की राजधानी दिल्ली।"),  # danda U+0964
        ("दिल्ली", "दिल्ली॥"),  # double danda U+0965
        ("Delhi", "Composer: “Delhi”."),  # curly double quotes plus a full stop
        ("Delhi", "‘Delhi’"),  # curly single quotes
        ("Delhi", "«Delhi»"),  # guillemets
        ("Delhi", "–Delhi—"),  # en and em dash
        ("Delhi", "Delhi…"),  # ellipsis
        ("திருவள்ளுவர்", "“திருவள்ளுவர்” எழுதினார்."),
        ("রবীন্দ্রনাথ ঠাকুর", "ঠাকুর রবীন্দ্রনাথ।"),
    ],
)
def test_unicode_punctuation_strips_like_a_full_stop(golden: str, response: str) -> None:
    result = word_overlap(golden, response)
    assert result.is_correct, (golden, response)
    assert result.matching_words == result.total_golden_words
    assert score_columns([golden], [response]).overlap_correct[0]


def test_danda_and_curly_quotes_are_not_in_string_punctuation() -> None:
    """Why the union matters: with string.punctuation alone these would not strip."""
    for ch in "।॥“”‘’«»–—…":
        assert ch not in string.punctuation
        assert ch in PUNCTUATION
    assert word_set("दिल्ली।") == {"दिल्ली"}
    assert word_set("“Delhi”.") == {"delhi"}


@pytest.mark.parametrize("symbol", list("+$<=>^|~`"))
def test_string_punctuation_symbols_strip(symbol: str) -> None:
    """Category S, not P, but in string.punctuation: they strip too."""
    assert not unicodedata.category(symbol).startswith("P")
    assert word_set(f"{symbol}100{symbol}") == {"100"}
    assert word_overlap("100", f"it cost {symbol}100{symbol}").is_correct


def test_punctuation_is_exactly_the_union() -> None:
    expected = set(string.punctuation) | {
        chr(cp) for cp in range(0x110000) if unicodedata.category(chr(cp)).startswith("P")
    }
    assert set(PUNCTUATION) == expected
    assert "₹" not in PUNCTUATION  # a currency sign outside string.punctuation stays


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("co-operate", {"co-operate"}),  # inner punctuation is kept
        ("U.S.A.", {"u.s.a"}),
        ("x.delhi", {"x.delhi"}),
        ("…", set()),  # a token of punctuation only is dropped
        ("-- — ।", set()),
        # Vowel signs, virama and nukta are marks, not punctuation: nothing is eaten (the \w trap).
        ("दिल्ली", {"दिल्ली"}),
        ("प्रधानमंत्री", {"प्रधानमंत्री"}),
        ("क़िला", {"क़िला"}),
        ("திருவள்ளுவர்", {"திருவள்ளுவர்"}),
        ("রবীন্দ্রনাথ", {"রবীন্দ্রনাথ"}),
        ("ĠRURU Jataka", {"ġruru", "jataka"}),
    ],
)
def test_word_set_tokens(text: str, words: set[str]) -> None:
    assert word_set(text) == words


# ------------------------------------------------------------------------------- whitespace


@pytest.mark.parametrize("space", ["\u00a0", "\u202f", "\u2002", "\u3000", "\u2028", "\t", "\n", "\x1c"])
def test_unicode_spaces_split_words(space: str) -> None:
    response = f"Narmada{space}valley"
    assert word_set(response) == {"narmada", "valley"}
    assert word_overlap("Narmada valley", response).is_correct
    # Exact substring does no normalisation: a different space is a different character.
    assert not exact_substring("Narmada valley", response)
    scores = score_columns(["Narmada valley", "valley"], [response, response])
    assert scores.overlap_correct.tolist() == [True, True]
    assert scores.exact_correct.tolist() == [False, True]


@pytest.mark.parametrize("joiner", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"])
def test_zero_width_characters_do_not_split(joiner: str) -> None:
    response = f"Narmada{joiner}valley"
    assert word_set(response) == {f"narmada{joiner}valley"}
    assert word_overlap("Narmada valley", response) == OverlapResult(False, 0, 2)
    scores = score_columns(["Narmada valley", "valley"], [response, response])
    assert scores.overlap_correct.tolist() == [False, False]
    assert scores.matching_words.tolist() == [0, 0]


# ------------------------------------------------------------------------------- empty and blank


@pytest.mark.parametrize("response", ["anything", "गंगा", "   x   ", "."])
def test_empty_golden_answer_scores_correct(response: str) -> None:
    """Spec caveat 1: "" is in every string and the empty set is a subset of every set."""
    assert exact_substring("", response)
    assert word_overlap("", response) == OverlapResult(True, 0, 0)
    scores = score_columns([""], [response])
    assert (bool(scores.exact_correct[0]), bool(scores.overlap_correct[0])) == (True, True)
    assert scores.bucket[0] == "both_pass"


def test_punctuation_only_golden_has_no_words() -> None:
    assert word_overlap("—", "anything at all") == OverlapResult(True, 0, 0)
    assert not exact_substring("—", "anything at all")


BLANKS = [None, "", " ", "   ", "\t\n", "\u00a0", "\u3000 \u2028", "\r\n"]


@pytest.mark.parametrize("response", BLANKS)
@pytest.mark.parametrize("golden", ["Delhi", "", " ", "गंगा"])
def test_blank_response_is_incorrect_and_blank(golden: str, response: str | None) -> None:
    """Spec caveat 4, even when the golden answer is empty (and would otherwise match)."""
    assert is_blank(response)
    assert exact_substring(golden, response) is False
    result = word_overlap(golden, response)
    assert result.is_correct is False
    assert result.matching_words == 0
    assert result.total_golden_words == len(word_set(golden))
    scores = score_columns([golden], [response])  # type: ignore[list-item]
    assert scores.is_blank.tolist() == [True]
    assert scores.exact_correct.tolist() == [False]
    assert scores.overlap_correct.tolist() == [False]
    assert scores.matching_words.tolist() == [0]
    assert scores.bucket.tolist() == ["both_fail"]


@pytest.mark.parametrize("response", ["\u200b", ".", "x"])
def test_visible_or_format_characters_are_not_blank(response: str) -> None:
    """Only whitespace is blank; a lone zero-width space is an (unlucky) answer."""
    assert not is_blank(response)
    assert score_columns(["Delhi"], [response]).is_blank.tolist() == [False]


# ------------------------------------------------------------------------------- spec details


def test_golden_answer_is_not_stripped() -> None:
    assert not exact_substring("Delhi ", "Delhi")
    assert exact_substring("Delhi ", "Delhi is the capital")
    assert word_overlap("Delhi ", "Delhi").is_correct  # word overlap tolerates it


def test_lowercasing_is_the_only_normalisation() -> None:
    assert exact_substring("RURU", "ruru jataka")
    assert not exact_substring("Straße", "STRASSE")  # lower(), not casefold()
    nfd = unicodedata.normalize("NFD", "क़िला")
    assert not exact_substring("\u0958िला", nfd)  # no Unicode normalisation by default
    assert not word_overlap("\u0958िला", nfd).is_correct


def test_bucket_covers_all_four_cases() -> None:
    got = {(e, o): bucket(e, o) for e in (True, False) for o in (True, False)}
    assert got == {
        (True, True): "both_pass",
        (False, False): "both_fail",
        (True, False): "exact_only",
        (False, True): "overlap_only",
    }
    assert set(got.values()) == set(BUCKETS)


# ------------------------------------------------------------------------------- --normalize


NUKTA_PRECOMPOSED = "\u095bमीन"  # ज़मीन with U+095B, a composition exclusion
NUKTA_DECOMPOSED = "\u091c\u093cमीन"  # ज + nukta + मीन


def test_normalize_nfc_makes_nukta_spellings_equal() -> None:
    assert NUKTA_PRECOMPOSED != NUKTA_DECOMPOSED
    assert not exact_substring(NUKTA_PRECOMPOSED, NUKTA_DECOMPOSED)
    golden, response = normalize_pair(NUKTA_PRECOMPOSED, NUKTA_DECOMPOSED)
    assert golden == response == unicodedata.normalize("NFC", NUKTA_DECOMPOSED)
    raw = score_columns([NUKTA_PRECOMPOSED], [NUKTA_DECOMPOSED])
    normed = score_columns([NUKTA_PRECOMPOSED], [NUKTA_DECOMPOSED], normalize=True)
    assert (raw.exact_correct[0], raw.overlap_correct[0]) == (False, False)
    assert (normed.exact_correct[0], normed.overlap_correct[0]) == (True, True)


@pytest.mark.parametrize("char", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"])
def test_normalize_removes_zero_width_and_format_characters(char: str) -> None:
    spelled = f"जन्{char}म"
    assert normalize_text(spelled) == "जन्म"
    assert not exact_substring("जन्म", spelled)
    assert score_columns(["जन्म"], [spelled], normalize=True).exact_correct.tolist() == [True]


def test_normalize_result_is_nfc_after_removing_joiners() -> None:
    """Removing a ZWNJ can leave a decomposed vowel sign (Tamil ெ + ா is ொ); the result must be NFC."""
    spelled = "க\u0bc6\u200c\u0bbeடி"
    assert normalize_text(spelled) == "கொடி" == unicodedata.normalize("NFC", "கொடி")
    assert score_columns(["கொடி"], [spelled], normalize=True).overlap_correct.tolist() == [True]


@pytest.mark.parametrize(("native", "ascii_digits"), [("१९४७", "1947"), ("১৯৪৭", "1947"), ("௧௯௪௭", "1947")])
def test_normalize_folds_native_digits(native: str, ascii_digits: str) -> None:
    assert normalize_text(native) == ascii_digits
    response = f"सन् {native} में"
    assert not exact_substring(ascii_digits, response)
    normed = score_columns([ascii_digits], [response], normalize=True)
    assert (normed.exact_correct[0], normed.overlap_correct[0]) == (True, True)


def test_normalize_strips_golden_but_default_does_not() -> None:
    assert normalize_pair("  Delhi ", "Delhi") == ("Delhi", "Delhi")
    assert score_columns(["Delhi "], ["Delhi"]).exact_correct.tolist() == [False]
    assert score_columns(["Delhi "], ["Delhi"], normalize=True).exact_correct.tolist() == [True]


def test_normalize_keeps_blank_rows_blank() -> None:
    scores = score_columns(["Delhi", ""], ["   ", ""], normalize=True)
    assert scores.is_blank.tolist() == [True, True]
    assert scores.bucket.tolist() == ["both_fail", "both_fail"]


# ------------------------------------------------------------------------------- fast path


AGREEMENT_CASES: list[tuple[str, str | None]] = [
    ("deul", "Deula deul"),  # first occurrence is not a token, a later one is
    ("deul", "Deula, (deul)."),
    ("deul", "deul-a"),
    ("narmada valley", "Narmada valleys, Narmada valley."),
    ("Narmada valley", "Narmada valleys"),
    ("Narmada valley", "“Narmada valley”"),
    ("Narmada  valley", "Narmada valley"),  # golden with a double space: not a plain phrase
    ("Narmada valley", "valley\tNarmada\n"),
    ("1947 to 1947", "1947 to 1947"),
    ("1947 to 1947", "to 1947"),
    ("1947 1947", "in 1947"),  # one distinct word, but the phrase has two tokens
    ("a", "aaa a"),
    ("aa", "aaa"),
    ("Delhi.", "Delhi"),
    ("“Delhi”", "delhi"),
    ("U.S.A.", "the u.s.a, then"),
    ("x", "x.x"),
    ("delhi", "x.delhi"),
    ("delhi", "delhi\u200b"),
    ("delhi", "\u200bdelhi"),
    ("delhi", "a\x1cdelhi\x1d"),
    ("delhi", "..delhi.."),
    ("Ruru Jataka", "ruru\u00a0jataka"),
    ("जवाहरलाल नेहरू", "नेहरू, जवाहरलाल।"),
    ("गंगोत्री हिमनद", "हिमनद गंगोत्री से।"),
    ("रवींद्रनाथ", "रवींद्रनाथों"),
    ("İstanbul", "İSTANBUL"),
    ("ΟΔΟΣ", "η οδος"),
    ("", ""),
    ("", "x"),
    ("x", None),
    (".", "."),
    ("...", "a ... b"),
    ("— dash", "dash"),
    # Caseless golden answers (Indic, digits) skip lowercasing the response: cased neighbours
    # and characters whose lowercase is longer must not change the verdict.
    ("\u0307", "xİ"),  # lowercasing İ produces U+0307
    ("गंगा", "गंगाA"),
    ("गंगा", "Ⓐगंगा गंगाⅠ"),
    ("गंगा", "İ गंगा İ"),
    ("गंगा", "ΣΣ “गंगा”."),
    ("1947", "In 1947."),
    ("१९४७ ई", "SINCE १९४७ ई."),
]


def reference_row(answer: str | None, response: str | None) -> tuple:
    """What the column scorers must give for one row, from the per-pair reference functions (a
    missing golden answer is the loader's empty string)."""
    answer = "" if answer is None else answer
    exact, overlap = exact_substring(answer, response), word_overlap(answer, response)
    return (
        exact,
        overlap.is_correct,
        overlap.matching_words,
        overlap.total_golden_words,
        is_blank(response),
        bucket(exact, overlap.is_correct),
    )


def test_score_columns_agrees_with_reference_functions() -> None:
    answers = [a for a, _ in AGREEMENT_CASES]
    responses = [r for _, r in AGREEMENT_CASES]
    scores = score_columns(answers, responses)  # type: ignore[arg-type]
    for i, (golden, response) in enumerate(AGREEMENT_CASES):
        got = (
            bool(scores.exact_correct[i]),
            bool(scores.overlap_correct[i]),
            int(scores.matching_words[i]),
            int(scores.total_golden_words[i]),
            bool(scores.is_blank[i]),
            scores.bucket[i],
        )
        assert got == reference_row(golden, response), (golden, response)


def test_score_columns_keeps_order_and_length() -> None:
    answers = ["b", "a", "b", "a"]
    responses = ["b", "b", "x", "a a"]
    scores = score_columns(answers, responses)
    assert scores.exact_correct.tolist() == [True, False, False, True]
    assert scores.matching_words.tolist() == [1, 0, 0, 1]
    assert len(scores.bucket) == 4


def test_score_columns_empty_input() -> None:
    scores = score_columns([], [])
    assert len(scores.exact_correct) == len(scores.bucket) == len(scores.is_blank) == 0


def test_lowercasing_never_touches_whitespace_or_punctuation() -> None:
    """What the caseless shortcut in score_columns relies on, checked over all of Unicode.

    Lowercasing changes only cased characters; none of them is whitespace or punctuation or
    lowercases into either, and the only character lowercasing produces that is its own upper
    case is U+0307. If a future Unicode version breaks this, the shortcut must be revisited.
    """
    produced_caseless: set[str] = set()
    for cp in range(0x110000):
        ch = chr(cp)
        lowered = ch.lower()
        if lowered == ch:
            continue
        assert ch not in PUNCTUATION and not ch.isspace(), hex(cp)
        for out in lowered:
            assert out not in PUNCTUATION and not out.isspace(), hex(cp)
            if out.upper() == out:
                produced_caseless.add(out)
    assert produced_caseless == {"\u0307"}
