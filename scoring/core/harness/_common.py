"""What the three harness readers share: cell text, the frame they build, JSON parsing with errors
that name the place."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

from scoring.core.errors import InputError
from scoring.core.text_tables import cell_text as cell  # every cell is text, as the loader makes it of any JSON value

CORE = ("question", "answer", "response", "Domain", "language", "model", "task", "sample_id")
DOMAIN_KEYS = ("Domain", "domain", "category")
LANGUAGE_KEY = "language"


def frame(rows: list[dict[str, str]], what: str) -> pl.DataFrame:
    """One string column per field, the core columns first (those present), then the extras in
    the order they were first seen; a row without a field gets ""."""
    if not rows:
        raise InputError(f"{what}: no samples in the file.")
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    names = [c for c in CORE if c in seen] + [c for c in seen if c not in CORE]
    return pl.DataFrame({n: [row.get(n, "") for row in rows] for n in names}, schema={n: pl.String for n in names})


def put_extra(row: dict[str, str], name: str, value: Any) -> None:
    """An extra column; a source field named like a core column is kept as ``source_<name>``."""
    while name in CORE or name in row:
        name = f"source_{name}"
    row[name] = cell(value)


def pick(mapping: Mapping[str, Any], keys: Iterable[str]) -> str | None:
    """The first of ``keys`` that ``mapping`` has (exact name first, then ignoring case)."""
    keys = list(keys)
    for key in keys:
        if key in mapping:
            return key
    lowered = {str(k).lower(): k for k in mapping}
    for key in keys:
        if key.lower() in lowered:
            return lowered[key.lower()]
    return None


def put_language(row: dict[str, str], mapping: Mapping[str, Any]) -> str | None:
    """A sample's language, from its field ``language`` (exact name first, then ignoring case),
    as the row's ``language`` column; the key used (None when it has none)."""
    key = pick(mapping, (LANGUAGE_KEY,))
    if key is not None:
        row["language"] = cell(mapping[key])
    return key


def domain_key(mapping: Mapping[str, Any], domain_field: str | None) -> str | None:
    """The field of one sample that holds its domain: ``domain_field`` when given, else one named
    Domain, domain or category; None when it has none."""
    if domain_field is not None:
        return domain_field if domain_field in mapping else None
    for key in DOMAIN_KEYS:
        if key in mapping:
            return key
    return None


def want_domain(mappings: Iterable[Mapping[str, Any]], domain_field: str | None, what: str, where: str) -> bool:
    """Whether the table gets a Domain column: when some sample has the field. A chosen
    ``domain_field`` that no sample has is refused, naming the fields there are; a sample without
    it gets ""."""
    fields: dict[str, None] = {}
    for mapping in mappings:
        if domain_key(mapping, domain_field) is not None:
            return True
        fields.update(dict.fromkeys(map(str, mapping)))
    if domain_field is not None:
        raise InputError(
            f"{what}: no {where} has a field {domain_field!r} to take the domain from. "
            f"Fields: {', '.join(fields) or 'none'}."
        )
    return False


def decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{what}: the file is not UTF-8 text (byte {exc.start}).") from None


def load_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise InputError(f"{what}: the JSON is nested too deeply to read.") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{what}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}).") from None


def json_lines(text: str, what: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; a line that is not a JSON object is refused."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except RecursionError:
            raise InputError(f"{what}: line {number} is nested too deeply to read.") from None
        except json.JSONDecodeError as exc:
            raise InputError(f"{what}: line {number} is not valid JSON (column {exc.colno}: {exc.msg}).") from None
        if not isinstance(value, dict):
            raise InputError(f"{what}: line {number} is a JSON {type(value).__name__}, not an object.")
        out.append((number, value))
    return out
