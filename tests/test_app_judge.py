"""AppTest tests of the Judge page and where judge labels show up elsewhere (issue 5).

The judge talks over real HTTP to ``tests/openai_stub.py`` (no paid API); its settings come from
the environment (OPENAI_BASE_URL, OPENAI_API_KEY, JUDGE_MODEL), as on a configured server. The
run happens in a background thread: tests click Run, then rerun the page (as its polling fragment
does) until the "Done:" line appears, with a bounded number of polls.
"""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from apptest_support import (
    PAGES,
    click,
    download,
    element_dump,
    frame_with,
    goto,
    ok,
    open_page,
    record_media_managers,
    shown_row,
    text_with,
    texts,
)
from openai_stub import StubOpenAI
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from scoring import ingest, judge, store
from scoring import verdict_export as export
from scoring.core.report import COMBINED
from scoring.judge import judge_settings as judge_settings
from scoring.store import judge_cache

API_KEY = "sk-review-test-4f1c9a7e2b6d"
MODEL = "stub-judge"
POLLS = 600  # at most ~60 s of polling; a run of 40 rows against the local stub takes well under 1 s
POLL_SLEEP = 0.1
JUDGED = re.compile(r"Judged (\d+) of (\d+)")


@pytest.fixture(autouse=True)
def no_project_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judge_settings, "SECRETS_ROOT", tmp_path)  # no project secrets.toml can interfere


@pytest.fixture
def db_path(sample_engine: Engine) -> Path:
    """The file of the sample run's database (``sample_engine``)."""
    return Path(str(sample_engine.url.database))


@pytest.fixture
def stub(sample_engine: Engine, monkeypatch: pytest.MonkeyPatch) -> Iterator[StubOpenAI]:
    """The local OpenAI-compatible server, configured through the environment."""
    with StubOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
        monkeypatch.setenv("JUDGE_MODEL", MODEL)
        for name in judge.ENV_NAMES.values():
            if name not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "JUDGE_MODEL"):
                monkeypatch.delenv(name, raising=False)
        yield server


def preflight_text(at: AppTest) -> str:
    return text_with(at, "Rows in scope: ")


def unjudged_text(at: AppTest) -> str:
    return text_with(at, "Rows not yet judged by this model and prompt: ")


def run_judge(at: AppTest) -> str:
    """Click Run, poll until the page reports the end of the run; returns the "Done:" line."""
    click(at, "judge_run")
    return wait_done(at)


def wait_done(at: AppTest) -> str:
    """Rerun the page (as its polling fragment does) until the "Done:" line of the run shows."""
    for _ in range(POLLS):
        done = [t for t in texts(at) if t.startswith("Done:")]
        if done:
            return done[0]
        time.sleep(POLL_SLEEP)
        ok(at.run())
    raise AssertionError(f"the judge run did not finish after {POLLS} polls; page text: {texts(at)}")


def expected_labels(engine, scored: pd.DataFrame) -> pd.DataFrame:
    return judge.attach_judge_labels(engine, scored, model=MODEL)


