"""What a judge run works on and reports: items, results, the run summary, cost, and the
preflight that says what a run would send (reads the cache, sends nothing).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import pandas as pd
from sqlalchemy import Engine

from scoring.core.items import item_key
from scoring.core.judge_labels import CORRECT, SCORED
from scoring.core.protocols import is_blank
from scoring.judge.judge_settings import JudgeSettings
from scoring.judge.prompt import PROMPT_VERSION, SYSTEM_MESSAGE, build_prompt
from scoring.store import judge_cache


# ---------------------------------------------------------------------------------------------
# Items and results
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgeItem:
    """One row to judge. Verdicts attach to its content (see :func:`scoring.core.items.item_key`)."""

    question: str
    answer: str
    response: str

    @property
    def key(self) -> str:
        return item_key(self.question, self.answer, self.response)

    @property
    def is_blank(self) -> bool:
        return is_blank(self.response)


ItemLike = JudgeItem | tuple[str, str, str] | Mapping[str, str]


def as_item(item: ItemLike) -> JudgeItem:
    if isinstance(item, JudgeItem):
        return item
    if isinstance(item, Mapping):
        return JudgeItem(str(item.get("question", "")), str(item["answer"]), str(item["response"]))
    question, answer, response = item
    return JudgeItem(str(question), str(answer), str(response))


def items_from_frame(frame: pd.DataFrame) -> list[JudgeItem]:
    """Items from a loaded/scored frame (``question``, ``answer``, ``response`` columns)."""
    questions = frame["question"] if "question" in frame.columns else [""] * len(frame)
    return [JudgeItem(str(q), str(a), str(r)) for q, a, r in zip(questions, frame["answer"], frame["response"])]


@dataclass(frozen=True)
class JudgeResult:
    """The judge's outcome for one row, aligned with the items passed in."""

    item_key: str
    label: str  # CORRECT / INCORRECT / NOT_ATTEMPTED / UNPARSED / ERROR / CANCELLED
    raw: str = ""
    error_class: str = ""
    is_blank: bool = False
    cached: bool = False
    shared: bool = False  # answered by another identical row's request in this run
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    system_fingerprint: str | None = None
    retries: int = 0
    cache_key: str = ""

    @property
    def is_correct(self) -> bool | None:
        """True/False for scored labels; None for UNPARSED/ERROR/CANCELLED (never a silent False)."""
        return self.label == CORRECT if self.label in SCORED else None


@dataclass
class JudgeSummary:
    """What a run did: rows, cache hits, requests, tokens, cost and failures."""

    rows: int = 0
    blank: int = 0
    cached: int = 0
    shared: int = 0
    requests: int = 0  # requests started by this run (the SDK's retries not included)
    retries: int = 0  # SDK retries reported on successful replies
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    errors: int = 0
    unparsed: int = 0
    cancelled: int = 0
    error_classes: dict[str, int] = field(default_factory=dict)
    structured_fallback: bool = False
    elapsed_s: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "tokens": self.tokens}


@dataclass
class JudgeRun:
    """Results (one per item, in order) and the run's summary."""

    results: list[JudgeResult]
    summary: JudgeSummary
    cancelled: bool = False
    fatal_error: str | None = None  # an error class that stopped the run (bad key, unknown model)


def cost_of(settings: JudgeSettings, prompt_tokens: float, completion_tokens: float) -> float | None:
    """Cost from the optional prices per million tokens; None when no price is set."""
    if settings.price_in_per_m is None and settings.price_out_per_m is None:
        return None
    price_in = settings.price_in_per_m or 0.0
    price_out = settings.price_out_per_m or 0.0
    return (prompt_tokens * price_in + completion_tokens * price_out) / 1e6


# ---------------------------------------------------------------------------------------------
# Preflight
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Preflight:
    """What a run would do, computed without sending anything."""

    to_send: int  # requests (identical rows count once)
    cached: int  # rows already judged with these settings
    blank: int  # rows never sent (blank response: incorrect)
    est_tokens: int  # rough: prompt + expected completion tokens of the requests to send
    est_cost: float | None
    rows: int = 0
    shared: int = 0  # rows that ride on another identical row's request


EST_COMPLETION_TOKENS = 40


def estimate_tokens(text: str) -> int:
    """Rough token count: ~4 ASCII characters per token, ~2 per non-ASCII (Indic) character."""
    ascii_chars = len(text.encode("ascii", "ignore"))  # C speed: called once per prompt
    return math.ceil(ascii_chars / 4 + (len(text) - ascii_chars) / 2)


def plan_groups(settings: JudgeSettings, items: Sequence[JudgeItem]) -> tuple[dict[str, list[int]], list[int]]:
    """Cache key -> row indices for rows to judge, and the indices of blank rows."""
    groups: dict[str, list[int]] = {}
    blanks: list[int] = []
    output = settings.output_settings()
    for i, item in enumerate(items):
        if item.is_blank:
            blanks.append(i)
            continue
        key = judge_cache.cache_key(settings.model, PROMPT_VERSION, output, item.question, item.answer, item.response)
        groups.setdefault(key, []).append(i)
    return groups, blanks


def preflight(engine: Engine, settings: JudgeSettings, items: Iterable[ItemLike]) -> Preflight:
    """Rows to send, rows cached, blank rows, estimated tokens and cost (nothing is sent)."""
    rows = [as_item(it) for it in items]
    groups, blanks = plan_groups(settings, rows)
    hits = judge_cache.lookup(engine, groups)
    cached = sum(len(idx) for key, idx in groups.items() if key in hits)
    todo = {key: idx for key, idx in groups.items() if key not in hits}
    prompt_tokens = 0
    for idx in todo.values():
        item = rows[idx[0]]
        prompt_tokens += estimate_tokens(SYSTEM_MESSAGE + build_prompt(item.question, item.answer, item.response))
    completion = len(todo) * min(EST_COMPLETION_TOKENS, settings.max_tokens or EST_COMPLETION_TOKENS)
    return Preflight(
        to_send=len(todo),
        cached=cached,
        blank=len(blanks),
        est_tokens=prompt_tokens + completion,
        est_cost=cost_of(settings, prompt_tokens, completion),
        rows=len(rows),
        shared=sum(len(idx) - 1 for idx in todo.values()),
    )
