"""Write the harness logs the tests read, with the REAL tools, offline.

    .venv/bin/python tests/harness_files/generate.py [--only inspect,lm_eval,promptfoo] [--out DIR]

Writes into this folder by default (the committed files) and records each tool's version in
``versions.json``. The tests call the same functions into a temporary folder and check that the
fresh output reads like the committed one.

* Inspect AI: a tiny task run with its mock model ``mockllm/model``, whose replies are chosen per
  question by a callable (``custom_outputs``). Inspect counts tokens with tiktoken's
  ``o200k_base``, which tiktoken downloads on first use; with no network the run would end with
  status ``error``, so the counter is replaced (``len(text) // 4``) before running. Written as
  ``.eval`` (zip) and ``.json``, two epochs, one sample at a time so each epoch's reply is fixed.
* lm-evaluation-harness: a task YAML over a local JSONL file, run with ``local-chat-completions``
  against the tests' local OpenAI-compatible server (``tests/openai_stub.py``) scripted to reply
  with chosen responses, ``--log_samples``. Its ``results_*.json`` and ``samples_*.jsonl`` are
  copied here under fixed names.
* promptfoo: installed with npm into ``~/.cache/scoring-harness/promptfoo`` (once; reused), run
  with the ``echo`` provider, ``--no-cache`` and ``PROMPTFOO_DISABLE_TELEMETRY=1``, written as
  ``.json`` and ``.jsonl``; and ``promptfoo_two_models.json``: two providers in one file (two
  ``echo`` providers labelled ``echo-full`` and ``echo-bare``, each given its own prompt, so their
  responses differ), the file a team uploads to compare models with promptfoo.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROMPTFOO_VERSION = "0.121.20"
PROMPTFOO_DIR = Path(os.environ.get("PROMPTFOO_CACHE", Path.home() / ".cache" / "scoring-harness" / "promptfoo"))

# question, target, metadata, response for epoch 1, response for epoch 2 (Inspect).
INSPECT_SAMPLES = [
    {
        "id": "art-1",
        "input": "Which Jataka is depicted in the Bharhut medallion of the deer?",
        "target": "Ruru Jataka",
        "metadata": {"Domain": "Art", "source": "Bharhut", "language": "English"},
        "responses": ["The answer is the Ruru Jataka, depicted at Bharhut.", "It shows the Jataka Ruru."],
    },
    {
        "id": 2,
        "input": "भारत की सबसे लंबी नदी कौन सी है?",
        "target": "गंगा",
        "metadata": {"Domain": "Geography", "source": "NCERT", "language": "hi"},
        "responses": ["गंगा नदी भारत की सबसे लंबी नदी है।", "यमुना"],
    },
    {
        "id": "geo-3",
        "input": "Where were the earliest Acheulian tools of central India found?",
        "target": ["Narmada valley", "Narmada river valley"],
        "metadata": {"Domain": "Geography", "source": "survey", "difficulty": 3, "language": "en"},
        "responses": ["In the Narmada river valley.", "In the Narmada valley, near Hathnora."],
    },
    {
        "id": "hist-4",
        "chat": [
            ("system", "You are a historian. Answer in one sentence."),
            ("user", "In which year did India become independent?"),
        ],
        "target": "1947",
        "metadata": {"Domain": "History", "verified": True},
        "responses": ["India became independent in 1947.", "In 1950 it became a republic."],
    },
    {
        "id": 5,
        "input": (
            "कोणार्क का सूर्य मंदिर किस राजवंश के शासनकाल में बनाया गया था, और उस राजा का नाम क्या था जिसने "
            "इसे तेरहवीं शताब्दी में बनवाया? उत्तर संक्षेप में दीजिए।"
        ),
        "target": "नरसिंहदेव प्रथम",
        "metadata": {"Domain": "History", "source": "long question (over 100 characters)", "language": "Hindi"},
        "responses": ["पूर्वी गंग वंश के राजा नरसिंहदेव प्रथम ने।", "नरसिंहदेव"],
    },
]


# The JSON log is ten times the size of the zip: it holds the samples with a list target, a chat
# input and a long (attachment-sized) Hindi question, one epoch.
JSON_LOG_IDS = ("geo-3", "hist-4", 5)


def _versions_path(out: Path) -> Path:
    return out / "versions.json"


_VERSIONS_LOCK = threading.Lock()


def _record_version(out: Path, tool: str, version: str) -> None:
    with _VERSIONS_LOCK:
        _write_version(out, tool, version)


def _write_version(out: Path, tool: str, version: str) -> None:
    path = _versions_path(out)
    versions = json.loads(path.read_text()) if path.exists() else {}
    versions[tool] = version
    path.write_text(json.dumps(versions, indent=2, sort_keys=True) + "\n")


# Inspect AI --------------------------------------------------------------------------------
def _patch_inspect_token_counter() -> None:
    """No network here: tiktoken cannot fetch o200k_base, so count tokens as len(text) // 4."""
    import inspect_ai.model._model as model_module
    import inspect_ai.model._tokens as tokens_module

    def count_text_tokens(text: str) -> int:
        return max(1, len(text) // 4)

    tokens_module.count_text_tokens = count_text_tokens
    model_module.count_text_tokens = count_text_tokens


def generate_inspect(out: Path) -> list[Path]:
    """``inspect_indic_qa.eval`` (5 samples x 2 epochs) and ``inspect_indic_qa.json`` (3 of them, 1 epoch)."""
    import inspect_ai
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ModelOutput, get_model
    from inspect_ai.scorer import includes, match
    from inspect_ai.solver import generate

    _patch_inspect_token_counter()
    written = []
    for log_format in ("eval", "json"):
        by_question = {}
        samples = []
        for spec in INSPECT_SAMPLES:
            if log_format == "json" and spec["id"] not in JSON_LOG_IDS:
                continue
            if "chat" in spec:
                messages = [
                    ChatMessageSystem(content=text) if role == "system" else ChatMessageUser(content=text)
                    for role, text in spec["chat"]
                ]
                key = spec["chat"][-1][1]
                sample_input = messages
            else:
                key = spec["input"]
                sample_input = spec["input"]
            by_question[key] = list(spec["responses"])
            samples.append(Sample(id=spec["id"], input=sample_input, target=spec["target"], metadata=spec["metadata"]))

        def reply(messages, tools, tool_choice, config, by_question=by_question):
            question = next(m.text for m in reversed(messages) if m.role == "user")
            return ModelOutput.from_content(model="mockllm/model", content=by_question[question].pop(0))

        task = Task(dataset=samples, solver=generate(), scorer=[includes(), match(location="any")], name="indic_qa")
        with tempfile.TemporaryDirectory() as log_dir:
            model = get_model("mockllm/model", custom_outputs=reply)
            (log,) = inspect_eval(
                task,
                model=model,
                log_dir=log_dir,
                log_format=log_format,
                display="none",
                epochs=2 if log_format == "eval" else 1,
                max_samples=1,
            )
            if log.status != "success":
                raise SystemExit(f"Inspect run ended with status {log.status}: {log.error}")
            (produced,) = Path(log_dir).glob(f"*.{log_format}")
            target = out / f"inspect_indic_qa.{log_format}"
            shutil.copyfile(produced, target)
            written.append(target)
    _record_version(out, "inspect-ai", inspect_ai.__version__)
    return written


# lm-evaluation-harness ---------------------------------------------------------------------
LM_EVAL_ROWS = [
    {
        "question": "Which Jataka is depicted in the Bharhut medallion of the deer?",
        "answer": "Ruru Jataka",
        "category": "Art",
        "qid": "a1",
        "language": "English",
    },
    {
        "question": "भारत की सबसे लंबी नदी कौन सी है?",
        "answer": "गंगा",
        "category": "Geography",
        "qid": "g2",
        "language": "hin",
    },
    {
        "question": "In which year did India become independent?",
        "answer": "1947",
        "category": "History",
        "qid": "h3",
        "language": "en",
    },
    {
        "question": "Name the temple style of Odisha's deul.",
        "answer": "Kalinga",
        "category": "Art",
        "qid": "a4",
        "language": "",
    },
]
LM_EVAL_RESPONSES = {
    LM_EVAL_ROWS[0]["question"]: "The answer is the Ruru Jataka, depicted at Bharhut.",
    LM_EVAL_ROWS[1]["question"]: "गंगा नदी",
    LM_EVAL_ROWS[2]["question"]: "It was 1947.",
    LM_EVAL_ROWS[3]["question"]: "The Nagara style.",
}
LM_EVAL_TASK = """\
task: indic_qa
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{question}}}}"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: []
  max_gen_toks: 64
  do_sample: false
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""


def generate_lm_eval(out: Path) -> list[Path]:
    """``lm_eval_results.json`` and ``lm_eval_samples_indic_qa.jsonl`` (model ``stub-indic-1``)."""
    from importlib.metadata import version

    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    from openai_stub import StubOpenAI

    class ChosenReplies(StubOpenAI):
        """The tests' local server, replying to each question with its chosen response."""

        def completion(self, body, content):
            user = next((str(m["content"]) for m in reversed(body["messages"]) if m["role"] == "user"), "")
            return super().completion(body, LM_EVAL_RESPONSES.get(user, content))

    with tempfile.TemporaryDirectory() as tmp, ChosenReplies() as stub:
        tmp_path = Path(tmp)
        data = tmp_path / "indic_qa.jsonl"
        data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in LM_EVAL_ROWS), encoding="utf-8")
        task_dir = tmp_path / "tasks"
        task_dir.mkdir()
        (task_dir / "indic_qa.yaml").write_text(LM_EVAL_TASK.format(data=data), encoding="utf-8")
        env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
        cmd = [
            sys.executable,
            "-m",
            "lm_eval",
            "--model",
            "local-chat-completions",
            "--model_args",
            f"model=stub-indic-1,base_url={stub.base_url}/chat/completions,num_concurrent=1,tokenizer_backend=None",
            "--tasks",
            "indic_qa",
            "--include_path",
            str(task_dir),
            "--apply_chat_template",
            "--log_samples",
            "--output_path",
            str(tmp_path / "out"),
        ]
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            raise SystemExit(f"lm_eval failed ({run.returncode}):\n{run.stderr[-3000:]}")
        if sorted(stub.prompts()) != sorted(LM_EVAL_RESPONSES):
            raise SystemExit(f"lm_eval asked other questions than the task's: {stub.prompts()}")
        (results,) = (tmp_path / "out").rglob("results_*.json")
        (samples,) = (tmp_path / "out").rglob("samples_indic_qa_*.jsonl")
        written = [out / "lm_eval_results.json", out / "lm_eval_samples_indic_qa.jsonl"]
        shutil.copyfile(results, written[0])
        shutil.copyfile(samples, written[1])
    _record_version(out, "lm-eval", version("lm-eval"))
    return written


