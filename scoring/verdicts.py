"""Human verdicts: an append-only event log, and everything the dashboard derives from it.

Every action (mark, skip, undo) is one INSERT committed in its own transaction before the call
returns, so a crash or a closed tab never loses a given mark and two reviewers never overwrite
each other. Nothing is updated or deleted: the current verdict of a reviewer on an item is the
latest ``mark`` event not retracted by an ``undo`` event. Verdicts attach to the item key (a hash
of question, answer and response), so they apply to every run holding the identical row.

Reading is one query per call, filtered by item key (small sets) or by nothing (large sets, then
filtered with pandas), so a queue of 100,000 rows costs one query and a few vectorised operations.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from itertools import combinations

import numpy as np
import pandas as pd
from sqlalchemy import Engine, exists, func, insert, select
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import aliased

from scoring.engine import writer
from scoring.errors import NotSaved
from scoring.models import VerdictEvent
from scoring.protocols import BUCKETS
from scoring.report import COMBINED
from scoring.stats import agreement_table, cohen_kappa, raw_agreement, wilson_interval

VERDICTS: tuple[str, ...] = ("correct", "wrong")
REASONS: tuple[str, ...] = ("paraphrase", "inflection", "different claim", "golden answer wrong", "other")
CONFLICT = "conflict"
PENDING = "pending"
FINAL_VERDICTS: tuple[str, ...] = ("correct", "wrong", PENDING)
FINAL_SOURCES: tuple[str, ...] = ("human", "auto", "judge", PENDING)
#: The automatic rule for rows no human has settled (the spec's reading of the two metrics).
AUTO_RULE: dict[str, str] = {
    "both_pass": "correct",
    "both_fail": "wrong",
    "exact_only": "correct",
    "overlap_only": PENDING,
}
JUDGE_LABELS: dict[str, str] = {"CORRECT": "correct", "INCORRECT": "wrong"}
#: ``run_id`` is the run the mark was given in: a verdict carries over to every run holding the
#: identical row, and pages say so ("marked in run #3").
CURRENT_COLUMNS = ["item_key", "reviewer", "verdict", "reason", "note", "reviewed_at", "run_id"]
SUMMARY_COLUMNS = ["human_verdict", "reviewers", "reason", "note", "reviewed_at"]
METRIC_COLUMNS: tuple[str, ...] = ("exact_correct", "overlap_correct")
MAX_REVIEWER = 200  # VerdictEvent.reviewer is String(200)
#: How long a reviewer's action waits for the database's write lock before it is reported as not
#: saved. Other writers hold the lock for about 100 ms at a time, so this is only reached when
#: something is wrong, and the reviewer then sees it at once instead of a frozen page.
ACTION_BUSY_MS = 2_000
#: Above this many item keys the key filter runs in pandas instead of a SQL ``IN`` list (which
#: has a bound-parameter limit and gets slow); the one query then reads the whole log.
KEY_FILTER_LIMIT = 500
_EVENT_COLUMNS = ["id", "item_key", "run_id", "reviewer", "action", "verdict", "reason", "note", "undoes", "created_at"]
_STATE_COLUMNS = ["id", "item_key", "reviewer", "action", "undoes"]
_BAD_NAME = re.compile(r"[;\x00-\x1f\x7f]")


# --------------------------------------------------------------------------- validation


def check_reviewer(reviewer: str | None) -> str:
    """The reviewer's name, trimmed; a mark without a name is refused.

    ``;`` and control characters are refused because the export joins names with ``;``.
    """
    name = reviewer.strip() if isinstance(reviewer, str) else ""
    if not name:
        raise ValueError("A reviewer name is required: type your name before marking rows.")
    if _BAD_NAME.search(name):
        raise ValueError(f"Reviewer name {name!r} may not contain ';', line breaks or control characters.")
    if len(name) > MAX_REVIEWER:
        raise ValueError(f"Reviewer name is too long ({len(name)} characters; at most {MAX_REVIEWER}).")
    return name


def check_reason(reason: str | None) -> str:
    """A reason from :data:`REASONS` (any case, trimmed) or empty."""
    text = (reason or "").strip()
    if not text:
        return ""
    for known in REASONS:
        if text.lower() == known:
            return known
    raise ValueError(f"Unknown reason {text!r}: expected one of {', '.join(REASONS)} (or none).")


def check_verdict(verdict: str | None) -> str:
    """``correct`` or ``wrong`` (any case, trimmed); anything else is refused."""
    text = (verdict or "").strip().lower() if isinstance(verdict, str) else ""
    if text not in VERDICTS:
        raise ValueError(f"Unknown verdict {verdict!r}: expected one of {', '.join(VERDICTS)}.")
    return text


def _check_item(item_key: str) -> str:
    if not isinstance(item_key, str) or not item_key:
        raise ValueError("An item key is required to record a verdict.")
    return item_key


# --------------------------------------------------------------------------- writing


def _not_saved(exc: DBAPIError) -> NotSaved:
    """The reviewer-facing form of a failed write: the driver's reason, never the SQL or a URL."""
    reason = str(getattr(exc, "orig", None) or exc).splitlines()[0][:200]
    return NotSaved(f"Not saved: the database could not be written ({reason}). Nothing was recorded; try again.")


