"""Stemmed word overlap: the spec's word-overlap rule on word stems, for the languages a stemmer knows.

Optional, beside the spec's two metrics (which never change). Both sides are tokenised exactly as
the spec's word overlap does (lowercase, split on whitespace, strip edge punctuation, drop empty
words: :func:`scoring.core.protocols.word_set`); each word is then replaced by its stem from
``snowballstemmer`` (no model or download; it runs PyStemmer's C build of the same algorithms
where that is installed) for the row's language, and the golden
stems must all be among the response's::

    stem_overlap(a, r) = stems(words(a), lang) <= stems(words(r), lang)

**Only English, Hindi, Tamil and Nepali are stemmed** (:data:`STEMMERS`: Snowball has no stemmer
for Bengali, Telugu, Kannada, Malayalam, Marathi, Gujarati and the rest). A row in any other
language, with no language, or with a script named in place of a language ("Devanagari",
"Tamil script") is *not stemmed*: its verdict is the spec's word overlap. :func:`stemmed` says
which. The Hindi stemmer is a light suffix stripper ("A Lightweight Stemmer for Hindi"); the
Tamil one strips case and plural endings and sometimes more than a linguist would (கோவில்
"temple" stems to கோ while கோவில்கள் stems to கோவில்: the tests show it).

A word stems the same wherever it appears, so :func:`stem_overlap_column` stems each distinct
(language, word) once.
"""

from __future__ import annotations

import threading

import polars as pl
import snowballstemmer

from scoring.core.columnar import lower_batch, patterns
from scoring.core.protocols import is_blank, word_set

_LOCAL = threading.local()
LOW_TYPE = pl.Struct({"low": pl.String, "python": pl.Boolean})

#: Language as written (lower case; a BCP 47 tag such as ``hi-IN`` is read by its first part) ->
#: Snowball algorithm. Everything else is not stemmed.
STEMMERS: dict[str, str] = {
    **dict.fromkeys(("english", "en", "eng"), "english"),
    **dict.fromkeys(("hindi", "hi", "hin", "हिन्दी", "हिंदी"), "hindi"),
    **dict.fromkeys(("tamil", "ta", "tam", "தமிழ்"), "tamil"),
    **dict.fromkeys(("nepali", "ne", "nep", "npi", "नेपाली"), "nepali"),
}
#: The languages stemmed, as the CLI help and the page name them.
STEMMED_LANGUAGES = ("English", "Hindi", "Tamil", "Nepali")
NOT_STEMMED_NOTE = (
    "stemmed word overlap stems English, Hindi, Tamil and Nepali only (snowballstemmer); rows in any "
    "other language, or whose language is only a script name, are not stemmed (their verdict is the "
    "spec's word overlap)"
)


def algorithm(language: str | None) -> str | None:
    """The Snowball algorithm for ``language`` (a name, an ISO code or a BCP 47 tag), or None."""
    key = (language or "").strip().lower()
    if key in STEMMERS:
        return STEMMERS[key]
    head = key.replace("_", "-").split("-")[0]
    return STEMMERS.get(head) if "-" in key.replace("_", "-") else None


def stemmed(language: str | None) -> bool:
    """Whether rows in ``language`` are stemmed (else the verdict is the spec's word overlap)."""
    return algorithm(language) is not None


def _stemmer(name: str) -> snowballstemmer.stemmer:
    """This thread's stemmer for ``name``: PyStemmer's (C) where it is installed, which
    ``snowballstemmer`` itself prefers, else the pure-Python one (the same algorithms, the same
    stems: tests/test_stemmer_parity.py). One per thread: a stemmer object keeps state."""
    made = _LOCAL.__dict__.setdefault("stemmers", {})
    if name not in made:
        made[name] = snowballstemmer.stemmer(name)
    return made[name]


def stem_words(words: frozenset[str], language: str | None) -> frozenset[str]:
    """Each word's stem (the word itself where the language has no stemmer)."""
    name = algorithm(language)
    if name is None:
        return words
    stem = _stemmer(name).stemWord
    return frozenset(stem(w) for w in words)


def stem_overlap(answer: str, response: str | None, language: str | None) -> bool:
    """Every golden stem among the response's stems; a blank response fails (as in the spec)."""
    if is_blank(response):
        return False
    return stem_words(word_set(answer), language) <= stem_words(word_set(response), language)


# ---------------------------------------------------------------- polars