def test_preflight_run_and_cached_second_run(sample_engine: Engine, scored: pd.DataFrame, stub: StubOpenAI) -> None:
    items = judge.items_from_frame(scored)
    planned = judge.preflight(sample_engine, judge.JudgeSettings.from_env(), items)
    n_blank = sum(item.is_blank for item in items)
    assert planned.to_send > 0 and n_blank > 0

    at = open_page("judge")
    assert not at.main.warning
    text = preflight_text(at)
    assert f"Rows in scope: {len(scored)}   to send: {planned.to_send}   already judged (cached): 0" in text
    assert f"blank (never sent): {n_blank}" in text
    assert f"model: {MODEL}" in unjudged_text(at)
    assert stub.requests == 0  # a preflight sends nothing
    before = frame_with(at, "pending").set_index("domain")
    assert before.loc[COMBINED, "pending"] == planned.to_send and before.loc[COMBINED, "n"] == n_blank

    done = run_judge(at)
    assert done.startswith(f"Done: {planned.to_send} requests sent, 0 cache hits,"), done
    assert "0 errors, 0 unparsed, 0 cancelled." in done
    assert stub.requests == planned.to_send
    assert set(stub.auth_headers) == {f"Bearer {API_KEY}"}  # the configured key was used

    # The page reran after the run: nothing left to send.
    text = preflight_text(at)
    assert f"to send: 0   already judged (cached): {planned.to_send}" in text

    table = frame_with(at, "pending").set_index("domain")
    want = {r.domain: r for r in judge.judge_accuracy(expected_labels(sample_engine, scored))}
    assert table.loc[COMBINED, "pending"] == 0
    assert table.loc[COMBINED, "n"] == len(scored)
    for domain, row in want.items():
        assert table.loc[domain, "correct"] == row.correct
        assert table.loc[domain, "accuracy"] == pytest.approx(row.accuracy)
    assert 0 < want[COMBINED].correct < len(scored)

    # A new session (a refresh) sees the cache too, and a second run sends nothing.
    stub.reset_counts()
    again = open_page("judge")
    assert "to send: 0" in preflight_text(again)
    assert not again.button(key="judge_run").disabled
    done = run_judge(again)
    assert done.startswith(f"Done: 0 requests sent, {planned.to_send} cache hits,"), done
    assert stub.requests == 0


def test_judge_joins_the_overview_and_the_review_queue(
    sample_engine: Engine, scored: pd.DataFrame, stub: StubOpenAI
) -> None:
    at = open_page("overview")
    assert not any("Judge" in c for c in frame_with(at, "domain").columns)

    goto(at, "judge")
    run_judge(at)
    labelled = expected_labels(sample_engine, scored)
    combined = judge.judge_accuracy(labelled)[-1]

    goto(at, "overview")
    table = frame_with(at, "domain").set_index("domain")
    assert "Judge accuracy" in table.columns and "Judge 95% CI" in table.columns
    assert table.loc[COMBINED, "Judge accuracy"] == pytest.approx(round(combined.accuracy, 4))
    assert table.loc[COMBINED, "Judge correct"] == combined.correct

    goto(at, "review")
    row = shown_row(at)
    label = labelled.loc[labelled["row_idx"] == row, "judge_label"].iloc[0]
    assert label in (judge.CORRECT, judge.INCORRECT, judge.NOT_ATTEMPTED)
    assert f"Judge suggests: {label}" in texts(at)
    at.toggle(key="q_blind").set_value(True)
    at.run()
    assert not any("Judge suggests" in t or "Exact: " in t for t in texts(at)), texts(at)
    click(at, "q_yes")
    assert shown_row(at) != row


