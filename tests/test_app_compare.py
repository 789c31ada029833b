"""AppTest tests of the Compare page (issue 12): three stored runs with known verdicts.

``gpt_hindi`` (A) and ``llama_hindi`` (B) ask the same twelve questions in the same words (B's
file in reverse order); ``gpt_tamil`` (C) asks them in other words. Every file has a ``qid`` column.
One-word golden answers make the exact and overlap verdicts equal and known:

* A right on questions 0-7, B on 0-3 and 8-9, C on all but 5;
* A vs B: b = 4 (4, 5, 6, 7), c = 2 (8, 9); McNemar exact p = 2 * (1 + 6 + 15) / 64 = 0.6875.

A has one row no other run has (``q99``, pending: exact fails, overlap passes), B one key twice
(``q98``). Question 4 carries a Markdown
and HTML payload, which must show literally. The database is made once for the module; each test
opens its own session (a new browser tab).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator

import pandas as pd
import pytest
from apptest_support import alerts, click, frame_with, markdown_texts, open_page, texts
from streamlit.testing.v1 import AppTest

from scoring import ingest, review, store
from scoring.compare import SOURCE_TITLES, match_runs, paired_comparisons
from scoring.compare.database_runs import stored_run
from scoring.store import ENV_VAR, make_engine

ANSWERS = [
    "Delhi",
    "Ganga",
    "Everest",
    "Tagore",
    "Premchand",
    "Valmiki",
    "Ashoka",
    "Akbar",
    "Kathak",
    "Sitar",
    "Diwali",
    "Kaveri",
]
PAYLOAD = "**bold** <img src=x>"
QUESTIONS = [f"Question {i} about {a.lower()}?" for i, a in enumerate(ANSWERS)]
QUESTIONS[4] = f"{PAYLOAD} Who wrote Godaan?"
RIGHT = {"A": set(range(8)), "B": {0, 1, 2, 3, 8, 9}, "C": set(range(12)) - {5}}
DOMAINS = ["Art", "History"]
# Markdown-rendering element types (as tests/test_app_pages.py lists them).


def _csv(rows: list[list[str]]) -> bytes:
    frame = pd.DataFrame(rows, columns=["qid", "question", "answer", "Domain", "response"])
    return frame.to_csv(index=False).encode("utf-8")


def _rows(run: str, tamil: bool = False) -> list[list[str]]:
    out = []
    for i, answer in enumerate(ANSWERS):
        question = f"கேள்வி {i}: {answer}?" if tamil else QUESTIONS[i]
        response = f"It is {answer}." if i in RIGHT[run] else "I do not know."
        out.append([f"q{i:02d}", question, answer, DOMAINS[i % 2], response])
    return out


# q99: golden words all present, not as one substring (overlap_only): pending for the adjudicated source.
RUN_A = _csv([*_rows("A"), ["q99", "Only in A?", "New Delhi", "Art", "Delhi is new"]])
RUN_B = _csv([*reversed(_rows("B")), *[["q98", "Twice in B?", "Yes", "History", "Yes"]] * 2])
RUN_C = _csv(_rows("C", tamil=True))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, store.RunInfo]]:
    """The three runs in a new SQLite file that the app uses (REVIEW_DB_URL), model and language
    set as on the Upload page."""
    url = f"sqlite:///{tmp_path_factory.mktemp('compare') / 'compare.db'}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_VAR, url)
        engine = make_engine(url)
        saved = {}
        for key, name, data, model, language in (
            ("A", "gpt_hindi.csv", RUN_A, "GPT", "Hindi"),
            ("B", "llama_hindi.csv", RUN_B, "Llama", "Hindi"),
            ("C", "gpt_tamil.csv", RUN_C, "GPT", "Tamil"),
        ):
            run = ingest.save_run(engine, data, name).run
            store.update_run_meta(engine, run.id, run.name, model, language)
            saved[key] = store.get_run(engine, run.id)
        yield saved
        engine.dispose()


def open_compare(runs: dict[str, store.RunInfo], order: str = "ABC") -> AppTest:
    """The Compare page from run A, comparing ``order``'s runs in that order."""
    at = open_page("compare", run_id=runs["A"].id)
    chosen = at.multiselect(key="cmp_runs")
    if list(chosen.value) != [runs[k].id for k in order]:
        chosen.set_value([runs[k].id for k in order])
        at.run()
    assert not at.exception, at.exception
    return at


