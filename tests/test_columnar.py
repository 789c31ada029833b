"""The polars path (``scoring.core.columnar``) against the per-pair reference functions: zero
differences, row by row, on generated text (hypothesis), on an adversarial corpus, on every row
of the spec's example tables, and the Unicode facts the module relies on.
"""

from __future__ import annotations

import sys
import unicodedata

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_protocols import AGREEMENT_CASES
from test_protocols import reference_row as reference
from test_spec_examples import BUCKET_TABLE, EXACT_TABLE, OVERLAP_TABLE

from scoring.core.columnar import OUTPUT_COLUMNS, WHITESPACE, _spaced, patterns, score_polars
from scoring.core.protocols import PUNCTUATION, word_set

Pair = tuple[str | None, str | None]


def differences(pairs: list[Pair]) -> list[tuple[Pair, tuple, tuple]]:
    """Rows where score_polars and the reference functions disagree (wanted: none)."""
    frame = pl.DataFrame({"answer": [a for a, _ in pairs], "response": [r for _, r in pairs]}, schema=SCHEMA)
    got = score_polars(frame)
    assert got.columns == list(OUTPUT_COLUMNS) and got.height == len(pairs)
    return [(pair, row, reference(*pair)) for pair, row in zip(pairs, got.iter_rows()) if row != reference(*pair)]


SCHEMA = {"answer": pl.String, "response": pl.String}

# ---------------------------------------------------------------------------- generated text

#: Characters unassigned in Python 3.11's Unicode 14 that newer tables case-map or treat as
#: case-ignorable (so Rust's lowercasing, final sigma included, differs).
UNASSIGNED = "\u0ece\ua7cb\ua7cc\ua7da\u1c89\u1c8a\U00010d50\U00010d65\U00011f00\U0001e030"


def _rust_lowers_differently() -> str:
    """Every character unassigned in the running Python's Unicode on which polars' lowercasing
    disagrees with ``str.lower()`` (it maps it, or it is cased or case-ignorable for final sigma).
    """
    unassigned = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cn"]
    texts = [f"AΣ{c}B{c}" for c in unassigned]
    rust = pl.Series(texts).str.to_lowercase().to_list()
    return "".join(c for c, text, low in zip(unassigned, texts, rust) if text.lower() != low)


DIFFERING = _rust_lowers_differently()
LATIN = "abcxyzABCXYZ0123456789ßẞĳĲǅǄﬀİıIiɤ"  # ɤ: U+A7CB lowers to it in newer tables
GREEK = "ΣσςΑαΟοΔδ"  # final sigma depends on the cased letters around it
INDIC = (
    "कखगजडनमरलवसहािीुेैोौंः़्\u0958\u095b०१२"  # Devanagari: signs, virama, nukta
    + "கஙசடணதநமயரலவழளறனாிீுூெேைொோௌ்௧"  # Tamil
    + "কখগঘচজটডণতদনপবমযরলশষসহািীুূেৈোৌ্১"  # Bengali
)
MARKS = "\u0300\u0301\u0307\u0308\u0345\u200b\u200c\u200d\u2060\ufeff\u00ad"  # combining, ZW*, format
QUOTES = "\"'“”‘’«»„‚`"
OTHER = "₹€+$<=>^|~\r\n\r\n"
PUNCT_LIST = sorted(PUNCTUATION)

char = st.one_of(
    st.sampled_from(LATIN + GREEK),
    st.sampled_from(INDIC),
    st.sampled_from(MARKS + QUOTES + OTHER),
    st.sampled_from(UNASSIGNED + DIFFERING),
    st.sampled_from(WHITESPACE),  # all 29
    st.sampled_from(PUNCT_LIST),  # every P* character can come up
    st.characters(exclude_categories=["Cs"]),  # anything at all, now and then
)
free_text = st.text(alphabet=char, max_size=24)
letters = LATIN + GREEK + INDIC + MARKS + UNASSIGNED + DIFFERING[::7]
word = st.text(alphabet=st.sampled_from(letters), min_size=1, max_size=6)
edge = st.text(alphabet=st.sampled_from(PUNCT_LIST[:40] + list(QUOTES + "।॥…—–-.")), max_size=2)
space = st.sampled_from([" ", " ", " ", *WHITESPACE, "  ", "\r\n"])
blank_text = st.lists(space, max_size=4).map("".join)


