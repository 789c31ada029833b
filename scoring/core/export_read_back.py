"""Reading an uploaded export back: which of its columns are derived (and dropped), every
reviewer's verdict from the ``human_verdicts`` JSON column or the older one-line summary, and
the adjudicators' decisions, each refused with the row and column named when malformed.

The file format itself (columns, CSV/JSONL bytes, formula neutralisation) is
:mod:`scoring.core.export_format`; restoring the verdicts into the database is
:mod:`scoring.store.restore`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import NamedTuple

import pandas as pd

from scoring.core import verdict_rules as review
from scoring.core.errors import InputError
from scoring.core.export_format import (
    DERIVED_COLUMNS,
    EXPORT_COLUMNS,
    MODEL_COLUMN,
    VERDICT_FIELDS,
    VERDICTS_COLUMN,
    VIA_FIELD,
    VIA_VALUES,
    unneutralise,
    unneutralise_name,
)
from scoring.core.export_order import check_order


class _Mark(NamedTuple):
    """One reviewer's verdict read back from an export."""

    reviewer: str
    verdict: str
    reason: str
    note: str
    reviewed_at: datetime | None
    via: str = ""  #: "queue" or "opened" when the export says; "" restores as "restored"


def _parse_time(text: str) -> datetime | None:
    text = text.strip()
    if not text:
        return None
    try:
        stamp = datetime.fromisoformat(text)
        return stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _where(pos: int, column: str | None = None) -> str:
    return f"Data row {pos} of the exported file" + (f", column {column!r}" if column else "")


def _short(text: str, limit: int = 60) -> str:
    """A repr of untrusted text short enough for an error message."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _json_kind(value: object) -> str:
    kinds = {dict: "object", list: "list", str: "string", bool: "true/false", int: "number", float: "number"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


def _parse_verdicts_cell(cell: object, pos: int) -> list[_Mark]:
    """The verdicts in one :data:`VERDICTS_COLUMN` cell (JSON text, or a list from a JSONL record).

    The cell is untrusted text: anything but a list of well-formed verdicts raises
    :class:`InputError` naming the row and the column, never a traceback.
    """
    where = _where(pos, VERDICTS_COLUMN)
    if isinstance(cell, list | tuple):
        items: object = list(cell)
    else:
        text = "" if cell is None or (isinstance(cell, float) and cell != cell) else str(cell)
        if not text.strip():
            return []
        try:
            items = json.loads(text)
        except RecursionError:
            raise InputError(f"{where}: the JSON is nested too deeply to be a list of verdicts.") from None
        except ValueError as exc:  # json.JSONDecodeError, or an integer too long to read
            raise InputError(f"{where}: not valid JSON ({exc}).") from None
    if not isinstance(items, list):
        raise InputError(f"{where}: expected a JSON list of verdicts, found a JSON {_json_kind(items)}.")
    marks: list[_Mark] = []
    for n, item in enumerate(items, start=1):
        at = f"{where}, verdict {n}"
        if not isinstance(item, dict):
            fields = ", ".join(VERDICT_FIELDS)
            raise InputError(f"{at}: expected an object with {fields}, found a JSON {_json_kind(item)}.")
        values: dict[str, str] = {}
        for field in VERDICT_FIELDS:
            value = item.get(field)
            if value is not None and not isinstance(value, str):
                raise InputError(f"{at}: {field} must be text, found a JSON {_json_kind(value)}.")
            values[field] = value or ""
        try:
            name = review.check_reviewer(values["reviewer"])
            verdict = review.check_verdict(values["verdict"])
            reason = review.check_reason(values["reason"])
        except ValueError as exc:
            raise InputError(f"{at}: {exc}") from None
        when = _parse_time(values["reviewed_at"])
        if when is None and values["reviewed_at"].strip():
            raise InputError(f"{at}: reviewed_at {_short(values['reviewed_at'])} is not an ISO 8601 time.")
        if any(m.reviewer == name for m in marks):
            raise InputError(f"{at}: reviewer {_short(name)} is listed twice.")
        via = item.get(VIA_FIELD)
        marks.append(_Mark(name, verdict, reason, values["note"].strip(), when, via if via in VIA_VALUES else ""))
    return marks


def _summary_marks(
    verdict_cell: object, names_cell: object, reason: object, note: object, when: object, pos: int
) -> Sequence[_Mark]:
    """The verdicts of an export without :data:`VERDICTS_COLUMN`, read from its summary columns.

    A ``conflict`` row names its reviewers but not who said what, so it yields nothing.
    """
    verdict = str(verdict_cell).strip().lower()
    if verdict not in review.VERDICTS:
        if verdict in ("", review.CONFLICT):
            return ()
        raise InputError(f"{_where(pos)}: human_verdict {verdict!r} is not one of correct, wrong, conflict or empty.")
    names = [n.strip() for n in str(names_cell).split(";") if n.strip()]
    if not names:
        raise InputError(f"{_where(pos)}: human_verdict is {verdict!r} but no reviewer is named in 'reviewers'.")
    try:
        names = [review.check_reviewer(name) for name in names]
        reasons = review.split_per_reviewer(str(reason), names)
        notes = review.split_per_reviewer(str(note), names)
        stamp = _parse_time(str(when))
        return [_Mark(n, verdict, review.check_reason(reasons[n]), notes[n].strip(), stamp) for n in names]
    except ValueError as exc:
        raise InputError(f"{_where(pos)}: {exc}") from None


def exported_marks(exported: pd.DataFrame) -> list[Sequence[_Mark]]:
    """Per row, the verdicts an upload restores: :data:`VERDICTS_COLUMN` when the file has it,
    else (older exports) the summary columns."""
    if VERDICTS_COLUMN in exported.columns:
        # Most rows of a large run are unreviewed: their empty cells skip the parser.
        return [
            () if cell == "" else _parse_verdicts_cell(cell, pos)
            for pos, cell in enumerate(exported[VERDICTS_COLUMN].tolist(), start=1)
        ]
    return [
        _summary_marks(*cells, pos)
        for pos, cells in enumerate(
            zip(*(exported[c].tolist() for c in ("human_verdict", "reviewers", "reason", "note", "reviewed_at"))),
            start=1,
        )
    ]


def _check_exported(exported: pd.DataFrame) -> None:
    """Refuse, before anything is stored, verdict cells that could not be restored (and review
    order columns that cannot be read).

    With :data:`VERDICTS_COLUMN` present it is what is restored; a row whose human_verdict or
    reviewers say otherwise was edited on one side only, and guessing which side is meant would
    silently drop an edit, so it is refused.
    """
    _check_decisions(exported)
    check_order(exported)
    rows = exported_marks(exported)
    if VERDICTS_COLUMN not in exported.columns:
        return
    for pos, (marks, shown, names_cell) in enumerate(
        zip(rows, exported["human_verdict"].tolist(), exported["reviewers"].tolist()), start=1
    ):
        if not marks and shown == "" and names_cell == "":
            continue
        found = {m.verdict for m in marks}
        expected = "" if not found else next(iter(found)) if len(found) == 1 else review.CONFLICT
        names = {n.strip() for n in str(names_cell).split(";") if n.strip()}
        if str(shown).strip().lower() != expected or names != {m.reviewer for m in marks}:
            listed = "; ".join(f"{m.reviewer}: {m.verdict}" for m in marks) or "no verdict"
            raise InputError(
                f"{_where(pos)}: human_verdict {_short(str(shown))} and reviewers {_short(str(names_cell))} do not "
                f"match column {VERDICTS_COLUMN!r} ({_short(listed, 120)}). Edit both to agree, or delete the "
                f"{VERDICTS_COLUMN!r} column to restore from human_verdict, reviewers, reason and note alone."
            )


def _check_decisions(exported: pd.DataFrame) -> None:
    """An adjudicator's decision is restored only when it is correct or wrong and names who."""
    if "decision" not in exported.columns:
        return
    names = exported.get("adjudicator", pd.Series([""] * len(exported)))
    for pos, (decision, name) in enumerate(zip(exported["decision"].tolist(), names.tolist()), start=1):
        value = str(decision if decision == decision and decision is not None else "").strip().lower()
        if value and value not in review.VERDICTS:
            raise InputError(f"{_where(pos, 'decision')}: {_short(str(decision))} is not correct, wrong or empty.")
        if value and not str(name if name == name and name is not None else "").strip():
            raise InputError(f"{_where(pos, 'adjudicator')}: a decision needs the adjudicator's name.")


