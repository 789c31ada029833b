"""Character F-score: sacrebleu's sentence-level chrF of the response against the golden answer.

Optional, beside the spec's two metrics (which never change). The parameters are chrF's defaults in
``sacrebleu.metrics.CHRF`` (:data:`CHRF_PARAMS`: character n-grams of order 1 to 6, no word
n-grams, beta 2 so recall weighs four times precision, case-sensitive, whitespace removed before
the n-grams are taken, sacreBLEU's effective-order averaging). A row is correct when its score
(0-100) is at least the team's threshold (:data:`scoring.match.settings.CHRF_THRESHOLD_SETTING`);
a blank response fails, as in the spec. chrF rewards shared character n-grams, so an inflected form
(``Amalaka`` for ``amalak``) scores high; it also falls with the response's length (precision), so
a long answer that contains the golden one can score low. sacrebleu downloads nothing for chrF (a
test runs it with the network refused).

Per row, sacrebleu counts every n-gram in Python (about 0.1 ms a row). :func:`chrf_column` gives
the same verdicts for whole columns from three facts: the matched n-grams of an order are at most
the fewer of the two sides', so a row whose best possible score is below the threshold fails
without counting; when the golden answer (whitespace removed) occurs inside the response, every
golden n-gram is matched as often as it occurs, so the score is that best one; only the other rows
are counted, in polars (a golden n-gram occurring once counts 1 if the response contains it).
"""

from __future__ import annotations

import functools

import numpy as np
import polars as pl
from sacrebleu.metrics.chrf import CHRF

from scoring.core.columnar import WHITESPACE, patterns
from scoring.core.protocols import is_blank

#: sacrebleu's defaults, named so the docs and the result can say them.
CHRF_PARAMS = {"char_order": 6, "word_order": 0, "beta": 2, "lowercase": False, "whitespace": False}
ORDER, BETA = CHRF_PARAMS["char_order"], CHRF_PARAMS["beta"]
EPS = 1e-16  # sacrebleu's, for an order with nothing to count
#: A row whose best possible score is within this of the threshold is counted, never pruned.
MARGIN = 1e-9


@functools.cache
def _metric() -> CHRF:
    return CHRF(**CHRF_PARAMS)


def chrf_score(answer: str, response: str) -> float:
    """sacrebleu's sentence chrF (0-100) of ``response`` against the golden ``answer``."""
    return _metric().sentence_score(response, [answer]).score


def chrf_correct(answer: str, response: str | None, threshold: float) -> bool:
    """Score at least ``threshold``; a blank response fails."""
    if is_blank(response):
        return False
    return chrf_score(answer, response) >= threshold


# ---------------------------------------------------------------- numpy / polars


def f_score(hyp: np.ndarray, ref: np.ndarray, match: np.ndarray) -> np.ndarray:
    """sacrebleu's ``CHRF._compute_f_score`` (effective order) for rows of per-order counts
    (each array rows x :data:`ORDER`), operation for operation, so the floats are the same."""
    factor = BETA**2
    rows = hyp.shape[0]
    avg_prec, avg_rec, effective = np.zeros(rows), np.zeros(rows), np.zeros(rows)
    for n in range(ORDER):
        h, r, m = hyp[:, n], ref[:, n], match[:, n]
        prec = np.divide(m, h, out=np.full(rows, EPS), where=h > 0)
        rec = np.divide(m, r, out=np.full(rows, EPS), where=r > 0)
        use = (h > 0) & (r > 0)
        avg_prec = np.where(use, avg_prec + prec, avg_prec)
        avg_rec = np.where(use, avg_rec + rec, avg_rec)
        effective += use
    some = effective > 0
    avg_prec = np.divide(avg_prec, effective, out=np.zeros(rows), where=some)
    avg_rec = np.divide(avg_rec, effective, out=np.zeros(rows), where=some)
    top = (1 + factor) * avg_prec * avg_rec
    bottom = (factor * avg_prec) + avg_rec
    score = np.divide(top, bottom, out=np.zeros(rows), where=(avg_prec + avg_rec) != 0)
    return np.where((avg_prec + avg_rec) != 0, 100 * score, 0.0)


