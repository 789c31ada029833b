"""Where judge verdicts are kept: one append-only table, read as a cache and as a label source.

A verdict is filed under a cache key that hashes everything that can change the judge's reply
(model, prompt version, output-affecting settings, question, answer, response), so a re-run sends
nothing for rows already judged and a new prompt version or model never reuses old verdicts.
The API key is not an input to anything here: it cannot reach a row.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import DateTime, Engine, Index, Integer, String, Text, func, insert, select
from sqlalchemy.orm import Mapped, mapped_column

from scoring.store.chunked import write_in_chunks
from scoring.store.engine import Base
from scoring.store.orm_tables import utcnow

#: Labels that are a reply from the model; ERROR rows are kept for the record but never reused.
REUSABLE = ("CORRECT", "INCORRECT", "NOT_ATTEMPTED", "UNPARSED")
ERROR = "ERROR"
_CHUNK = 500  # keys per IN (...) query, well under every backend's bound-parameter limit
#: Verdicts in the first write transaction: a verdict costs 0.2-0.3 ms inside the lock (two
#: random-hash indexes), so this is well under the target; later chunks adapt to it.
FIRST_CHUNK = 100


class JudgeVerdict(Base):
    """One judge call's outcome. Rows are only ever inserted; the latest reusable one wins."""

    __tablename__ = "judge_verdicts"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cache_key: Mapped[str] = mapped_column(String(64), index=True)
    item_key: Mapped[str] = mapped_column(String(64), index=True)
    model: Mapped[str] = mapped_column(String(200))
    prompt_version: Mapped[str] = mapped_column(String(40))
    settings: Mapped[str] = mapped_column(Text, default="{}")  # JSON: output-affecting settings only
    label: Mapped[str] = mapped_column(String(20))
    raw: Mapped[str] = mapped_column(Text, default="")
    error_class: Mapped[str] = mapped_column(String(100), default="")
    prompt_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    completion_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    system_fingerprint: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (Index("ix_judge_verdicts_model_version", "model", "prompt_version"),)


def cache_key(
    model: str,
    prompt_version: str,
    settings: Mapping[str, object],
    question: str,
    answer: str,
    response: str,
) -> str:
    """sha256 of a JSON array of every input that can change the reply (settings sorted by name)."""
    payload = json.dumps(
        [model, prompt_version, dict(sorted(settings.items())), question, answer, response],
        ensure_ascii=False,
        separators=(",", ":"),
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class StoredVerdict:
    """A verdict read back from the table (what a cache hit returns)."""

    cache_key: str
    item_key: str
    model: str
    prompt_version: str
    label: str
    raw: str
    error_class: str
    prompt_tokens: int | None
    completion_tokens: int | None
    system_fingerprint: str | None
    created_at: datetime


def _chunks(keys: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(keys), _CHUNK):
        yield keys[start : start + _CHUNK]


def _verdict(row: Mapping[str, object]) -> StoredVerdict:
    return StoredVerdict(**{name: row[name] for name in StoredVerdict.__dataclass_fields__})  # type: ignore[arg-type]


def lookup(engine: Engine, cache_keys: Iterable[str]) -> dict[str, StoredVerdict]:
    """The latest reusable verdict per cache key; keys never judged (or only errored) are absent."""
    keys = sorted(set(cache_keys))
    found: dict[str, StoredVerdict] = {}
    with engine.connect() as conn:
        for chunk in _chunks(keys):
            stmt = (
                select(JudgeVerdict)
                .where(JudgeVerdict.cache_key.in_(chunk), JudgeVerdict.label.in_(REUSABLE))
                .order_by(JudgeVerdict.id)
            )
            for row in conn.execute(stmt).mappings():
                # Ascending id: later rows overwrite earlier ones, so the latest wins.
                found[row["cache_key"]] = _verdict(row)
    return found


def save(engine: Engine, rows: Sequence[Mapping[str, object]]) -> None:
    """Insert verdict rows (dicts with JudgeVerdict's column names) in short transactions.

    Each transaction holds the write lock for about 40 ms (:mod:`scoring.store.chunked`), so a
    reviewer's mark never waits behind a judge run. Rows are independent cache entries, so a
    failure part-way keeps the chunks already written (they are valid verdicts).
    """
    if not rows:
        return
    allowed = set(JudgeVerdict.__table__.columns.keys()) - {"id"}
    clean = []
    for row in rows:
        unknown = set(row) - allowed
        if unknown:
            raise ValueError(f"unknown judge_verdicts columns: {sorted(unknown)}")
        values = dict(row)
        values.setdefault("created_at", utcnow())
        clean.append(values)
    write_in_chunks(engine, clean, lambda conn, chunk: conn.execute(insert(JudgeVerdict), chunk), FIRST_CHUNK)


def latest_by_item(
    engine: Engine,
    item_keys: Iterable[str],
    model: str | None = None,
    prompt_version: str | None = None,
) -> dict[str, StoredVerdict]:
    """Per item key, the latest verdict from a model reply, else the latest ERROR row.

    ``model`` / ``prompt_version`` restrict the rows considered; None means any.
    """
    keys = sorted(set(item_keys))
    replied: dict[str, StoredVerdict] = {}
    errored: dict[str, StoredVerdict] = {}
    with engine.connect() as conn:
        for chunk in _chunks(keys):
            stmt = select(JudgeVerdict).where(JudgeVerdict.item_key.in_(chunk))
            if model is not None:
                stmt = stmt.where(JudgeVerdict.model == model)
            if prompt_version is not None:
                stmt = stmt.where(JudgeVerdict.prompt_version == prompt_version)
            for row in conn.execute(stmt.order_by(JudgeVerdict.id)).mappings():
                verdict = _verdict(row)
                target = errored if verdict.label == ERROR else replied
                target[verdict.item_key] = verdict
    return {key: replied.get(key) or errored[key] for key in keys if key in replied or key in errored}


def latest_labels(
    engine: Engine, item_keys: Iterable[str], model: str | None = None, prompt_version: str | None = None
) -> dict[str, str]:
    """Item key -> the label of :func:`latest_by_item`: what the export, the estimate and the
    trust report read."""
    return {key: verdict.label for key, verdict in latest_by_item(engine, item_keys, model, prompt_version).items()}


def count_rows(engine: Engine) -> int:
    """Number of stored verdicts (all models, all versions)."""
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(JudgeVerdict)).scalar_one())


def revision(engine: Engine) -> int:
    """Id of the newest stored verdict: a cheap cache key that changes after every judge batch."""
    with engine.connect() as conn:
        return int(conn.execute(select(func.max(JudgeVerdict.id))).scalar() or 0)
