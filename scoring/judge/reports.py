"""Judge labels read back from the cache (what they add up to: :mod:`scoring.core.judge_accuracy`)."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
from sqlalchemy import Engine

from scoring.core.judge_labels import INCORRECT
from scoring.core.protocols import is_blank
from scoring.judge.plan import items_from_frame
from scoring.judge.prompt import PROMPT_VERSION
from scoring.store import judge_cache


# ---------------------------------------------------------------------------------------------
# Reading stored labels
# ---------------------------------------------------------------------------------------------
def stored_labels(
    engine: Engine,
    item_keys: Iterable[str],
    model: str | None = None,
    prompt_version: str | None = PROMPT_VERSION,
) -> dict[str, str]:
    """Item key -> the latest stored judge label (a reply beats an ERROR; latest reply wins).

    ``model=None`` accepts any model; ``prompt_version=None`` any prompt version. Items never
    judged are absent. Blank responses are never sent, so they are absent too (they are INCORRECT
    by rule: :func:`attach_judge_labels` fills them in).
    """
    return judge_cache.latest_labels(engine, item_keys, model, prompt_version)


def attach_judge_labels(
    engine: Engine,
    frame: pd.DataFrame,
    model: str | None = None,
    prompt_version: str | None = PROMPT_VERSION,
) -> pd.DataFrame:
    """A copy of ``frame`` with ``judge_label`` (blank rows INCORRECT, unjudged rows missing)."""
    out = frame.copy()
    # A stored run already carries its item keys; hashing 100,000 rows again costs seconds.
    keys = frame["item_key"].tolist() if "item_key" in frame.columns else [i.key for i in items_from_frame(frame)]
    labels = stored_labels(engine, keys, model=model, prompt_version=prompt_version)
    blank = frame["response"].map(is_blank).tolist()
    out["judge_label"] = pd.array([INCORRECT if b else labels.get(k) for k, b in zip(keys, blank)], dtype="string")
    return out
