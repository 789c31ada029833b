"""Each row's language (issue 29, section 1): names and codes normalised to one name, the script
named as a script where no language is given, and the chain column -> run language -> script.
Pure functions of :mod:`scoring.core.language_names` and :mod:`scoring.core.row_language`."""

from __future__ import annotations

import polars as pl
import pytest

from scoring.core.language_names import languages_label, normalise_language, normalise_languages, one_language
from scoring.core.row_language import (
    fill_languages,
    language_field,
    row_languages,
    script_of,
    scripts,
)
from scoring.core.script_names import UNKNOWN_SCRIPT


@pytest.mark.parametrize(
    ("typed", "name"),
    [
        ("hi", "Hindi"),
        ("hin", "Hindi"),
        ("Hindi", "Hindi"),
        ("HINDI", "Hindi"),
        ("  hindi \t", "Hindi"),
        ("hi-IN", "Hindi"),
        ("en_US", "English"),
        ("eng", "English"),
        ("ta", "Tamil"),
        ("TAM", "Tamil"),
        ("bn", "Bengali"),
        ("Bangla", "Bengali"),
        ("oriya", "Odia"),
        ("ory", "Odia"),
        ("pa-Guru", "Punjabi"),
        (" Klingon ", "Klingon"),  # unknown: kept as typed, trimmed
        ("tlh", "tlh"),
        ("hindi-ish", "hindi-ish"),  # not a code, not a tag: kept
        ("", ""),
        ("   ", ""),
    ],
)
def test_names_and_codes_are_one_language(typed: str, name: str) -> None:
    assert normalise_language(typed) == name


def test_normalising_a_column_keeps_nulls_blank() -> None:
    column = pl.Series(["hi", None, "TAMIL", "xx-YY"], dtype=pl.String)
    assert pl.select(normalise_languages(pl.lit(column))).to_series().to_list() == ["Hindi", "", "Tamil", "xx-YY"]


@pytest.mark.parametrize(
    ("value", "single"),
    [("hindi", "Hindi"), ("", ""), ("English, Hindi, Tamil, Bengali", ""), ("Hindi and English", ""), ("ta", "Tamil")],
)
def test_a_run_language_counts_when_it_names_one(value: str, single: str) -> None:
    assert one_language(value) == single


def test_several_languages_are_named_or_counted() -> None:
    assert languages_label(["Tamil", "English", "Hindi", "English", ""]) == "English, Hindi, Tamil"
    assert languages_label(["a", "b", "c", "d"]) == "4 languages"
    assert languages_label([]) == ""


@pytest.mark.parametrize(
    ("question", "answer", "script"),
    [
        ("भरहुत के हिरण पदक में कौन सी जातक कथा दिखाई गई है?", "रुरु जातक", "Devanagari"),  # Hindi
        ("தமிழ்நாட்டின் தலைநகரம் எது?", "சென்னை", "Tamil script"),  # Tamil
        ("বাংলার রাজধানী কোথায়?", "কলকাতা", "Bengali script"),  # Bengali
        ("Which Jataka is depicted at Bharhut?", "Ruru Jataka", "Latin"),  # English
        ("రాజధాని ఏది?", "అమరావతి", "Telugu script"),
        ("ರಾಜಧಾನಿ ಯಾವುದು?", "ಬೆಂಗಳೂರು", "Kannada script"),
        ("തലസ്ഥാനം ഏത്?", "തിരുവനന്തപുരം", "Malayalam script"),
        ("રાજધાની કઈ છે?", "ગાંધીનગર", "Gujarati script"),
        ("ਰਾਜਧਾਨੀ ਕਿਹੜੀ ਹੈ?", "ਚੰਡੀਗੜ੍ਹ", "Gurmukhi"),
        ("ରାଜଧାନୀ କଣ?", "ଭୁବନେଶ୍ୱର", "Odia script"),
        ("دارالحکومت کیا ہے؟", "اسلام آباد", "Arabic script"),
        ("Столица?", "Москва", "Other script"),
        ("1947?", "१९४७", UNKNOWN_SCRIPT),  # digits only (Devanagari digits are digits, not letters)
        ("", "", UNKNOWN_SCRIPT),
        ("!!! ।। ...", "123", UNKNOWN_SCRIPT),  # punctuation and the danda are not letters
    ],
)
def test_the_script_of_a_row(question: str, answer: str, script: str) -> None:
    assert script_of(question, answer) == script


