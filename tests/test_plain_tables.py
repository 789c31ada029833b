"""AppTest tests of the app's tables as a reader sees them (issue 27, "Plain words first").

Every page of app.py's navigation, on the sample run (fresh, and with verdicts of two reviewers
and judge labels on every row): no table header is a snake_case identifier ("agreement, low",
never ``agreement_low``), and no cell the browser would draw reads "None" (an empty cell is "—").
The frames keep their internal column names (exports and the CLI's JSON read them): the words are
labels given at display time, so the headers are read as the browser draws them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apptest_support import PAGES, browser_cells, browser_headers, open_page
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from scoring import judge, review, store
from scoring.store import judge_cache
from ui.tables import header

SNAKE = re.compile(r"^[a-z]+(_[a-z]+)+$")
MODEL = "stub-judge"


#: The sample run (``sample_engine``) with no judge configured: no secrets.toml, no judge variable.
pytestmark = pytest.mark.usefixtures("no_judge_settings")


def reviewed(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two reviewers (conflicts included) on the first rows, a judge label on every row, and a
    configured judge endpoint (a closed port: nothing is sent)."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-unused")
    monkeypatch.setenv("JUDGE_MODEL", MODEL)
    run_id = store.list_runs(engine)[0].id
    keys = store.load_scored(engine, run_id)["item_key"].tolist()
    for i, key in enumerate(keys[:30]):
        review.record_mark(engine, key, run_id, "alice", "correct" if i % 3 else "wrong")
    for key in keys[:10]:
        review.record_mark(engine, key, run_id, "bob", "correct")
    judge_cache.save(
        engine,
        [
            {
                "cache_key": f"m-{k}",
                "item_key": k,
                "model": MODEL,
                "prompt_version": judge.PROMPT_VERSION,
                "label": judge.CORRECT if i % 4 else judge.INCORRECT,
            }
            for i, k in enumerate(keys)
        ],
    )


def snake_headers(at: AppTest) -> list[tuple[str, str]]:
    """(table key or position, header) of every header the browser would draw as an identifier."""
    return [(str(df.key or i), h) for i, df in enumerate(at.dataframe) for h in browser_headers(df) if SNAKE.match(h)]


def none_cells(at: AppTest) -> list[tuple[str, str]]:
    """(table, column) of every cell the browser would draw as "None"."""
    out = []
    for i, df in enumerate(at.dataframe):
        cells = browser_cells(df)
        out += [(str(df.key or i), str(c)) for c in cells.columns if (cells[c].astype(str) == "None").any()]
    return out


def check(at: AppTest, page: str) -> None:
    assert not at.exception, at.exception
    assert not snake_headers(at), (page, snake_headers(at))
    assert not none_cells(at), (page, none_cells(at))


@pytest.mark.parametrize("page", PAGES)
def test_fresh_sample_tables_read_as_words(sample_engine: Engine, page: str) -> None:
    check(open_page(Path(page).stem), page)


@pytest.mark.parametrize("page", PAGES)
def test_reviewed_sample_tables_read_as_words(
    sample_engine: Engine, monkeypatch: pytest.MonkeyPatch, page: str
) -> None:
    reviewed(sample_engine, monkeypatch)
    at = open_page(Path(page).stem)
    check(at, page)
    if Path(page).stem in {"overview", "estimate", "judge", "reviewers", "adjudication", "export"}:
        assert at.dataframe, f"{page} shows no table with verdicts and judge labels"


def test_headers_are_words() -> None:
    assert header("agreement_low") == "agreement, low"
    assert header("kappa_high") == "kappa, high"
    assert header("reviewed") == "Reviewed rows"
    assert header("overlap_only") == "overlap only"
    assert header("judge not judged") is None
    assert header("Domain") is None
