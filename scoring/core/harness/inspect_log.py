"""Inspect AI logs (``.eval`` zip or ``.json``): one row per sample and epoch.

Columns:

* ``question``: the sample's ``input``. A string as is; a list of chat messages becomes the texts
  of its ``system`` and ``user`` messages, in order, joined with a blank line (``"\\n\\n"``);
  assistant and tool messages (few-shot turns, tool results) are left out. A message whose content
  is a list of parts contributes its text parts joined with a newline (as Inspect's
  ``ChatMessage.text`` does); images and other media are left out.
* ``answer``: the ``target``. Inspect's list target means "any of these is right" (its
  ``includes``/``match`` scorers pass when one of them matches), while the spec's two protocols
  compare ONE golden string with the response. Joining the list ("a | b") would make the exact
  substring protocol fail on every correct response, so ``answer`` is the FIRST element (the
  primary form, by Inspect's convention) and ``target`` keeps the whole list as compact JSON: the
  deterministic score is then a lower bound, as the spec says it is anyway, and a reviewer sees
  the alternatives in ``target``.
* ``response``: ``output.completion`` ("" when the sample has no output, e.g. it errored).
* ``model``, ``task``: the header's ``eval.model`` and ``eval.task``.
* ``Domain``: the metadata field ``domain_field``; by default a metadata key named ``Domain``,
  ``domain`` or ``category`` when a sample has one (no column when none has).
* ``language``: the metadata key ``language`` (any case), when a sample has one (a row's
  language, :mod:`scoring.core.row_language`).
* ``sample_id``: the sample's ``id``; with several epochs it repeats, and ``epoch`` tells them
  apart ((sample_id, epoch) is unique).
* Extras: ``epoch``, ``target`` (raw), ``metadata_<key>`` for every other metadata key,
  ``score_<scorer>`` (the score's value), ``score_<scorer>_answer`` and
  ``score_<scorer>_explanation`` (when the scorer gave them), ``stop_reason``, ``error`` (the
  sample's error message), ``uuid``, ``total_time``, ``working_time``, and from the header
  ``eval_id``, ``run_id``, ``created``, ``status``. The transcript (messages, events) stays in the
  log. Inspect's scores are its own verdicts, kept beside ours, never in place of them.

Read with ``inspect_ai.log.read_eval_log`` when ``inspect_ai`` is importable (it validates the log
against its own schema); otherwise by the layout: a zip holding ``header.json`` and
``samples/<id>_epoch_<n>.json`` (zstd members need ``zstandard`` or Python 3.14), or one JSON
object with ``eval`` and ``samples``. Both build the row from the same plain data, so they give
the same table.
"""

from __future__ import annotations

import importlib
import io
import json
import struct
import zipfile
import zlib
from typing import Any

import polars as pl

from scoring.core import limits
from scoring.core.errors import InputError
from scoring.core.harness._common import (
    cell,
    decode,
    domain_key,
    frame,
    load_json,
    put_extra,
    put_language,
    want_domain,
)

WHAT = "Inspect AI log"
ATTACHMENT = "attachment://"
_ZSTD = 93


def is_eval_zip(data: bytes) -> bool:
    if not data.startswith(b"PK\x03\x04"):
        return False
    try:
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return False
    return "header.json" in names or "_journal/start.json" in names


def read(
    data: bytes, filename: str | None, domain_field: str | None = None, use_inspect: bool | None = None
) -> pl.DataFrame:
    """The table of an Inspect log; ``use_inspect`` forces (True) or forbids (False) inspect_ai."""
    is_zip = data.startswith(b"PK") or bool(filename and filename.lower().endswith(".eval"))
    if use_inspect is None:
        use_inspect = _inspect_available()
    header, samples = (_read_with_inspect if use_inspect else _read_layout)(data, is_zip)
    return _table(header, samples, domain_field)


def _inspect_available() -> bool:
    try:
        importlib.import_module("inspect_ai.log")
    except Exception:  # noqa: BLE001 (any import failure means: read the layout ourselves)
        return False
    return True


# reading -----------------------------------------------------------------------------------
Labelled = list[tuple[str, Any]]  # (where it is: "sample 2" or the zip member's name, the sample)


def _read_with_inspect(data: bytes, is_zip: bool) -> tuple[dict[str, Any], Labelled]:
    read_eval_log = importlib.import_module("inspect_ai.log").read_eval_log  # optional: imported when present
    if is_zip:
        _check_zip(data)
    try:
        log = read_eval_log(io.BytesIO(data), format="eval" if is_zip else "json")
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 (inspect raises many kinds; the user needs one message)
        raise InputError(f"{WHAT}: Inspect could not read it ({_describe(exc)}).") from None
    header = log.model_dump(mode="json", exclude={"samples"})
    skip = {"messages", "events", "store", "events_data"}
    samples = [(f"sample {n}", s.model_dump(mode="json", exclude=skip)) for n, s in enumerate(log.samples or [], 1)]
    return header, samples


