"""Harness logs in: Inspect AI, lm-evaluation-harness ``--log_samples`` and promptfoo output.

``sniff`` tells which harness wrote a file (by content as much as by extension); ``read_harness``
turns it into one polars DataFrame of strings with ``question``, ``answer`` (golden), ``response``
and, when known, ``Domain``, ``language``, ``model``, ``task``, ``sample_id``, then every other source field as
an extra column (scores, epochs, metadata, ids) so an export carries them back. Each cell is text:
JSON numbers and booleans become their literal text (``1``, ``true``), nested values compact JSON,
null "". Each reader's module docstring says where each column comes from and what it chose
(Inspect's list targets and chat inputs, the golden var in promptfoo, the default domain field).
Malformed input raises ``InputError`` naming the field and the sample or line.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePath

import polars as pl

from scoring.core.errors import InputError
from scoring.core.harness import inspect_log, lm_eval, promptfoo

KINDS = ("inspect", "lm_eval", "promptfoo")
_PREFIX = 1 << 18
_FIRST_LINE = 1 << 20


def sniff(data: bytes, filename: str | None) -> str | None:
    """'inspect' | 'lm_eval' | 'promptfoo' | None, decided by content (zip with header.json for .eval;
    JSON keys) as much as by extension."""
    ext = PurePath(filename).suffix.lower() if filename else ""
    if data.startswith(b"PK\x03\x04"):
        return "inspect" if inspect_log.is_eval_zip(data) or ext == ".eval" else None
    if ext == ".eval":
        return "inspect"  # not a zip: the reader says so
    head = data[:_PREFIX].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"{"):
        return None
    end = data.find(b"\n", 0, _FIRST_LINE)
    first_line = data[: end if end >= 0 else _FIRST_LINE]
    try:
        obj = json.loads(first_line.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):  # too deep: not a log; the reader names it
        obj = None
    if isinstance(obj, dict):
        if lm_eval.looks_like(obj):
            return "lm_eval"
        if promptfoo.looks_like_result(obj):
            return "promptfoo"
        if promptfoo.looks_like_document(obj):
            return "promptfoo"
        if isinstance(obj.get("eval"), dict) and "task" in obj["eval"] and "model" in obj["eval"]:
            return "inspect"
        return None
    # A pretty-printed JSON document: its first keys tell.
    text = head.decode("utf-8", "ignore")
    if re.match(r'\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"\w+"\s*,\s*"eval"\s*:\s*\{', text):
        return "inspect"
    if re.match(r'\{\s*"evalId"\s*:', text) or re.search(
        r'"results"\s*:\s*\{\s*"version"\s*:\s*\d+\s*,\s*"timestamp"', text
    ):
        return "promptfoo"
    return None


def read_harness(
    kind: str,
    data: bytes,
    filename: str | None,
    domain_field: str | None = None,
    companions: dict[str, bytes] | None = None,
) -> pl.DataFrame:
    """companions: other files uploaded together (lm-eval's results_*.json beside samples_*.jsonl gives the model)."""
    if kind == "inspect":
        return inspect_log.read(data, filename, domain_field)
    if kind == "lm_eval":
        return lm_eval.read(data, filename, domain_field, companions)
    if kind == "promptfoo":
        return promptfoo.read(data, filename, domain_field)
    raise InputError(f"Unknown harness log kind {kind!r}: expected one of {', '.join(KINDS)}.")


__all__ = ["KINDS", "read_harness", "sniff"]
