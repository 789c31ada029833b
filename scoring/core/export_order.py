"""The review order in an export, so that a restored run has the same random sample.

The queue serves every scope in a random order seeded by the run's ``review_seed``
(:mod:`scoring.core.order`), and the estimate counts, per stratum, the rows of that order up to
the last one the queue served (:mod:`scoring.estimate.sample`). To rebuild that prefix, a restore
needs the order and which rows the queue served. An export carries:

- the seed, in its own column :data:`SEED_COLUMN` (the same number on every row, in CSV, JSON
  lines and Parquet alike: a CSV travels without its manifest) and in the manifest
  (``run.review_seed``); the restored run gets it, so its queue order is the original's;
- which rows the queue served: a verdict's ``via`` (``human_verdicts``) for rows with verdicts,
  and :data:`SKIPS_COLUMN` for rows the queue served that nobody holds a verdict on (skipped, or
  marked and undone: still part of the sample, as missing data). It names the reviewers the queue
  served the row to; the restore records a skip for each, so the row is served again.

So the restored run's random sample, estimate, interval and plan are those of the database the
export came from (``tests/test_restore_estimate.py``: SQLite -> PostgreSQL -> SQLite).

An export made before these columns existed:

- Parquet holds its manifest, which names the run's file sha256; every run's seed was then
  :func:`~scoring.core.order.seed_from_sha` of it, so the seed is rebuilt from it.
- CSV and JSON lines say nothing of the order. The restored run gets a seed of its own (from the
  file's sha256, as any upload) and the marks are restored as ``restored``, not ``queue``: served
  in an unknown order, they are not a random sample of the new order (taking them for one, the
  estimate counted most of the run as missing: +-1.8 points became +-42).
  :func:`unordered_note` is the one line that says so wherever the restore is reported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pandas as pd

from scoring.core import verdict_rules as review
from scoring.core.errors import InputError
from scoring.core.order import seed_from_sha

#: The export's column holding the run's review seed (a whole number, the same on every row).
SEED_COLUMN = "review_seed"
#: The export's column naming, on a row the queue served that nobody holds a verdict on, the
#: reviewers it was served to (``;``-separated, sorted); empty on every other row.
SKIPS_COLUMN = "queue_skips"
#: Seeds are 31-bit (:func:`~scoring.core.order.seed_from_sha`; ``runs.review_seed`` is an Integer).
MAX_SEED = 2**31 - 1
_DIGITS = re.compile(r"\d{1,10}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
#: The manifest's description of both columns.
ORDER_FORMAT = {
    "seed_column": SEED_COLUMN,
    "skips_column": SKIPS_COLUMN,
    "encoding": f"{SEED_COLUMN}: the run's review seed, the same whole number on every row (also run.review_seed); "
    "the review queue serves each scope in the random order it seeds. "
    f"{SKIPS_COLUMN}: on a row the queue served that nobody holds a verdict on (skipped, or marked and undone), "
    "the reviewers it was served to, separated by ';'; empty elsewhere. Rows with verdicts say it in via.",
    "restore": "Uploading the export gives the new run this seed and records a skip for each reviewer in "
    f"{SKIPS_COLUMN}, so the rows the queue served are the same prefix of the same order: the estimate, its "
    "interval and the review plan are those of the database the export came from. Without the seed "
    "(older exports) every verdict is restored as reviewed by hand.",
}


def _cell(cell: object) -> str:
    if cell is None or (isinstance(cell, float) and cell != cell):
        return ""
    return str(cell).strip()


def column_seed(exported: pd.DataFrame) -> int | None:
    """The seed in :data:`SEED_COLUMN`; None when the column is absent or empty on every row.

    Raises :class:`InputError` when it holds anything else than one whole number from 0 to
    :data:`MAX_SEED` repeated on every row (an edited or concatenated file), before anything is
    stored: a wrong seed would silently give the run another review order.
    """
    if SEED_COLUMN not in exported.columns:
        return None
    cells = {_cell(c) for c in exported[SEED_COLUMN].tolist()}
    if cells <= {""}:
        return None
    found = sorted(cells)
    if len(found) == 1 and _DIGITS.fullmatch(found[0]) and int(found[0]) <= MAX_SEED:
        return int(found[0])
    shown = ", ".join(repr(c[:20]) for c in found[:3]) + (", ..." if len(found) > 3 else "")
    raise InputError(
        f"Column {SEED_COLUMN!r} of the exported file must hold the run's review seed, one whole number from 0 to "
        f"{MAX_SEED} on every row; found {shown}. Export the run again, or delete the column (the verdicts are then "
        "restored as reviewed by hand)."
    )


def manifest_seed(manifest: Mapping | None) -> int | None:
    """The seed a manifest gives: ``run.review_seed``, else (a manifest from before it was written)
    :func:`~scoring.core.order.seed_from_sha` of ``run.sha256``, every run's seed at the time; None
    when it names neither."""
    run = manifest.get("run") if isinstance(manifest, Mapping) else None
    if not isinstance(run, Mapping):
        return None
    seed = run.get("review_seed")
    if isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed <= MAX_SEED:
        return seed
    sha = run.get("sha256")
    return seed_from_sha(sha) if isinstance(sha, str) and _SHA256.fullmatch(sha) else None


def exported_seed(exported: pd.DataFrame, manifest: Mapping | None = None) -> int | None:
    """The review seed of an uploaded export: its :data:`SEED_COLUMN`, else the manifest the file
    holds (Parquet, :func:`manifest_seed`); None when the file does not say (an older CSV or JSON
    lines export). :class:`InputError` as :func:`column_seed`."""
    found = column_seed(exported)
    return found if found is not None else manifest_seed(manifest)


def skips_text(reviewers: list[str]) -> str:
    """A :data:`SKIPS_COLUMN` cell: the reviewers, sorted, ``;``-separated ("" for none)."""
    return ";".join(sorted(reviewers))


def exported_skips(exported: pd.DataFrame) -> list[list[str]]:
    """Per row, the reviewers of its :data:`SKIPS_COLUMN` cell (none when the column is absent).

    A name that is not a reviewer's name raises :class:`InputError` naming the row.
    """
    if SKIPS_COLUMN not in exported.columns:
        return [[] for _ in range(len(exported))]
    rows: list[list[str]] = []
    for pos, cell in enumerate(exported[SKIPS_COLUMN].tolist(), start=1):
        names = [n.strip() for n in _cell(cell).split(";") if n.strip()]
        try:
            rows.append([review.check_reviewer(n) for n in names])
        except ValueError as exc:
            raise InputError(f"Data row {pos} of the exported file, column {SKIPS_COLUMN!r}: {exc}") from None
    return rows


def check_order(exported: pd.DataFrame) -> None:
    """Refuse an unreadable :data:`SEED_COLUMN` or :data:`SKIPS_COLUMN` (:class:`InputError`)."""
    column_seed(exported)
    exported_skips(exported)


def unordered_note(restored: int) -> str:
    """The one line a restore without a seed adds to its report (``restored`` verdicts recorded)."""
    return (
        f"this export carries no review seed (exports made before it was added do not), so the order the review "
        f"queue served its rows in cannot be rebuilt here: the estimate cannot count its {restored} restored "
        "verdict(s) as a random sample and lists them as reviewed by hand (they count everywhere else). Export the "
        "run again from the database it came from to carry the seed."
    )
