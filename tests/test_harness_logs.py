"""Harness logs in (scoring/core/harness), read against files the real tools wrote.

The files in tests/harness_files/ were written by tests/harness_files/generate.py with the versions
in versions.json (Inspect AI with mockllm/model, lm-evaluation-harness with local-chat-completions
against tests/openai_stub.py, promptfoo with its echo provider). Each import is checked field by
field against what the tool's own reader returns (inspect_ai.log.read_eval_log; json for the
others), and the last test reruns the generator and checks the fresh files read the same way.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl
import pytest

from scoring.core.errors import InputError
from scoring.core.harness import inspect_log, read_harness, sniff

HERE = Path(__file__).resolve().parent
FILES = HERE / "harness_files"
ROOT = HERE.parent
sys.path.insert(0, str(FILES))
import generate  # noqa: E402

# The names lm-eval gives its files (the committed copies have fixed names).
LM_SAMPLES_NAME = "stub-indic-1/samples_indic_qa_2026-12-02T01-18-30.123456.jsonl"
LM_RESULTS_NAME = "stub-indic-1/results_2026-12-02T01-18-30.123456.json"


def data(name: str) -> bytes:
    return (FILES / name).read_bytes()


def text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def read_lm(samples: bytes | None = None, **kwargs) -> pl.DataFrame:
    companions = {LM_RESULTS_NAME: data("lm_eval_results.json")}
    return read_harness(
        "lm_eval",
        samples if samples is not None else data("lm_eval_samples_indic_qa.jsonl"),
        LM_SAMPLES_NAME,
        companions=companions,
        **kwargs,
    )


# sniffing ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("inspect_indic_qa.eval", "inspect"),
        ("inspect_indic_qa.json", "inspect"),
        ("lm_eval_samples_indic_qa.jsonl", "lm_eval"),
        ("promptfoo_out.json", "promptfoo"),
        ("promptfoo_out.jsonl", "promptfoo"),
        ("lm_eval_results.json", None),  # a companion, not a samples file
        ("versions.json", None),
    ],
)
def test_sniff_by_content(name: str, kind: str | None) -> None:
    assert sniff(data(name), name) == kind
    assert sniff(data(name), None) == kind  # no name: the content alone decides
    assert sniff(data(name), "upload.txt") == kind  # a misleading extension does not change it


def test_sniff_refuses_other_files() -> None:
    assert sniff(b"question,answer,response\nq,a,r\n", "run.csv") is None
    assert sniff(b'{"question": "q", "answer": "a", "response": "r"}\n', "run.jsonl") is None
    assert sniff(b"", None) is None
    other_zip = io.BytesIO()
    with zipfile.ZipFile(other_zip, "w") as archive:
        archive.writestr("data.csv", "a,b\n")
    assert sniff(other_zip.getvalue(), "data.zip") is None
    # A .eval that is damaged is still Inspect's: the reader then says what is wrong.
    assert sniff(data("inspect_indic_qa.eval")[:500], "run.eval") == "inspect"


def test_versions_recorded() -> None:
    versions = json.loads(data("versions.json"))
    assert set(versions) == {"inspect-ai", "lm-eval", "promptfoo"}
    assert all(versions.values())


# Inspect AI --------------------------------------------------------------------------------
def expected_question(sample) -> str:
    if isinstance(sample.input, str):
        return sample.input
    return "\n\n".join(m.text for m in sample.input if m.role in ("system", "user"))


@pytest.mark.parametrize("name", ["inspect_indic_qa.eval", "inspect_indic_qa.json"])
def test_inspect_field_by_field(name: str) -> None:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(FILES / name))
    table = read_harness("inspect", data(name), name)
    assert table.schema == {c: pl.String for c in table.columns}
    assert table.columns[:8] == ["question", "answer", "response", "Domain", "language", "model", "task", "sample_id"]
    assert len(table) == len(log.samples)
    rows = {(r["sample_id"], r["epoch"]): r for r in table.iter_rows(named=True)}
    assert len(rows) == len(table)  # (sample_id, epoch) is unique
    for sample in log.samples:
        row = rows[(str(sample.id), str(sample.epoch))]
        assert row["question"] == expected_question(sample)
        target = sample.target
        assert row["answer"] == (target[0] if isinstance(target, list) else target)
        assert row["target"] == text(target)
        assert row["response"] == sample.output.completion
        assert row["model"] == log.eval.model == "mockllm/model"
        assert row["task"] == log.eval.task == "indic_qa"
        assert row["Domain"] == sample.metadata["Domain"]
        assert row["language"] == sample.metadata.get("language", "")  # as the log has it, normalised later
        for key, value in sample.metadata.items():
            if key not in ("Domain", "language"):
                assert row[f"metadata_{key}"] == text(value)
        assert "metadata_Domain" not in row and "metadata_language" not in row
        for scorer, score in sample.scores.items():
            assert row[f"score_{scorer}"] == text(score.value)
            assert row[f"score_{scorer}_answer"] == text(score.answer)
            assert row[f"score_{scorer}_explanation"] == text(score.explanation)
        assert row["uuid"] == sample.uuid
        assert row["eval_id"] == log.eval.eval_id
        assert row["status"] == log.status == "success"
    # What the generator put in: a chat input joined, a list target, Hindi, an int id, epochs.
    by_id = {r["sample_id"]: r for r in table.iter_rows(named=True)}
    assert by_id["hist-4"]["question"] == (
        "You are a historian. Answer in one sentence.\n\nIn which year did India become independent?"
    )
    assert by_id["geo-3"]["answer"] == "Narmada valley"
    assert json.loads(by_id["geo-3"]["target"]) == ["Narmada valley", "Narmada river valley"]
    assert by_id["5"]["question"].startswith("कोणार्क का सूर्य मंदिर")
    assert len(by_id["5"]["question"]) > 100  # long enough for Inspect to pool it as an attachment
    assert by_id["hist-4"]["metadata_verified"] == "true"
    assert by_id["geo-3"]["metadata_difficulty"] == "3"
    if name.endswith(".eval"):
        assert sorted(table["epoch"].unique().to_list()) == ["1", "2"]
        responses = table.filter(pl.col("sample_id") == "2")["response"].to_list()
        assert responses == ["गंगा नदी भारत की सबसे लंबी नदी है।", "यमुना"]


@pytest.mark.parametrize("name", ["inspect_indic_qa.eval", "inspect_indic_qa.json"])
def test_inspect_layout_reader_matches_inspect(name: str) -> None:
    with_inspect = inspect_log.read(data(name), name, use_inspect=True)
    by_layout = inspect_log.read(data(name), name, use_inspect=False)
    assert by_layout.equals(with_inspect)


def test_inspect_layout_reader_without_inspect_installed(tmp_path: Path) -> None:
    """In a process where inspect_ai (and zipfile-zstd, which patches zipfile) cannot be imported,
    the layout reader gives the table inspect_ai's reader gives here."""
    script = (
        "import sys\n"
        "sys.modules['inspect_ai'] = None\n"
        "sys.modules['zipfile_zstd'] = None\n"
        "from pathlib import Path\n"
        "from scoring.core.harness import read_harness\n"
        "source, out = Path(sys.argv[1]), Path(sys.argv[2])\n"
        "for name in sys.argv[3:]:\n"
        "    read_harness('inspect', (source / name).read_bytes(), name).write_parquet(out / f'{name}.parquet')\n"
    )
    names = ["inspect_indic_qa.eval", "inspect_indic_qa.json"]
    run = subprocess.run(
        [sys.executable, "-c", script, str(FILES), str(tmp_path), *names],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    for name in names:
        fresh = pl.read_parquet(tmp_path / f"{name}.parquet")
        assert fresh.equals(inspect_log.read(data(name), name, use_inspect=True))


def test_inspect_domain_field() -> None:
    table = read_harness("inspect", data("inspect_indic_qa.eval"), "x.eval", domain_field="source")
    assert table.filter(pl.col("sample_id") == "2")["Domain"].to_list() == ["NCERT", "NCERT"]
    assert table.filter(pl.col("sample_id") == "hist-4")["Domain"].to_list() == ["", ""]  # it has no source
    assert "metadata_source" not in table.columns and "metadata_Domain" in table.columns
    with pytest.raises(InputError, match=r"no sample's metadata has a field 'subject'.*Fields: Domain, source"):
        read_harness("inspect", data("inspect_indic_qa.eval"), "x.eval", domain_field="subject")


@pytest.mark.parametrize("use_inspect", [True, False])
def test_inspect_refuses_malformed(use_inspect: bool) -> None:
    whole = data("inspect_indic_qa.eval")
    with pytest.raises(InputError, match="not a readable zip"):
        inspect_log.read(whole[: len(whole) // 2], "run.eval", use_inspect=use_inspect)
    with pytest.raises(InputError, match="not a readable zip"):
        inspect_log.read(b"not a zip at all", "run.eval", use_inspect=use_inspect)
    log = json.loads(data("inspect_indic_qa.json"))
    del log["samples"][1]["input"]
    broken = json.dumps(log).encode()
    second = log["samples"][1]["id"]
    message = (
        rf"sample 2 \(id '{second}', epoch 1\): no 'input' field"
        if not use_inspect
        else (r"Inspect could not read it \(samples\[1\]\.input: Field required\)")
    )
    with pytest.raises(InputError, match=message):
        inspect_log.read(broken, "run.json", use_inspect=use_inspect)
    with pytest.raises(InputError):
        inspect_log.read(data("inspect_indic_qa.json")[:-200], "run.json", use_inspect=use_inspect)
    log = json.loads(data("inspect_indic_qa.json"))
    log["samples"] = []
    with pytest.raises(InputError, match="no samples"):
        inspect_log.read(json.dumps(log).encode(), "run.json", use_inspect=use_inspect)


def test_inspect_layout_refuses_damaged_member() -> None:
    source = zipfile.ZipFile(io.BytesIO(data("inspect_indic_qa.eval")))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for info in source.infolist():
            raw = b"{not json" if info.filename == "samples/geo-3_epoch_1.json" else source.read(info)
            archive.writestr(info.filename, raw)
    with pytest.raises(InputError, match="samples/geo-3_epoch_1.json in the zip is not valid JSON"):
        inspect_log.read(out.getvalue(), "run.eval", use_inspect=False)
    with pytest.raises(InputError):
        inspect_log.read(out.getvalue(), "run.eval", use_inspect=True)


# lm-evaluation-harness ---------------------------------------------------------------------
def test_lm_eval_field_by_field() -> None:
    lines = [json.loads(line) for line in data("lm_eval_samples_indic_qa.jsonl").decode().splitlines()]
    results = json.loads(data("lm_eval_results.json"))
    table = read_lm()
    assert table.schema == {c: pl.String for c in table.columns}
    assert table.columns[:8] == ["question", "answer", "response", "Domain", "language", "model", "task", "sample_id"]
    assert len(table) == len(lines) == 4
    for row, line in zip(table.iter_rows(named=True), lines, strict=True):
        assert row["question"] == line["doc"]["question"]
        assert row["answer"] == line["target"]
        assert row["response"] == line["filtered_resps"][0]
        assert row["Domain"] == line["doc"]["category"]
        assert row["model"] == results["model_name"] == "stub-indic-1"
        assert row["task"] == "indic_qa"
        assert row["sample_id"] == str(line["doc_id"])
        assert row["doc_qid"] == line["doc"]["qid"]
        assert row["doc_answer"] == line["doc"]["answer"]
        assert row["language"] == line["doc"]["language"]
        assert "doc_question" not in row and "doc_category" not in row and "doc_language" not in row
        for key in ("target", "filter", "doc_hash", "prompt_hash", "target_hash", "exact_match"):
            assert row[key] == text(line[key])
        assert row["filtered_resps"] == text(line["filtered_resps"])
        assert row["resps"] == text(line["resps"])
        assert row["arguments"] == text(line["arguments"])
        assert row["metrics"] == '["exact_match"]'
    assert table["exact_match"].to_list() == ["0.0", "0.0", "0.0", "0.0"]
    assert table["response"].to_list()[1] == "गंगा नदी"


def test_lm_eval_model_without_results_file() -> None:
    samples = data("lm_eval_samples_indic_qa.jsonl")
    in_folder = read_harness("lm_eval", samples, LM_SAMPLES_NAME)
    assert set(in_folder["model"]) == {"stub-indic-1"}  # lm-eval writes OUT/<model>/samples_*.jsonl
    assert set(in_folder["task"]) == {"indic_qa"}
    plain = read_harness("lm_eval", samples, "samples_indic_qa_2026-12-02T01-18-30.123456.jsonl")
    assert set(plain["model"]) == {"samples_indic_qa_2026-12-02T01-18-30.123456"}
    # The committed copy's fixed name has no task in it: the results file (one task) gives it.
    named = read_harness(
        "lm_eval",
        samples,
        "lm_eval_samples_indic_qa.jsonl",
        companions={"lm_eval_results.json": data("lm_eval_results.json")},
    )
    assert set(named["task"]) == {"indic_qa"} and set(named["model"]) == {"stub-indic-1"}
    assert read_lm(domain_field="qid")["Domain"].to_list() == ["a1", "g2", "h3", "a4"]


def test_lm_eval_refuses_malformed() -> None:
    samples = data("lm_eval_samples_indic_qa.jsonl")
    with pytest.raises(InputError, match="line 5 is not valid JSON"):
        read_lm(samples + b'{"doc_id": 4, "doc": {"question"')
    lines = samples.decode().splitlines()
    second = json.loads(lines[1])
    del second["filtered_resps"]
    lines[1] = json.dumps(second)
    with pytest.raises(InputError, match="line 2: no 'filtered_resps' field"):
        read_lm("\n".join(lines).encode())
    with pytest.raises(InputError, match="line 1 is a JSON list"):
        read_lm(b"[1, 2]\n")
    with pytest.raises(InputError, match="not UTF-8"):
        read_lm(b'{"doc": "\xff"}\n')
    with pytest.raises(InputError, match="no samples"):
        read_lm(b"\n\n")
    with pytest.raises(InputError, match="no line's doc has a field 'subject'.*Fields: question, answer"):
        read_lm(domain_field="subject")


# promptfoo ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["promptfoo_out.json", "promptfoo_out.jsonl"])
def test_promptfoo_field_by_field(name: str) -> None:
    raw = data(name).decode()
    if name.endswith(".json"):
        document = json.loads(raw)
        assert document["results"]["version"] == 3
        results = document["results"]["results"]
    else:
        results = [json.loads(line) for line in raw.splitlines() if line.strip()]
    table = read_harness("promptfoo", data(name), name)
    assert table.schema == {c: pl.String for c in table.columns}
    assert len(table) == len(results) == 3
    for row, result in zip(table.iter_rows(named=True), results, strict=True):
        assert row["question"] == result["vars"]["question"]
        assert row["answer"] == result["vars"]["answer"]
        assert row["response"] == result["response"]["output"]
        assert row["Domain"] == result["vars"]["Domain"]
        assert row["model"] == result["provider"]["label"] == "echo-indic"
        assert row["provider_id"] == result["provider"]["id"] == "echo"
        assert row["sample_id"] == str(result["testIdx"])
        assert row["success"] == text(result["success"])
        assert row["score"] == text(result["score"])
        assert row["gradingResult"] == text(result["gradingResult"])
        assert row["prompt_raw"] == result["prompt"]["raw"]
        assert row["assert"] == text(result["testCase"]["assert"])
        assert row["id"] == result["id"]
    assert table["success"].to_list() == ["true", "true", "false"]
    assert table["var_year"].to_list() == ["", "", "1947"]
    assert table["language"].to_list() == ["English", "hi", ""]  # the var; the third test has none
    assert "var_language" not in table.columns
    if name.endswith(".json"):
        assert set(table["task"]) == {"indic qa"}  # the config's description


def test_promptfoo_json_and_jsonl_agree() -> None:
    volatile = ["id", "latencyMs", "task", "metadata", "tokenUsage", "error"]
    whole = read_harness("promptfoo", data("promptfoo_out.json"), "out.json")
    lines = read_harness("promptfoo", data("promptfoo_out.jsonl"), "out.jsonl")
    keep = [c for c in whole.columns if c not in volatile]
    assert keep == [c for c in lines.columns if c not in volatile]
    assert whole.select(keep).sort("sample_id").equals(lines.select(keep).sort("sample_id"))


def test_promptfoo_golden_from_assertion_or_absent() -> None:
    document = json.loads(data("promptfoo_out.json"))
    for result in document["results"]["results"]:
        del result["vars"]["answer"]
    table = read_harness("promptfoo", json.dumps(document).encode(), "out.json")
    assert table["answer"].to_list() == ["Ruru Jataka", "गंगा", "1950"]  # the single contains/icontains value
    for result in document["results"]["results"]:
        result["testCase"]["assert"] = [{"type": "javascript", "value": "output.length > 0"}]
    table = read_harness("promptfoo", json.dumps(document).encode(), "out.json")
    assert "answer" not in table.columns  # no guess: the column mapping names a var_ column
    document["results"]["results"][0]["vars"]["expected"] = "Ruru Jataka"
    with pytest.raises(InputError, match="result 2: no golden answer"):
        read_harness("promptfoo", json.dumps(document).encode(), "out.json")


def test_promptfoo_refuses_malformed() -> None:
    with pytest.raises(InputError, match="not valid JSON"):
        read_harness("promptfoo", data("promptfoo_out.json")[:-100], "out.json")
    lines = data("promptfoo_out.jsonl").decode().splitlines()
    with pytest.raises(InputError, match="line 3 is not valid JSON"):
        read_harness("promptfoo", "\n".join([*lines[:2], lines[2][:50]]).encode(), "out.jsonl")
    first = json.loads(lines[0])
    del first["response"]
    with pytest.raises(InputError, match="line 1: no 'response' field"):
        read_harness("promptfoo", "\n".join([json.dumps(first), *lines[1:]]).encode(), "out.jsonl")
    with pytest.raises(InputError, match="no 'results' object"):
        read_harness("promptfoo", b'{"evalId": "x"}', "out.json")
    with pytest.raises(InputError, match="Unknown harness log kind 'openai_evals'"):
        read_harness("openai_evals", b"{}", "x.jsonl")


# the generator, rerun ----------------------------------------------------------------------
STABLE = {
    "inspect": [
        "question",
        "answer",
        "response",
        "Domain",
        "language",
        "model",
        "task",
        "sample_id",
        "epoch",
        "target",
        "metadata_source",
        "metadata_difficulty",
        "metadata_verified",
        "score_includes",
        "score_match",
        "score_includes_answer",
        "score_match_answer",
        "stop_reason",
        "status",
    ],
    "lm_eval": [
        "question",
        "answer",
        "response",
        "Domain",
        "language",
        "model",
        "task",
        "sample_id",
        "doc_answer",
        "doc_qid",
        "target",
        "resps",
        "filtered_resps",
        "filter",
        "metrics",
        "doc_hash",
        "prompt_hash",
        "target_hash",
        "exact_match",
    ],
    "promptfoo": [
        "question",
        "answer",
        "response",
        "Domain",
        "language",
        "model",
        "task",
        "sample_id",
        "var_year",
        "provider_id",
        "provider_label",
        "prompt_raw",
        "prompt_label",
        "assert",
        "success",
        "score",
        "gradingResult",
        "promptIdx",
        "failureReason",
    ],
}


def test_generator_rerun_reads_the_same(tmp_path: Path) -> None:
    """Rerun generate.py with the installed tools (lm-eval and promptfoo as subprocesses, beside
    Inspect in this process) and compare the fresh files' tables with the committed ones."""
    with ThreadPoolExecutor(2) as pool:
        lm = pool.submit(generate.generate_lm_eval, tmp_path)
        pf = pool.submit(generate.generate_promptfoo, tmp_path)
        generate.generate_inspect(tmp_path)
        lm.result()
        pf.result()
    assert json.loads((tmp_path / "versions.json").read_text()) == json.loads(data("versions.json"))
    pairs = [
        ("inspect", "inspect_indic_qa.eval", None),
        ("inspect", "inspect_indic_qa.json", None),
        ("lm_eval", "lm_eval_samples_indic_qa.jsonl", "lm_eval_results.json"),
        ("promptfoo", "promptfoo_out.json", None),
        ("promptfoo", "promptfoo_out.jsonl", None),
        ("promptfoo", "promptfoo_two_models.json", None),
    ]
    for kind, name, companion in pairs:
        fresh_bytes = (tmp_path / name).read_bytes()
        assert sniff(fresh_bytes, name) == kind
        companions = {companion: data(companion)} if companion else None
        fresh_companions = {companion: (tmp_path / companion).read_bytes()} if companion else None
        committed = read_harness(kind, data(name), name, companions=companions)
        fresh = read_harness(kind, fresh_bytes, name, companions=fresh_companions)
        assert fresh.columns == committed.columns, name
        stable = [c for c in STABLE[kind] if c in committed.columns]
        assert fresh.select(stable).equals(committed.select(stable)), name
