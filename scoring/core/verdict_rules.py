"""Human verdicts, pure: what a verdict, reason and reviewer name may be, and everything derived
from reviewers' current verdicts (the human summary, final verdicts, adjudicated accuracy,
conflicts, agreement). No database: the verdict log lives in :mod:`scoring.store.verdict_log`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations

import numpy as np
import pandas as pd
import polars as pl

from scoring.core.report import COMBINED
from scoring.core.stats import agreement_table, cohen_kappa, range_with_unknowns, raw_agreement

VERDICTS: tuple[str, ...] = ("correct", "wrong")
REASONS: tuple[str, ...] = ("paraphrase", "inflection", "different claim", "golden answer wrong", "other")
CONFLICT = "conflict"
PENDING = "pending"
FINAL_VERDICTS: tuple[str, ...] = ("correct", "wrong", PENDING)
FINAL_SOURCES: tuple[str, ...] = ("human", "adjudicated", "auto", "judge", PENDING)
#: The automatic rule for rows no human has settled (the spec's reading of the two metrics).
AUTO_RULE: dict[str, str] = {
    "both_pass": "correct",
    "both_fail": "wrong",
    "exact_only": "correct",
    "overlap_only": PENDING,
}
#: The rule in words, said wherever "auto" or "the automatic rule" appears.
AUTO_RULE_TEXT = (
    'The automatic rule (final source "auto"), for rows no reviewer has settled: both metrics pass '
    "or only exact substring passes: correct; both fail: wrong; only word overlap passes: pending "
    "(a person decides)."
)
JUDGE_LABELS: dict[str, str] = {"CORRECT": "correct", "INCORRECT": "wrong"}
#: Judge labels read as verdicts when comparing runs or estimating (as scoring.core.judge_accuracy
#: reads them: NOT_ATTEMPTED is a wrong answer); UNPARSED, ERROR and no label are unknown.
JUDGE_RIGHT, JUDGE_WRONG = ("CORRECT",), ("INCORRECT", "NOT_ATTEMPTED")
#: ``run_id`` is the run the mark was given in: a verdict carries over to every run holding the
#: identical row, and pages say so ("marked in run #3").
CURRENT_COLUMNS = ["item_key", "reviewer", "verdict", "reason", "note", "reviewed_at", "run_id"]
SUMMARY_COLUMNS = ["human_verdict", "reviewers", "reason", "note", "reviewed_at"]
#: An adjudicator's decision on an item (see :mod:`scoring.store.adjudications`).
ADJUDICATION_COLUMNS = ["adjudicator", "decision", "adjudication_note"]
METRIC_COLUMNS: tuple[str, ...] = ("exact_correct", "overlap_correct")
MAX_REVIEWER = 200  # VerdictEvent.reviewer is String(200)
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


def _polars_text(values: object) -> pl.Series:
    if isinstance(values, pl.Series):
        return values.cast(pl.String, strict=False)
    if isinstance(values, pd.Series | pd.Index):
        return pl.from_pandas(pd.Series(values, copy=False)).cast(pl.String, strict=False)
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)  # type: ignore[union-attr]
    return pl.Series(items, dtype=pl.String, strict=False)


def judge_correct(label: pl.Expr) -> pl.Expr:
    """A judge-label column as a Boolean verdict (null where the label is not a verdict)."""
    label = label.cast(pl.String).str.strip_chars().str.to_uppercase()
    return pl.when(label.is_in(JUDGE_RIGHT)).then(True).when(label.is_in(JUDGE_WRONG)).then(False).otherwise(None)


def isin(values: pd.Series | pd.Index | pl.Series, keys: Iterable[str]) -> np.ndarray:
    """Membership hashed by polars: pandas' Arrow-string ``isin`` loops in Python, and turning a
    million Arrow strings into Python objects first took a second."""
    return _polars_text(values).is_in(_polars_text(keys).implode()).fill_null(False).to_numpy()


def utc(values: pd.Series) -> pd.Series:
    """Timestamps as UTC (SQLite hands back naive datetimes, stored as UTC)."""
    return pd.to_datetime(values, utc=True).astype("datetime64[us, UTC]")


def current_marks(events: pd.DataFrame) -> pd.DataFrame:
    """Latest mark per (item, reviewer) that no undo retracted; keeps the event ``id``."""
    undone = events.loc[events["action"] == "undo", "undoes"].dropna().astype("int64")
    marks = events[(events["action"] == "mark") & ~events["id"].isin(undone)]
    return marks.drop_duplicates(["item_key", "reviewer"], keep="last")


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
            rows = isin(cur["item_key"], differ)
            lines = (cur.loc[rows, "reviewer"] + ": " + values[rows]).groupby(cur.loc[rows, "item_key"]).agg("\n".join)
            out.loc[lines.index, col] = lines
    out.index.name = "item_key"
    return out[SUMMARY_COLUMNS]


def final_verdicts(
    scored: pd.DataFrame,
    summary: pd.DataFrame,
    judge_labels: Mapping[str, str] | None = None,
    judge_settles: bool = False,
    decisions: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """``scored`` plus the human summary and the final verdict of every row.

    The human verdict wins; reviewers in conflict leave the row pending. Otherwise the automatic
    rule (:data:`AUTO_RULE`) applies, and with ``judge_settles`` a judge label CORRECT/INCORRECT
    settles a pending overlap_only row (source ``judge``). With ``judge_labels`` (item key ->
    label) a ``judge_label`` column is added. With ``decisions`` (adjudicators' decisions indexed
    by item key, :data:`ADJUDICATION_COLUMNS`) a decision is the final verdict, source
    ``adjudicated``, whatever the reviewers said, and those columns are added. Columns of
    ``scored`` with these names (an input file's own ``note``, say) are replaced; the export keeps
    them under ``<name>_input``.
    """
    out = scored.copy(deep=False)  # copy-on-write: columns are added, the caller's stay
    keys = out["item_key"]
    # Only reviewed rows (a few of a large run) look their summary up; the rest stay empty.
    reviewed = isin(keys, summary.index) if len(summary) else np.zeros(len(out), dtype=bool)
    aligned = summary.reindex(keys.to_numpy(dtype=object)[reviewed]) if reviewed.any() else summary.iloc[:0]
    for col in ("human_verdict", "reviewers", "reason", "note"):
        values = np.full(len(out), "", dtype=object)
        values[reviewed] = aligned[col].fillna("").astype(object).to_numpy()
        out[col] = values
    times = pd.Series(pd.NaT, index=out.index, dtype="datetime64[us, UTC]")
    times.iloc[np.flatnonzero(reviewed)] = utc(aligned["reviewed_at"]).to_numpy()
    out["reviewed_at"] = times
    human = out["human_verdict"].to_numpy(dtype=object)
    auto = _polars_text(out["bucket"]).replace_strict(AUTO_RULE, default=PENDING).to_numpy().astype(object)
    is_human = np.isin(human, VERDICTS)
    is_conflict = human == CONFLICT
    final = np.where(is_human, human, np.where(is_conflict, PENDING, auto))
    source = np.where(is_human, "human", np.where(is_conflict | (auto == PENDING), PENDING, "auto"))
    if judge_labels is not None:
        labels = out["item_key"].map(dict(judge_labels)).fillna("").astype(str)
        out["judge_label"] = labels.to_numpy(dtype=object)
        if judge_settles:
            settled = labels.str.strip().str.upper().map(JUDGE_LABELS).to_numpy(dtype=object)
            settle = ~is_human & ~is_conflict & (out["bucket"].to_numpy() == "overlap_only") & pd.notna(settled)
            final = np.where(settle, settled, final)
            source = np.where(settle, "judge", source)
    if decisions is not None:
        decided = isin(keys, decisions.index) if len(decisions) else np.zeros(len(out), dtype=bool)
        chosen = decisions.reindex(keys.to_numpy(dtype=object)[decided]) if decided.any() else decisions.iloc[:0]
        for col in ADJUDICATION_COLUMNS:
            values = np.full(len(out), "", dtype=object)
            values[decided] = chosen[col].fillna("").astype(object).to_numpy()
            out[col] = values
        final = np.where(decided, out["decision"].to_numpy(dtype=object), final)
        source = np.where(decided, "adjudicated", source)
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
    return AdjudicatedRow(domain, n, correct, n - correct - pending, pending, *range_with_unknowns(correct, pending, n))


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
    return final[isin(final["human_verdict"], VERDICTS)]


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