def split_exported(frame: pd.DataFrame, neutralised: bool = True) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(input columns, export-derived columns or None) of an uploaded table.

    A table is an export when it has every column of :data:`EXPORT_COLUMNS`; then the ``'``
    added by CSV neutralisation is removed from every cell and header, and the verdict cells are
    checked (:class:`InputError` names the first bad row and column). Any other table is returned
    as is. ``neutralised``: False for JSON lines and Parquet, whose cells are written raw.
    """
    if not set(EXPORT_COLUMNS) <= {str(c) for c in frame.columns}:
        return frame, None
    if neutralised:
        clean = pd.DataFrame({i: unneutralise(frame.iloc[:, i]) for i in range(frame.shape[1])}, index=frame.index)
        clean.columns = [unneutralise_name(str(c)) for c in frame.columns]
    else:
        clean = frame.copy()
    derived = [c for c in clean.columns if c in DERIVED_COLUMNS]
    inputs = clean[[c for c in clean.columns if c not in DERIVED_COLUMNS]]
    exported = clean[derived].reset_index(drop=True)
    _check_exported(exported)
    return inputs.astype(str), exported


def exported_model(exported: pd.DataFrame | None) -> str | None:
    """The model an uploaded export names (:data:`~scoring.core.export_format.MODEL_COLUMN`, the
    same on every row), for the restored run; None when it names none or several."""
    if exported is None or MODEL_COLUMN not in exported.columns:
        return None
    names = {str(v).strip() for v in exported[MODEL_COLUMN].tolist() if v is not None and v == v}
    names.discard("")
    return names.pop() if len(names) == 1 else None
