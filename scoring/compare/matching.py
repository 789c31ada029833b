"""Matching the rows of two or more runs: on (question, answer) text by default, or on an id column.

A row is matched when its key (the key columns' text, surrounding whitespace ignored) occurs
exactly once in every run. Every other row is kept and listed with its reason, never dropped
silently:

* ``duplicate key``: the key occurs more than once in this run (every copy is listed: which copy
  to compare is not ours to guess);
* ``not in every run``: the key is missing from, or duplicated in, another run (``detail`` names
  which);
* ``empty key``: every key cell is blank (an id column with holes, say).

Runs in different languages share no questions by text: :attr:`MatchResult.no_shared_rows` says
so, and :attr:`MatchResult.id_column` names an id column every run has, to match on instead.
All joins run on polars: two runs of 100,000 rows match in a few hundredths of a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

import polars as pl

from scoring.compare.compared_runs import SOURCES, Run, verdict_column
from scoring.core.columnar import OUTPUT_COLUMNS
from scoring.core.errors import InputError

TEXT_KEY: tuple[str, ...] = ("question", "answer")
#: Column names taken for a question id (compared ignoring case), most specific first
#: (``sample_id``: the id a harness log's import carries, :mod:`scoring.core.harness`).
ID_CANDIDATES: tuple[str, ...] = ("question_id", "qid", "item_id", "sample_id", "doc_id", "id")
DUPLICATE, NOT_EVERYWHERE, EMPTY_KEY = "duplicate key", "not in every run", "empty key"
REASONS: tuple[str, ...] = (DUPLICATE, NOT_EVERYWHERE, EMPTY_KEY)
ROW = "row"  #: 1-based data row of the run's file (1 = the first row after the header)
#: Per-run fields of the matched table, each as ``<field>_<run index>`` (see :func:`run_column`).
RUN_FIELDS: tuple[str, ...] = (ROW, "question", "answer", "Domain", "response", "item_key")
UNMATCHED_COLUMNS = ["run", "run_index", ROW, "reason", "detail", "question", "answer", "Domain", "response"]


def run_column(name: str, index: int) -> str:
    """The matched table's column for run ``index``: a :data:`RUN_FIELDS` name or a source."""
    return f"{name}_{index}"


def shared_id_column(runs_columns: Sequence[Sequence[str]]) -> str | None:
    """An id column present, under the same name, in every run: the first of
    :data:`ID_CANDIDATES` (any case) found in the first run and in all the others, or None."""
    if not runs_columns:
        return None
    for candidate in ID_CANDIDATES:
        for name in runs_columns[0]:
            if name.lower() == candidate and all(name in cols for cols in runs_columns[1:]):
                return name
    return None


@dataclass(frozen=True)
class KeyChoice:
    """Which key to match on: ``key`` (column names), ``by_id``, and why, in one line."""

    key: tuple[str, ...]
    by_id: bool
    reason: str


def default_key(runs: Sequence[Run], prefer_id: bool = True) -> KeyChoice:
    """The page's default: the shared id column when every run has one (and ``prefer_id``),
    else (question, answer) text. The CLI matches on text unless told ``--id``."""
    id_col = shared_id_column([r.table.columns for r in runs])
    if id_col and prefer_id:
        return KeyChoice((id_col,), True, f"every run has the id column {id_col!r}")
    why = f"not every run has an id column ({', '.join(ID_CANDIDATES)})" if not id_col else "text match asked for"
    return KeyChoice(TEXT_KEY, False, why)


#: Columns a comparison adds to a run's own (scores, verdicts from the database): never a user's key.
ADDED_COLUMNS = frozenset([*OUTPUT_COLUMNS, "item_key", "judge_label", "final_verdict", "final_source"])


def check_key(runs: Sequence[Run], key: Sequence[str], what: str = "Key column") -> None:
    """Every key column must exist in every run: the error names the run and the column
    (``what`` is how the message names it: ``--id column`` on the command line)."""
    if not key:
        raise InputError("No key columns to match on.")
    for run in runs:
        missing = [c for c in key if c not in run.table.columns]
        if missing:
            own = [c for c in run.table.columns if not c.startswith("verdict:") and c not in ADDED_COLUMNS]
            shown = ", ".join(repr(c) for c in own)  # the file's columns, not those the scorer added
            raise InputError(f"{what} {missing[0]!r} is not in {run.label} (columns: {shown}).")