#: Reviewers' actions in one process take turns here before asking the database for its lock.
#: SQLite's busy handler polls with growing sleeps and is not fair: with many sessions of one
#: dashboard marking at once, one of them can lose the lock for seconds. A thread lock queues
#: them instead; the database's own wait then only covers writers in other processes.
_ACTION_TURN = threading.Lock()


@contextmanager
def _action_turn() -> Iterator[None]:
    if not _ACTION_TURN.acquire(timeout=ACTION_BUSY_MS / 1000):
        raise NotSaved("Not saved: other marks kept the database busy. Nothing was recorded; try again.")
    try:
        yield
    finally:
        _ACTION_TURN.release()


def _append(engine: Engine, values: dict) -> int:
    """One INSERT in its own transaction, committed before returning the event id.

    Raises :class:`NotSaved` when the database is busy beyond :data:`ACTION_BUSY_MS` or cannot
    be written; nothing is written then.
    """
    try:
        with _action_turn(), writer(engine, busy_ms=ACTION_BUSY_MS).begin() as conn:
            return int(conn.execute(insert(VerdictEvent).values(**values)).inserted_primary_key[0])
    except IntegrityError:
        raise
    except DBAPIError as exc:
        raise _not_saved(exc) from exc


def record_mark(
    engine: Engine,
    item_key: str,
    run_id: int | None,
    reviewer: str,
    verdict: str,
    reason: str = "",
    note: str = "",
    reviewed_at: datetime | None = None,
) -> int:
    """Append a reviewer's verdict on an item; returns the event id once it is committed.

    ``reviewed_at`` defaults to now; restoring an export passes the original time.
    """
    values = _mark_values(item_key, run_id, reviewer, verdict, reason, note, reviewed_at)
    return _append(engine, values)


def _mark_values(
    item_key: str,
    run_id: int | None,
    reviewer: str,
    verdict: str,
    reason: str = "",
    note: str = "",
    reviewed_at: datetime | None = None,
) -> dict:
    return {
        "item_key": _check_item(item_key),
        "run_id": run_id,
        "reviewer": check_reviewer(reviewer),
        "action": "mark",
        "verdict": check_verdict(verdict),
        "reason": check_reason(reason),
        "note": (note or "").strip(),
        "created_at": reviewed_at or datetime.now(UTC),
    }


#: Marks per write transaction when restoring many: a few milliseconds of the write lock each,
#: so reviewers marking elsewhere never wait behind a restore.
RESTORE_CHUNK = 1_000


def record_marks(engine: Engine, marks: Iterable[Mapping]) -> int:
    """Append many marks (restoring an export); all are validated before anything is written.

    Each mapping has the keyword arguments of :func:`record_mark` (without ``engine``). They are
    written in short transactions of :data:`RESTORE_CHUNK`: an interrupted restore keeps what it
    wrote, and restoring the same file again adds only the rest (the restore skips marks that
    are already current).
    """
    rows = [_mark_values(**dict(m)) for m in marks]
    for start in range(0, len(rows), RESTORE_CHUNK):
        with writer(engine).begin() as conn:
            conn.execute(insert(VerdictEvent), rows[start : start + RESTORE_CHUNK])
    return len(rows)


def record_skip(engine: Engine, item_key: str, run_id: int | None, reviewer: str) -> int:
    """Append a skip: the item moves behind the reviewer's unreviewed rows until marked."""
    return _append(
        engine,
        {
            "item_key": _check_item(item_key),
            "run_id": run_id,
            "reviewer": check_reviewer(reviewer),
            "action": "skip",
            "created_at": datetime.now(UTC),
        },
    )


