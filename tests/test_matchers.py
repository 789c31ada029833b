"""The optional matchers' worked examples (issue 29): each step of normalised exact, Hindi, Tamil,
Nepali and English stems from the real Snowball stemmers, chrF against sacrebleu's own figures, and
the dataset's morphological variants with which matcher catches each."""

from __future__ import annotations

import socket

import pytest

from scoring.core.errors import InputError
from scoring.core.protocols import exact_substring, word_overlap
from scoring.match import CHRF_PARAMS, MATCHERS, parse_matchers, stemmed, stemming_by_language
from scoring.match.chrf import chrf_correct, chrf_score
from scoring.match.languages import algorithm
from scoring.match.norm_exact import (
    casefold,
    collapse_whitespace,
    fold_nukta,
    nfc,
    norm_exact,
    normalize_answer,
    remove_invisible,
    strip_edge_punctuation,
)
from scoring.match.scorers import match_row
from scoring.match.stem_overlap import stem_overlap, stem_words

ZWJ, ZWNJ, SOFT_HYPHEN, NUKTA = "\u200d", "\u200c", "\u00ad", "\u093c"


# ---------------------------------------------------------------- normalised exact, step by step


def test_each_normalisation_step_does_one_thing() -> None:
    assert remove_invisible(f"क्{ZWJ}ष") == "क्ष"
    assert remove_invisible(f"ক্{ZWNJ}ষ") == "ক্ষ"
    assert remove_invisible(f"Pata{SOFT_HYPHEN}liputra\ufeff\u2060") == "Pataliputra"
    assert nfc("e\u0301") == "\u00e9"
    assert fold_nukta("\u0929") == "\u0928\u093c"
    assert strip_edge_punctuation("“दिल्ली।” co-operate , (x)") == "दिल्ली co-operate x"
    assert casefold("Straße") == "strasse"
    assert collapse_whitespace("  a \u00a0 b\t") == "a b"


def test_the_danda_and_double_danda_strip_at_word_edges_only() -> None:
    assert normalize_answer("गंगा।") == "गंगा"
    assert normalize_answer("गंगा॥") == "गंगा"
    assert norm_exact("गंगा", "भारत की सबसे लंबी नदी गंगा।")
    assert not exact_substring("गंगा ।", "गंगा।")  # the spec's exact: the space matters
    assert norm_exact("गंगा ।", "गंगा।")


def test_zwj_and_zwnj_do_not_change_a_word() -> None:
    # Devanagari half-form with ZWJ, Bengali conjunct broken by ZWNJ: the same words to a reader.
    assert not exact_substring("क्ष", f"क्{ZWJ}ष")
    assert norm_exact("क्ष", f"क्{ZWJ}षत्रिय")
    assert norm_exact(f"ক্{ZWNJ}ষ", "ক্ষ")
    # A ZWNJ between a Tamil vowel sign's halves: removed first, so NFC joins கெ + ா into கொ.
    assert normalize_answer(f"கெ{ZWNJ}ா") == normalize_answer("கொ") == "\u0b95\u0bca"


@pytest.mark.parametrize(
    ("decomposed", "precomposed"),
    [
        ("\u0915\u093c", "\u0958"),  # क़ QA: NFC leaves it decomposed (a composition exclusion)
        ("\u0928\u093c", "\u0929"),  # ऩ NNNA: NFC recomposes it
        ("\u0930\u093c", "\u0931"),  # ऱ RRA: recomposed
        ("\u0921\u093c", "\u095c"),  # ड़ DDDHA: excluded
    ],
)
def test_nukta_pairs_fold_to_one_spelling(decomposed: str, precomposed: str) -> None:
    assert normalize_answer(decomposed) == normalize_answer(precomposed)
    assert NUKTA in normalize_answer(precomposed)  # folded to consonant + nukta, both ways
    assert norm_exact(precomposed, f"उत्तर {decomposed} है")
    assert norm_exact(decomposed, f"उत्तर {precomposed} है")


def test_nfc_alone_leaves_the_two_kinds_of_nukta_letter_apart() -> None:
    """Why the fold runs after NFC: NFC makes U+0929 one code point and U+0958 two."""
    assert len(nfc("\u0928\u093c")) == 1 and len(nfc("\u0958")) == 2


def test_norm_exact_keeps_the_spec_rules_it_mirrors() -> None:
    assert not norm_exact("Ruru Jataka", "Jataka Ruru")  # order still matters
    assert not norm_exact("Narmada valley", "the Narmada river valley")  # still contiguous
    assert norm_exact("No", "There is **no** such temple")  # still no word boundary
    assert norm_exact("Delhi ", "Delhi")  # the golden answer is normalised (stripped) too
    assert not norm_exact("Delhi", "   ") and not norm_exact("", None)  # blank fails
    assert norm_exact("", "anything")  # an empty golden answer passes, as in the spec


# ---------------------------------------------------------------- stems


