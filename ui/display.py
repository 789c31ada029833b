"""Safe display of untrusted dataset text: escaped HTML only, never Markdown."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence

import pandas as pd
import streamlit as st

from scoring.core.exact_why import why_exact_fails
from scoring.core.formatting import percent
from scoring.core.highlight import highlight_golden, highlight_response, text_block
from scoring.core.markdown_text import md_escape
from scoring.review import PairAgreement

CARD = "border:1px solid #e5e7eb;border-radius:6px;padding:0.5rem 0.75rem;margin-bottom:0.4rem"


def labelled(label: str, body_html: str) -> str:
    """A small caption above a block of already-escaped HTML."""
    return (
        f'<div style="{CARD}"><div style="font-size:0.75rem;color:#6b7280">{html.escape(label)}</div>{body_html}</div>'
    )


#: The card's status line (what the last press did), coloured by the kind of message.
STATUS_COLOURS = {"saved": "#065f46", "info": "#1e3a8a", "refused": "#92400e", "error": "#991b1b"}
#: A line of the card: one line high whatever it holds (the whole text in its tooltip), so nothing
#: said above the row ever pushes the row's text or its buttons down.
_ONE_LINE = "white-space:pre;overflow:hidden;text-overflow:ellipsis;height:1.5rem;line-height:1.5rem"


def status_line(kind: str, text: str) -> str:
    """The card's first line: what the last press did, as escaped HTML, always one line high
    (empty when there is nothing to say), so the row below it never moves."""
    colour = STATUS_COLOURS.get(kind, "#374151")
    weight = "600" if kind in ("refused", "error") else "400"
    return (
        f'<div class="{CARD_STATUS}" data-kind="{html.escape(kind, quote=True)}" '
        f'title="{html.escape(text, quote=True)}" '
        f'style="{_ONE_LINE};font-size:0.9rem;color:{colour};font-weight:{weight}">{html.escape(text)}</div>'
    )


def show_row(
    row: pd.Series,
    plain: bool = False,
    data: Mapping[str, str] | None = None,
    lines: Sequence[str] = (),
    status: tuple[str, str] | None = None,
) -> None:
    """Question, golden answer and response with the matches highlighted; all text escaped.
    ``plain`` (blind review): no highlighting and neutral captions, since green golden words and an
    amber match would tell the reviewer both metrics' verdicts. ``data``: ``data-*`` attributes on
    the block (the review queue's keyboard reads the row a press belongs to from the very element
    that shows it). ``lines``: plain-text lines above the row (its place, verdicts, your verdict),
    drawn in the same element, so the row's number and its text change in one redraw: as separate
    elements the number could show the next row while the marker still named the last.
    ``status``: (kind, text) of the review queue's status line, drawn first and one line high
    even when empty (:func:`status_line`); None: no status line (other pages)."""
    question = str(row.get("question", ""))
    answer = str(row["answer"])
    response = str(row["response"])
    if plain:
        body = (
            labelled("Question", text_block(question))
            + labelled("Golden answer", text_block(answer))
            + labelled("Response", text_block(response))
        )
    else:
        body = (
            labelled("Question", text_block(question))
            + labelled(
                "Golden answer (struck through: missing from the response)",
                f'<div style="white-space:pre-wrap">{highlight_golden(answer, response)}</div>',
            )
            + labelled(
                "Response (amber: exact substring match, green: golden words)",
                f'<div style="white-space:pre-wrap">{highlight_response(answer, response)}</div>',
            )
        )
    if lines:
        body = (
            "".join(
                f'<div class="{CARD_LINE}" title="{html.escape(str(line), quote=True)}" style="{_ONE_LINE}">'
                f"{html.escape(str(line))}</div>"
                for line in lines
            )
            + body
        )
    if status is not None:
        body = status_line(*status) + body
    if data:
        attrs = "".join(f' data-{_attr_name(k)}="{html.escape(str(v), quote=True)}"' for k, v in data.items())
        body = f"<div{attrs}>{body}</div>"
    st.html(body)
    # An invisible difference (a double space, a tab, a zero-width character) said in words, as text.
    why = None if plain else why_exact_fails(answer, response)
    if why:
        st.text(why)


#: The class of a plain-text line drawn inside the row's block (:func:`show_row`).
CARD_LINE = "q-line"
#: The class of the review queue's status line (:func:`status_line`).
CARD_STATUS = "q-status"


def _attr_name(name: str) -> str:
    """A ``data-*`` name as HTML allows it: the name is written into the markup unescaped."""
    if not re.fullmatch(r"[a-z][a-z0-9-]*", name):
        raise ValueError(f"not a data attribute name: {name!r}")
    return name


def verdict_caption(row: pd.Series, with_domain: bool = True) -> str:
    """One line of plain facts about a row, for st.caption-free display via st.text."""
    exact = "pass" if row["exact_correct"] else "fail"
    overlap = "pass" if row["overlap_correct"] else "fail"
    domain = f"Domain: {row['Domain']}   " if with_domain else ""
    return (
        f"{domain}Exact: {exact}   Overlap: {overlap} "
        f"({row['matching_words']}/{row['total_golden_words']} golden words)   Bucket: {row['bucket']}"
    )


def alert(kind: str, text: str) -> None:
    """``st.error`` / ``st.warning`` / ``st.info`` / ``st.success`` with literal text."""
    getattr(st, kind)(md_escape(text))


def agreement_block(pair: PairAgreement, a: str, b: str, key: str) -> None:
    """Kappa always beside raw agreement and the 2x2 table: kappa alone misleads."""
    kappa = "undefined (one label only)" if pair.kappa is None else f"{pair.kappa:.3f}"
    raw = percent(pair.raw_agreement)  # "—" with no items in common
    st.text(f"{a} vs {b}: n = {pair.n}, raw agreement = {raw}, Cohen's kappa = {kappa}")
    t = pair.table
    st.dataframe(
        pd.DataFrame(
            [[t[0][0], t[0][1]], [t[1][0], t[1][1]]],
            index=[f"{a}: correct", f"{a}: wrong"],
            columns=[f"{b}: correct", f"{b}: wrong"],
        ),
        key=key,
    )


#: The review queue's page at 1280x720: less space above the title and between elements, a smaller
#: title, so the row, its buttons and the line under them fit unscrolled (issue 36). Our own CSS,
#: no dataset text; it leaves with the page's elements when another page opens.
_QUEUE_CSS = """<style>
[data-testid='stMainBlockContainer'] { padding-top: 2.75rem; padding-bottom: 2rem; }
[data-testid='stMainBlockContainer'] h1 { font-size: 1.85rem; padding: 0 0 0.25rem 0; }
[data-testid='stMainBlockContainer'] [data-testid='stVerticalBlock'] { gap: 0.6rem; }
</style>"""


def compact_queue_page() -> None:
    """Apply :data:`_QUEUE_CSS` to the page being drawn."""
    st.html(_QUEUE_CSS)
