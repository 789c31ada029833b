"""promptfoo ``eval -o out.json`` (``results.results[]``) or ``-o out.jsonl`` (one result a line).

Columns, for each result (one test case x prompt x provider):

* ``question``: ``vars.question``, else ``vars.prompt`` (exact name first, then ignoring case);
  else the rendered prompt ``prompt.raw``.
* ``answer``: ``vars.answer``, else ``vars.expected``: promptfoo has no fixed field for the golden
  answer, these are the conventional names. Else, when the test case has exactly one ``equals``,
  ``contains``, ``icontains`` or ``starts-with`` assertion with a text value, that value. When no
  result has a golden answer there is no ``answer`` column at all (the column mapping then names
  one of the ``var_<name>`` columns); when only some have, the first without one is refused.
* ``response``: ``response.output`` ("" when the provider errored; ``error`` says why).
* ``model``: ``provider.label``, else ``provider.id`` (both kept as ``provider_id``,
  ``provider_label``).
* ``task``: the config's ``description`` (``.json`` only), when it has one.
* ``Domain``: the var ``domain_field``; by default a var named ``Domain``, ``domain`` or
  ``category``.
* ``language``: the var ``language`` (any case), when the test has one.
* ``sample_id``: ``testIdx`` (the test case; the same for every prompt and provider).
* Extras: ``var_<name>`` for every other var, ``prompt_raw``, ``prompt_label``, ``assert`` (the test
  case's assertions, JSON), and every other field of the result under its own name (``success``,
  ``score``, ``gradingResult``, ``namedScores``, ``latencyMs``, ``cost``, ``id``, ``promptIdx``...).
"""

from __future__ import annotations

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

WHAT = "promptfoo output"
QUESTION_KEYS = ("question", "prompt")
ANSWER_KEYS = ("answer", "expected")
_ASSERT_TYPES = ("equals", "contains", "icontains", "starts-with")
_HANDLED = {"vars", "response", "provider", "prompt", "testCase", "testIdx"}


def looks_like_document(obj: Any) -> bool:
    results = obj.get("results") if isinstance(obj, dict) else None
    return (
        isinstance(results, dict)
        and isinstance(results.get("results"), list)
        and ("evalId" in obj or "version" in results or "prompts" in results)
    )


def looks_like_result(obj: Any) -> bool:
    return isinstance(obj, dict) and "vars" in obj and "response" in obj and ("provider" in obj or "testIdx" in obj)


def read(data: bytes, filename: str | None, domain_field: str | None = None) -> pl.DataFrame:
    text = decode(data, WHAT)
    stripped = text.lstrip()
    task = None
    if stripped.startswith("{") and not _is_jsonl(stripped):
        doc = load_json(text, WHAT)
        if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
            raise InputError(f"{WHAT}: the JSON has no 'results' object (is this promptfoo's -o out.json?).")
        results = doc["results"].get("results")
        if not isinstance(results, list):
            raise InputError(f"{WHAT}: 'results.results' is not a list.")
        items = [(f"result {n}", r) for n, r in enumerate(results, start=1)]
        description = (doc.get("config") or {}).get("description") if isinstance(doc.get("config"), dict) else None
        task = description if isinstance(description, str) and description else None
    else:
        items = [(f"line {n}", r) for n, r in json_lines(text, WHAT)]
    for where, result in items:
        if not isinstance(result, dict):
            raise InputError(f"{WHAT}, {where}: not a JSON object.")
    with_domain = want_domain([_vars(r, w) for w, r in items], domain_field, WHAT, "result's vars")
    rows = [_row(where, result, task, domain_field, with_domain) for where, result in items]
    with_answer = ["answer" in row for row in rows]
    if any(with_answer) and not all(with_answer):
        where = items[with_answer.index(False)][0]
        raise InputError(
            f"{WHAT}, {where}: no golden answer (no var {' or '.join(ANSWER_KEYS)}, no single "
            "equals/contains assertion) while other results have one."
        )
    return frame(rows, WHAT)


def _is_jsonl(text: str) -> bool:
    """One result a line: the first line is a whole JSON object, and not the -o out.json document."""
    first = text.split("\n", 1)[0].strip()
    if not first.startswith("{") or not first.endswith("}"):
        return False
    try:
        obj = load_json(first, WHAT)
    except InputError:
        return False
    return isinstance(obj, dict) and not looks_like_document(obj) and "results" not in obj and "evalId" not in obj


def _vars(result: dict[str, Any], where: str) -> dict[str, Any]:
    variables = result.get("vars")
    if variables is None:
        variables = (result.get("testCase") or {}).get("vars") if isinstance(result.get("testCase"), dict) else None
    if variables is None:
        return {}
    if not isinstance(variables, dict):
        raise InputError(f"{WHAT}, {where}: 'vars' is not an object.")
    return variables


def _row(
    where: str, result: dict[str, Any], task: str | None, domain_field: str | None, with_domain: bool
) -> dict[str, str]:
    variables = _vars(result, where)
    if "response" not in result and "error" not in result:
        raise InputError(f"{WHAT}, {where}: no 'response' field (and no 'error').")
    response = result.get("response")
    if response is not None and not isinstance(response, dict):
        raise InputError(f"{WHAT}, {where}: 'response' is not an object.")
    prompt = result.get("prompt") if isinstance(result.get("prompt"), dict) else {}
    provider = result.get("provider")
    if isinstance(provider, str):
        provider = {"id": provider}
    if not isinstance(provider, dict) or not (provider.get("label") or provider.get("id")):
        raise InputError(f"{WHAT}, {where}: no provider id or label to name the model.")
    test_case = result.get("testCase") if isinstance(result.get("testCase"), dict) else {}
    qkey = pick(variables, QUESTION_KEYS)
    if qkey is None and prompt.get("raw") is None:
        raise InputError(
            f"{WHAT}, {where}: no var question or prompt and no rendered prompt. Vars: "
            + (", ".join(map(str, variables)) or "none")
            + "."
        )
    akey = pick(variables, ANSWER_KEYS)
    row: dict[str, str] = {"question": cell(variables[qkey] if qkey is not None else prompt["raw"])}
    if akey is not None:
        row["answer"] = cell(variables[akey])
    else:
        golden = _assertion_value(test_case)
        if golden is not None:
            row["answer"] = golden
    row["response"] = cell((response or {}).get("output"))
    dkey = domain_key(variables, domain_field) if with_domain else None
    if with_domain:
        row["Domain"] = cell(variables.get(dkey)) if dkey is not None else ""
    lkey = put_language(row, variables)
    row["model"] = cell(provider.get("label") or provider.get("id"))
    if task is not None:
        row["task"] = task
    if "testIdx" in result:
        row["sample_id"] = cell(result["testIdx"])
    for key, value in variables.items():
        if key not in (qkey, akey, dkey, lkey):
            put_extra(row, f"var_{key}", value)
    put_extra(row, "provider_id", provider.get("id"))
    put_extra(row, "provider_label", provider.get("label"))
    put_extra(row, "prompt_raw", prompt.get("raw"))
    put_extra(row, "prompt_label", prompt.get("label"))
    if "assert" in test_case:
        put_extra(row, "assert", test_case["assert"])
    for key, value in result.items():
        if key not in _HANDLED:
            put_extra(row, key, value)
    return row


def _assertion_value(test_case: dict[str, Any]) -> str | None:
    asserts = test_case.get("assert")
    if not isinstance(asserts, list):
        return None
    values = [a.get("value") for a in asserts if isinstance(a, dict) and a.get("type") in _ASSERT_TYPES]
    if len(values) == 1 and isinstance(values[0], str):
        return values[0]
    return None
