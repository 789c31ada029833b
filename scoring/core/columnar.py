"""Both protocols on polars columns, row for row what :func:`scoring.core.report.score_frame` gives.

The per-pair functions in :mod:`scoring.core.protocols` stay the definition. This module gets
the same verdicts from whole-column polars operations, which run in Rust and on every core,
instead of a Python loop. Where polars and Python could differ it does not guess:

- whitespace is exactly the characters for which ``str.isspace()`` is true (Rust's ``\\s``
  lacks U+001C..U+001F), and punctuation is :data:`~scoring.core.protocols.PUNCTUATION`;
  both character classes are built from the running Python, not from the regex engine;
- a golden answer's words are matched whole by one regex (first and last character neither
  whitespace nor punctuation): ``tok.strip(PUNCTUATION)`` of each ``split()`` token, empties
  dropped; distinct answers are tokenised once. Responses are never split: a cheap rewrite
  puts their tokens between spaces (:func:`_spaced`) and each golden word is looked up there;
- lowercasing in Rust equals ``str.lower()`` (final sigma and ``İ`` included) for text whose
  characters are all assigned in Python's Unicode version (``unicodedata.unidata_version``);
  Rust's tables are newer, so a row with an unassigned character *and* something to lowercase
  is scored by the reference functions themselves (such rows are rare: usually none);
- text without a character that ``str.lower()`` changes is not lowercased at all (most Indic
  text), since lowering it is the identity in Python;
- a missing response is blank; a missing golden answer is the empty string, as the loader gives.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from scoring.core.protocols import PUNCTUATION, bucket, exact_substring, is_blank, normalize_pair, word_overlap
from scoring.core.unicode_tables import chars, runs, tables

OUTPUT_COLUMNS = ("exact_correct", "overlap_correct", "matching_words", "total_golden_words", "is_blank", "bucket")

#: The characters ``str.split()`` splits on (29 in Python 3.11).
WHITESPACE: str = chars(tables()["whitespace"])


def _class(ranges: Iterable[tuple[int, int]], negate: bool = False) -> str:
    """A regex character class of the inclusive code point ranges given."""
    body = "".join(f"\\x{{{lo:X}}}" if lo == hi else f"\\x{{{lo:X}}}-\\x{{{hi:X}}}" for lo, hi in ranges)
    return f"[{'^' if negate else ''}{body}]"


def _char_class(chars: Iterable[str], negate: bool = False) -> str:
    """A regex character class of exactly ``chars``, as code point ranges (compact and exact)."""
    flags = bytearray(sys.maxunicode + 1)
    for ch in chars:
        flags[ord(ch)] = 1
    return _class(runs(flags), negate)


@functools.cache
def patterns() -> dict[str, str]:
    """The regexes, built once from the running Python's own Unicode tables.

    ``cased``: a character that ``str.lower()`` changes (``Σ`` included, whatever its context);
    ``unassigned``: category ``Cn`` in Python's tables, where Rust's newer tables may lowercase
    or treat final-sigma context differently; ``token``: a whole stripped token; ``blank``: empty
    or whitespace only; ``gap``: what :func:`_spaced` rewrites to a space. The character sets
    come from :mod:`scoring.core.unicode_tables` (the running Python's, cached on disk).
    """
    space, punct = _char_class(WHITESPACE), _char_class(PUNCTUATION)
    inner = _char_class(WHITESPACE + PUNCTUATION, negate=True)  # neither whitespace nor punctuation
    odd_space = _char_class(WHITESPACE.replace(" ", ""))
    return {
        "cased": _class(tables()["cased"]),
        "unassigned": _class(tables()["unassigned"]),
        "token": f"{inner}(?:{_char_class(WHITESPACE, negate=True)}*{inner})?",
        "blank": f"^{space}*$",
        "gap": f"{punct}+{space}+{punct}*|{space}+{punct}+|^{punct}+|{punct}+$|{odd_space}",
    }


def lower_batch(text: pl.Series) -> pl.Series:
    """``str.lower()`` of each row (field ``low``), and whether Python must score it (``python``).

    Only rows with a character that ``str.lower()`` changes are lowercased (gathered, lowered,
    scattered back): for the rest, most Indic text, lowering is the identity and costs the most.
    Of those rows, the ones holding a character unassigned in Python's Unicode version are
    flagged: Rust's newer tables may map it, or let it change a final sigma.
    """
    pat = patterns()
    index = text.str.contains(pat["cased"]).arg_true()
    lowered, python = text.clone(), pl.repeat(False, len(text), eager=True)
    if not index.is_empty():
        part = text.gather(index)
        lowered.scatter(index, part.str.to_lowercase())
        python.scatter(index, part.str.contains(pat["unassigned"]))
    return pl.struct(low=lowered, python=python, eager=True)


def _lowered(text: pl.Expr) -> pl.Expr:
    """:func:`lower_batch` per batch of rows, inside a query (so batches run on all threads)."""
    dtype = pl.Struct({"low": pl.String, "python": pl.Boolean})
    return text.map_batches(lower_batch, return_dtype=dtype, is_elementwise=True)


def _spaced(lowered: pl.Expr) -> pl.Expr:
    """Lowercased text as its ``word_set`` tokens between spaces: ``" w "`` is in it iff ``w`` is a token.

    A regex that matches every token costs per match, and splitting each response into a list
    costs more again. So only the "gaps" that are not a plain space are rewritten to one: every
    other whitespace character, and any punctuation at a token's edge with the whitespace or
    text edge it touches. Inner punctuation (``co-operate``) never touches whitespace and stays;
    a token of punctuation only is all edge and vanishes. Tokens hold no space, so a golden word
    between spaces matches a whole token and nothing else.
    """
    return pl.concat_str(pl.lit(" "), lowered.str.replace_all(patterns()["gap"], " "), pl.lit(" "))


def _golden(answers: pl.LazyFrame) -> pl.DataFrame:
    """Once per distinct golden answer: lowercased form, its words between spaces, count, flag."""
    words = pl.col("_g").struct.field("low").str.extract_all(patterns()["token"]).list.unique()
    return (
        answers.unique()
        .with_columns(_lowered(pl.col("_a")).alias("_g"))
        .select(
            "_a",
            _a_low=pl.col("_g").struct.field("low"),
            _g_pad=words.list.eval(pl.concat_str(pl.lit(" "), pl.element(), pl.lit(" "))),
            _total=words.list.len().cast(pl.Int64),
            _g_py=pl.col("_g").struct.field("python"),
        )
        .collect()
    )


def _score(rows: pl.LazyFrame, golden: pl.DataFrame) -> pl.DataFrame:
    """Both protocols for rows ``_a`` (answer, never null) and ``_r`` (response), in order.

    Golden words are counted in the spaced response one (row, word) pair at a time: a golden
    answer has a few words, a response dozens, so this is cheaper than a set per response.
    """
    response, low = pl.col("_r"), pl.col("_l").struct.field("low")
    blank = (response.is_null() | response.str.contains(patterns()["blank"])).fill_null(True)
    stage = (
        rows.join(golden.lazy(), on="_a", how="left", maintain_order="left")
        .with_columns(_l=_lowered(response), is_blank=blank)
        .select(
            "is_blank",
            "_g_pad",
            exact_correct=~pl.col("is_blank") & low.str.contains(pl.col("_a_low"), literal=True),
            total_golden_words="_total",
            _python=pl.col("_g_py") | pl.col("_l").struct.field("python"),
            _spaced=_spaced(low),
        )
        .collect()
    )
    hits = (
        stage.lazy()
        .select("_spaced", "_g_pad")
        .with_row_index("_i")
        .explode("_g_pad", empty_as_null=True, keep_nulls=True)  # no words: one row, a null word, no hit
        .select("_i", _hit=pl.col("_spaced").str.contains(pl.col("_g_pad"), literal=True).fill_null(False))
        .group_by("_i", maintain_order=True)
        .agg(pl.col("_hit").sum().cast(pl.Int64))
        .collect()
    )
    overlap = pl.col("matching_words") == pl.col("total_golden_words")
    return (
        stage.drop("_spaced", "_g_pad")
        .with_columns(matching_words=pl.when(pl.col("is_blank")).then(0).otherwise(hits["_hit"]).cast(pl.Int64))
        .with_columns(overlap_correct=~pl.col("is_blank") & overlap)
        .with_columns(
            bucket=pl.when(pl.col("exact_correct"))
            .then(pl.when(pl.col("overlap_correct")).then(pl.lit("both_pass")).otherwise(pl.lit("exact_only")))
            .otherwise(pl.when(pl.col("overlap_correct")).then(pl.lit("overlap_only")).otherwise(pl.lit("both_fail")))
        )
        .select(*OUTPUT_COLUMNS, "_python")
    )


def _by_reference(scored: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """Rows flagged ``_python`` rescored with the per-pair reference functions (Python ``lower``)."""
    index = scored["_python"].arg_true()
    if index.is_empty():
        return scored.drop("_python")
    fixed: dict[str, list] = {name: [] for name in OUTPUT_COLUMNS}
    for answer, response in rows[index].iter_rows():
        exact, overlap = exact_substring(answer, response), word_overlap(answer, response)
        fixed["exact_correct"].append(exact)
        fixed["overlap_correct"].append(overlap.is_correct)
        fixed["matching_words"].append(overlap.matching_words)
        fixed["total_golden_words"].append(overlap.total_golden_words)
        fixed["is_blank"].append(is_blank(response))
        fixed["bucket"].append(bucket(exact, overlap.is_correct))
    return scored.drop("_python").with_columns(
        scored[name].scatter(index, pl.Series(values, dtype=scored[name].dtype)) for name, values in fixed.items()
    )


def _normalized(rows: pl.DataFrame) -> pl.DataFrame:
    """The ``--normalize`` diagnostic applied pair by pair (Python: NFC is not in polars)."""
    pairs = [normalize_pair(a, r or "") for a, r in rows.iter_rows()]
    return pl.DataFrame({"_a": [a for a, _ in pairs], "_r": [r for _, r in pairs]}, schema=rows.schema)


def score_polars(
    frame: pl.DataFrame | pl.LazyFrame, answer: str = "answer", response: str = "response", normalize: bool = False
) -> pl.DataFrame:
    """Both protocols and the bucket for every row of ``frame``, in order (``OUTPUT_COLUMNS``).

    Equal, row for row, to the per-pair reference functions (of the normalised pair with
    ``normalize``, a diagnostic). Runs on polars' default (streaming) engine, which spreads
    batches of rows over every thread: slicing the rows by hand measured no faster on 2 cores.
    """
    lazy = frame.lazy() if isinstance(frame, pl.DataFrame) else frame
    rows = lazy.select(_a=pl.col(answer).cast(pl.String).fill_null(""), _r=pl.col(response).cast(pl.String)).collect()
    if normalize:
        rows = _normalized(rows)
    golden = _golden(rows.lazy().select("_a"))
    return _by_reference(_score(rows.lazy(), golden), rows)


@dataclass
class ColumnScores:
    """Verdicts for whole columns as NumPy arrays (bool, int64, object for ``bucket``)."""

    exact_correct: np.ndarray
    overlap_correct: np.ndarray
    matching_words: np.ndarray
    total_golden_words: np.ndarray
    is_blank: np.ndarray
    bucket: np.ndarray


def score_columns(answers: Sequence[str], responses: Sequence[str | None], normalize: bool = False) -> ColumnScores:
    """:func:`score_polars` for two plain sequences (tests and small callers)."""
    frame = pl.DataFrame(
        {"answer": list(answers), "response": list(responses)}, schema={"answer": pl.String, "response": pl.String}
    )
    scored = score_polars(frame, normalize=normalize)
    return ColumnScores(**{name: scored[name].to_numpy() for name in OUTPUT_COLUMNS})