@dataclass(frozen=True)
class Undone:
    """What an undo took back: the item, the verdict retracted, and how many later skips it passed.

    Undo retracts marks only; skips given after the mark stay skips, and the reviewer is told.
    """

    item_key: str
    verdict: str
    run_id: int | None
    skips_passed: int


def undo_last(engine: Engine, reviewer: str, run_id: int | None = None) -> str | None:
    """Retract the reviewer's latest mark not yet undone (in ``run_id`` if given).

    Appends an ``undo`` event and returns the item key it reopened, or None when there is
    nothing left to undo. Calling it again walks further back. See :func:`undo_last_mark`.
    """
    undone = undo_last_mark(engine, reviewer, run_id)
    return undone.item_key if undone else None


def undo_last_mark(engine: Engine, reviewer: str, run_id: int | None = None) -> Undone | None:
    """:func:`undo_last` with what was undone. The unique index on ``undoes`` makes a concurrent
    double undo of the same mark fail; the loser retries with the next mark. Raises
    :class:`NotSaved` when the database cannot be written.
    """
    name = check_reviewer(reviewer)
    mark, undo = aliased(VerdictEvent), aliased(VerdictEvent)
    stmt = (
        select(mark.id, mark.item_key, mark.run_id, mark.verdict)
        .where(mark.reviewer == name, mark.action == "mark", ~exists().where(undo.undoes == mark.id))
        .order_by(mark.id.desc())
        .limit(1)
    )
    if run_id is not None:
        stmt = stmt.where(mark.run_id == run_id)
    for _attempt in range(20):
        try:
            with _action_turn(), writer(engine, busy_ms=ACTION_BUSY_MS).begin() as conn:
                target = conn.execute(stmt).first()
                if target is None:
                    return None
                skips = select(func.count()).where(
                    VerdictEvent.reviewer == name, VerdictEvent.action == "skip", VerdictEvent.id > target.id
                )
                if run_id is not None:
                    skips = skips.where(VerdictEvent.run_id == run_id)
                passed = int(conn.execute(skips).scalar_one())
                conn.execute(
                    insert(VerdictEvent).values(
                        item_key=target.item_key,
                        run_id=target.run_id,
                        reviewer=name,
                        action="undo",
                        undoes=target.id,
                        created_at=datetime.now(UTC),
                    )
                )
                return Undone(str(target.item_key), str(target.verdict), target.run_id, passed)
        except IntegrityError:
            continue
        except DBAPIError as exc:
            raise _not_saved(exc) from exc
    raise RuntimeError("Undo kept colliding with concurrent undos; try again.")


# --------------------------------------------------------------------------- reading


def _isin(values: pd.Series | pd.Index, keys: Iterable[str]) -> np.ndarray:
    """Membership as object arrays: pandas' Arrow string ``isin`` loops in Python (slow at 100k)."""
    haystack = np.asarray(keys if hasattr(keys, "__array__") else list(keys), dtype=object)
    return pd.Index(np.asarray(values, dtype=object), dtype=object).isin(pd.Index(haystack, dtype=object))


def _unique_keys(item_keys: Iterable[str]) -> pd.Index:
    keys = item_keys if isinstance(item_keys, pd.Series | pd.Index | np.ndarray) else list(item_keys)
    return pd.Index(pd.unique(pd.Series(keys, dtype=object)))


def _events(
    engine: Engine,
    item_keys: Iterable[str] | None = None,
    reviewer: str | None = None,
    actions: Sequence[str] | None = None,
    columns: Sequence[str] = _EVENT_COLUMNS,
) -> pd.DataFrame:
    """The event log (one query), oldest first, optionally restricted to keys/reviewer/actions.

    ``columns`` narrows what is read: the queue needs no text or times, which keeps it cheap.
    """
    columns = list(columns)
    stmt = select(*(getattr(VerdictEvent, c) for c in columns)).order_by(VerdictEvent.id)
    if reviewer is not None:
        stmt = stmt.where(VerdictEvent.reviewer == reviewer)
    if actions is not None:
        stmt = stmt.where(VerdictEvent.action.in_(list(actions)))
    keys: pd.Index | None = None
    if item_keys is not None:
        keys = _unique_keys(item_keys)
        if len(keys) == 0:
            return pd.DataFrame(columns=columns)
        if len(keys) <= KEY_FILTER_LIMIT:
            stmt = stmt.where(VerdictEvent.item_key.in_([str(k) for k in keys]))
    with engine.connect() as conn:
        rows = conn.execute(stmt).all()
    frame = pd.DataFrame.from_records([tuple(r) for r in rows], columns=columns)
    if keys is not None and len(keys) > KEY_FILTER_LIMIT:
        frame = frame[_isin(frame["item_key"], keys)]
    return frame.reset_index(drop=True)