@st.composite
def phrase(draw: st.DrawFn) -> str:
    """A golden answer: a few words, sometimes with punctuation at their edges or inside."""
    words = draw(st.lists(st.builds(lambda a, w, b: a + w + b, edge, word, edge), min_size=1, max_size=4))
    return "".join(w + draw(space) for w in words)[: -1 if draw(st.booleans()) else None]


def _cased_variant(text: str, how: int) -> str:
    return (text, text.upper(), text.lower(), text.title(), text.swapcase())[how]


@st.composite
def related(draw: st.DrawFn) -> Pair:
    """A response made from the golden answer's words: kept, recased, decorated, glued, dropped."""
    golden = draw(st.one_of(phrase(), free_text))
    pieces = []
    for token in golden.split():
        choice = draw(st.integers(0, 5))
        if choice == 0:
            continue
        if choice == 1:
            token = draw(edge) + token + draw(edge)
        elif choice == 2:
            token = token + draw(word)
        elif choice == 3:
            token = _cased_variant(token, draw(st.integers(0, 4)))
        pieces.append(token)
    pieces += draw(st.lists(st.one_of(word, free_text), max_size=3))
    pieces = draw(st.permutations(pieces))
    if draw(st.booleans()):
        pieces.insert(draw(st.integers(0, len(pieces))), _cased_variant(golden, draw(st.integers(0, 4))))
    return golden, "".join(p + draw(space) for p in pieces)


pair = st.one_of(
    related(),
    st.tuples(st.one_of(free_text, phrase()), free_text),
    st.tuples(st.one_of(st.none(), st.just(""), free_text), st.one_of(st.none(), st.just(""), blank_text)),
)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(pairs=st.lists(pair, min_size=1, max_size=12))
def test_score_polars_equals_reference_on_generated_text(pairs: list[Pair]) -> None:
    assert differences(pairs) == []


# ---------------------------------------------------------------------------- adversarial corpus

