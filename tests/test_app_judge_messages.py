"""AppTest tests of what the Judge page says before there is anything to compare (issue 27, defect 2).

Before any row is judged, or before any judged row has a reviewer's verdict, the page says what is
missing and what to do: never "the judge and the reviewers agree on every reviewed row", never a
table cell the browser draws as "None". Its endpoint warning names the page's own fields ("Base
URL", "Model"), not the command line's flags; the command line keeps its flags.

Nothing is sent to a judge here: labels are written to the judge cache directly, and the endpoint
points at a closed port (the page's preflight sends nothing).
"""

from __future__ import annotations

import re

import pytest
from apptest_support import browser_cells, open_page, texts
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from scoring import judge, review, store
from scoring.core.report import COMBINED
from scoring.judge import judge_settings as judge_settings
from scoring.store import judge_cache

MODEL = "stub-judge"
FLAG = re.compile(r"(?:^|[\s(\"'`\[])--[a-z]")
CLAIM = "agree on every"


#: The sample run (``sample_engine``) with no judge configured: no secrets.toml, no judge variable.
pytestmark = pytest.mark.usefixtures("no_judge_settings")


@pytest.fixture
def configured(monkeypatch: pytest.MonkeyPatch) -> None:
    """An endpoint and a model, as on a configured server (a closed port: nothing is sent)."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-unused")
    monkeypatch.setenv("JUDGE_MODEL", MODEL)


@pytest.fixture
def keys(sample_engine: Engine, run_id: int) -> list[str]:
    return store.load_scored(sample_engine, run_id)["item_key"].tolist()


def label_every_row(engine: Engine, keys: list[str]) -> None:
    """MODEL's reply "correct" on every row, stored as a judge run stores it (nothing sent)."""
    rows = [
        {
            "cache_key": f"m-{k}",
            "item_key": k,
            "model": MODEL,
            "prompt_version": judge.PROMPT_VERSION,
            "label": judge.CORRECT,
        }
        for k in keys
    ]
    judge_cache.save(engine, rows)


def drawn(at: AppTest) -> list[str]:
    """Every cell of every table on the page, as the browser draws it."""
    return [str(v) for df in at.dataframe for v in browser_cells(df).to_numpy().ravel()]


def page_words(at: AppTest) -> list[str]:
    """Text, captions, alerts and headings of the page's main area."""
    kinds = ("text", "markdown", "caption", "warning", "info", "error", "success", "header", "subheader")
    return [re.sub(r"\\(.)", r"\1", str(node.value)) for kind in kinds for node in getattr(at.main, kind)]


def assert_nothing_claimed(at: AppTest) -> None:
    assert not at.exception, at.exception
    said = page_words(at)
    assert not any(CLAIM in s for s in said), said
    cells = drawn(at)
    assert "None" not in cells and "nan" not in cells, cells


def assert_no_trust_tables(at: AppTest) -> None:
    """No confusion matrix and no per-bucket/per-domain trust table (nothing to fill them with)."""
    columns = [set(df.value.columns) for df in at.dataframe]
    assert not any("judge not judged" in c or {"scope", "kappa_low"} <= c for c in columns), columns


def test_fresh_run_says_no_row_has_a_judge_label_yet(sample_engine: Engine, configured: None) -> None:
    at = open_page("judge")
    assert_nothing_claimed(at)
    assert_no_trust_tables(at)
    assert any(
        t.startswith("No row has a judge label yet") and "Judge every row not yet judged" in t for t in texts(at)
    ), texts(at)
    # The accuracy table keeps its pending counts; a domain with no judged row has no accuracy to show.
    table = next(df for df in at.dataframe if "pending" in df.value.columns)
    cells = browser_cells(table).set_index(table.value["domain"])
    assert table.value.set_index("domain").loc["Art", "n"] == 0
    assert (cells.loc["Art", "accuracy"], cells.loc["Art", "ci_low"], cells.loc["Art", "ci_high"]) == ("—",) * 3


def test_fresh_run_without_an_endpoint_says_where_to_type_it(sample_engine: Engine) -> None:
    at = open_page("judge")
    assert_nothing_claimed(at)
    assert_no_trust_tables(at)
    warnings = [re.sub(r"\\(.)", r"\1", str(w.value)) for w in at.main.warning]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("No judge endpoint") and "Base URL" in warnings[0], warnings
    assert not FLAG.search(warnings[0]), warnings
    assert "OPENAI_BASE_URL" in warnings[0]  # a server's configuration still works
    assert any(t.startswith("No row has a judge label yet") and "Base URL" in t for t in texts(at)), texts(at)


def test_missing_model_names_the_model_field(sample_engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    at = open_page("judge")
    warnings = [re.sub(r"\\(.)", r"\1", str(w.value)) for w in at.main.warning]
    assert any(w.startswith("No judge model") and "Model" in w and "JUDGE_MODEL" in w for w in warnings), warnings
    assert not any(FLAG.search(w) for w in warnings), warnings


def test_the_command_line_keeps_its_flags() -> None:
    with pytest.raises(judge_settings.JudgeConfigError, match="pass --base-url"):
        judge.JudgeSettings().check()
    with pytest.raises(judge_settings.JudgeConfigError, match="pass --model"):
        judge.JudgeSettings(base_url="http://127.0.0.1:9/v1").check()


def test_reviewed_rows_without_judge_labels_make_no_claim(
    sample_engine: Engine, configured: None, run_id: int, keys: list[str]
) -> None:
    for key in keys[:10]:
        review.record_mark(sample_engine, key, run_id, "alice", "correct")
    at = open_page("judge")
    assert_nothing_claimed(at)
    assert_no_trust_tables(at)
    assert any(t.startswith("No row has a judge label yet") for t in texts(at)), texts(at)
    # The judge labelled other rows, none of those reviewed.
    label_every_row(sample_engine, keys[20:])
    at = open_page("judge")
    assert_nothing_claimed(at)
    assert_no_trust_tables(at)
    assert any(t.startswith("The 10 reviewed rows of the random sample have no judge label yet") for t in texts(at)), (
        texts(at)
    )


def test_judge_labels_without_reviewed_rows_make_no_claim(sample_engine: Engine, keys: list[str]) -> None:
    label_every_row(sample_engine, keys)
    at = open_page("judge")
    assert_nothing_claimed(at)
    assert_no_trust_tables(at)
    assert any(t.startswith("No judged row has a reviewer's verdict yet") for t in texts(at)), texts(at)
    # The configurations' table stays (it is where the estimate's judge is chosen), its empty cells "—".
    configs = next(df for df in at.dataframe if "configuration" in df.value.columns)
    assert browser_cells(configs).loc[0, "agreement"] == "—"


def test_a_judged_and_reviewed_sample_still_shows_the_tables(
    sample_engine: Engine, run_id: int, keys: list[str]
) -> None:
    """Once rows are both judged and reviewed, the tables and the agreement line are back, and a
    sample where they agree says on how many rows."""
    label_every_row(sample_engine, keys)
    for key in keys[:6]:
        review.record_mark(sample_engine, key, run_id, "alice", "correct")
    at = open_page("judge")
    assert not at.exception, at.exception
    confusion = next(df for df in at.dataframe if "judge not judged" in df.value.columns).value.set_index("human")
    assert confusion.loc["correct", "judge correct"] == 6
    assert any(t.startswith("The judge and the reviewers agree on all 6 reviewed rows") for t in texts(at)), texts(at)
    per_bucket = next(df for df in at.dataframe if "kappa_low" in df.value.columns)
    assert COMBINED in per_bucket.value["scope"].tolist()
    cells = drawn(at)
    assert "None" not in cells, cells