def _utc(values: pd.Series) -> pd.Series:
    """Timestamps as UTC (SQLite hands back naive datetimes, stored as UTC)."""
    return pd.to_datetime(values, utc=True).astype("datetime64[us, UTC]")


def _current_marks(events: pd.DataFrame) -> pd.DataFrame:
    """Latest mark per (item, reviewer) that no undo retracted; keeps the event ``id``."""
    undone = events.loc[events["action"] == "undo", "undoes"].dropna().astype("int64")
    marks = events[(events["action"] == "mark") & ~events["id"].isin(undone)]
    return marks.drop_duplicates(["item_key", "reviewer"], keep="last")


def _empty_current() -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series(dtype=object) for c in CURRENT_COLUMNS})
    frame["reviewed_at"] = pd.Series(dtype="datetime64[us, UTC]")
    frame["run_id"] = pd.Series(dtype="Int64")
    return frame


def current_verdicts(
    engine: Engine, item_keys: Iterable[str] | None = None, reviewer: str | None = None
) -> pd.DataFrame:
    """Each reviewer's current verdict per item (latest mark not undone), sorted by item, reviewer.

    Columns: item_key, reviewer, verdict, reason, note, reviewed_at (UTC), run_id (where the mark
    was given; missing for marks restored without one).
    """
    name = reviewer.strip() if reviewer is not None else None
    events = _events(engine, item_keys, reviewer=name, actions=("mark", "undo"))
    if events.empty:
        return _empty_current()
    current = _current_marks(events).rename(columns={"created_at": "reviewed_at"})
    if current.empty:
        return _empty_current()
    current = current.sort_values(["item_key", "reviewer"])[CURRENT_COLUMNS].reset_index(drop=True)
    current["reviewed_at"] = _utc(current["reviewed_at"])
    current["reason"] = current["reason"].fillna("")
    current["note"] = current["note"].fillna("")
    current["run_id"] = current["run_id"].astype("Int64")
    return current


def _reviewer_state(engine: Engine, reviewer: str, item_keys: Iterable[str] | None) -> tuple[pd.Index, pd.Index]:
    """(keys the reviewer has a current verdict on, keys skipped and not marked since): one query."""
    events = _events(engine, item_keys, reviewer=reviewer, columns=_STATE_COLUMNS)
    if events.empty:
        return pd.Index([]), pd.Index([])
    current = _current_marks(events).set_index("item_key")["id"]
    skips = events[events["action"] == "skip"].drop_duplicates("item_key", keep="last").set_index("item_key")["id"]
    marked_after = current.reindex(skips.index)
    skipped = skips.index[marked_after.isna().to_numpy() | (skips.to_numpy() > marked_after.fillna(-1).to_numpy())]
    return pd.Index(current.index), pd.Index(skipped)


def skipped_keys(engine: Engine, reviewer: str, item_keys: Iterable[str] | None = None) -> set[str]:
    """Items the reviewer skipped and has not marked since (an undone mark does not count)."""
    _, skipped = _reviewer_state(engine, check_reviewer(reviewer), item_keys)
    return {str(k) for k in skipped}


def split_per_reviewer(cell: str, names: Sequence[str]) -> dict[str, str]:
    """Per-reviewer values of a summary's reason/note cell.

    The cell holds one value when all reviewers gave the same, else ``name: value`` lines in
    name order (a value may itself span lines); anything else is taken as one value for all.
    """
    cell = cell or ""
    if len(names) > 1 and cell.startswith(f"{names[0]}: "):
        parts: dict[str, str] = {}
        pos = len(names[0]) + 2
        for i, name in enumerate(names):
            if i + 1 < len(names):
                marker = f"\n{names[i + 1]}: "
                end = cell.find(marker, pos)
                if end < 0:
                    break
                parts[name] = cell[pos:end]
                pos = end + len(marker)
            else:
                parts[name] = cell[pos:]
        if len(parts) == len(names):
            return parts
    return {n: cell for n in names}


