"""AppTest tests of the words the browser shows (issue 27, defect 7).

A file whose fields have other names is not an error: the Upload page asks which field is which as
a normal step (an info line and the mapping form, no red box, no failed status), worded for the
page ("pick which field holds the golden answer"), never quoting the command line's
``--columns answer=FIELD``. And no page of the app, on the sample run, shows a command-line flag.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest
from apptest_support import PAGES, open_page, unescape_md, walk
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from scoring import store

#: A command-line flag as a message would quote it: "--columns", "pass --base-url", "(--id".
FLAG = re.compile(r"(?:^|[\s(\"'`\[])--[a-z]")
#: Lines of an element's protobuf text that hold Arrow bytes, not words (read as tables below).
_BINARY = re.compile(r"^\s*(data|display_values): \"")


#: The sample run (``sample_engine``) with no judge configured: no secrets.toml, no judge variable.
pytestmark = pytest.mark.usefixtures("no_judge_settings")


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.file_uploader(key="uploads").set_value((name, data, "text/csv"))
    at.run()
    assert not at.exception, at.exception
    return at


def shown_words(at: AppTest) -> list[str]:
    """Everything the last run sent to the browser as words: each element's protobuf text (labels,
    help, values, options) without its Arrow bytes, and every table's cells, raw and displayed."""
    out: list[str] = []
    for root in (at.main, at.sidebar):
        for node in walk(root):
            proto = getattr(node, "proto", None)
            if proto is not None:
                # twice: the protobuf text format doubles the backslashes of Markdown escapes
                out += [unescape_md(unescape_md(line)) for line in str(proto).splitlines() if not _BINARY.match(line)]
    for df in at.dataframe:
        out += [str(c) for c in df.value.columns]
        out += [str(v) for v in df.value.astype(str).to_numpy().ravel()]
        styler = df.proto.arrow_data.styler
        if styler.display_values:
            shown = pa.ipc.open_stream(styler.display_values).read_pandas()
            out += [str(v) for v in shown.astype(str).to_numpy().ravel()]
    return out


def flags(at: AppTest) -> list[str]:
    return [w for w in shown_words(at) if FLAG.search(w)]


# --- the mapping step -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "data", "missing"),
    [
        ("broken_hindi.csv", b"question,answer,Domain\nq1,a1,D\nq2,a2,D\n", ["response"]),
        (
            "harness_out.csv",
            b"id,target,prediction,category\n1,Delhi,It is Delhi,Geo\n2,Agra,Mumbai,Geo\n",
            ["golden answer", "response"],
        ),
    ],
)
def test_a_file_to_map_is_a_step_not_an_error(
    sample_engine: Engine, name: str, data: bytes, missing: list[str]
) -> None:
    before = store.list_runs(sample_engine)
    at = upload(open_page("upload"), name, data)
    assert not at.main.error, [e.value for e in at.main.error]
    statuses = [n for n in walk(at.main) if getattr(n, "type", None) == "status"]
    assert statuses and all(s.icon != ":material/error:" for s in statuses), [(s.label, s.icon) for s in statuses]
    infos = [unescape_md(str(i.value)) for i in at.main.info]
    step = [i for i in infos if i.startswith(f"{name}: ")]
    assert len(step) == 1, infos
    for what in missing:
        assert f"which field holds the {what}" in step[0], step[0]
    assert not FLAG.search(step[0]) and "command line" not in step[0], step[0]
    # The mapping form is there, and nothing was saved.
    boxes = {b.label for b in at.selectbox if b.key and b.key.startswith("map_")}
    assert {"Golden answer", "Response"} <= boxes
    assert any(b.label == "Save with this mapping" for b in at.button)
    assert store.list_runs(sample_engine) == before
    assert not flags(at), flags(at)


def test_a_refused_file_is_still_an_error(sample_engine: Engine) -> None:
    """Only the mapping step changed: a file that cannot be read stays a red error."""
    at = upload(open_page("upload"), "empty.csv", b"answer,response\n")
    errors = [unescape_md(str(e.value)) for e in at.main.error]
    assert any(e.startswith("empty.csv: ") for e in errors), errors


def test_mapping_one_file_while_another_is_saved_stays_on_the_page(sample_engine: Engine) -> None:
    """Two files at once, one saved and one to map: the page stays to ask, it does not leave for
    the Overview (which it did while the step was an error only because an error kept it there)."""
    at = open_page("upload")
    good = b"question,answer,Domain,response\nq1,Delhi,Geo,Delhi\nq2,Agra,Geo,Mumbai\n"
    other = b"id,target,prediction\n1,Delhi,It is Delhi\n"
    at.file_uploader(key="uploads").set_value([("good.csv", good, "text/csv"), ("other.csv", other, "text/csv")])
    at.run()
    assert not at.exception, at.exception
    assert [unescape_md(str(t.value)) for t in at.title] == ["Upload a model run"]
    assert any(b.label == "Save with this mapping" for b in at.button)
    assert "good.csv" in [r.filename for r in store.list_runs(sample_engine)]


# --- no page shows a command-line flag ----------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES)
def test_no_page_quotes_a_command_line_flag(sample_engine: Engine, page: str) -> None:
    at = open_page(Path(page).stem)
    assert not at.exception, at.exception
    assert not flags(at), (page, flags(at))


def test_the_flag_pattern() -> None:
    for said in (
        "pass --base-url or set",
        "(on the Upload page, or --columns answer=FIELD",
        "'--normalize'",
        "--model",
    ):
        assert FLAG.search(said), said
    for said in ("a -- b", "2026-12-02 19:55", "agreement, low — none", "x--y", "model-v1"):
        assert not FLAG.search(said), said
