"""Helpers for the AppTest tests of the review queue, reviewers, export and Judge pages.

Not a test module (pytest collects only ``test_*.py``). ``test_app_review.py`` and
``test_app_judge.py`` use it.

AppTest runs app.py (the sidebar) only on the first ``at.run()``; later runs execute the current
page alone. Pages resolve the run (``?run=``, else the newest) and the reviewer (``?reviewer=``)
themselves, so tests put both in ``at.query_params`` before the first run.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
import streamlit.testing.v1.app_test as app_test_module
from sqlalchemy import Engine
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from scoring import ingest
from scoring.store import ENV_VAR, make_engine

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app.py"
TIMEOUT = 60
#: Every page app.py lists, as written there (``pages/review.py``).
PAGES = re.findall(r"""st\.Page\(\s*["']([^"']+\.py)["']""", APP.read_text(encoding="utf-8"))
_ROW = re.compile(r"^Row (\d+) of the run")
_PROGRESS = re.compile(r"Reviewed (\d+) of (\d+) in this scope")


def page_path(stem: str) -> str:
    """The app.py path of the page whose file is ``<stem>.py``."""
    found = [p for p in PAGES if Path(p).stem == stem]
    assert len(found) == 1, f"app.py lists {found} for {stem!r}"
    return found[0]


def ok(at: AppTest) -> AppTest:
    """Fail with the app's exception (message and stack) if the last run raised one."""
    if at.exception:
        details = [f"{e.message}\n{''.join(e.stack_trace)}" for e in at.exception]
        raise AssertionError("the app raised:\n" + "\n".join(details))
    return at


def open_page(stem: str, reviewer: str | None = "alice", run_id: int | None = None) -> AppTest:
    """A new session (like a new tab or a refresh) on ``?reviewer=&run=``, then the page ``stem``."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    if reviewer:
        at.query_params["reviewer"] = reviewer
    if run_id is not None:
        at.query_params["run"] = str(run_id)
    ok(at.run())
    return goto(at, stem)


def goto(at: AppTest, stem: str) -> AppTest:
    at.switch_page(page_path(stem))
    return ok(at.run())


def click(at: AppTest, key: str) -> AppTest:
    """Click the button with widget key ``key`` and run its callback and the rerun."""
    button = at.button(key=key)
    assert not button.disabled, f"button {key!r} is disabled"
    button.click()
    return ok(at.run())


_CARD_LINE = re.compile(r'<div class="q-line"[^>]*>([^<]*)</div>')


def texts(at: AppTest) -> list[str]:
    """Every line of plain text on the page (main area): each ``st.text`` value, and the review
    card's lines, which are drawn inside the row's own HTML block (``ui.display.show_row``)."""
    card = [html.unescape(m) for h in at.main.get("html") for m in _CARD_LINE.findall(str(h.proto.body))]
    return card + [str(t.value) for t in at.main.text]


def text_with(at: AppTest, needle: str) -> str:
    found = [t for t in texts(at) if needle in t]
    assert found, f"no st.text containing {needle!r}; got {texts(at)}"
    return found[0]


def unescape_md(text: str) -> str:
    """What Markdown shows for text ui.display.md_escape escaped (its backslashes gone)."""
    return re.sub(r"\\(.)", r"\1", text).replace("  \n", "\n")


_STATUS = re.compile(r'<div class="q-status"[^>]*>([^<]*)</div>')


def alerts(at: AppTest) -> list[str]:
    """The text of every success/info/warning/error box on the page, Markdown escapes removed, and
    of the review card's status line (what the last press did, ``ui.display.status_line``)."""
    boxes = [*at.main.success, *at.main.info, *at.main.warning, *at.main.error]
    said = [html.unescape(m) for h in at.main.get("html") for m in _STATUS.findall(str(h.proto.body))]
    parts = [part for line in said for part in line.split("  ·  ") if part]
    return [re.sub(r"\\(.)", r"\1", str(b.value)) for b in boxes] + parts


def shown_row(at: AppTest) -> int:
    """The ``row_idx`` of the row the review queue shows (its text says ``Row <row_idx + 1>``)."""
    rows = [int(m.group(1)) - 1 for t in texts(at) if (m := _ROW.match(t))]
    assert len(rows) == 1, f"expected one 'Row N of the run' text, got {texts(at)}"
    return rows[0]


def progress(at: AppTest) -> tuple[int, int]:
    """(reviewed, total) from the queue's progress bar text."""
    found = [m for p in at.get("progress") if (m := _PROGRESS.search(p.proto.text))]
    shown = [p.proto.text for p in at.get("progress")]
    assert len(found) == 1, f"expected one 'Reviewed k of n' progress bar, got {shown}"
    return int(found[0].group(1)), int(found[0].group(2))


def frame_with(at: AppTest, column: str) -> pd.DataFrame:
    """The first dataframe element that has ``column``."""
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no dataframe with a {column!r} column; got {[list(d.value.columns) for d in at.dataframe]}")


def browser_cells(element: Any) -> pd.DataFrame:
    """What the browser draws in each cell of an ``st.dataframe``: a missing value as the
    element's ``placeholder`` ("None" when it has none: Streamlit's frontend draws missing cells
    so, whatever the Styler's display value), else the Styler's display value, else the value."""
    raw = element.value
    styler = element.proto.arrow_data.styler
    shown = pa.ipc.open_stream(styler.display_values).read_pandas() if styler.display_values else raw
    shown = shown.astype(str).set_axis(raw.index)
    placeholder = element.proto.placeholder if element.proto.HasField("placeholder") else "None"
    return shown.mask(raw.isna(), placeholder)


def browser_headers(element: Any) -> list[str]:
    """The column headers the browser draws for an ``st.dataframe``: each visible column's
    ``column_config`` label, else its name; the index's names too unless the index is hidden."""
    config = json.loads(element.proto.columns or "{}")
    raw = element.value
    out: list[str] = []
    if not config.get("_index", {}).get("hidden"):
        out += [str(n) for n in raw.index.names if n is not None]
    for name in raw.columns:
        entry = config.get(str(name), {})
        if not entry.get("hidden"):
            out.append(str(entry.get("label") or name))
    return out


def walk(node: Any) -> Iterator[Any]:
    """Every block and element under ``node``."""
    yield node
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from walk(child)


def element_dump(at: AppTest) -> str:
    """Everything the last run sent to the browser (each element's protobuf as text), plus the
    values of dataframes (whose cells travel as Arrow bytes, not text)."""
    parts: list[str] = []
    for root in (at.main, at.sidebar):
        for node in walk(root):
            proto = getattr(node, "proto", None)
            if proto is not None:
                parts.append(str(proto))
    for df in at.dataframe:
        parts.append(df.value.to_csv())
    return "\n".join(parts)


def record_media_managers(monkeypatch: pytest.MonkeyPatch) -> list[MediaFileManager]:
    """Capture the media file manager AppTest creates for each run, so a test can do what the
    browser does on a download click: execute the button's deferred callable and read the bytes.
    (AppTest can click a download button but cannot read what it would download.)"""
    managers: list[MediaFileManager] = []

    class Recording(MediaFileManager):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            managers.append(self)

    monkeypatch.setattr(app_test_module, "MediaFileManager", Recording)
    return managers


def download(at: AppTest, managers: list[MediaFileManager], key: str) -> bytes:
    """The bytes the download button ``key`` of the last run serves when clicked.

    The callable runs here, outside any script run, as on a real click (no session state there).
    """
    proto = at.download_button(key=key).proto
    file_id = proto.deferred_file_id
    assert file_id, f"download button {key!r} has no deferred callable"
    # A click that reruns the page races its own request: the rerun's end drops the callable
    # the click asked for (Streamlit keeps only the ids of the last run) and nothing downloads.
    assert proto.ignore_rerun, f"a click of download button {key!r} reruns the page"
    manager = managers[-1]
    url = manager.execute_deferred(file_id)
    return manager._storage.get_file(url.rsplit("/", 1)[-1]).content  # no public reader


MARKDOWN_TYPES = {
    "markdown",
    "caption",
    "latex",
    "title",
    "header",
    "subheader",
    "error",
    "warning",
    "info",
    "success",
    "toast",
    "exception",
}


def markdown_texts(at: AppTest) -> list[str]:
    """All strings the app sent to Markdown-rendering places: text elements, labels, help."""
    out: list[str] = []
    for root in (at.main, at.sidebar):
        for node in walk(root):
            if getattr(node, "type", None) in MARKDOWN_TYPES:
                out.append(str(node.value))
            for attr in ("label", "help", "placeholder"):
                value = getattr(node, attr, None)
                if isinstance(value, str):
                    out.append(value)
    return out


def sample_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """A fresh database for the app (REVIEW_DB_URL) holding the sample run, and an engine on it:
    the ``sample_engine`` fixture (``tests/conftest.py``); a test that also has another database
    calls it itself."""
    url = f"sqlite:///{tmp_path / 'review.db'}"
    monkeypatch.setenv(ENV_VAR, url)
    eng = make_engine(url)
    assert ingest.ensure_sample(eng) is not None
    yield eng
    eng.dispose()