def human_summary(current: pd.DataFrame) -> pd.DataFrame:
    """One row per reviewed item: the human verdict (``conflict`` when reviewers disagree).

    Index item_key; columns human_verdict, reviewers (sorted, ``;``-joined), reason and note
    (the shared value, or ``name: value`` lines when reviewers differ), reviewed_at (latest).
    """
    if current.empty:
        empty = pd.DataFrame({c: pd.Series(dtype=object) for c in SUMMARY_COLUMNS})
        empty["reviewed_at"] = pd.Series(dtype="datetime64[us, UTC]")
        return empty.rename_axis("item_key")
    cur = current.sort_values(["item_key", "reviewer"], kind="stable")
    groups = cur.groupby("item_key", sort=True)
    out = pd.DataFrame(index=groups.size().index)
    n_verdicts = groups["verdict"].nunique()
    out["human_verdict"] = groups["verdict"].first().where(n_verdicts == 1, CONFLICT)
    out["reviewers"] = groups["reviewer"].agg(";".join)
    out["reason"] = groups["reason"].first().fillna("")
    out["note"] = groups["note"].first().fillna("")
    out["reviewed_at"] = groups["reviewed_at"].max()
    for col in ("reason", "note"):
        values = cur[col].fillna("").astype(str)
        differ = values.groupby(cur["item_key"]).nunique()
        differ = differ.index[differ > 1]
        if len(differ):  # reviewers gave different values: "name: value" lines (see split_per_reviewer)
            rows = _isin(cur["item_key"], differ)
            lines = (cur.loc[rows, "reviewer"] + ": " + values[rows]).groupby(cur.loc[rows, "item_key"]).agg("\n".join)
            out.loc[lines.index, col] = lines
    out.index.name = "item_key"
    return out[SUMMARY_COLUMNS]


def final_verdicts(
    scored: pd.DataFrame,
    summary: pd.DataFrame,
    judge_labels: Mapping[str, str] | None = None,
    judge_settles: bool = False,
) -> pd.DataFrame:
    """``scored`` plus the human summary and the final verdict of every row.

    The human verdict wins; reviewers in conflict leave the row pending. Otherwise the automatic
    rule (:data:`AUTO_RULE`) applies, and with ``judge_settles`` a judge label CORRECT/INCORRECT
    settles a pending overlap_only row (source ``judge``). With ``judge_labels`` (item key ->
    label) a ``judge_label`` column is added. Columns of ``scored`` with these names (an input
    file's own ``note``, say) are replaced; the export keeps them under ``<name>_input``.
    """
    out = scored.copy()
    aligned = summary.reindex(out["item_key"].to_numpy())
    for col in ("human_verdict", "reviewers", "reason", "note"):
        out[col] = aligned[col].fillna("").astype(object).to_numpy()
    out["reviewed_at"] = _utc(aligned["reviewed_at"]).to_numpy()
    human = out["human_verdict"].to_numpy(dtype=object)
    auto = out["bucket"].map(AUTO_RULE).fillna(PENDING).to_numpy(dtype=object)
    is_human = np.isin(human, VERDICTS)
    is_conflict = human == CONFLICT
    final = np.where(is_human, human, np.where(is_conflict, PENDING, auto))
    source = np.where(is_human, "human", np.where(is_conflict | (auto == PENDING), PENDING, "auto"))
    if judge_labels is not None:
        labels = out["item_key"].map(dict(judge_labels)).fillna("").astype(str)
        out["judge_label"] = labels.to_numpy(dtype=object)
        if judge_settles:
            settled = labels.str.strip().str.upper().map(JUDGE_LABELS).to_numpy(dtype=object)
            settle = (
                ~is_human & ~is_conflict & (out["bucket"].to_numpy() == "overlap_only") & pd.notna(settled)
            )
            final = np.where(settle, settled, final)
            source = np.where(settle, "judge", source)
    out["final_verdict"] = final.astype(object)
    out["final_source"] = source.astype(object)
    return out


# --------------------------------------------------------------------------- accuracy


@dataclass(frozen=True)
class AdjudicatedRow:
    """Adjudicated accuracy of one domain (or ``combined``) with the pending rows as a range.

    ``accuracy_low`` counts pending rows wrong, ``accuracy_high`` counts them right. The interval
    ``ci_low``..``ci_high`` is the Wilson lower bound of ``correct/n`` and the Wilson upper bound
    of ``(correct+pending)/n``: sampling error and the unresolved rows together. With nothing
    pending it is the ordinary 95% Wilson interval of the accuracy. (A Wilson interval over the
    decided rows only would assume pending rows behave like decided ones; they do not, they are
    the overlap_only rows.)
    """

    domain: str
    n: int
    correct: int
    wrong: int
    pending: int
    accuracy_low: float
    accuracy_high: float
    ci_low: float
    ci_high: float

    def as_dict(self) -> dict:
        return asdict(self)