def plotly_spec(at: AppTest, key_part: str) -> dict:
    """The plotly figure of the chart whose element id mentions ``key_part``."""
    for chart in at.get("plotly_chart"):
        if key_part in chart.proto.id:
            return json.loads(chart.proto.spec)
    raise AssertionError(f"no plotly chart {key_part!r}; ids {[c.proto.id for c in at.get('plotly_chart')]}")


def paired_table(at: AppTest) -> pd.DataFrame:
    """The paired comparison as one frame: the page shows it as two tables that fit at 1280x720
    (issue 37), the pair and the answer, then the pair and the counts."""
    pair = ["source", "run A", "run B"]
    return frame_with(at, "McNemar p").merge(frame_with(at, "b (A right, B wrong)"), on=pair)


def test_default_runs_are_those_sharing_questions_and_the_paired_table_is_scoring_compare(runs) -> None:
    at = open_page("compare", run_id=runs["A"].id)
    # Run A shares its qid values with B and C: all three are chosen, A first, then newest first.
    assert list(at.multiselect(key="cmp_runs").value) == [runs[k].id for k in "ACB"]
    at = open_compare(runs)
    assert any("Matched on id column 'qid': every run has the id column 'qid'." in t for t in texts(at)), texts(at)

    table = paired_table(at)
    engine = make_engine(store.database_url())
    compared = [stored_run(engine, runs[k].id) for k in "ABC"]
    expected = paired_comparisons(match_runs(compared, ("qid",), by_id=True))
    engine.dispose()
    assert len(table) == len(expected) == 9  # three pairs x exact, overlap, adjudicated
    assert "Holm p" in table.columns
    for c in expected:
        got = table[
            (table["source"] == SOURCE_TITLES[c.source]) & (table["run A"] == c.run_a) & (table["run B"] == c.run_b)
        ]
        assert len(got) == 1, (c.source, c.run_a, c.run_b)
        got = got.iloc[0]
        assert (got["n"], got["b (A right, B wrong)"], got["c (A wrong, B right)"]) == (c.n, c.b, c.c)
        assert got["McNemar p"] == pytest.approx(c.p_value) and got["Holm p"] == pytest.approx(c.p_holm)
        assert got["difference A − B"] == pytest.approx(c.difference)
    # Worked numbers for A vs B on exact substring.
    ab = table[(table["source"] == "Exact substring") & (table["run A"] == f"#{runs['A'].id} gpt_hindi")].iloc[0]
    assert (ab["run B"], ab["n"], ab["b (A right, B wrong)"], ab["c (A wrong, B right)"]) == (
        f"#{runs['B'].id} llama_hindi",
        12,
        4,
        2,
    )
    assert ab["McNemar p"] == pytest.approx(0.6875)
    assert ab["difference A − B"] == pytest.approx(2 / 12)
    method_text = " ".join(texts(at))
    assert "Newcombe hybrid score interval" in method_text and "McNemar exact test" in method_text
    assert "Holm step-down" in method_text
    # Per-run accuracy charts: one per source, one bar trace per run.
    bars = plotly_spec(at, "cmp_bars_exact")
    assert [t["name"] for t in bars["data"] if t["type"] == "bar"][:3] == [
        html.escape(f"#{runs[k].id} {runs[k].name}") for k in "ABC"
    ]


def test_two_runs_have_no_holm_column(runs) -> None:
    at = open_compare(runs, "AB")
    table = paired_table(at)
    assert "Holm p" not in table.columns and len(table) == 3
    assert not any("Holm" in t for t in texts(at))


def test_the_pair_reads_in_the_order_chosen_and_can_be_reversed_as_the_cli_reads_it(runs, tmp_path) -> None:
    """Issue 20: one rule on the page and the command line (the order chosen or given); the page's
    "Reverse the order" button swaps the pair, its b and c and the sign of the difference."""
    at = open_compare(runs, "AB")
    first = paired_table(at)
    exact = first[first["source"] == "Exact substring"].iloc[0]
    assert (exact["run A"], exact["run B"]) == (f"#{runs['A'].id} gpt_hindi", f"#{runs['B'].id} llama_hindi")
    click(at, "cmp_swap")
    assert list(at.multiselect(key="cmp_runs").value) == [runs["B"].id, runs["A"].id]
    swapped = paired_table(at)
    back = swapped[swapped["source"] == "Exact substring"].iloc[0]
    assert (back["run A"], back["run B"]) == (exact["run B"], exact["run A"])
    assert (back["b (A right, B wrong)"], back["c (A wrong, B right)"]) == (
        exact["c (A wrong, B right)"],
        exact["b (A right, B wrong)"],
    )
    assert back["difference A − B"] == pytest.approx(-exact["difference A − B"])


