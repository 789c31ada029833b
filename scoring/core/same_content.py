"""One run per content: the rule every family of comparisons applies before it counts a pair
(issue 37: a re-upload of the same rows entered Holm's family and moved a p-value from 0.126 to
0.758, though it adds no information, only a copy).

Two tables hold the same content when they hold the same rows (question, answer, response, each
stripped of surrounding blanks) in any order: a file uploaded again, in another encoding (the
decoded text is the same) or another row order, is the same run. The first of each content is
kept; each later one is named beside the one it repeats, so a page can say why it is left out.
Here, the lowest layer, so that the head-to-head on the estimated truth
(:mod:`scoring.team_report.head_to_head`) and the pairs read off verdicts
(:mod:`scoring.team_report.language_pairs`) share it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import polars as pl

from scoring.core.content_hash import content_hash

#: The columns that make a row's content (the metrics and verdicts follow from them).
CONTENT_COLUMNS = ("question", "answer", "response")

Item = TypeVar("Item")


def content_digest(table: pl.DataFrame) -> str:
    """A digest of a table's rows (:data:`CONTENT_COLUMNS` present, blanks around each cell
    stripped) regardless of their order: two uploads of the same rows, in another encoding or
    order, have the same digest. The hashing is the upload's (:func:`scoring.core.content_hash.content_hash`,
    one rule for "the same rows"); only the columns differ: a comparison asks whether two runs
    answered the same questions the same way, so the file's other columns do not count here."""
    columns = [c for c in CONTENT_COLUMNS if c in table.columns]
    return content_hash(table.select(pl.col(c).cast(pl.String).fill_null("").str.strip_chars() for c in columns))


def one_per_content(
    items: Sequence[Item], tables: Sequence[pl.DataFrame], labels: Sequence[str]
) -> tuple[list[Item], list[tuple[str, str]]]:
    """(the first item of each content, in order; [(a later item's label, the label of the first
    with its content)]). ``tables`` and ``labels``: each item's rows and name, in the same order."""
    if not len(items) == len(tables) == len(labels):
        raise ValueError("one_per_content needs one table and one label per item.")
    first: dict[str, int] = {}
    kept: list[Item] = []
    duplicates: list[tuple[str, str]] = []
    for i, (item, table) in enumerate(zip(items, tables, strict=True)):
        digest = content_digest(table)
        if digest in first:
            duplicates.append((labels[i], labels[first[digest]]))
        else:
            first[digest] = i
            kept.append(item)
    return kept, duplicates


def duplicate_sentences(duplicates: Sequence[tuple[str, str]]) -> list[str]:
    """One sentence per duplicate left out (as :func:`one_per_content` names them)."""
    return [
        f"{dup} holds the same rows as {first}: left out of every comparison (one run per content)."
        for dup, first in duplicates
    ]