def _adjudicated_row(domain: str, n: int, correct: int, pending: int) -> AdjudicatedRow:
    low = wilson_interval(correct, n)[0]
    high = wilson_interval(correct + pending, n)[1]
    return AdjudicatedRow(
        domain, n, correct, n - correct - pending, pending,
        correct / n if n else 0.0, (correct + pending) / n if n else 0.0, low, high,
    )  # fmt: skip


def adjudicated_accuracy(final: pd.DataFrame) -> list[AdjudicatedRow]:
    """Per-domain rows sorted by domain name, then ``combined`` over all rows."""
    correct = final["final_verdict"] == "correct"
    pending = final["final_verdict"] == PENDING
    table = pd.DataFrame({"Domain": final["Domain"].astype(str), "correct": correct, "pending": pending})
    grouped = table.groupby("Domain", sort=False).agg(
        n=("correct", "size"), correct=("correct", "sum"), pending=("pending", "sum")
    )
    rows = [
        _adjudicated_row(str(dom), int(g.n), int(g.correct), int(g.pending))
        for dom, g in sorted(grouped.iterrows(), key=lambda item: str(item[0]))
    ]
    rows.append(_adjudicated_row(COMBINED, len(final), int(correct.sum()), int(pending.sum())))
    return rows


# --------------------------------------------------------------------------- queue and progress


def _scope(
    scored: pd.DataFrame,
    bucket: str | None,
    domain: str | Sequence[str] | None,
    rows: Sequence[int] | None = None,
) -> pd.DataFrame:
    """Rows of a bucket (None: all), a domain (or several) and optionally given row_idx values."""
    if bucket is not None and bucket not in BUCKETS:
        raise ValueError(f"Unknown bucket {bucket!r}: expected one of {', '.join(BUCKETS)}.")
    mask = np.ones(len(scored), dtype=bool)
    if bucket is not None:
        mask &= (scored["bucket"] == bucket).to_numpy()
    if domain is not None:
        domains = [domain] if isinstance(domain, str) else list(domain)
        mask &= _isin(scored["Domain"], domains)
    if rows is not None:
        mask &= scored["row_idx"].isin(list(rows)).to_numpy()
    return scored.loc[mask, ["row_idx", "item_key", "Domain"]]


def _sampled_scope(
    scored: pd.DataFrame, bucket: str | None, domain: str | Sequence[str] | None, sample: int | None, seed: int
) -> pd.DataFrame:
    """The scope's rows, or a reproducible random sample of ``sample`` of them (input order kept)."""
    scope = _scope(scored, bucket, domain)
    if sample is not None:
        if sample < 0:
            raise ValueError(f"Sample size must be zero or more, not {sample}.")
        if sample < len(scope):
            pick = np.random.default_rng(seed).choice(len(scope), size=sample, replace=False)
            scope = scope.iloc[np.sort(pick)]
    return scope


def _progress_table(domains: np.ndarray, done: np.ndarray) -> pd.DataFrame:
    """Reviewed k of n per domain (sorted), then ``combined``; columns domain, n, reviewed, remaining."""
    table = pd.DataFrame({"domain": domains, "done": done})
    grouped = table.groupby("domain", sort=True).agg(n=("done", "size"), reviewed=("done", "sum")).reset_index()
    combined = pd.DataFrame([{"domain": COMBINED, "n": len(table), "reviewed": int(done.sum())}])
    out = pd.concat([grouped, combined], ignore_index=True) if len(grouped) else combined
    out["n"] = out["n"].astype("int64")
    out["reviewed"] = out["reviewed"].astype("int64")
    out["remaining"] = out["n"] - out["reviewed"]
    return out


