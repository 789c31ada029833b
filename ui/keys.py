"""The review queue's keyboard, as a Streamlit v2 component (the script is ``review_keys.js``).

``st.button(shortcut=...)`` is not used for marking: presses that arrive during a rerun are
merged into one (two Y's become one mark) or applied together to the row still on screen. This
component reports every press with the row shown when it was pressed, read from the row's own
block on the page (:func:`row_marker`); :mod:`scoring.review.loop` applies each press once, to
that row.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

_JS = (Path(__file__).with_name("review_keys.js")).read_text(encoding="utf-8")
#: The component's own element is one line under the card's buttons: the keys, or, in amber, which
#: field holds the focus (letters type there), so a reviewer never presses into a field unaware.
_HTML = '<div class="q-keys"></div>'
_CSS = """
.q-keys { font-size: 0.8rem; line-height: 1.5rem; height: 1.5rem; padding: 0 0.4rem; color: #4b5563;
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis; border-radius: 4px; }
.q-keys.q-keys-field { background: #fef3c7; color: #78350f; font-weight: 600; }
"""
_component = st.components.v2.component("review_keys", html=_HTML, css=_CSS, js=_JS)
KEY = "q_keys"


def row_marker(run_id: int, screen: int, item_key: str) -> dict[str, str]:
    """``data-*`` attributes for the block that shows the row's question and answers.

    The script reads the row a press belongs to from them at the moment of the press. They sit
    on the very element the reviewer reads, so they change in the same redraw as the row does:
    a separate marker drawn after the row changed up to 0.67 s later, and presses made on a row
    already visible were taken for the previous one."""
    return {"q-screen": str(screen), "q-run": str(run_id), "q-item": item_key}


def keyboard(acked: int, on_press: Callable[[], None]) -> None:
    """Mount the keyboard; presses name the row of the :func:`row_marker` block on the page."""
    _component(key=KEY, data={"acked": acked}, on_presses_change=on_press)


def presses() -> list[dict]:
    """Every press the browser has not yet seen acknowledged (read inside ``on_press``)."""
    value = st.session_state.get(KEY)
    got = value.get("presses") if value is not None and hasattr(value, "get") else None
    return [p for p in got if isinstance(p, dict)] if isinstance(got, list) else []


def presses_by_run(raw: list[dict], default_run: int) -> dict[int, list[dict]]:
    """The presses grouped by the run whose row they were pressed on (``default_run`` when a press
    names none): a press made just before the page switched runs still goes to its own run."""
    out: dict[int, list[dict]] = {}
    for press in raw:
        try:
            run = int(press["run"]) if press.get("run") is not None else default_run
        except (TypeError, ValueError):
            run = default_run
        out.setdefault(run, []).append(press)
    return out
