"""The app's one way to put a download button on a page: a click builds the file and reruns nothing.

A download button's click also asks for a rerun unless told not to. Streamlit keeps the deferred
callables of a session's last run only, so that rerun can drop the callable the click is asking for
(and mark the built file for deletion) before the browser fetches it: under load the download is
lost, and the page is rebuilt beside the file for nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

Data = bytes | str | Callable[[], bytes | str]


def download_button(
    label: str, data: Data, *, file_name: str, mime: str, key: str, where: DeltaGenerator | None = None, **options: Any
) -> None:
    """``st.download_button`` in ``where`` (a column; the page by default) that reruns nothing on click."""
    (where or st).download_button(label, data, file_name=file_name, mime=mime, key=key, on_click="ignore", **options)