# promptfoo ---------------------------------------------------------------------------------
PROMPTFOO_CONFIG = """\
description: indic qa
prompts:
  - "{{question}} {{answer}}"
providers:
  - id: echo
    label: echo-indic
tests:
  - vars:
      question: Which Jataka is depicted in the Bharhut medallion of the deer?
      answer: Ruru Jataka
      Domain: Art
      language: English
    assert:
      - type: icontains
        value: Ruru Jataka
  - vars:
      question: भारत की सबसे लंबी नदी कौन सी है?
      answer: गंगा
      Domain: Geography
      language: hi
    assert:
      - type: contains
        value: गंगा
  - vars:
      question: In which year did India become independent?
      answer: "1947"
      Domain: History
      year: 1947
    assert:
      - type: contains
        value: "1950"
"""


#: Two providers in one eval: promptfoo writes both models' results into one file.
PROMPTFOO_TWO_MODELS = """\
description: indic qa, two models
prompts:
  - id: full
    label: full
    raw: "{{question}} {{answer}}"
  - id: bare
    label: bare
    raw: "{{question}}"
providers:
  - id: echo
    label: echo-full
    prompts: [full]
  - id: echo
    label: echo-bare
    prompts: [bare]
tests:
  - vars:
      question: Which Jataka is depicted in the Bharhut medallion of the deer?
      answer: Ruru Jataka
      Domain: Art
    assert:
      - type: icontains
        value: Ruru Jataka
  - vars:
      question: भारत की सबसे लंबी नदी कौन सी है?
      answer: गंगा
      Domain: Geography
    assert:
      - type: contains
        value: गंगा
  - vars:
      question: Where were the earliest Acheulian tools of central India found?
      answer: Narmada valley
      Domain: History
    assert:
      - type: icontains
        value: Narmada valley
"""


