"""The naive baseline of issue 10, written straight from the spec: read, score both protocols row
by row with ``DataFrame.apply(axis=1)``, write.

    .venv/bin/python tests/naive_score.py [--object] RESPONSES.csv OUT.csv

Independent of the project (imports nothing from ``scoring``). ``tests/bench_scoring.py`` times it
as a whole process against ``python -m scoring score --responses F --out G`` and imports
:func:`naive_score` for its in-memory comparison.

The protocols, per row:

* exact substring: ``answer.lower() in response.lower()``;
* word overlap: both sides lowercased, ``split()`` on whitespace, each token stripped of
  ``string.punctuation`` plus every Unicode ``P*`` character, empty tokens dropped, compared as
  sets: correct when the golden set is a subset of the response set;
* a blank response (empty or whitespace only) fails both.

One ``apply`` computes both protocols (the conservative baseline: the dataset's two scripts would
read and apply twice). The output is every input column plus ``exact_correct``,
``overlap_correct``, ``matching_words``, ``total_golden_words`` and ``is_blank``, booleans written
by pandas as ``True``/``False``.

``pd.read_csv`` with pandas' defaults gives pandas 3's Arrow-backed ``str`` columns, and
``apply(axis=1)`` over such a frame is about 2.8x slower than over Python objects. ``--object``
reads with ``dtype=object`` instead (what pandas before 3 gave): a faster, stricter baseline.
"""

from __future__ import annotations

import string
import sys
import unicodedata

import pandas as pd

#: ASCII punctuation plus every Unicode ``P*`` character (the Devanagari danda among them).
NAIVE_PUNCT = "".join(
    set(string.punctuation)
    | {chr(cp) for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp)).startswith("P")}
)
VERDICT_COLUMNS = ["exact_correct", "overlap_correct", "matching_words", "total_golden_words", "is_blank"]


def words(text: str) -> set[str]:
    """The word-overlap protocol's token set of ``text``."""
    return {w for w in (t.strip(NAIVE_PUNCT) for t in text.lower().split()) if w}


def naive_row(row: pd.Series) -> tuple[bool, bool, int, int, bool]:
    """Both protocols for one row, as the spec's scripts would write them."""
    answer, response = row["answer"], row["response"]
    golden = words(answer)
    if not response.strip():
        return False, False, 0, len(golden), True
    exact = answer.lower() in response.lower()
    matching = len(golden & words(response))
    return exact, matching == len(golden), matching, len(golden), False


def naive_score(frame: pd.DataFrame) -> pd.DataFrame:
    """The slow baseline: one ``apply(axis=1)`` over the rows, computing both protocols."""
    results = frame.apply(naive_row, axis=1)
    return pd.DataFrame(results.tolist(), columns=VERDICT_COLUMNS, index=frame.index)


def main(argv: list[str]) -> int:
    objects = "--object" in argv
    argv = [a for a in argv if a != "--object"]
    if len(argv) != 2:
        print("usage: naive_score.py [--object] RESPONSES.csv OUT.csv", file=sys.stderr)
        return 2
    source, out = argv
    # every cell text, "NA" kept as written
    frame = pd.read_csv(source, keep_default_na=False, dtype=object if objects else None)
    scored = pd.concat([frame, naive_score(frame)], axis=1)
    scored.to_csv(out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
