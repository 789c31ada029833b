"""The matchers' compiled kernels where the random rows of test_matchers_columns.py rarely go:
chrF's character table clashing and bit sets longer than one 64-bit word, the stemmer's word
table growing, texts thousands of characters long, the refined NFC quick check, the tables' file
on disk, and the package root importing neither numba nor sacrebleu."""

from __future__ import annotations

import random
import subprocess
import sys
import unicodedata
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from scoring.core.compiled_utf8 import Utf8, utf8_of
from scoring.core.unicode_tables import write_atomically
from scoring.match import char_tables
from scoring.match.chrf import BIG, chrf_column, chrf_correct, chrf_score
from scoring.match.chrf_count import TABLE, chrf_verdicts, golden_tables, strip_whitespace
from scoring.match.norm_exact import norm_exact, norm_exact_column, normalize_answer
from scoring.match.pairs import distinct
from scoring.match.stem_overlap import stem_overlap, stem_overlap_column
from scoring.match.text_kernels import norm_all

ROOT = Path(__file__).resolve().parents[1]
#: Two characters a code point table of TABLE slots keyed by low bits puts in one slot.
CLASH = ("a", chr(ord("a") + TABLE))


def _text(rng: random.Random, pieces: list[str], most: int) -> str:
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, most)))


def test_chrf_golden_characters_sharing_a_table_slot_are_told_apart() -> None:
    rng = random.Random(21)
    pieces = [*CLASH, "b", " ", "ab", CLASH[1] * 2, "a" + CLASH[1]]
    answers = [_text(rng, pieces, 6) or "a" for _ in range(1500)]
    responses = [_text(rng, pieces, 20) for _ in range(1500)]
    assert sum(CLASH[0] in a and CLASH[1] in a for a in answers) > 300
    assert _exact_scores(answers, responses) == []
    for threshold in (10.0, 30.0, 60.0):
        got = chrf_column(pl.Series(answers), pl.Series(responses), threshold).to_list()
        assert got == [chrf_correct(a, r, threshold) for a, r in zip(answers, responses)], threshold


def _exact_scores(answers: list[str], responses: list[str]) -> list[str]:
    """Rows whose compiled chrF is not sacrebleu's float exactly: each row (not blank) is judged at
    its own sacrebleu score (must pass) and at the next float above it (must fail)."""
    golden, which = distinct(pl.Series(answers))
    ref = golden_tables(strip_whitespace(golden))
    texts = utf8_of(pl.Series(responses))
    wrong = []
    for i, (a, r) in enumerate(zip(answers, responses)):
        if not r.strip():
            continue
        one = Utf8(texts.data, texts.offsets[i : i + 2])
        score = chrf_score(a, r)
        at = chrf_verdicts(one, ref, which[i : i + 1], BIG, score)[0][0]
        above = chrf_verdicts(one, ref, which[i : i + 1], BIG, float(np.nextafter(score, 101.0)))[0][0]
        if not at or above:
            wrong.append(r)
    return wrong


def test_chrf_responses_longer_than_a_word_of_bits_score_as_sacrebleu_to_the_last_bit() -> None:
    """Responses of 60 to 300 characters: the n-gram sets shift across 64-bit words; each row's
    score is pinned to sacrebleu's float, so a single n-gram miscounted shows."""
    rng = random.Random(22)
    pieces = ["ab", "ba", "a", "b", "c", " ", "abc", "कि", "ता"]
    answers = [_text(rng, pieces, 5) or "ab" for _ in range(600)]
    responses = []
    for answer in answers:
        filler = [_text(rng, pieces, 120)[: rng.randint(60, 300)] for _ in range(2)]
        responses.append(filler[0] + (answer if rng.random() < 0.3 else "") + filler[1])
    lengths = [len("".join(r.split())) for r in responses]
    assert max(lengths) > 200 and sum(n > 64 for n in lengths) > 400
    assert _exact_scores(answers, responses) == []
    got = chrf_column(pl.Series(answers), pl.Series(responses), 20.0).to_list()
    assert got == [chrf_correct(a, r, 20.0) for a, r in zip(answers, responses)]


def test_stemmed_overlap_with_thousands_of_distinct_words_and_long_texts() -> None:
    """Enough distinct words that the word table grows many times over; texts of hundreds of words."""
    rng = random.Random(23)
    stems = ["kitab", "ladk", "paint", "amalak", "deul", "किताब", "लड़क", "கோவில்"]
    endings = ["", "s", "ing", "ें", "ों", "ा", "கள்", "ed"]

    def word() -> str:
        return rng.choice(stems) + rng.choice(endings) + str(rng.randint(0, 3000)) * (rng.random() < 0.5)

    answers = [" ".join(word() for _ in range(rng.randint(1, 3))) for _ in range(3000)]
    responses = []
    for i, answer in enumerate(answers):
        words = [word() for _ in range(rng.randint(0, 400 if i % 50 == 0 else 12))]
        if rng.random() < 0.5:  # the golden words, some with another ending
            words += [w + rng.choice(endings) * (rng.random() < 0.5) for w in answer.split()]
        rng.shuffle(words)
        responses.append(" ".join(words))
    languages = [rng.choice(["English", "Hindi", "Tamil", None]) for _ in range(3000)]
    got = stem_overlap_column(pl.Series(answers), pl.Series(responses), pl.Series(languages)).to_list()
    want = [stem_overlap(a, r, lang) for a, r, lang in zip(answers, responses, languages)]
    assert got == want
    assert 0.05 < sum(want) / len(want) < 0.95
    assert len({w for r in responses for w in r.split()}) > 5000