@dataclass(frozen=True)
class MatchResult:
    """The matched rows of every run side by side, and the rows that could not be matched.

    ``matched``: one row per matched key, in the first run's order: the key columns (first run's
    text), ``question``, ``answer`` and ``Domain`` (first run's), then per run ``i`` the columns
    :func:`run_column` names: ``row_i``, ``question_i``, ``answer_i``, ``Domain_i``,
    ``response_i``, ``item_key_i`` (when the run has item keys) and one Boolean (null = unknown)
    per source it has, ``exact_i``, ``overlap_i``, ``judge_i``, ``adjudicated_i``.
    ``unmatched``: :data:`UNMATCHED_COLUMNS` plus the key columns, run by run in row order.
    ``shared``: for each pair of run indexes, how many keys both hold exactly once.
    """

    labels: tuple[str, ...]
    key: tuple[str, ...]
    by_id: bool
    matched: pl.DataFrame = field(repr=False)
    unmatched: pl.DataFrame = field(repr=False)
    run_sources: tuple[tuple[str, ...], ...]
    run_rows: tuple[int, ...]
    shared: dict[tuple[int, int], int]
    id_column: str | None

    @property
    def n_matched(self) -> int:
        return self.matched.height

    @property
    def no_shared_rows(self) -> bool:
        """True when the runs have no matched row at all (different languages, say)."""
        return self.matched.height == 0

    @property
    def sources(self) -> tuple[str, ...]:
        """Sources at least two runs have: the ones a paired comparison can use."""
        return tuple(s for s in SOURCES if sum(s in have for have in self.run_sources) >= 2)

    def unmatched_counts(self) -> dict[str, dict[str, int]]:
        """Per run label: unmatched rows by reason, with a ``total``."""
        found = {(i, reason): n for i, reason, n in self.unmatched.group_by("run_index", "reason").len().iter_rows()}
        out = {}
        for i, label in enumerate(self.labels):
            counts = {reason: int(found.get((i, reason), 0)) for reason in REASONS}
            out[label] = {**counts, "total": sum(counts.values())}
        return out

    def key_text(self) -> str:
        """How rows were matched, for a report: ``id column 'qid'`` or ``text (question, answer)``."""
        return f"id column {self.key[0]!r}" if self.by_id else f"text ({', '.join(self.key)})"

    def advice(self) -> str | None:
        """What to tell a user whose runs share no rows, or None when they share some."""
        if not self.no_shared_rows:
            return None
        text = f"These runs share no questions by {self.key_text()}"
        if self.by_id:
            return text + ": check that the id column means the same question in every run."
        if self.id_column:
            return text + f" (different languages?); every run has the id column {self.id_column!r}: match on it."
        return text + " (different languages?); add an id column to every file to match them."


def _keys(run: Run, index: int, key: Sequence[str]) -> pl.DataFrame:
    """Only what matching needs: the stripped key ``_k0..``, the run index and the 0-based row."""
    return run.table.select(
        pl.col(col).cast(pl.String).fill_null("").str.strip_chars().alias(f"_k{j}") for j, col in enumerate(key)
    ).with_columns(_run=pl.lit(index, dtype=pl.Int32), _row=pl.int_range(pl.len(), dtype=pl.Int64))


def _counted(keys: pl.DataFrame, names: list[str], n_runs: int) -> pl.DataFrame:
    """Each row of every run with ``_n<j>``, how often its key occurs in run j, ``_r<j>``, the
    key's first row in run j, and ``_empty``. Windows over the key on all runs' keys at once:
    no join and no sort (two runs of 100,000 rows in a few hundredths of a second)."""
    run = pl.col("_run")
    return keys.with_columns(
        *((run == j).sum().cast(pl.Int64).over(names).alias(f"_n{j}") for j in range(n_runs)),
        *(pl.when(run == j).then(pl.col("_row")).min().over(names).alias(f"_r{j}") for j in range(n_runs)),
        _empty=pl.all_horizontal(pl.col(n) == "" for n in names),
    )


def _detail(labels: Sequence[str]) -> pl.Expr:
    """``not in B; duplicated in C`` for a row whose key is missing from, or repeated in, another run."""
    parts = []
    for j, label in enumerate(labels):
        n, other = pl.col(f"_n{j}"), pl.col("_run") != j
        parts.append(
            pl.when(other & (n == 0))
            .then(pl.lit(f"not in {label}"))
            .when(other & (n > 1))
            .then(pl.lit(f"duplicated in {label}"))
        )
    return pl.concat_str(parts, separator="; ", ignore_nulls=True)