def promptfoo_bin() -> Path:
    """The cached promptfoo CLI, installed with npm on first use."""
    binary = PROMPTFOO_DIR / "node_modules" / ".bin" / "promptfoo"
    installed = PROMPTFOO_DIR / "node_modules" / "promptfoo" / "package.json"
    if not installed.exists() or json.loads(installed.read_text())["version"] != PROMPTFOO_VERSION:
        PROMPTFOO_DIR.mkdir(parents=True, exist_ok=True)
        if not (PROMPTFOO_DIR / "package.json").exists():
            (PROMPTFOO_DIR / "package.json").write_text('{"private": true}\n')
        run = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", f"promptfoo@{PROMPTFOO_VERSION}"],
            cwd=PROMPTFOO_DIR,
            capture_output=True,
            text=True,
            timeout=900,
        )
        if run.returncode != 0 or not binary.exists():
            raise SystemExit(
                f"npm install promptfoo@{PROMPTFOO_VERSION} failed ({run.returncode}):\n{run.stderr[-3000:]}"
            )
    return binary


def generate_promptfoo(out: Path) -> list[Path]:
    """``promptfoo_out.json`` and ``promptfoo_out.jsonl`` from the echo provider, and
    ``promptfoo_two_models.json`` from two."""
    binary = promptfoo_bin()
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        (tmp_path / "promptfooconfig.yaml").write_text(PROMPTFOO_CONFIG, encoding="utf-8")
        (tmp_path / "two_models.yaml").write_text(PROMPTFOO_TWO_MODELS, encoding="utf-8")
        env = dict(
            os.environ,
            PROMPTFOO_DISABLE_TELEMETRY="1",
            PROMPTFOO_DISABLE_UPDATE="1",
            PROMPTFOO_CONFIG_DIR=str(tmp_path / "config"),
            PROMPTFOO_DISABLE_SHARING="1",
        )
        runs = (("promptfooconfig.yaml", "json", "promptfoo_out"), ("promptfooconfig.yaml", "jsonl", "promptfoo_out"))
        for config, ext, name in (*runs, ("two_models.yaml", "json", "promptfoo_two_models")):
            target = tmp_path / f"{name}.{ext}"
            run = subprocess.run(
                [
                    str(binary),
                    "eval",
                    "-c",
                    config,
                    "-o",
                    str(target),
                    "--no-cache",
                    "--no-table",
                    "--no-progress-bar",
                ],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            # promptfoo exits 100 when a test fails (one does, on purpose).
            if run.returncode not in (0, 100) or not target.exists():
                raise SystemExit(f"promptfoo failed ({run.returncode}):\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}")
            dest = out / f"{name}.{ext}"
            shutil.copyfile(target, dest)
            written.append(dest)
    version = json.loads((PROMPTFOO_DIR / "node_modules" / "promptfoo" / "package.json").read_text())["version"]
    _record_version(out, "promptfoo", version)
    return written


GENERATORS = {"inspect": generate_inspect, "lm_eval": generate_lm_eval, "promptfoo": generate_promptfoo}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(GENERATORS), help="comma-separated: " + ",".join(GENERATORS))
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument(
        "--install-promptfoo",
        action="store_true",
        help=f"only install promptfoo {PROMPTFOO_VERSION} into {PROMPTFOO_DIR} if missing (make test)",
    )
    args = parser.parse_args(argv)
    if args.install_promptfoo:
        print(promptfoo_bin())
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.only.split(","):
        for path in GENERATORS[name.strip()](args.out):
            print(f"{path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