def _stem_table(words: pl.DataFrame) -> pl.DataFrame:
    """``_alg``, ``_w`` (distinct pairs) -> ``_s`` their stems, one ``stemWords`` call per algorithm."""
    parts = []
    for (alg,), group in words.group_by("_alg", maintain_order=True):
        stems = _stemmer(str(alg)).stemWords(group["_w"].to_list())
        parts.append(group.with_columns(_s=pl.Series(stems, dtype=pl.String)))
    return pl.concat(parts) if parts else words.with_columns(_s=pl.lit(None, dtype=pl.String))


def stem_overlap_column(
    answers: pl.Series, responses: pl.Series, languages: pl.Series, overlap: pl.Series | None = None
) -> pl.Series:
    """:func:`stem_overlap` of every row (``stem_overlap_correct``), equal to it row for row.

    Words are the spec's (lowercased with Python's ``str.lower()`` wherever polars could differ:
    :func:`scoring.core.columnar.lower_batch`), stemmed once per distinct (language, word). A row the
    spec's overlap passes (``overlap``, when given) passes here too: its golden words are response
    words, so their stems are response stems; only the other rows are tokenised.
    """
    n = len(answers)
    langs = languages.cast(pl.String).fill_null("")
    algs = langs.replace_strict({v: algorithm(v) for v in langs.unique().to_list()}, return_dtype=pl.String)
    frame = pl.DataFrame(
        {
            "a": answers.cast(pl.String).fill_null(""),
            "r": responses.cast(pl.String),
            "_alg": pl.Series(algs, dtype=pl.String),
            "_pass": overlap if overlap is not None else pl.repeat(False, n, eager=True),
        }
    ).with_row_index("_i")
    blank = (pl.col("r").is_null() | pl.col("r").str.contains(patterns()["blank"])).fill_null(True)
    todo = frame.filter(~pl.col("_pass") & ~blank)
    if todo.is_empty():
        return (frame["_pass"] & ~frame.select(blank).to_series()).alias("stem_overlap_correct")
    # Words and algorithms as categoricals: the joins and uniques below then compare integers.
    words = _words(todo).with_columns(pl.col("_w", "_alg").cast(pl.Categorical))
    stemmable = words.filter(pl.col("_alg").is_not_null()).select("_alg", "_w").unique()
    table = _stem_table(stemmable.cast(pl.String)).cast(pl.Categorical)
    words = words.join(table, on=["_alg", "_w"], how="left").with_columns(_s=pl.coalesce("_s", "_w"))
    golden = words.filter(pl.col("_side") == "a").select("_i", "_s").unique()
    # a response word whose stem no golden word has cannot make a row pass: dropped before the join
    useful = pl.col("_s").is_in(golden["_s"].unique().implode())
    have = words.filter((pl.col("_side") == "r") & useful).select("_i", "_s")
    missing = golden.join(have, on=["_i", "_s"], how="anti").select("_i").unique()
    passed = todo.select("_i").join(missing, on="_i", how="anti")["_i"]
    out = frame["_pass"].clone()
    if not passed.is_empty():
        out = out.scatter(passed, True)
    return (out & ~frame.select(blank).to_series()).alias("stem_overlap_correct")


def _words(rows: pl.DataFrame) -> pl.DataFrame:
    """Per row (``_i``) and side (``a``/``r``), its spec words (``_w``) with the row's ``_alg``.

    Tokenised by the same regex as the spec's columnar overlap (a stripped token matched whole),
    lowercased first; rows whose lowercasing polars might do differently are tokenised in Python.
    """
    from_python: list[dict] = []
    parts = []
    for side in ("a", "r"):
        lowered = rows.select("_i", "_alg", _l=pl.col(side).fill_null("")).with_columns(
            _low=pl.col("_l").map_batches(lower_batch, return_dtype=LOW_TYPE)
        )
        flagged = lowered.filter(pl.col("_low").struct.field("python"))
        for i, alg, text, _ in flagged.iter_rows():
            from_python += [{"_i": i, "_alg": alg, "_w": w, "_side": side} for w in word_set(text)]
        plain = lowered.filter(~pl.col("_low").struct.field("python")).select(
            "_i", "_alg", _w=pl.col("_low").struct.field("low").str.extract_all(patterns()["token"]), _side=pl.lit(side)
        )
        parts.append(plain.explode("_w").drop_nulls("_w"))
    schema = {"_i": pl.UInt32, "_alg": pl.String, "_w": pl.String, "_side": pl.String}
    extra = pl.DataFrame(from_python, schema=schema) if from_python else pl.DataFrame(schema=schema)
    return pl.concat([p.select(schema.keys()).cast(schema) for p in parts] + [extra])