def test_heatmap_has_n_in_every_cell_and_an_empty_cell_for_a_missing_pair(runs) -> None:
    at = open_compare(runs)
    spec = plotly_spec(at, "cmp_heatmap")["data"][0]
    assert spec["type"] == "heatmap"
    assert (spec["x"], spec["y"]) == (["Hindi", "Tamil"], ["GPT", "Llama"])
    z, text = spec["z"], spec["text"]
    assert z[1][1] is None and text[1][1] == ""  # Llama x Tamil: no run, empty, not 0
    assert text[0][0] == "61.5%<br>n = 13"  # GPT x Hindi: run A, 8 of 13 (q99 wrong)
    assert z[0][0] == pytest.approx(8 / 13)
    assert text[0][1] == "91.7%<br>n = 12"  # GPT x Tamil: run C, 11 of 12
    assert text[1][0] == "57.1%<br>n = 14"  # Llama x Hindi: run B, 6 of 12 plus both q98 rows
    # Another verdict source: the grid follows it, the empty cell stays empty; A's pending row
    # (q99) makes its cell a range, coloured at the low end.
    at.radio(key="cmp_heat_source").set_value("adjudicated").run()
    assert not at.exception, at.exception
    spec = plotly_spec(at, "cmp_heatmap")["data"][0]
    assert spec["z"][1][1] is None and spec["text"][1][1] == ""
    assert spec["text"][0][0] == "61.5%–69.2%<br>n = 13 (1 unknown)" and spec["z"][0][0] == pytest.approx(8 / 13)
    assert all("n = " in spec["text"][m][lang] for m, lang in ((0, 0), (0, 1), (1, 0)))


def test_adjudicated_bars_show_the_pending_range_and_double_blind_hides_them(runs, monkeypatch) -> None:
    at = open_compare(runs)
    bars = plotly_spec(at, "cmp_bars_adjudicated")["data"]
    solid = {t["name"]: t for t in bars if "base" not in t}
    pending = [t for t in bars if "base" in t]
    name_a = html.escape(f"#{runs['A'].id} gpt_hindi")
    assert len(solid) == 3 and len(pending) == 1 and pending[0]["name"] == f"{name_a}: unknown verdicts"
    assert pending[0]["offsetgroup"] == solid[name_a]["offsetgroup"]  # drawn on run A's own bar
    assert pending[0]["x"] == ["Art", "combined"]  # q99 is an Art question
    assert pending[0]["base"][1] == pytest.approx(8 / 13) and pending[0]["y"][1] == pytest.approx(1 / 13)
    # Double-blind on part of run B, for a reviewer who is not an adjudicator: no adjudicated
    # figure, no row's verdicts.
    monkeypatch.setenv("REVIEW_ADJUDICATORS", "ana")
    engine = make_engine(store.database_url())
    review.set_blind(engine, runs["B"].id, "overlap_only", "ana", on=True)
    try:
        at = open_compare(runs)
        ids = [c.proto.id for c in at.get("plotly_chart")]
        assert any("cmp_bars_exact" in i for i in ids) and not any("cmp_bars_adjudicated" in i for i in ids)
        assert "Adjudicated (final verdict)" not in set(paired_table(at)["source"])
        assert sum("Double-blind review is on" in a for a in alerts(at)) == 2
        assert not any("row in B" in df.value.columns for df in at.dataframe)
        # An adjudicator sees everything.
        at = open_page("compare", reviewer="ana", run_id=runs["A"].id)
        assert "Adjudicated (final verdict)" in set(paired_table(at)["source"])
        assert not any("Double-blind review is on" in a for a in alerts(at))
    finally:
        review.set_blind(engine, runs["B"].id, "overlap_only", "ana", on=False)
        engine.dispose()


def test_unmatched_rows_are_counted_and_listed(runs) -> None:
    at = open_compare(runs)
    counts = frame_with(at, "duplicate key").set_index("run")
    label = {k: f"#{runs[k].id} {runs[k].name}" for k in "ABC"}
    assert counts.loc[label["A"]].to_dict() == {"duplicate key": 0, "not in every run": 1, "empty key": 0, "total": 1}
    assert counts.loc[label["B"]].to_dict() == {"duplicate key": 2, "not in every run": 0, "empty key": 0, "total": 2}
    assert counts.loc[label["C"], "total"] == 0
    listed = frame_with(at, "reason")
    assert sorted(zip(listed["run"], listed["qid"], listed["reason"])) == sorted(
        [
            (label["A"], "q99", "not in every run"),
            (label["B"], "q98", "duplicate key"),
            (label["B"], "q98", "duplicate key"),
        ]
    )
    assert sorted(listed["row"].tolist()) == [13, 13, 14]  # 1-based rows of each file


