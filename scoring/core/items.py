"""Stable item keys: human and judge verdicts attach to the row's content, not to a run."""

from __future__ import annotations

import hashlib
import json


def item_key(question: str, answer: str, response: str) -> str:
    """sha256 of (question, answer, response) as a JSON array, so no separator can collide."""
    payload = json.dumps([question, answer, response], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