def test_the_api_key_is_never_shown_or_stored(
    sample_engine: Engine, db_path: Path, scored: pd.DataFrame, stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    managers = record_media_managers(monkeypatch)
    at = open_page("judge")
    run_judge(at)
    assert stub.requests > 0 and set(stub.auth_headers) == {f"Bearer {API_KEY}"}
    at.toggle(key="judge_settles").set_value(True)
    ok(at.run())
    seen = [element_dump(at)]
    for page in PAGES:
        at.switch_page(page)
        ok(at.run())
        seen.append(element_dump(at))
    dump = "\n".join(seen)
    assert "Judge suggests" in dump and "Judge accuracy" in dump  # the dump covers the judge's output
    assert API_KEY not in dump
    assert API_KEY[8:] not in dump  # not even a tail of it

    goto(at, "export")
    exported = b"".join(download(at, managers, key) for key in ("dl_csv", "dl_jsonl", "dl_manifest"))
    assert b"judge" in exported
    assert API_KEY.encode() not in exported

    sample_engine.dispose()
    stored = b"".join(p.read_bytes() for p in db_path.parent.glob(db_path.name + "*"))
    assert len(stored) > 0 and MODEL.encode() in stored  # the judge's rows are in these bytes
    assert API_KEY.encode() not in stored
    assert API_KEY.encode("utf-16-le") not in stored


def test_judge_settles_overlap_only_rows_on_every_page(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame, stub: StubOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The switch lives on the Judge page but decides final verdicts on the Overview and Export
    pages, also after reruns there (it was lost one rerun after leaving the Judge page)."""
    managers = record_media_managers(monkeypatch)
    at = open_page("judge")
    run_judge(at)
    at.toggle(key="judge_settles").set_value(True)
    ok(at.run())
    labelled = expected_labels(sample_engine, scored)
    overlap_only = labelled[labelled["bucket"] == "overlap_only"]
    settled = int(overlap_only["judge_label"].isin([judge.CORRECT, judge.INCORRECT]).sum())
    assert settled > 0

    goto(at, "export")
    at.checkbox(key="export_bom").check()
    ok(at.run())  # a rerun on the Export page
    counts = frame_with(at, "final source").set_index("final source")["count"].to_dict()
    assert counts.get("judge") == settled
    csv = pd.read_csv(
        io.BytesIO(download(at, managers, "dl_csv")), dtype=str, keep_default_na=False, encoding="utf-8-sig"
    )
    judged = csv[csv["final_source"] == "judge"]
    assert len(judged) == settled and set(judged["bucket"]) == {"overlap_only"}
    want = {judge.CORRECT: "correct", judge.INCORRECT: "wrong"}
    assert (judged["final_verdict"] == judged["judge_label"].map(want)).all()
    manifest = json.loads(download(at, managers, "dl_manifest"))
    assert manifest["judge_settles"] is True and manifest["counts"]["final_source"]["judge"] == settled
    built = export.build_export(
        sample_engine, run_id, judge_labels=dict(zip(scored["item_key"], labelled["judge_label"])), judge_settles=True
    )
    assert int((built["final_source"] == "judge").sum()) == settled

    goto(at, "overview")
    ok(at.run())
    pending = int(frame_with(at, "Adjudicated pending")["Adjudicated pending"].iloc[-1])
    assert pending == len(overlap_only) - settled

    # Turned off again on the Judge page: overlap_only rows are pending once more.
    goto(at, "judge")
    assert at.toggle(key="judge_settles").value is True
    at.toggle(key="judge_settles").set_value(False)
    ok(at.run())
    goto(at, "export")
    counts = frame_with(at, "final source").set_index("final source")["count"].to_dict()
    assert "judge" not in counts and counts["pending"] == len(overlap_only)


def test_cancel_stops_the_run(sample_engine: Engine, scored: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    with StubOpenAI(latency=0.5) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
        monkeypatch.setenv("JUDGE_MODEL", MODEL)
        monkeypatch.setenv("JUDGE_CONCURRENCY", "1")
        at = open_page("judge")
        planned = judge.preflight(sample_engine, judge.JudgeSettings.from_env(), judge.items_from_frame(scored))
        to_send = planned.to_send
        click(at, "judge_run")
        for _ in range(POLLS):  # wait until at least one reply is in (blank rows count at once), then cancel
            judged = [int(m.group(1)) for p in at.get("progress") if (m := JUDGED.search(p.proto.text))]
            assert judged, f"no 'Judged k of n' progress while the run works: {texts(at)}"
            if judged[0] > planned.blank:
                break
            time.sleep(POLL_SLEEP)
            ok(at.run())
        click(at, "judge_cancel")
        done = wait_done(at)
        assert " 0 cancelled" not in done, done
        assert 0 < server.requests < to_send
        # What was judged before the cancel is kept: the next preflight sends only the rest.
        stored = judge_cache.count_rows(sample_engine)
        assert stored >= 1
        ok(at.run())
        text = preflight_text(at)
        assert f"to send: {to_send - stored}   already judged (cached): {stored}" in text, text


@pytest.mark.parametrize("missing", ["OPENAI_BASE_URL", "JUDGE_MODEL"])
def test_missing_endpoint_or_model_warns_without_crashing(
    sample_engine: Engine, monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    for name in judge.ENV_NAMES.values():
        monkeypatch.delenv(name, raising=False)
    if missing == "JUDGE_MODEL":
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    at = open_page("judge")
    warnings = [str(w.value).replace("\\", "") for w in at.main.warning]
    word = "endpoint" if missing == "OPENAI_BASE_URL" else "model"
    assert any(f"No judge {word}" in w and missing in w for w in warnings), warnings
    assert not [b for b in at.button if b.key == "judge_run"]  # nothing to run without settings
    assert not any("Rows in scope" in t for t in texts(at))
    # The settings form is open so the endpoint can be typed in.
    assert any("Base URL" in t.label for t in at.text_input)
    # Other pages still work.
    goto(at, "review")
    assert not any("Judge suggests" in t for t in texts(at))


# --- issue 18, section 5: the run the estimate needs, and can this judge be trusted -----------------


def test_judge_every_row_not_yet_judged_is_the_obvious_action(
    sample_engine: Engine, scored: pd.DataFrame, stub: StubOpenAI
) -> None:
    items = judge.items_from_frame(scored)
    planned = judge.preflight(sample_engine, judge.JudgeSettings.from_env(), items)
    not_blank = sum(not item.is_blank for item in items)
    at = open_page("judge")
    text = unjudged_text(at)
    assert f"Rows not yet judged by this model and prompt: {not_blank}   to send: {planned.to_send}" in text
    assert "Estimated tokens: " in text and stub.requests == 0  # the preflight sends nothing
    button = at.button(key="judge_unjudged")
    assert button.label == f"Judge every row not yet judged ({not_blank})" and not button.disabled
    click(at, "judge_unjudged")
    done = wait_done(at)
    assert done.startswith(f"Done: {planned.to_send} requests sent, 0 cache hits,"), done
    assert stub.requests == planned.to_send
    assert "Rows not yet judged by this model and prompt: 0   to send: 0" in unjudged_text(at)
    assert at.button(key="judge_unjudged").disabled
    # Other settings (a new temperature) would send the whole run again; the rows are judged for
    # the estimate already, so the action has nothing to do.
    at.session_state["judge_overrides"] = {"temperature": 0.7}
    ok(at.run())
    assert f"Rows in scope: {len(scored)}   to send: {planned.to_send}" in preflight_text(at)
    assert "Rows not yet judged by this model and prompt: 0   to send: 0" in unjudged_text(at)
    # A second model has judged nothing: every row is to judge again, under its own name.
    at.session_state["judge_overrides"] = {"model": "other-judge"}
    ok(at.run())
    assert f"Rows not yet judged by this model and prompt: {not_blank}" in unjudged_text(at)


def frames_with(at: AppTest, column: str) -> list[pd.DataFrame]:
    """Every dataframe element with ``column``, in page order."""
    return [df.value for df in at.dataframe if column in df.value.columns]


def _flip(label: str) -> str:
    return "wrong" if label == judge.CORRECT else "correct"


@pytest.fixture
def reviewed(sample_engine: Engine, run_id: int, scored: pd.DataFrame, stub: StubOpenAI) -> dict:
    """The run judged by MODEL over HTTP; 14 rows marked in the queue (three against the judge),
    one opened by hand against it; a second configuration "small/v0" stored with its own labels."""
    from scoring import review

    at = open_page("judge")
    click(at, "judge_unjudged")
    wait_done(at)
    keys = scored["item_key"].tolist()
    labels = judge.stored_labels(sample_engine, keys, model=MODEL)
    judged = [i for i, k in enumerate(keys) if labels.get(k) in (judge.CORRECT, judge.INCORRECT)]
    sample, by_hand = judged[:14], judged[14]
    against = set(sample[:3])
    for i in sample:
        verdict = "correct" if labels[keys[i]] == judge.CORRECT else "wrong"
        review.record_mark(sample_engine, keys[i], run_id, "alice", _flip(labels[keys[i]]) if i in against else verdict)
    review.record_mark(sample_engine, keys[by_hand], run_id, "alice", _flip(labels[keys[by_hand]]), via="opened")
    # "small" agrees with the humans on every sampled row but the last four, where it says UNPARSED (2)
    # and the opposite (2).
    small = {}
    for i in sample:
        human = (labels[keys[i]] == judge.CORRECT) != (i in against)
        small[keys[i]] = judge.CORRECT if human else judge.INCORRECT
    for i in sample[-4:-2]:
        small[keys[i]] = judge.UNPARSED
    for i in sample[-2:]:
        small[keys[i]] = judge.INCORRECT if small[keys[i]] == judge.CORRECT else judge.CORRECT
    judge_cache.save(
        sample_engine,
        [
            {"cache_key": f"small-{k}", "item_key": k, "model": "small", "prompt_version": "v0", "label": v}
            for k, v in small.items()
        ],
    )
    return {"keys": keys, "labels": labels, "sample": sample, "against": sorted(against), "by_hand": by_hand}


def test_the_trust_section_shows_the_judge_against_the_random_sample(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame, reviewed: dict
) -> None:
    from scoring.estimate.judge_trust import trust, trust_rows
    from scoring.estimate.stored_run import stored_estimate

    at = open_page("judge")
    assert "The estimate uses: latest label of any judge configuration" in texts(at)
    sample = stored_estimate(sample_engine, run_id)[1].sample
    assert sample.filter(pl.col("reviewed")).height == 14 and int(sample["by_hand"].sum()) == 1

    # The confusion matrix of the judge's labels on the 14 sampled rows (the row opened by hand is not in it).
    at.selectbox(key="judge_trust_config").set_value(f"{MODEL} (prompt {judge.PROMPT_VERSION})")
    ok(at.run())
    confusion = frame_with(at, "judge not judged").set_index("human")
    labels, keys, against = reviewed["labels"], reviewed["keys"], set(reviewed["against"])
    human_correct = [(labels[keys[i]] == judge.CORRECT) != (i in against) for i in reviewed["sample"]]
    assert confusion.loc["total", "total"] == 14
    assert confusion.loc["correct", "total"] == sum(human_correct)
    assert confusion["judge unparsed"].sum() == 0 and confusion.loc["total", "judge not judged"] == 0
    assert confusion.loc["correct", "judge wrong"] + confusion.loc["wrong", "judge correct"] == 3
    expected = trust(trust_rows(sample, labels))
    line = text_with(at, "reviewed rows judged: agreement")
    assert line.startswith("14 of 14 reviewed rows judged: agreement 78.6% [")
    assert f"[{expected.kappa_ci[0]:.3f}, {expected.kappa_ci[1]:.3f}] (95%)" in line
    per_bucket, per_domain = (f.set_index("scope") for f in frames_with(at, "kappa_low")[:2])
    assert per_bucket.loc[COMBINED, "reviewed"] == 14 and per_bucket.drop(COMBINED)["reviewed"].sum() == 14
    assert per_bucket.loc[COMBINED, "agree"] == 11
    assert set(per_bucket.index) - {COMBINED} <= set(scored["bucket"])
    assert set(per_domain.index) - {COMBINED} <= set(scored["Domain"])

    # The rows where they disagree: the three marked against the judge, in file order, 1-based.
    dis = frame_with(at, "judge_label")
    assert dis["row"].tolist() == [i + 1 for i in sorted(against)]
    assert reviewed["by_hand"] + 1 not in dis["row"].tolist()
    at.session_state["judge_disagree"] = {"selection": {"rows": [1], "columns": []}}
    ok(at.run())
    wanted = sorted(against)[1]
    click(at, "judge_open")
    assert shown_row(at) == wanted  # the queue shows the row opened from the Judge page


def test_configurations_compared_and_the_choice_named_and_used(
    sample_engine: Engine, run_id: int, reviewed: dict
) -> None:
    from scoring.estimate.stored_run import stored_final

    at = open_page("judge")
    big, small = f"{MODEL} (prompt {judge.PROMPT_VERSION})", "small (prompt v0)"
    configs = frame_with(at, "configuration").set_index("configuration")
    assert list(configs.index) == sorted([big, small])
    assert configs.loc[big, "judged"] == 14 and configs.loc[big, "agree"] == 11
    assert configs.loc[small, "judged"] == 12 and configs.loc[small, "agree"] == 10
    assert configs.loc[small, "unparsed"] == 2 and not configs["in_use"].any()
    pairs = frame_with(at, "config_a")
    assert len(pairs) == 1
    pair = pairs.iloc[0]
    a_is_big = pair["config_a"] == big
    # On the 12 rows both judged: big wrong on 3 of them (all in the first rows), small on the last 2.
    assert pair["n"] == 12
    assert (pair["only_a"], pair["only_b"]) == ((2, 3) if a_is_big else (3, 2))
    from scoring.core.stats import mcnemar_exact

    assert pair["p_value"] == pytest.approx(mcnemar_exact(2, 3))

    assert at.button(key="judge_choose").disabled  # the default is already in use
    at.selectbox(key="judge_choice").set_value(small)
    ok(at.run())
    click(at, "judge_choose")
    assert "The estimate uses: small (prompt v0)" in texts(at)
    assert frame_with(at, "configuration").set_index("configuration").loc[small, "in_use"]
    run = stored_final(sample_engine, run_id)
    assert run.judge_config == "small (prompt v0)"
    sampled = {reviewed["keys"][i] for i in reviewed["sample"]}
    assert set(run.final.loc[run.final["judge_label"] != "", "item_key"]) == sampled  # small's labels only
    # Back to the default.
    at.selectbox(key="judge_choice").set_value("latest label of any judge configuration")
    ok(at.run())
    click(at, "judge_choose")
    assert stored_final(sample_engine, run_id).judge_choice is None


def test_choosing_the_judge_needs_a_name(sample_engine: Engine, run_id: int, reviewed: dict) -> None:
    at = open_page("judge", reviewer=None)
    at.selectbox(key="judge_choice").set_value("small (prompt v0)")
    ok(at.run())
    assert at.button(key="judge_choose").disabled
    assert any("Type your name in the sidebar to choose" in str(c.value) for c in at.main.caption)


def test_trust_per_language_across_the_runs_that_carry_one(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame, reviewed: dict
) -> None:
    info = store.get_run(sample_engine, run_id)
    assert info.language  # the bundled sample names its languages
    store.update_run_meta(sample_engine, run_id, info.name, info.model, "Hindi")
    # the same rows and one more, another file (the same rows alone would open the same run)
    data = store.SAMPLE_PATH.read_bytes().replace(b"\n", b"\r\n") + b"Extra question?,x,Art,y,q41\r\n"
    other = ingest.save_run(sample_engine, data, "tamil.csv").run
    store.update_run_meta(sample_engine, other.id, "Tamil run", "", "Tamil")
    at = open_page("judge", run_id=run_id)
    assert len(frames_with(at, "scope")) == 2  # per bucket, per domain: languages wait for the switch
    at.toggle(key="judge_trust_languages").set_value(True)
    ok(at.run())
    per_language = [f for f in frames_with(at, "scope") if "Tamil" in f["scope"].tolist()]
    assert len(per_language) == 1, frames_with(at, "scope")
    rows = per_language[0].set_index("scope")
    # The other run's verdicts are carried over, not drawn from its queue: none is in its sample.
    # The sample's rows carry their own language (issue 37), so its 14 reviewed rows are counted
    # under English and Hindi, whatever the run is named.
    assert rows.loc["English", "reviewed"] == 12 and rows.loc["Hindi", "reviewed"] == 2
    assert rows.loc["Tamil", "reviewed"] == 0
    assert rows.loc[COMBINED, "reviewed"] == 14
    assert rows.loc[COMBINED, "agree"] == rows.loc["English", "agree"] + rows.loc["Hindi", "agree"]


def test_the_trust_section_needs_no_endpoint(
    sample_engine: Engine, reviewed: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Labels can come from the command line: without an endpoint the page still shows the judge
    against the reviewers and lets a user choose the estimate's judge."""
    for name in judge.ENV_NAMES.values():
        monkeypatch.delenv(name, raising=False)
    at = open_page("judge")
    assert any("No judge endpoint" in str(w.value).replace("\\", "") for w in at.main.warning)
    assert not [b for b in at.button if b.key in ("judge_run", "judge_unjudged")]
    assert "The estimate uses: latest label of any judge configuration" in texts(at)
    assert len(frame_with(at, "configuration")) == 2