SIGMA = "ΟΔΟΣ"
CORPUS: list[Pair] = [
    *AGREEMENT_CASES,
    # Final sigma: Σ lowers to ς at the end of a word, to σ before a letter, by context.
    ("Σ", "XΣ"),
    ("Σ", "XΣY"),
    ("ς", "XΣ"),
    ("σ", "XΣ"),
    ("οδος", SIGMA),
    ("ΟΔΟΣ", "οδοσ"),
    ("ΟΔΟΣ", "ΟΔΟΣ."),
    ("ΟΔΟΣ", "ΟΔΟΣ\u0301"),
    ("ΟΔΟΣ", "ΟΔΟΣ\u0301Α"),
    ("ΑΣ\u00adΑ", "ασ\u00adα"),
    ("Σ", "'Σ'"),
    ("ΑΣ'", "ας'"),
    ("ΑΣ'Β", "ασ'β"),
    ("A.Σ", "a.ς"),
    # Unassigned in Python's Unicode (case pairs or case-ignorable in newer tables).
    ("ΑΣ\u0ece", "ας\u0ece"),
    ("ΑΣ\u0ece", "ασ\u0ece"),
    ("\ua7cb", "\ua7cb"),
    ("\ua7cb", "x\ua7cb y"),
    ("a\ua7cb", "A\ua7cb"),
    ("\u1c89X", "\u1c89x"),
    ("\U00010d50", "\U00010d50\U00010d70"),
    ("Ab\U00010d50", "ab\U00010d50"),
    ("x", "X \ua7cb"),
    ("\u0ece", "\u0ece"),
    ("ΑΣ", "ΑΣ\u0ece"),
    ("\u0264", "\ua7cb"),
    ("\ua7cb", "\u0264"),
    ("ας\u0eceβ", "ΑΣ\u0eceΒ"),
    ("ασ\u0eceβ", "ΑΣ\u0eceΒ"),
    ("\u1c8a", "\u1c89"),
    ("\U00010d70", "\U00010d50"),
    # İ lowers to two characters; ı and K (Kelvin) and ẞ.
    ("İ", "i\u0307"),
    ("i", "İ"),
    ("İstanbul", "istanbul"),
    ("ı", "I"),
    ("k", "\u212a"),
    ("ß", "ẞ"),
    ("ǅ", "ǆ"),
    ("ﬀ", "FF"),
    ("Ⅰ", "ⅰ"),
    ("Ⓐ", "ⓐ"),
    # Combining marks, ZWJ/ZWNJ, zero-width: part of the token, never separators.
    ("e\u0301", "E\u0301"),
    ("é", "e\u0301"),
    ("क्ष", "क्\u200dष"),
    ("क्ष", "क्\u200cष"),
    ("a", "a\u200b"),
    ("\u200b", "\u200b"),
    ("x\u0301", ".x\u0301."),
    ("\u0301", "x \u0301 y"),
    # Every kind of whitespace, including U+001C..U+001F that Rust's \s lacks, and CR/LF.
    *[("Narmada valley", f"Narmada{ws}valley") for ws in WHITESPACE],
    *[("x", f"{ws}") for ws in WHITESPACE],
    *[("a b", f"b{ws}.a.{ws}") for ws in WHITESPACE],
    ("a\r\nb", "a\r\nb"),
    ("a b", "a\r\nb"),
    ("a", "\r\n"),
    ("", "\r\n"),
    ("\n", "x"),
    ("\u0085", "a\u0085b"),
    ("\u200b", " "),
    ("x", "\u180e"),
    ("a\u180eb", "a\u180eb"),
    ("a b", "a\u180eb"),
    # Punctuation: ASCII, Unicode P*, symbols outside string.punctuation, quotes, only punctuation.
    ('"Delhi"', 'He said "delhi".'),
    ("'", "'"),
    ('""', '"'),
    ("", '""'),
    (".", ". ."),
    ("…", "…"),
    ("¿Qué?", "qué"),
    ("a·b", "a·b"),
    ("x", "·x·"),
    ("₹100", "₹100"),
    ("100", "₹100"),
    ("x", "+x+"),
    ("x-y", "x-y"),
    ("x-y", "x y"),
    ("x", "x-y"),
    ("u.s.a.", "U.S.A"),
    ("(a)", "a)"),
    ("a", "(((a)))"),
    ("a", "a—a"),
    ("a", "a — a"),
    ("a", "।a॥"),
    ("दिल्ली", "दिल्ली।"),
    ("a", "\u00a7a\u00b6"),
    ("x", "x\U0001e95ex"),
    ("x", "\U0001e95ex\U0001e95f"),
    # Empty and missing cells; whitespace-only golden answers; repeated golden words.
    (None, None),
    (None, ""),
    (None, "x"),
    ("", None),
    ("", ""),
    (" ", " "),
    (" ", "x"),
    ("\t", "x\ty"),
    ("a a a", "a"),
    ("a A", "a"),
    ("A a .", "a ."),
    ("", "."),
    ("—", "x"),
    # Substring but not a token, token but not the first occurrence.
    ("ab", "abab ab"),
    ("ab", "xab abx"),
    ("ab", "ab."),
    ("ab", "-ab"),
    ("ab", "a-b"),
    ("a b", "b a b"),
    ("गंगा नदी", "नदी गंगाजल"),
    ("கொடி", "கொடிகள் கொடி"),
    ("ঠাকুর", "ঠাকুরবাড়ি"),
]