def queue(
    scored: pd.DataFrame,
    reviewer: str | None,
    engine: Engine,
    bucket: str | None = "overlap_only",
    domain: str | Sequence[str] | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> list[int]:
    """row_idx values in review order: unreviewed by this reviewer, then skipped, then reviewed.

    Within each group rows keep their input order, so a queue recomputed after a refresh
    continues where the reviewer left off. ``sample=k`` draws k rows of the scope with ``seed``
    (the same rows every time, whatever has been reviewed since). ``bucket=None`` means all rows.
    """
    scope = _sampled_scope(scored, bucket, domain, sample, seed)
    row_idx = scope["row_idx"].to_numpy()
    name = reviewer.strip() if isinstance(reviewer, str) else ""
    if not name or scope.empty:
        return [int(i) for i in row_idx]
    marked, skipped = _reviewer_state(engine, name, scope["item_key"])
    keys = scope["item_key"]
    rank = np.where(_isin(keys, marked), 2, np.where(_isin(keys, skipped), 1, 0))
    order = np.lexsort((row_idx, rank))
    return [int(i) for i in row_idx[order]]


def progress(
    scored: pd.DataFrame,
    engine: Engine,
    reviewer: str | None = None,
    bucket: str | None = "overlap_only",
    domain: str | Sequence[str] | None = None,
    rows: Sequence[int] | None = None,
) -> pd.DataFrame:
    """Reviewed k of n per domain (sorted) and ``combined`` (last row) for a scope.

    Columns: domain, n, reviewed, remaining. Reviewed means a current verdict by anyone, or by
    ``reviewer`` when given. ``rows`` (row_idx values, e.g. a sampled queue) narrows the scope.
    """
    scope = _scope(scored, bucket, domain, rows)
    name = reviewer.strip() if isinstance(reviewer, str) and reviewer.strip() else None
    if scope.empty:
        done = pd.Series(dtype=bool)
    else:
        events = _events(engine, scope["item_key"], reviewer=name, actions=("mark", "undo"), columns=_STATE_COLUMNS)
        reviewed_keys = _current_marks(events)["item_key"] if not events.empty else pd.Series(dtype=object)
        done = pd.Series(_isin(scope["item_key"], reviewed_keys), index=scope.index)
    return _progress_table(scope["Domain"].astype(str).to_numpy(), done.to_numpy(dtype=bool))


@dataclass(frozen=True)
class QueueScope:
    """The rows of one review scope, in queue order, built once per (run, bucket, domain, sample).

    Marking then costs work in proportion to the reviewer's marks, not to the run's size: the
    next row and the progress come from the reviewer's own events and lookups in this index.
    """

    row_idx: np.ndarray
    item_keys: np.ndarray
    domains: np.ndarray
    positions: dict[str, list[int]]  # item key -> positions in the scope (identical rows share one)

    def __len__(self) -> int:
        return len(self.row_idx)


def queue_scope(
    scored: pd.DataFrame,
    bucket: str | None = "overlap_only",
    domain: str | Sequence[str] | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> QueueScope:
    """The scope :func:`queue` orders, as an index for :func:`next_in_queue` and :func:`scope_progress`."""
    scope = _sampled_scope(scored, bucket, domain, sample, seed)
    keys = scope["item_key"].to_numpy(dtype=object)
    positions: dict[str, list[int]] = {}
    for pos, key in enumerate(keys):
        positions.setdefault(key, []).append(pos)
    return QueueScope(scope["row_idx"].to_numpy(), keys, scope["Domain"].astype(str).to_numpy(dtype=object), positions)


def next_in_queue(scope: QueueScope, engine: Engine, reviewer: str | None) -> int | None:
    """row_idx of the row :func:`queue` would put first among the rows still without the
    reviewer's verdict (unreviewed, then skipped); None for an empty scope or one the reviewer
    has finished. A finished queue does not loop back: revisiting a verdict is a deliberate act.
    """
    if not len(scope):
        return None
    name = reviewer.strip() if isinstance(reviewer, str) else ""
    if not name:
        return int(scope.row_idx[0])
    marked, skipped = _reviewer_state(engine, name, None)
    marked_set, skipped_set = set(marked), set(skipped)
    first_skipped = None
    for pos, key in enumerate(scope.item_keys):
        if key in marked_set:
            continue
        if key in skipped_set:
            first_skipped = pos if first_skipped is None else first_skipped
        else:
            return int(scope.row_idx[pos])
    return int(scope.row_idx[first_skipped]) if first_skipped is not None else None


def scope_progress(scope: QueueScope, engine: Engine, reviewer: str | None = None) -> pd.DataFrame:
    """Same table as :func:`progress`, from the reviewer's events (or everyone's) and the index."""
    name = reviewer.strip() if isinstance(reviewer, str) and reviewer.strip() else None
    events = _events(engine, None, reviewer=name, actions=("mark", "undo"), columns=_STATE_COLUMNS)
    done = np.zeros(len(scope), dtype=bool)
    if not events.empty:
        for key in _current_marks(events)["item_key"]:
            for pos in scope.positions.get(key, ()):
                done[pos] = True
    return _progress_table(scope.domains, done)


# --------------------------------------------------------------------------- agreement


def conflicts(engine: Engine, item_keys: Iterable[str] | None = None) -> pd.DataFrame:
    """Items whose reviewers' current verdicts disagree, one row each (see :func:`conflicts_in`)."""
    return conflicts_in(current_verdicts(engine, item_keys))


def conflicts_in(current: pd.DataFrame) -> pd.DataFrame:
    """Conflicts among already-read current verdicts.

    Columns: item_key, correct_by and wrong_by (``;``-joined names), reviewed_at (latest), then
    one column per reviewer involved (sorted) holding that reviewer's verdict or "".
    """
    base = ["item_key", "correct_by", "wrong_by", "reviewed_at"]
    if current.empty:
        return pd.DataFrame(columns=base)
    n_verdicts = current.groupby("item_key")["verdict"].transform("nunique")
    split = current[n_verdicts > 1]
    if split.empty:
        return pd.DataFrame(columns=base)
    out = pd.DataFrame(index=pd.Index(sorted(split["item_key"].unique()), name="item_key"))
    for verdict in VERDICTS:
        names = split[split["verdict"] == verdict].groupby("item_key")["reviewer"].agg(";".join)
        out[f"{verdict}_by"] = names.reindex(out.index).fillna("")
    out["reviewed_at"] = split.groupby("item_key")["reviewed_at"].max()
    wide = split.pivot(index="item_key", columns="reviewer", values="verdict").fillna("")
    wide = wide[sorted(wide.columns)]
    wide.columns = [str(c) for c in wide.columns]
    out = out.join(wide.drop(columns=[c for c in wide.columns if c in base], errors="ignore"))
    return out.reset_index()


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of two raters on the items both rated; ``correct`` is the positive label.

    ``table`` is [[both correct, a correct b wrong], [a wrong b correct, both wrong]]; kappa is
    None when undefined (both raters used one label only), raw_agreement None when n is 0.
    """

    a: str
    b: str
    n: int
    table: list[list[int]]
    kappa: float | None
    raw_agreement: float | None

    def as_dict(self) -> dict:
        return asdict(self)


def pair_agreement(a: str, b: str, left: Sequence[bool], right: Sequence[bool]) -> PairAgreement:
    """Kappa, raw agreement and the 2x2 table of two raters over the same items (True = correct)."""
    table = agreement_table(left, right)
    return PairAgreement(a, b, len(left), table, cohen_kappa(table), raw_agreement(table))


def reviewer_agreement(current: pd.DataFrame) -> list[PairAgreement]:
    """Cohen's kappa, raw agreement and the 2x2 table for each reviewer pair (names sorted).

    Only pairs that share at least one item are listed.
    """
    if current.empty:
        return []
    wide = current.pivot(index="item_key", columns="reviewer", values="verdict")
    pairs = []
    for a, b in combinations(sorted(wide.columns, key=str), 2):
        both = wide[[a, b]].dropna()
        if both.empty:
            continue
        pairs.append(pair_agreement(str(a), str(b), (both[a] == "correct").tolist(), (both[b] == "correct").tolist()))
    return pairs


def _human_rows(final: pd.DataFrame) -> pd.DataFrame:
    return final[_isin(final["human_verdict"], VERDICTS)]


def human_vs_metric(final: pd.DataFrame, metric_col: str) -> PairAgreement:
    """Human verdict (rows with a non-conflicting one) against a boolean column of ``final``."""
    if metric_col not in final.columns:
        raise ValueError(f"No column {metric_col!r} to compare with the human verdicts.")
    rows = _human_rows(final)
    human = (rows["human_verdict"] == "correct").tolist()
    metric = rows[metric_col].astype(bool).tolist()
    return pair_agreement("human", metric_col, human, metric)


def metric_precision(
    final: pd.DataFrame, metrics: Sequence[str] = METRIC_COLUMNS
) -> dict[str, tuple[int, int, float | None]]:
    """Per metric column: (passes a human confirmed, passes with a human verdict, precision).

    Rows whose reviewers conflict are left out; precision is None when no pass was reviewed.
    """
    rows = _human_rows(final)
    human = rows["human_verdict"] == "correct"
    out: dict[str, tuple[int, int, float | None]] = {}
    for col in metrics:
        passed = rows[col].astype(bool)
        reviewed = int(passed.sum())
        confirmed = int((passed & human).sum())
        out[col] = (confirmed, reviewed, confirmed / reviewed if reviewed else None)
    return out


def revision(engine: Engine) -> int:
    """Id of the newest verdict event: a cheap cache key that changes with every mark."""
    with engine.connect() as conn:
        return int(conn.execute(select(func.max(VerdictEvent.id))).scalar() or 0)