@pytest.mark.parametrize(
    ("language", "word", "stem"),
    [
        # Hindi (light stemmer): boy in plural oblique, plural and singular share a stem
        ("Hindi", "लड़कों", "लड़क"),
        ("Hindi", "लड़के", "लड़क"),
        ("Hindi", "लड़का", "लड़क"),
        ("Hindi", "किताबें", "किताब"),  # books -> book
        ("Hindi", "मंदिरों", "मंदिर"),  # temples (oblique) -> temple
        ("hi", "चोलों", "चोल"),  # the Cholas (oblique), as in "चोलों ने"
        ("Hindi", "गुफाएँ", "गुफाएँ"),  # caves: the chandrabindu plural is not stripped ...
        ("Hindi", "गुफा", "गुफ"),  # ... while the singular loses its -ā: they do not meet
        # Tamil
        ("Tamil", "புத்தகங்கள்", "புத்தகம்"),  # books -> book
        ("Tamil", "சோழர்கள்", "சோழர்"),  # the Cholas -> Chola
        ("ta", "நகரங்கள்", "நகரம்"),  # cities -> city
        ("Tamil", "ஓவியங்கள்", "ஓவியம்"),  # paintings -> painting
        ("Tamil", "கோவில்கள்", "கோவில்"),  # temples -> temple ...
        ("Tamil", "கோவில்", "கோ"),  # ... but "temple" itself is over-stemmed to "king"
        # Nepali and English
        ("Nepali", "मन्दिरहरू", "मन्दिर"),  # temples -> temple
        ("ne", "नेपालको", "नेपाल"),  # of Nepal -> Nepal
        ("English", "paintings", "paint"),
        ("en-IN", "painting", "paint"),
    ],
)
def test_stems_of_the_real_stemmers(language: str, word: str, stem: str) -> None:
    assert stem_words(frozenset({word}), language) == {stem}


def test_plural_and_singular_meet_where_the_stemmer_joins_them() -> None:
    assert not word_overlap("किताब", "दो किताबें।").is_correct
    assert stem_overlap("किताब", "दो किताबें।", "Hindi")
    assert stem_overlap("சோழர்", "சோழர்கள் கட்டினர்", "Tamil")
    assert stem_overlap("चोल", "चोलों ने", "Hindi")
    assert not stem_overlap("கோவில்", "கோவில்கள்", "Tamil")  # the over-stemmed singular: a miss
    assert not stem_overlap("Narmada valley", "Narmada", "English")  # every golden word still needed
    assert not stem_overlap("किताब", "  ", "Hindi")  # blank fails


@pytest.mark.parametrize("language", ["Bengali", "Telugu", "Devanagari", "Tamil script", "Latin", "", None])
def test_other_languages_and_script_names_are_not_stemmed(language: str | None) -> None:
    assert not stemmed(language) and algorithm(language) is None
    # Not stemmed: the verdict is the spec's word overlap, word for word.
    pairs = [("রবীন্দ্রনাথ ঠাকুর", "ঠাকুর রবীন্দ্রনাথ।"), ("paintings", "painting"), ("கோவில்", "கோவில்கள்")]
    for answer, response in pairs:
        assert stem_overlap(answer, response, language) == word_overlap(answer, response).is_correct


def test_the_stemmed_yes_no_per_language() -> None:
    found = stemming_by_language(["Hindi", "Tamil script", "Bengali", None, "en", "Hindi"])
    assert found == {"": False, "Bengali": False, "Hindi": True, "Tamil script": False, "en": True}


# ---------------------------------------------------------------- chrF


def test_chrf_is_sacrebleus_default_sentence_chrf() -> None:
    assert CHRF_PARAMS == {"char_order": 6, "word_order": 0, "beta": 2, "lowercase": False, "whitespace": False}
    assert chrf_score("amalak", "Amalaka") == pytest.approx(58.9179, abs=1e-4)
    assert chrf_score("deul", "Deula") == pytest.approx(44.8893, abs=1e-4)
    assert chrf_score("scroll painting", "Scroll paintings") == pytest.approx(90.6927, abs=1e-4)
    assert chrf_score("जवाहरलाल नेहरू", "जवाहरलाल नेहरू") == 100.0
    assert chrf_score("चेन्नई", "मदुरै") == 0.0
    assert chrf_correct("deul", "Deula", 30.0) and not chrf_correct("deul", "Deula", 45.0)
    assert not chrf_correct("deul", " ", 0.0)  # blank fails whatever the threshold


def test_chrf_downloads_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("chrF tried to open a network connection")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    assert chrf_score("Kalidasa", "Kalidas") == pytest.approx(83.1, abs=0.05)


# ---------------------------------------------------------------- the dataset's variants


@pytest.mark.parametrize(
    ("golden", "response", "caught_by"),
    [
        # Sub-word: the spec's exact catches these already; so does normalised exact; chrF at 30 too.
        ("amalak", "Amalaka", {"norm_exact", "chrf"}),
        ("deul", "Deula", {"norm_exact", "chrf"}),
        # A plural: exact (substring), the English stemmer (paintings -> paint) and chrF all catch it.
        ("scroll painting", "Scroll paintings", {"norm_exact", "stem_overlap", "chrf"}),
    ],
)
def test_the_datasets_morphological_variants(golden: str, response: str, caught_by: set[str]) -> None:
    caught = {name for name in MATCHERS if match_row(name, golden, response, "English", 30.0)}
    assert caught == caught_by
    assert not word_overlap(golden, response).is_correct  # the spec's overlap misses all three


def test_matcher_names_are_checked() -> None:
    assert parse_matchers("chrf, norm_exact") == ("norm_exact", "chrf")
    assert parse_matchers("") == () and parse_matchers(None) == ()
    with pytest.raises(InputError, match="Unknown matcher 'stem'"):
        parse_matchers("stem")