def test_adversarial_corpus() -> None:
    assert differences(CORPUS) == []


def test_adversarial_corpus_row_by_row() -> None:
    """The same rows one at a time, so distinct-answer sharing cannot hide a difference."""
    assert [d for p in CORPUS for d in differences([p])] == []


# ---------------------------------------------------------------------------- the spec's tables


def test_every_spec_example_row() -> None:
    pairs: list[Pair] = [(g, r) for g, r, _ in EXACT_TABLE] + [(g, r) for g, r, *_ in OVERLAP_TABLE]
    pairs += [(g, r) for g, r, _ in BUCKET_TABLE]
    assert differences(pairs) == []
    got = score_polars(pl.DataFrame({"answer": [p[0] for p in pairs], "response": [p[1] for p in pairs]}))
    exact = [row[2] for row in EXACT_TABLE]
    assert got["exact_correct"].to_list()[: len(EXACT_TABLE)] == exact
    overlap = got.slice(len(EXACT_TABLE), len(OVERLAP_TABLE))
    assert overlap.select("overlap_correct", "matching_words", "total_golden_words").rows() == [
        (c, m, t) for _, _, c, m, t in OVERLAP_TABLE
    ]
    assert got["bucket"].to_list()[-len(BUCKET_TABLE) :] == [b for *_, b in BUCKET_TABLE]


# ---------------------------------------------------------------------------- frames and order


def test_shape_types_order_and_lazy_input() -> None:
    pairs = [(f"w{i % 7}", f"x W{i % 5} y" if i % 3 else None) for i in range(100)]
    frame = pl.DataFrame({"golden": [a for a, _ in pairs], "said": [r for _, r in pairs], "extra": range(100)})
    eager = score_polars(frame, answer="golden", response="said")
    lazy = score_polars(frame.lazy(), answer="golden", response="said")
    assert eager.equals(lazy)
    assert eager.schema == pl.Schema(
        {
            "exact_correct": pl.Boolean,
            "overlap_correct": pl.Boolean,
            "matching_words": pl.Int64,
            "total_golden_words": pl.Int64,
            "is_blank": pl.Boolean,
            "bucket": pl.String,
        }
    )
    assert eager.null_count().sum_horizontal().item() == 0
    assert list(eager.iter_rows()) == [reference(a, r) for a, r in pairs]


def test_many_batches_keep_order_and_fallback_rows() -> None:
    """200k rows run as many batches on several threads; the rows Python scores sit far down.

    Compared row by row with the reference functions; the corpus rows keep their reference
    verdicts wherever they land.
    """
    words = ["Delhi", "दिल्ली", "ΟΔΟΣ", "Narmada valley", "x.y", "", "\ua7cb", "İ", "deul"]
    answers = [words[(i * 7) % len(words)] + ("" if i % 5 else " ") for i in range(200_000)]
    responses = [f"{words[(i * 3) % len(words)]}{'.' if i % 4 else ' is'} {i % 97}" for i in range(200_000)]
    step = len(answers) // len(CORPUS)
    for k, (a, r) in enumerate(CORPUS):
        answers[k * step + 500], responses[k * step + 500] = a or "", r  # type: ignore[call-overload]
    frame = pl.DataFrame({"answer": answers, "response": responses}, schema=SCHEMA)
    before = frame.clone()
    got = score_polars(frame)
    assert frame.equals(before)  # the caller's frame is not changed
    want = [reference(a, r) for a, r in zip(answers, responses)]
    assert list(got.iter_rows()) == want


def test_empty_frame() -> None:
    got = score_polars(pl.DataFrame({"answer": [], "response": []}, schema=SCHEMA))
    assert got.height == 0 and got.columns == list(OUTPUT_COLUMNS)