def _describe(exc: Exception) -> str:
    """The first problem, with where it is: pydantic's ValidationError gives ``samples[1].input``."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            place = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.get("loc", ())).lstrip(".")
            return f"{place}: {first.get('msg', '')}"
        except Exception:  # noqa: BLE001 (fall back to the plain message)
            pass
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:300]}" if lines else type(exc).__name__


def _check_zip(data: bytes) -> zipfile.ZipFile:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise InputError(f"{WHAT}: the .eval file is not a readable zip (truncated or damaged: {exc}).") from None
    if "header.json" not in names and "_journal/start.json" not in names:
        raise InputError(f"{WHAT}: the zip holds no header.json, so it is not an Inspect .eval log.")
    bound = limits.current()  # a zip bomb is refused by its members' sizes, before any is unpacked
    if sum(info.file_size for info in archive.infolist()) > bound.unpacked_bytes:
        raise bound.too_large_unpacked(f"{WHAT}: the .eval zip")  # zipfile never unpacks past a member's size
    return archive


def _member(archive: zipfile.ZipFile, data: bytes, name: str) -> Any:
    info = archive.getinfo(name)
    try:
        try:
            raw = archive.read(name)
        except NotImplementedError:  # zstd, before Python 3.14 and without zipfile-zstd loaded
            if info.compress_type != _ZSTD:
                raise
            raw = _zstd(_raw_member(data, info), info.file_size, name)
    except InputError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError, ValueError) as exc:
        raise InputError(f"{WHAT}: {name} in the zip cannot be read (truncated or damaged: {exc}).") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise InputError(f"{WHAT}: {name} in the zip is nested too deeply to read.") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{WHAT}: {name} in the zip is not valid JSON ({exc}).") from None


def _raw_member(data: bytes, info: zipfile.ZipInfo) -> bytes:
    start = info.header_offset
    if data[start : start + 4] != b"PK\x03\x04":
        raise InputError(f"{WHAT}: {info.filename} in the zip cannot be read (bad local header).")
    name_len, extra_len = struct.unpack("<HH", data[start + 26 : start + 30])
    begin = start + 30 + name_len + extra_len
    raw = data[begin : begin + info.compress_size]
    if len(raw) != info.compress_size:
        raise InputError(f"{WHAT}: {info.filename} in the zip is truncated.")
    return raw


def _zstd(raw: bytes, size: int, name: str) -> bytes:
    try:
        zstandard = importlib.import_module("zstandard")
    except ImportError:
        try:
            zstd = importlib.import_module("compression.zstd")  # Python 3.14
        except ImportError:
            raise InputError(
                f"{WHAT}: {name} is zstd-compressed (as Inspect writes it); install inspect-ai or zstandard to read it."
            ) from None
        return zstd.decompress(raw)
    try:
        return zstandard.ZstdDecompressor().decompress(raw, max_output_size=max(size, 1))
    except zstandard.ZstdError as exc:
        raise InputError(f"{WHAT}: {name} in the zip cannot be decompressed ({exc}).") from None


def _read_layout(data: bytes, is_zip: bool) -> tuple[dict[str, Any], Labelled]:
    if not is_zip:
        log = load_json(decode(data, WHAT), WHAT)
        if not isinstance(log, dict) or not isinstance(log.get("eval"), dict):
            raise InputError(f"{WHAT}: the JSON has no 'eval' object, so it is not an Inspect log.")
        samples = log.get("samples") or []
        if not isinstance(samples, list):
            raise InputError(f"{WHAT}: 'samples' is not a list.")
        header = {k: v for k, v in log.items() if k != "samples"}
        return header, [(f"sample {n}", sample) for n, sample in enumerate(samples, start=1)]
    archive = _check_zip(data)
    names = archive.namelist()
    if "header.json" in names:
        header = _member(archive, data, "header.json")
    else:  # a log still being written: the start journal has eval and plan
        header = _member(archive, data, "_journal/start.json")
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise InputError(f"{WHAT}: header.json has no 'eval' object.")
    samples = [(n, _member(archive, data, n)) for n in names if n.startswith("samples/") and n.endswith(".json")]
    return header, samples


# rows --------------------------------------------------------------------------------------
def _table(header: dict[str, Any], samples: Labelled, domain_field: str | None) -> pl.DataFrame:
    evaluation = header.get("eval") or {}
    model = evaluation.get("model")
    task = evaluation.get("task")
    for name, value in (("eval.model", model), ("eval.task", task)):
        if not isinstance(value, str) or not value:
            raise InputError(f"{WHAT}: the header has no {name}.")
    if not samples:
        raise InputError(f"{WHAT}: the log holds no samples (was it run with log_samples off, or did it stop early?).")
    order = {_key(i): n for n, i in enumerate((evaluation.get("dataset") or {}).get("sample_ids") or [])}

    for label, sample in samples:
        if not isinstance(sample, dict):
            raise InputError(f"{WHAT}: {label} is not a JSON object.")

    def sort_key(item: tuple[str, dict[str, Any]]) -> tuple[int, int, str]:
        sample = item[1]
        epoch = sample.get("epoch")
        position = order.get(_key(sample.get("id")), len(order))
        return (position, epoch if isinstance(epoch, int) else 0, cell(sample.get("id")))

    samples = sorted(samples, key=sort_key)
    metadata = [s["metadata"] for _, s in samples if isinstance(s.get("metadata"), dict)]
    with_domain = want_domain(metadata, domain_field, WHAT, "sample's metadata")
    rows = []
    for label, sample in samples:
        rows.append(_row(sample, label, evaluation, header, model, task, domain_field, with_domain))
    return frame(rows, WHAT)


def _key(value: Any) -> str:
    return cell(value)


def _row(
    sample: dict[str, Any],
    label: str,
    evaluation: dict[str, Any],
    header: dict[str, Any],
    model: str,
    task: str,
    domain_field: str | None,
    with_domain: bool,
) -> dict[str, str]:
    where = f"{label} (id {cell(sample.get('id'))!r}, epoch {cell(sample.get('epoch'))})"
    for name in ("id", "input", "target"):
        if name not in sample:
            raise InputError(f"{WHAT}, {where}: no {name!r} field.")
    attachments = sample.get("attachments") or {}
    row: dict[str, str] = {
        "question": _question(_resolve(sample["input"], attachments), where),
        "answer": _answer(_resolve(sample["target"], attachments), where),
        "response": _completion(_resolve(sample.get("output"), attachments), where),
    }
    metadata = sample.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InputError(f"{WHAT}, {where}: 'metadata' is not an object.")
    dkey = domain_key(metadata, domain_field) if with_domain else None
    if with_domain:
        row["Domain"] = cell(metadata.get(dkey)) if dkey is not None else ""
    lkey = put_language(row, metadata)
    row["model"] = model
    row["task"] = task
    row["sample_id"] = cell(sample["id"])
    put_extra(row, "epoch", sample.get("epoch"))
    put_extra(row, "target", sample["target"])
    for key, value in metadata.items():
        if key not in (dkey, lkey):
            put_extra(row, f"metadata_{key}", value)
    scores = sample.get("scores") or {}
    if not isinstance(scores, dict):
        raise InputError(f"{WHAT}, {where}: 'scores' is not an object.")
    for name, score in scores.items():
        if not isinstance(score, dict):
            raise InputError(f"{WHAT}, {where}: score {name!r} is not an object.")
        put_extra(row, f"score_{name}", score.get("value"))
        for part in ("answer", "explanation"):
            if score.get(part) is not None:
                put_extra(row, f"score_{name}_{part}", _resolve(score[part], attachments))
    output = sample.get("output") or {}
    choices = output.get("choices") or [] if isinstance(output, dict) else []
    if choices and isinstance(choices[0], dict) and choices[0].get("stop_reason") is not None:
        put_extra(row, "stop_reason", choices[0]["stop_reason"])
    error = sample.get("error")
    if error:
        put_extra(row, "error", error.get("message") if isinstance(error, dict) else error)
    for key in ("uuid", "total_time", "working_time"):
        if sample.get(key) is not None:
            put_extra(row, key, sample[key])
    for key in ("eval_id", "run_id", "created"):
        if evaluation.get(key) is not None:
            put_extra(row, key, evaluation[key])
    if header.get("status") is not None:
        put_extra(row, "status", header["status"])
    return row


def _resolve(value: Any, attachments: dict[str, Any]) -> Any:
    """Inspect may store long text once, as ``attachment://<hash>``: put the text back."""
    if isinstance(value, str):
        if value.startswith(ATTACHMENT):
            return attachments.get(value[len(ATTACHMENT) :], value)
        return value
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    return value