def test_normalised_exact_on_long_texts() -> None:
    rng = random.Random(24)
    pieces = ["Ab", " ", ".", "।", "क", "\u0929", "\u200c", "ß", "\u00a0", "கா", "x-y", "(", ")"]
    answers = [_text(rng, pieces, 4) for _ in range(400)]
    responses = [_text(rng, pieces, 2000) + a + _text(rng, pieces, 50) for a in answers]
    got = norm_exact_column(pl.Series(answers), pl.Series(responses)).to_list()
    assert got == [norm_exact(a, r) for a, r in zip(answers, responses)]


CODES = [0x41, 0x65, 0x301, 0x323, 0x334, 0x928, 0x93C, 0x94D, 0x930, 0x933, 0x958, 0x915, 0x93E, 0xB95, 0xBC6]
CODES += [0xBBE, 0xBD7, 0x1100, 0x1161, 0x11A8, 0xAC00, 0x929, 0xE9, 0x1E0B, 0x327, 0x5B0, 0x5B4, 0x591, 0x9C7]
CODES += [0x9BE, 0x9BC, 0x9A1, 0x3099, 0x304B, 0x1F00, 0x345, 0x308, 0x344, 0xF73, 0xF71, 0xF72, 0x212B, 0x2126]
CODES += [0x20, 0x2E, 0x964, 0x200D, 0x200C, 0xDF, 0x3A3, 0xB95, 0xBBE]


def test_the_compiled_normalisation_equals_python_wherever_it_does_not_hand_back() -> None:
    """Random strings of starters and marks that compose, reorder or do neither: every text the
    kernel does not hand back to Python is normalised exactly as :func:`normalize_answer` does
    (so its NFC quick check never passes a text NFC would change), and it spares most texts."""
    rng = random.Random(25)
    texts = ["".join(chr(rng.choice(CODES)) for _ in range(rng.randint(0, 6))) for _ in range(60_000)]
    tables = char_tables.char_tables()
    cps, at, python = norm_all(*utf8_of(pl.Series(texts)), tables.flags, tables.ccc, tables.fold, tables.pairs)
    wrong = [
        t
        for i, t in enumerate(texts)
        if not python[i] and "".join(map(chr, cps[at[i] : at[i + 1]])) != normalize_answer(t)
    ]
    assert wrong == []
    assert 0.3 < 1 - python.mean() < 0.95


@pytest.mark.parametrize(
    ("text", "handed_back"),
    [
        ("கா", False),  # Tamil vowel sign AA after a consonant: composes with nothing, NFC keeps it
        ("க\u0bc6\u0bbe", True),  # E + AA: NFC composes them into O (U+0BCA)
        ("e\u0301", True),  # e + acute: NFC composes é
        ("\u00e9\u0323", True),  # é then dot below: NFC reorders the decomposed marks
        ("ज़", False),  # ja + nukta: U+095B is a composition exclusion, NFC keeps them apart
        ("न\u093c", True),  # na + nukta: NFC composes U+0929
        ("Straße", True),  # ß casefolds to two characters
    ],
)
def test_the_quick_check_hands_back_what_nfc_or_casefold_might_change(text: str, handed_back: bool) -> None:
    tables = char_tables.char_tables()
    python = norm_all(*utf8_of(pl.Series([text])), tables.flags, tables.ccc, tables.fold, tables.pairs)[2]
    assert bool(python[0]) is handed_back
    assert handed_back or unicodedata.normalize("NFC", text) == text


def test_the_tables_file_round_trips_and_a_damaged_one_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCORING_CACHE_DIR", str(tmp_path))
    path = char_tables.tables_path()
    assert path.parent == tmp_path and not path.exists()
    built = char_tables.build()
    write_atomically(path, char_tables._encode(built))
    assert path.stat().st_size < 200_000
    loaded = char_tables._load(path)
    assert loaded is not None
    for name in ("flags", "ccc", "fold", "lower", "pairs"):
        assert np.array_equal(getattr(loaded, name), getattr(built, name)), name
        assert getattr(loaded, name).dtype == getattr(built, name).dtype, name
    path.write_bytes(b"not a zip file")
    assert char_tables._load(path) is None


def test_the_package_root_and_a_plain_score_load_neither_numba_nor_sacrebleu() -> None:
    code = (
        "import sys, scoring.match, scoring.cli.score;"
        "print(sorted(m for m in ('numba', 'sacrebleu', 'scoring.match.scorers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_blas_check_skipped_leaves_scipy_importable() -> None:
    code = (
        "import sys, scoring.core.compiled_utf8;"
        "from numba.np import arraymath;"
        "assert 'scipy.linalg' not in sys.modules and not arraymath._HAVE_BLAS;"
        "import scipy.linalg.cython_blas;"
        "print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
