"""PyStemmer (C) gives the same stems as snowballstemmer's pure-Python stemmers, word for word.

``snowballstemmer.stemmer`` hands out PyStemmer's stemmer where PyStemmer is installed
(requirements.txt), so the stemmed word overlap runs the C build; these tests hold it to the
pure-Python classes on every word of the tests' own texts and on a large seeded random sample of
English, Hindi, Tamil and Nepali letter strings (with Latin and Indic endings that the
algorithms strip), for the four languages the matcher stems.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
import snowballstemmer
import Stemmer
from snowballstemmer.english_stemmer import EnglishStemmer
from snowballstemmer.hindi_stemmer import HindiStemmer
from snowballstemmer.nepali_stemmer import NepaliStemmer
from snowballstemmer.tamil_stemmer import TamilStemmer

from scoring.match.languages import STEMMERS

PURE = {"english": EnglishStemmer, "hindi": HindiStemmer, "tamil": TamilStemmer, "nepali": NepaliStemmer}
TESTS = Path(__file__).resolve().parent
ALPHABETS = {
    "english": "abcdefghijklmnopqrstuvwxyz'",
    "hindi": "".join(map(chr, range(0x0900, 0x0980))),
    "nepali": "".join(map(chr, range(0x0900, 0x0980))),
    "tamil": "".join(map(chr, range(0x0B80, 0x0C00))),
}
ENDINGS = {
    "english": ["s", "es", "ing", "ed", "ly", "ness", "ation", "ational", "ies", "ful"],
    "hindi": ["ों", "ें", "ाएं", "ियों", "ता", "ती", "ने", "कर", "ाओं", "ियां"],
    "nepali": ["हरू", "लाई", "को", "का", "मा", "ले", "बाट", "सँग"],
    "tamil": ["கள்", "த்தை", "ில்", "ுக்கு", "ால்", "ின்", "ோடு", "ுடன்"],
}


def corpus_words() -> list[str]:
    """Every word of the tests' own text files (Python sources, fixtures, harness files)."""
    words: set[str] = set()
    for path in [*TESTS.glob("*.py"), *TESTS.glob("harness_files/*")]:
        if path.is_file():
            words |= set(re.findall(r"\w+", path.read_text(encoding="utf-8", errors="ignore").lower()))
    return sorted(words)


def random_words(language: str, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    letters, endings = ALPHABETS[language], ENDINGS[language]
    out = []
    for _ in range(count):
        word = "".join(rng.choice(letters) for _ in range(rng.randint(1, 9)))
        out.append(word + (rng.choice(endings) if rng.random() < 0.6 else ""))
    return out


def test_snowballstemmer_hands_out_pystemmers_stemmer() -> None:
    """The matcher runs the C build (the speed the bench measures) through snowballstemmer."""
    assert isinstance(snowballstemmer.stemmer("hindi"), Stemmer.Stemmer)
    assert set(STEMMERS.values()) <= set(Stemmer.algorithms())


@pytest.mark.parametrize("language", sorted(PURE))
def test_c_and_python_stems_are_equal_on_the_test_corpora_and_random_words(language: str) -> None:
    words = corpus_words() + random_words(language, 25_000, seed=len(language))
    assert len(words) > 25_000
    c_stems = Stemmer.Stemmer(language).stemWords(words)
    pure_stems = PURE[language]().stemWords(words)
    assert [(w, c, p) for w, c, p in zip(words, c_stems, pure_stems) if c != p] == []
    # the sample exercises the algorithm: many words lose an ending
    assert sum(c != w for w, c in zip(words, c_stems)) > 5_000