def test_a_mixed_row_goes_to_the_script_of_most_letters() -> None:
    # A Hindi question with a romanised golden answer: more Devanagari letters than Latin.
    assert script_of("भरहुत के हिरण पदक में कौन सी जातक कथा है?", "Ruru Jataka") == "Devanagari"
    # An English question about a Hindi word: more Latin letters.
    assert script_of("What does the Hindi word for a deer, as in the Ruru Jataka, mean?", "हिरण") == "Latin"
    # A tie breaks the same way every time: Devanagari before Latin.
    assert script_of("ab", "कख") == "Devanagari"


def test_scripts_are_vectorised_and_keep_row_order() -> None:
    question = pl.Series(["q", "प्रश्न", None, "கேள்வி", "42"], dtype=pl.String)
    answer = pl.Series(["a", "उत्तर", "b", "பதில்", "7"], dtype=pl.String)
    assert scripts(question, answer).to_list() == ["Latin", "Devanagari", "Latin", "Tamil script", UNKNOWN_SCRIPT]


def _table(languages: list[str] | None) -> pl.DataFrame:
    table = pl.DataFrame({"question": ["Capital?", "राजधानी?", "தலைநகரம்?"], "answer": ["Delhi", "दिल्ली", "சென்னை"]})
    return table if languages is None else table.with_columns(language=pl.Series(languages, dtype=pl.String))


def test_the_chain_column_then_run_then_script() -> None:
    found = row_languages(_table(["en", "", "TAMIL"]), "", "column:lang")
    assert found.values.to_list() == ["English", "Devanagari", "Tamil"] and found.source == "column:lang"
    found = row_languages(_table(["en", "", "TAMIL"]), "hindi", "column:lang")
    assert found.values.to_list() == ["English", "Hindi", "Tamil"]
    found = row_languages(_table(None), "Hindi", None)
    assert found.values.to_list() == ["Hindi"] * 3 and found.source == "run"
    found = row_languages(_table(None), "English, Hindi, Tamil, Bengali", None)  # names no one language
    assert found.values.to_list() == ["Latin", "Devanagari", "Tamil script"] and found.source == "script"
    found = row_languages(_table(["", "", ""]), "", "column:lang")  # a column with nothing in it
    assert found.source == "script"


def test_the_run_language_is_the_shared_one_or_mixed() -> None:
    assert row_languages(_table(["en", "hi", "ta"]), "", "column:language").run_language("Hindi") == ""
    assert row_languages(_table(["hi", "hin", "Hindi"]), "", "metadata").run_language("") == "Hindi"
    assert row_languages(_table(None), "", None).run_language("Tamil") == "Tamil"  # not from the file: as guessed


def test_the_field_found_by_name_or_mapping() -> None:
    assert language_field(["question", "Language", "lang"], {}) == "Language"
    assert language_field(["question", " LANG "], {}) == " LANG "
    assert language_field(["question", "lang"], {"language": "locale"}) == "locale"
    assert language_field(["question", "lang"], {"answer": "lang"}) is None  # mapped to something else
    assert language_field(["question", "languages"], {}) is None


def test_reading_back_follows_the_source() -> None:
    stored = _table(["English", "Hindi", "Tamil"]).with_columns(Domain=pl.lit("Art"))
    assert fill_languages(stored, "Bengali", "column:lang", "extra:")["language"].to_list() == [
        "English",
        "Hindi",
        "Tamil",
    ]  # from the file: kept whatever the run's language says now
    stored = _table(["Latin", "Devanagari", "Tamil script"]).with_columns(Domain=pl.lit("Art"))
    scripts_kept = fill_languages(stored, "", "script", "extra:")["language"].to_list()
    assert scripts_kept == ["Latin", "Devanagari", "Tamil script"]
    assert fill_languages(stored, "hi", "script", "extra:")["language"].to_list() == ["Hindi"] * 3  # named later
    older = _table(None).with_columns(Domain=pl.lit("Art"), response=pl.lit("x"))
    filled = fill_languages(older, "", None, "extra:")
    assert filled.columns == ["question", "answer", "Domain", "language", "response"]
    assert filled["language"].to_list() == ["Latin", "Devanagari", "Tamil script"]
    assert fill_languages(older, "Tamil", None, "extra:")["language"].to_list() == ["Tamil"] * 3
    with_extra = older.with_columns(pl.Series("extra:Lang", ["en", "", "ta"]))
    assert fill_languages(with_extra, "", None, "extra:")["language"].to_list() == ["English", "Devanagari", "Tamil"]
