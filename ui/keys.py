"""The review queue's keyboard, as a Streamlit v2 component (the script is ``review_keys.js``).

``st.button(shortcut=...)`` is not used for marking: presses that arrive during a rerun are
merged into one (two Y's become one mark) or applied together to the row still on screen. This
component reports every press with the screen it was pressed on; :mod:`scoring.review_loop`
decides what each one does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

_JS = (Path(__file__).with_name("review_keys.js")).read_text(encoding="utf-8")
_component = st.components.v2.component("review_keys", js=_JS)
KEY = "q_keys"


def screen_marker(screen: int) -> str:
    """Key of the container that tells the browser which screen is shown (the script reads it at
    each press). Wrap what is drawn *after* the row in it, so it changes only once the row has."""
    return f"q_screen_{screen}"


def keyboard(acked: int, on_press: Callable[[], None]) -> None:
    """Mount the keyboard; keys mark only while a :func:`screen_marker` container is on the page."""
    _component(key=KEY, data={"acked": acked}, on_presses_change=on_press, height=0)


def presses() -> list[dict]:
    """Every press the browser has not yet seen acknowledged (read inside ``on_press``)."""
    value = st.session_state.get(KEY)
    got = value.get("presses") if value is not None and hasattr(value, "get") else None
    return [p for p in got if isinstance(p, dict)] if isinstance(got, list) else []