def test_text_matching_of_runs_in_different_languages_gives_the_advice_and_the_toggle_goes_back(runs) -> None:
    at = open_compare(runs)
    assert not any("share no questions" in a for a in alerts(at))
    at.toggle(key="cmp_by_id").set_value(False).run()
    assert not at.exception, at.exception
    assert any(t.startswith("Matched on text (question, answer): text match asked for.") for t in texts(at)), texts(at)
    assert any(
        "share no questions by text (question, answer) (different languages?); every run has the id column "
        "'qid': match on it." in a
        for a in alerts(at)
    ), alerts(at)
    assert any("No matched questions" in t for t in texts(at))
    # A and B alone share their questions word for word.
    at.multiselect(key="cmp_runs").set_value([runs["A"].id, runs["B"].id]).run()
    assert not any("share no questions" in a for a in alerts(at))
    assert any("12 questions are in every run" in t for t in texts(at)), texts(at)
    table = paired_table(at)
    exact = table[table["source"] == "Exact substring"]
    assert exact[["b (A right, B wrong)", "c (A wrong, B right)"]].values.tolist() == [[4, 2]]
    at.toggle(key="cmp_by_id").set_value(True).run()
    assert any(t.startswith("Matched on id column 'qid'") for t in texts(at)), texts(at)


def test_a_discordant_question_opens_side_by_side_literally_and_in_the_review_queue(runs) -> None:
    at = open_compare(runs, "AB")
    at.selectbox(key="cmp_disc_source").set_value("exact").run()
    found = frame_with(at, "row in B")
    # Exact substring, A vs B: questions 4-7 (A right) and 8-9 (B right), in A's order.
    assert found["question"].tolist() == [QUESTIONS[i] for i in (4, 5, 6, 7, 8, 9)]
    assert found["right"].tolist() == [f"#{runs['A'].id} gpt_hindi"] * 4 + [f"#{runs['B'].id} llama_hindi"] * 2
    assert found["row in A"].tolist() == [5, 6, 7, 8, 9, 10]
    assert found["row in B"].tolist() == [8, 7, 6, 5, 4, 3]  # B's file is in reverse order
    at.selectbox(key="cmp_disc_domain").set_value("History").run()
    assert frame_with(at, "row in B")["question"].tolist() == [QUESTIONS[i] for i in (5, 7, 9)]
    at.selectbox(key="cmp_disc_domain").set_value(None).run()

    # Choose the first row (the payload question): both responses side by side, escaped.
    at.session_state[at.session_state["cmp_disc_key"]] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    assert not at.exception, at.exception
    assert f"#{runs['A'].id} gpt_hindi: row 5, right (Exact substring)" in texts(at)
    assert f"#{runs['B'].id} llama_hindi: row 8, wrong (Exact substring)" in texts(at)
    bodies = [str(h.value) for h in at.get("html")]
    assert len(bodies) == 2 and all(html.escape(PAYLOAD) in b for b in bodies)
    assert re.search(r"It is <span style=\"background:#fde68a[^\"]*\">Premchand</span>\.", bodies[0])  # highlighted
    assert "I do not know." in bodies[1] and "<s>Premchand</s>" in bodies[1]  # missing golden word struck
    assert all("<img" not in b and "<strong>" not in b and "<b>" not in b for b in bodies)
    for text in markdown_texts(at):
        assert PAYLOAD not in text and "<img" not in text, text
    assert PAYLOAD in found["question"].iloc[0]  # literally in the table cell

    # "Open in the review queue" for B's copy: the queue on run B, row 8.
    at = click(at, "cmp_open_b")
    assert [str(t.value).replace("\\", "") for t in at.title] == ["Review queue: llama_hindi"]
    assert at.query_params.get("run") in (str(runs["B"].id), [str(runs["B"].id)])
    shown = [t for t in texts(at) if re.match(r"Row \d+ of the run", t)]
    assert shown and shown[0].startswith("Row 8 of the run"), shown
    assert any(html.escape(PAYLOAD) in str(h.value) for h in at.get("html"))