def _question(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise InputError(f"{WHAT}, {where}: 'input' is neither text nor a list of chat messages.")
    texts = []
    for index, message in enumerate(value, start=1):
        if not isinstance(message, dict) or "role" not in message:
            raise InputError(f"{WHAT}, {where}: input message {index} has no role.")
        if message["role"] in ("system", "user"):
            texts.append(_message_text(message.get("content"), where, index))
    return "\n\n".join(texts)


def _message_text(content: Any, where: str, index: int) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    raise InputError(f"{WHAT}, {where}: the content of input message {index} is neither text nor a list of parts.")


def _answer(target: Any, where: str) -> str:
    if isinstance(target, list):
        if not target:
            return ""
        if not all(isinstance(t, str) for t in target):
            raise InputError(f"{WHAT}, {where}: 'target' is a list with a non-text element.")
        return target[0]
    if isinstance(target, str):
        return target
    raise InputError(f"{WHAT}, {where}: 'target' is neither text nor a list of texts.")


def _completion(output: Any, where: str) -> str:
    if output is None:
        return ""
    if not isinstance(output, dict):
        raise InputError(f"{WHAT}, {where}: 'output' is not an object.")
    completion = output.get("completion")
    if completion is None:
        # Older logs may lack the stored completion: Inspect derives it from the first choice.
        choices = output.get("choices") or []
        if choices and isinstance(choices[0], dict) and isinstance(choices[0].get("message"), dict):
            return _message_text(choices[0]["message"].get("content"), where, 0)
        return ""
    return cell(completion)