def test_csv_read_as_strings_empty_vs_missing() -> None:
    """Read as the wiring step will: an unquoted empty cell is null, a quoted one is ''."""
    data = b'answer,response\nx,\nx,""\n,x\n"",x\n007,"a\r\nb ""007"""\nNA,na\n'
    frame = pl.read_csv(data, infer_schema=False)
    assert frame["response"].to_list()[:2] == [None, ""]
    got = score_polars(frame)
    assert list(got.iter_rows()) == [reference(a, r) for a, r in frame.iter_rows()]


# ---------------------------------------------------------------------------- the facts relied on


def test_the_unassigned_characters_are_found() -> None:
    """What the generated text draws on: the characters the module must send to Python."""
    if unicodedata.unidata_version == "14.0.0":
        assert set("\u0ece\ua7cb\u1c89\U00010d50") <= set(DIFFERING) and len(DIFFERING) > 100


def test_whitespace_is_exactly_str_isspace() -> None:
    assert WHITESPACE == "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
    assert len(WHITESPACE) == 29 and "\x1c\x1d\x1e\x1f" in WHITESPACE


def test_rust_lowercasing_equals_python_for_assigned_characters() -> None:
    """Polars' lowercasing equals ``str.lower()`` for every character assigned in Python's Unicode,
    alone and in final-sigma contexts (as cased neighbour, case-ignorable neighbour, or follower).
    Rows with an unassigned character are the module's fallback; this keeps the rest honest.
    """
    assigned = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) not in ("Cn", "Cs")]
    contexts = ["{c}", "AΣ{c}", "A{c}Σ", "{c}Σ", "AΣ{c}B"]
    texts = pl.Series([ctx.replace("{c}", c) for ctx in contexts for c in assigned])
    lowered = texts.str.to_lowercase()
    python = pl.Series([t.lower() for t in texts.to_list()])
    assert (lowered != python).sum() == 0


def test_patterns_are_built_from_python() -> None:
    pat = patterns()
    frame = pl.DataFrame({"t": [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]})
    flags = frame.select(
        cased=pl.col("t").str.contains(pat["cased"]),
        unassigned=pl.col("t").str.contains(pat["unassigned"]),
        token=pl.col("t").str.contains(pat["token"]),
        blank=pl.col("t").str.contains(pat["blank"]),
    )
    chars = frame["t"].to_list()
    assert flags["cased"].to_list() == [c.lower() != c for c in chars]
    assert flags["unassigned"].to_list() == [c.lower() == c and unicodedata.category(c) == "Cn" for c in chars]
    assert flags["token"].to_list() == [not c.isspace() and c not in PUNCTUATION for c in chars]
    assert flags["blank"].to_list() == [c.isspace() for c in chars]


TOKEN_TEXTS = ["", "x", "a b", ".a. b", "a.b", "«a»,b", "a\x1cb", "...", "a.-.b c", "a. (b", "a — b", "—", "a .", "..a"]


@pytest.mark.parametrize("text", TOKEN_TEXTS)
def test_token_regex_is_split_then_strip(text: str) -> None:
    got = pl.Series([text]).str.extract_all(patterns()["token"]).to_list()[0]
    assert got == [t for t in (tok.strip(PUNCTUATION) for tok in text.split()) if t]


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(st.one_of(free_text, st.builds(lambda p: p[1], related())), min_size=1, max_size=20))
def test_response_tokens_are_the_word_set(texts: list[str]) -> None:
    """The spaced text is ``word_set``'s tokens between spaces (and nothing else), text by text."""
    lowered = [t.lower() for t in TOKEN_TEXTS + texts]
    got = pl.DataFrame({"t": lowered}).select(_spaced(pl.col("t")).alias("t"))["t"].to_list()
    assert all(text[:1] == text[-1:] == " " for text in got)
    assert [set(text.split(" ")) - {""} for text in got] == [word_set(t) for t in lowered]
