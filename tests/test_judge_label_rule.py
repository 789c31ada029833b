"""One judge-label rule everywhere (issue 27, defect 5).

A run judged by two configurations, A (``judge-a``, prompt v1: CORRECT on every row) chosen for
the run and B (``judge-b``, prompt v2: INCORRECT on every row) judged later: every reader (the
export in CSV, JSON lines and Parquet, ``python -m scoring export --judge``, the estimate, the
final verdicts behind the Overview's judge series and Agreement, compare and its CLI, the pages)
uses A and names it. A second run with no choice uses the latest labels (B's) and says none was
chosen. A real SQLite database throughout.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from apptest_support import frame_with, open_page, texts
from sqlalchemy import Engine

from scoring import ingest, store
from scoring import verdict_export as export
from scoring.cli import main
from scoring.compare.database_runs import stored_run
from scoring.estimate.stored_run import stored_estimate, stored_final
from scoring.store import ENV_VAR, judge_cache, judge_choice, make_engine
from scoring.store.judge_choice import JudgeConfig

A = JudgeConfig("judge-a", "v1")
B = JudgeConfig("judge-b", "v2")
CHOSEN = "judge-a (prompt v1), chosen for this run"
LATEST = "judge-b (prompt v2), the latest label of each row; none chosen"
ROWS = 12


def _csv(suffix: str) -> bytes:
    # The same questions in both runs (compare matches them), different responses (other item keys);
    # every third response passes overlap only, every fourth fails both: all buckets occur.
    lines = ["question,answer,Domain,response"]
    for i in range(ROWS):
        response = f"the a{i} word {suffix}" if i % 4 else f"nothing {suffix}"
        if i % 3 == 0 and i % 4:
            response = f"word a{i}x {suffix}"
        lines.append(f"q{i},a{i} word,{'D1' if i % 2 else 'D2'},{response}")
    return ("\n".join(lines) + "\n").encode()


def _label(engine: Engine, keys: list[str], config: JudgeConfig, label: str) -> None:
    judge_cache.save(
        engine,
        [
            {
                "cache_key": f"{config.model}-{config.prompt_version}-{k}",
                "item_key": k,
                "model": config.model,
                "prompt_version": config.prompt_version,
                "label": label,
            }
            for k in keys
        ],
    )


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Engine, int, int]]:
    """(url, engine, the run with A chosen, the run with no choice); B labelled after A on both."""
    url = f"sqlite:///{tmp_path / 'review.db'}"
    monkeypatch.setenv(ENV_VAR, url)
    engine = make_engine(url)
    chosen = ingest.save_run(engine, _csv("x"), "chosen.csv").run.id
    latest = ingest.save_run(engine, _csv("y"), "latest.csv").run.id
    keys = [k for run in (chosen, latest) for k in store.load_scored(engine, run)["item_key"]]
    _label(engine, keys, A, "CORRECT")
    _label(engine, keys, B, "INCORRECT")  # newer than A on every row
    judge_choice.set_choice(engine, chosen, A, "ana")
    yield url, engine, chosen, latest
    engine.dispose()


EXPECTED = {"chosen": ("CORRECT", CHOSEN), "latest": ("INCORRECT", LATEST)}


def _which(db: tuple[str, Engine, int, int], which: str) -> tuple[int, str, str]:
    run = db[2] if which == "chosen" else db[3]
    return (run, *EXPECTED[which])


@pytest.mark.parametrize("which", ["chosen", "latest"])
def test_the_rule_itself(db, which: str) -> None:
    _, engine, *_ = db
    run, label, name = _which(db, which)
    found = export.stored_run_labels(engine, run)
    assert set(found.labels.values()) == {label} and len(found.labels) == ROWS
    assert found.name == name
    assert export.stored_judge_labels(engine, run) == found.labels


@pytest.mark.parametrize("which", ["chosen", "latest"])
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_cli_export_judge_in_every_format(db, which: str, fmt: str, tmp_path: Path, capsys) -> None:
    url, _, *_ = db
    run, label, name = _which(db, which)
    out = tmp_path / f"out.{fmt}"
    assert main(["export", "--run", str(run), "--out", str(out), "--format", fmt, "--judge", "--db", url]) == 0
    assert f"Judge: {name}." in capsys.readouterr().out
    if fmt == "csv":
        frame = pl.read_csv(out, infer_schema=False)
    elif fmt == "jsonl":
        frame = pl.read_ndjson(out)
    else:
        frame = pl.read_parquet(out)
    assert frame.height == ROWS and set(frame["judge_label"].to_list()) == {label}
    info = json.loads(Path(f"{out}.manifest.json").read_text(encoding="utf-8"))
    assert info["judge_labels"] is True and info["judge_configuration"] == name


def test_cli_export_judge_via_subprocess(db, tmp_path: Path, run_cli) -> None:
    url, _, chosen, _ = db
    out = tmp_path / "sub.csv"
    done = run_cli("scoring", "export", "--run", str(chosen), "--out", str(out), "--judge", "--db", url)
    assert done.returncode == 0, done.stderr
    assert set(pl.read_csv(out, infer_schema=False)["judge_label"].to_list()) == {"CORRECT"}
    assert f"Judge: {CHOSEN}." in done.stdout


@pytest.mark.parametrize("which", ["chosen", "latest"])
def test_export_tables_and_manifest_of_the_library(db, which: str) -> None:
    _, engine, *_ = db
    run, label, name = _which(db, which)
    found = export.stored_run_labels(engine, run)
    pandas_frame = export.build_export(engine, run, judge_labels=found.labels)
    polars_frame = export.export_table(engine, run, judge_labels=found.labels)
    assert set(pandas_frame["judge_label"]) == {label} == set(polars_frame["judge_label"].to_list())
    data, info = export.parquet_export(engine, run, polars_frame, judge_config=found.name)
    assert set(pl.read_parquet(io.BytesIO(data))["judge_label"].to_list()) == {label}
    assert info["judge_configuration"] == name
    assert export.manifest(engine, run, pandas_frame, judge_config=found.name)["judge_configuration"] == name


@pytest.mark.parametrize("which", ["chosen", "latest"])
def test_the_estimate(db, which: str) -> None:
    _, engine, *_ = db
    run, label, name = _which(db, which)
    stored = stored_final(engine, run)
    assert set(stored.final["judge_label"]) == {label} and stored.judge_name == name
    _, est = stored_estimate(engine, run)
    assert est.sample["judge_correct"].drop_nulls().to_list() == [label == "CORRECT"] * ROWS


@pytest.mark.parametrize("which", ["chosen", "latest"])
def test_compare_and_its_cli(db, which: str, capsys) -> None:
    url, engine, chosen, latest = db
    run, label, name = _which(db, which)
    compared = stored_run(engine, run)
    assert compared.table["verdict:judge"].to_list() == [label == "CORRECT"] * ROWS
    assert compared.judge == name
    assert main(["compare", "--run", str(chosen), "--run", str(latest), "--db", url, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    judges = {r["label"]: r["judge"] for r in report["runs"]}
    assert judges[f"#{run} {store.get_run(engine, run).name}"] == name


@pytest.mark.parametrize("which", ["chosen", "latest"])
def test_the_pages_data_functions(db, which: str) -> None:
    from ui import charts, judge_state, verdicts

    url, engine, *_ = db
    run, label, name = _which(db, which)
    rev = judge_state.judge_revision()
    assert judge_state.run_labels_at(url, run, rev).name == name
    final = verdicts.final_at(url, run, 0, rev, False)
    assert set(final["judge_label"]) == {label}
    series, _ = charts.accuracy_series(run)
    judge_series = [s for s in series if "Judge" in s]
    assert judge_series == ["Judge"]  # one judge series, never two
    combined = series["Judge"][-1]
    assert combined.n == ROWS and combined.correct == (ROWS if label == "CORRECT" else 0)
    pairs = verdicts.verdict_summary(run)["judge_comparisons"]  # Agreement's judge tables
    exact = final["exact_correct"].astype(bool)
    agree = int((exact == (label == "CORRECT")).sum())
    assert pairs[0].b == "exact_correct" and pairs[0].n == ROWS and round(pairs[0].raw_agreement * ROWS) == agree


@pytest.mark.parametrize("which", ["chosen", "latest"])
def test_the_pages_name_the_configuration_and_use_it(db, which: str) -> None:
    run, label, name = _which(db, which)
    line = f"Judge: {name}."
    at = open_page("overview", run_id=run)
    assert line in texts(at)
    table = frame_with(at, "Judge accuracy")
    assert table["Judge accuracy"].tolist() == [1.0 if label == "CORRECT" else 0.0] * len(table)
    charts = at.get("plotly_chart")
    traces = [t.get("name", "") for t in json.loads(charts[-1].proto.spec)["data"]]
    assert traces.count("Judge") == 1, traces
    for page in ("agreement", "export"):
        at = open_page(page, run_id=run)
        assert any(line in t for t in texts(at)), (page, texts(at))
    at = open_page("compare", run_id=run)
    shown = "\n".join(texts(at))
    assert f"Judge: {CHOSEN}." in shown and f"Judge: {LATEST}." in shown


@pytest.mark.parametrize("which", ["chosen", "latest"])
def test_the_review_card_suggests_the_label_the_rule_gives(db, which: str) -> None:
    """Issue 27: the queue's "Judge suggests" reads the run's chosen configuration too (it read the
    newest label of any configuration: B's INCORRECT beside an estimate counting A's CORRECT)."""
    run, label, _ = _which(db, which)
    at = open_page("review", run_id=run)
    at.selectbox(key="q_bucket").set_value("both_pass")  # these runs' rows pass both metrics or fail both
    at.run()
    suggestions = [t for t in texts(at) if t.startswith("Judge suggests")]
    assert suggestions == [f"Judge suggests: {label}"], texts(at)