def counts(hyp_len: np.ndarray, ref_len: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row and order, the n-grams of each side (sacrebleu counts none for the response where
    the golden answer has none of that order)."""
    n = np.arange(1, ORDER + 1)
    ref = np.maximum(ref_len[:, None] - n + 1, 0)
    hyp = np.where(ref > 0, np.maximum(hyp_len[:, None] - n + 1, 0), 0)
    return hyp.astype(float), ref.astype(float)


def golden_ngrams(answer: str) -> list[tuple[int, str, int, bool]]:
    """(order, n-gram, times in the answer, whether it overlaps itself) of each distinct n-gram of
    ``answer`` with its whitespace removed (a self-overlapping n-gram: ``aa``, ``aba``)."""
    text = "".join(answer.split())
    out = []
    for n in range(1, ORDER + 1):
        grams: dict[str, int] = {}
        for i in range(len(text) - n + 1):
            grams[text[i : i + n]] = grams.get(text[i : i + n], 0) + 1
        out += [(n, g, c, any(g[:k] == g[-k:] for k in range(1, n))) for g, c in grams.items()]
    return out


def overlapping_count(text: str, gram: str) -> int:
    """Occurrences of ``gram`` in ``text``, overlapping ones included (``aa`` is in ``aaaa`` three times)."""
    found, at = 0, text.find(gram)
    while at >= 0:
        found, at = found + 1, text.find(gram, at + 1)
    return found


def _matches(rows: pl.DataFrame) -> np.ndarray:
    """Per row x order, the golden n-grams the response matches (``min`` of the two counts), for
    rows ``_i``, ``a`` (answer), ``_h`` (response without whitespace). A golden n-gram that occurs
    once counts 1 when the response contains it; one that occurs more often is counted by polars
    (non-overlapping), and again in Python where it overlaps itself and polars found fewer."""
    grams = rows.select(pl.col("a").unique())
    table = pl.DataFrame(
        [(a, n, g, c, b) for a in grams["a"].to_list() for n, g, c, b in golden_ngrams(a)],
        schema={"a": pl.String, "_n": pl.Int32, "_g": pl.String, "_c": pl.Int64, "_border": pl.Boolean},
        orient="row",
    )
    pairs = (
        rows.lazy()
        .join(table.lazy(), on="a")
        .with_columns(
            _k=pl.when(pl.col("_c") == 1)
            .then(pl.col("_h").str.contains(pl.col("_g"), literal=True).cast(pl.Int64))
            .otherwise(pl.col("_h").str.count_matches(pl.col("_g"), literal=True).cast(pl.Int64))
        )
        .with_columns(_py=pl.col("_border") & (pl.col("_c") > 1) & (pl.col("_k") < pl.col("_c")))
        .collect()
    )
    fix = pairs["_py"].arg_true()
    if not fix.is_empty():
        part = pairs[fix]
        counted = [overlapping_count(h, g) for h, g in zip(part["_h"].to_list(), part["_g"].to_list())]
        pairs = pairs.with_columns(pairs["_k"].scatter(fix, pl.Series(counted, dtype=pl.Int64)))
    per = pairs.group_by("_i", "_n").agg(pl.min_horizontal("_k", "_c").sum().alias("_m"))
    match = np.zeros((rows.height, ORDER))
    at = np.searchsorted(rows["_i"].to_numpy(), per["_i"].to_numpy())  # rows' _i ascend
    match[at, per["_n"].to_numpy() - 1] = per["_m"].to_numpy()
    return match


def chrf_column(answers: pl.Series, responses: pl.Series, threshold: float) -> pl.Series:
    """:func:`chrf_correct` of every row (``chrf_correct``), equal to it row for row."""
    space = "[" + "".join(f"\\x{{{ord(c):X}}}" for c in WHITESPACE) + "]"
    frame = pl.DataFrame({"a": answers.cast(pl.String).fill_null(""), "r": responses.cast(pl.String)})
    frame = frame.with_row_index("_i").with_columns(
        _h=pl.col("r").fill_null("").str.replace_all(space, ""),
        _blank=(pl.col("r").is_null() | pl.col("r").str.contains(patterns()["blank"])).fill_null(True),
    )
    golden = frame.select(pl.col("a").unique()).with_columns(
        _r=pl.col("a").str.replace_all(space, ""),
    )
    frame = frame.join(golden, on="a", how="left", maintain_order="left").with_columns(
        _hl=pl.col("_h").str.len_chars(), _rl=pl.col("_r").str.len_chars()
    )
    hyp, ref = counts(frame["_hl"].to_numpy().astype(np.int64), frame["_rl"].to_numpy().astype(np.int64))
    best = f_score(hyp, ref, np.minimum(hyp, ref))
    inside = frame.select(pl.col("_h").str.contains(pl.col("_r"), literal=True)).to_series().to_numpy()
    blank = frame["_blank"].to_numpy()
    verdict = ~blank & inside & (best >= threshold)
    todo = ~blank & ~inside & (best >= threshold - MARGIN)
    if todo.any():
        rows = frame.filter(pl.Series(todo)).select("_i", "a", "_h")
        where = np.flatnonzero(todo)
        verdict[where] = f_score(hyp[where], ref[where], _matches(rows)) >= threshold
    return pl.Series("chrf_correct", verdict, dtype=pl.Boolean)
