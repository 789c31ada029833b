"""lm-evaluation-harness ``--log_samples`` output (``samples_<task>_<datetime>.jsonl``), one row a line.

Columns:

* ``question``: the first of the doc's keys ``question``, ``query``, ``input``, ``prompt`` (exact
  name first, then ignoring case); when the doc has none of them, the rendered prompt the harness
  sent (``arguments.gen_args_0.arg_0``, as it logged it).
* ``answer``: ``target`` (a list target gives its first element, as for Inspect; the raw value
  stays in ``target``).
* ``response``: ``filtered_resps``, first element, flattened (``[["x"]]`` gives ``x``): the answer
  after the task's filters.
* ``Domain``: the doc field ``domain_field``; by default a doc key named ``Domain``, ``domain`` or
  ``category``.
* ``language``: the doc field ``language`` (any case), when the doc has one.
* ``model``: from the companion ``results_<datetime>.json`` uploaded with it (the one with the same
  datetime, else one whose results name the task, else the only one): its ``model_name``, else
  ``config.model_args``'s ``model=``/``pretrained=``. Without one, the folder the file sits in
  (lm-eval writes ``OUT/<model>/samples_*.jsonl``) or else the file's name.
* ``task``: from the file name ``samples_<task>_<datetime>.jsonl``, else the results file when it
  holds one task.
* ``sample_id``: ``doc_id``.
* Extras: ``doc_<key>`` for every other doc field, and every other field of the line under its own
  name (``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter``, ``metrics``, the
  hashes, and each metric's value such as ``exact_match``).
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any

import polars as pl

from scoring.core.errors import InputError
from scoring.core.harness._common import (
    cell,
    decode,
    domain_key,
    frame,
    json_lines,
    load_json,
    pick,
    put_extra,
    put_language,
    want_domain,
)

WHAT = "lm-evaluation-harness samples file"
QUESTION_KEYS = ("question", "query", "input", "prompt")
_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl?$")
_RESULTS_NAME = re.compile(r"^results_(?P<stamp>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.json$")


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and "doc_id" in obj and "doc" in obj and ("filtered_resps" in obj or "resps" in obj)


def read(
    data: bytes, filename: str | None, domain_field: str | None = None, companions: dict[str, bytes] | None = None
) -> pl.DataFrame:
    lines = json_lines(decode(data, WHAT), WHAT)
    name = PurePath(filename).name if filename else ""
    match = _SAMPLES_NAME.match(name)
    task = match["task"] if match else None
    results = _results(companions or {}, match["stamp"] if match else None, task)
    model = _model(results, filename)
    if task is None and results is not None and len(results.get("results") or {}) == 1:
        task = next(iter(results["results"]))
    docs = [obj["doc"] for _, obj in lines if isinstance(obj.get("doc"), dict)]
    with_domain = want_domain(docs, domain_field, WHAT, "line's doc")
    rows = [_row(number, obj, model, task, domain_field, with_domain) for number, obj in lines]
    return frame(rows, WHAT)


def _row(
    number: int, obj: dict[str, Any], model: str, task: str | None, domain_field: str | None, with_domain: bool
) -> dict[str, str]:
    where = f"line {number}"
    for field in ("doc_id", "doc", "target", "filtered_resps"):
        if field not in obj:
            raise InputError(f"{WHAT}, {where}: no {field!r} field (is this a --log_samples file?).")
    doc = obj["doc"]
    if not isinstance(doc, dict):
        raise InputError(f"{WHAT}, {where}: 'doc' is not an object.")
    qkey = pick(doc, QUESTION_KEYS)
    question = doc[qkey] if qkey is not None else _rendered_prompt(obj)
    if question is None:
        raise InputError(
            f"{WHAT}, {where}: the doc has none of the fields {', '.join(QUESTION_KEYS)} and the "
            "line has no rendered prompt in 'arguments'. Fields: " + ", ".join(map(str, doc)) + "."
        )
    target = obj["target"]
    row = {
        "question": cell(question),
        "answer": cell(target[0] if isinstance(target, list) and target else ("" if target == [] else target)),
        "response": cell(_first(obj["filtered_resps"])),
    }
    dkey = domain_key(doc, domain_field) if with_domain else None
    if with_domain:
        row["Domain"] = cell(doc.get(dkey)) if dkey is not None else ""
    lkey = put_language(row, doc)
    row["model"] = model
    if task is not None:
        row["task"] = task
    row["sample_id"] = cell(obj["doc_id"])
    for key, value in doc.items():
        if key not in (qkey, dkey, lkey):
            put_extra(row, f"doc_{key}", value)
    for key, value in obj.items():
        if key not in ("doc", "doc_id"):
            put_extra(row, key, value)
    return row


def _first(value: Any) -> Any:
    while isinstance(value, list):
        if not value:
            return ""
        value = value[0]
    return value


def _rendered_prompt(obj: dict[str, Any]) -> Any:
    arguments = obj.get("arguments")
    if isinstance(arguments, dict) and arguments:
        first = next(iter(arguments.values()))
        if isinstance(first, dict) and "arg_0" in first:
            return _first(first["arg_0"])
    return None


def _results(companions: dict[str, bytes], stamp: str | None, task: str | None) -> dict[str, Any] | None:
    found: list[tuple[str | None, dict[str, Any]]] = []
    for name, data in companions.items():
        base = PurePath(name).name
        match = _RESULTS_NAME.match(base)
        if not match and not base.endswith(".json"):
            continue
        what = f"lm-evaluation-harness results file {base}"
        obj = load_json(decode(data, what), what)
        if isinstance(obj, dict) and ("model_name" in obj or "config" in obj) and "results" in obj:
            found.append((match["stamp"] if match else None, obj))
    if not found:
        return None
    for found_stamp, obj in found:
        if stamp is not None and found_stamp == stamp:
            return obj
    with_task = [obj for _, obj in found if task is not None and task in (obj.get("results") or {})]
    if len(with_task) == 1:
        return with_task[0]
    return found[0][1] if len(found) == 1 else None


def _model(results: dict[str, Any] | None, filename: str | None) -> str:
    if results is not None:
        if isinstance(results.get("model_name"), str) and results["model_name"]:
            return results["model_name"]
        args = (results.get("config") or {}).get("model_args")
        if isinstance(args, dict):
            for key in ("model", "pretrained"):
                if args.get(key):
                    return cell(args[key])
        if isinstance(args, str) and args:
            parts = dict(p.split("=", 1) for p in args.split(",") if "=" in p)
            return parts.get("model") or parts.get("pretrained") or args
    if filename:
        path = PurePath(filename)
        if path.parent.name:
            return path.parent.name
        return path.stem
    return "lm-eval"