def _unmatched(counted: pl.DataFrame, runs: Sequence[Run], key: Sequence[str]) -> pl.DataFrame:
    """Every row that is not matched, with its reason, run by run in row order."""
    labels = [r.label for r in runs]
    everywhere = pl.all_horizontal(pl.col(f"_n{j}") == 1 for j in range(len(runs)))
    own = pl.coalesce(pl.when(pl.col("_run") == j).then(pl.col(f"_n{j}")) for j in range(len(runs)))
    rows = counted.filter(pl.col("_empty") | ~everywhere).with_columns(_own=own)
    label = pl.col("_run").replace_strict(list(range(len(runs))), labels, return_dtype=pl.String)
    rows = rows.select(
        label.alias("run"),
        pl.col("_run").cast(pl.Int64).alias("run_index"),
        "_row",
        pl.when(pl.col("_empty"))
        .then(pl.lit(EMPTY_KEY))
        .when(pl.col("_own") > 1)
        .then(pl.lit(DUPLICATE))
        .otherwise(pl.lit(NOT_EVERYWHERE))
        .alias("reason"),
        pl.when(pl.col("_empty"))
        .then(pl.lit("every key cell is blank"))
        .when(pl.col("_own") > 1)
        .then(pl.format("{} rows of {} have this key", pl.col("_own"), label))
        .otherwise(_detail(labels))
        .alias("detail"),
    )
    shown = list(dict.fromkeys(["question", "answer", "Domain", "response", *key]))
    parts = []
    for i, run in enumerate(runs):
        mine = rows.filter(pl.col("run_index") == i)
        cells = run.table.select(pl.col(c).cast(pl.String) for c in shown)[mine["_row"]]
        parts.append(
            pl.concat([mine.drop("_row"), cells], how="horizontal").insert_column(2, (mine["_row"] + 1).alias(ROW))
        )
    return pl.concat(parts)


def _run_part(run: Run, i: int, rows: pl.Series) -> pl.DataFrame:
    """Run ``i``'s columns of the matched table, its rows ``rows`` (0-based) in that order."""
    fields = [f for f in RUN_FIELDS if f != ROW and f in run.table.columns]
    part = run.table.select(
        *(pl.col(f).alias(run_column(f, i)) for f in fields),
        *(pl.col(verdict_column(s)).alias(run_column(s, i)) for s in run.sources),
    )[rows]
    return part.insert_column(0, (rows + 1).alias(run_column(ROW, i)))


def match_runs(runs: Sequence[Run], key: Sequence[str] = TEXT_KEY, by_id: bool | None = None) -> MatchResult:
    """Match ``runs`` (at least two) on ``key``; see the module docstring for the rules.

    ``by_id`` says whether ``key`` is an id column (reports say "id column"); by default, a
    one-column key other than question/answer. Raises :class:`InputError` when a key column is
    missing from a run (naming both) or fewer than two runs are given.
    """
    if len(runs) < 2:
        raise InputError(f"A comparison needs at least two runs ({len(runs)} given).")
    key = tuple(key)
    check_key(runs, key)
    labels = tuple(r.label for r in runs)
    if len(set(labels)) != len(labels):
        raise InputError(f"Run labels must differ: {', '.join(labels)}.")
    by_id = by_id if by_id is not None else (len(key) == 1 and key[0] not in TEXT_KEY)
    names = [f"_k{j}" for j in range(len(key))]
    n_runs = len(runs)
    counted = _counted(pl.concat([_keys(run, i, key) for i, run in enumerate(runs)]), names, n_runs)
    once = [(pl.col(f"_n{j}") == 1) for j in range(n_runs)]
    rows = counted.filter((pl.col("_run") == 0) & ~pl.col("_empty") & pl.all_horizontal(once))
    first = runs[0].table.select(list(dict.fromkeys((*key, "question", "answer", "Domain"))))[rows["_r0"]]
    wide = pl.concat([first, *(_run_part(run, i, rows[f"_r{i}"]) for i, run in enumerate(runs))], how="horizontal")
    pairs = list(combinations(range(n_runs), 2))
    both = (
        counted.filter(~pl.col("_empty"))
        .select(((pl.col("_run") == i) & once[i] & once[j]).sum().alias(f"{i},{j}") for i, j in pairs)
        .row(0, named=True)
    )
    shared = {(i, j): int(both[f"{i},{j}"]) for i, j in pairs}
    return MatchResult(
        labels=labels,
        key=key,
        by_id=by_id,
        matched=wide,
        unmatched=_unmatched(counted, runs, key),
        run_sources=tuple(r.sources for r in runs),
        run_rows=tuple(r.n_rows for r in runs),
        shared=shared,
        id_column=shared_id_column([r.table.columns for r in runs]),
    )


def readable_matched(match: MatchResult) -> pl.DataFrame:
    """The matched table with run columns named ``<field>[<label>]`` (for ``--out`` and
    downloads): the key, question, answer and Domain (first run's), then per run its row number,
    its own question and answer when matched by id (they differ between languages), its response
    and one column per source it has (True, False, or empty when unknown)."""
    cols = [pl.col(c) for c in dict.fromkeys((*match.key, "question", "answer", "Domain"))]
    for i, label in enumerate(match.labels):
        own = ["question", "answer"] if match.by_id else []
        fields = [ROW, *own, "response", *(s for s in SOURCES if s in match.run_sources[i])]
        cols += [pl.col(run_column(f, i)).alias(f"{f}[{label}]") for f in fields]
    return match.matched.select(cols)
